// Package engine holds the use cases over a sim.Store, one small service per
// resource. The services share one transaction runner (core.go), the id
// generators and the fixture set in use, and apply the pure rules of
// sim/statemachine. Each owns its state: its read cache, and for Artifacts
// the downloads, the registry of background work and the storage quotas.
package engine

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// Prober resolves the duration of a source video (and any forced outcome),
// or a *sim.Error with CodeVideoInfo.
type Prober interface {
	Probe(ctx context.Context, url string) (sim.SourceInfo, error)
}

// Config wires an Engine.
type Config struct {
	Store    sim.Store
	Clock    *sim.SimClock
	IDs      *sim.IDs
	Prober   Prober
	Timing   sim.Timing
	Fixtures *sim.Fixtures
	// FixtureFS is the file set Fixtures was loaded from; fixture files
	// loaded at run time override its files.
	FixtureFS fs.FS
	Log       *slog.Logger
	// OnEvent is told every lifecycle transition once its write commits,
	// on the write's goroutine: it must not block.
	OnEvent func(Event)
	// WorkWait bounds how long a clock advance or a read waits for the
	// background work its answer depends on (zero: DefaultWorkWait).
	WorkWait time.Duration

	StudioTiming sim.StudioTiming // zero: sim.DefaultStudioTiming
	Media        StudioMedia
	Inspect      Inspector
	Blobs        Blobs
	Quota        sim.BlobQuota // zero: unlimited
	// QuotaPool is shared by the engines of a process (sandboxes), so that
	// Quota.Total bounds their files together (nil: a pool of its own).
	QuotaPool *QuotaPool
	// FetchErrorDetail: an artifact's errorMessage says why its download
	// failed; otherwise only the log does.
	FetchErrorDetail bool
	// APIKeys is the form of the keys the engine holds (nil: plainKeys).
	APIKeys APIKeys
	// StoredClock: the stored scale wins over the configured one at Start,
	// and a clock stored standing still stays where it stood. A sandbox's
	// clock is its own; the default simulator's follows --time-scale.
	StoredClock bool
}

// Engine is the use-case layer: one service per resource, which the HTTP
// adapters are given (see sim/server).
type Engine struct {
	Clock          *Clock
	Accounts       *Accounts
	Projects       *Projects
	Outcomes       *Outcomes
	Uploads        *Uploads
	Artifacts      *Artifacts
	StudioProjects *StudioProjects
	Videos         *Videos
	Data           *Data
	Idempotency    *Idempotency

	core *core
}

// New returns an Engine. Call Start before serving.
func New(cfg Config) *Engine {
	c := &core{store: cfg.Store, clock: cfg.Clock, log: cmp.Or(cfg.Log, slog.New(slog.DiscardHandler)), onEvent: cfg.OnEvent}
	ids := newIDGen(cfg.Store, cfg.IDs)
	apiKeys := cmp.Or[APIKeys](cfg.APIKeys, plainKeys{})
	fixtures := &fixtureSet{files: cfg.FixtureFS}
	fixtures.cur.Store(ownFixtures(apiKeys, cfg.Fixtures))
	studio := cmp.Or(cfg.StudioTiming, sim.DefaultStudioTiming)
	accounts := &Accounts{core: c, ids: ids, fixtures: fixtures, apiKeys: apiKeys}
	accounts.accounts.Size, accounts.callers.Size = 10_000, 10_000
	artifacts := newArtifacts(c, ids, cfg, studio)
	projects := &Projects{core: c, ids: ids, fixtures: fixtures, accounts: accounts, prober: cfg.Prober, timing: cfg.Timing, work: artifacts.work}
	studioProjects := &StudioProjects{core: c, ids: ids}
	videos := &Videos{core: c, ids: ids, artifacts: artifacts, timing: studio}
	studioProjects.cache.Size, videos.lists.Size = 4096, 4096
	sweeper := &sweeper{core: c, projects: projects, artifacts: artifacts, videos: videos}
	return &Engine{
		Clock: &Clock{core: c, storedClock: cfg.StoredClock, sweeper: sweeper, work: artifacts.work}, Accounts: accounts, Projects: projects,
		Outcomes: &Outcomes{core: c, projects: projects, artifacts: artifacts},
		Uploads:  &Uploads{core: c, ids: ids, quota: artifacts.quota, files: artifacts.files}, Artifacts: artifacts,
		StudioProjects: studioProjects, Videos: videos,
		Data:        &Data{core: c, fixtures: fixtures, accounts: accounts, sweeper: sweeper, blobs: cfg.Blobs},
		Idempotency: &Idempotency{core: c},
		core:        c,
	}
}

// Close stops the background downloads; unfinished ones resume at the next
// Start on the same store.
func (e *Engine) Close() { e.Artifacts.close() }

// minSecret is the shortest store secret the engine accepts: keys and
// signatures made with a shorter (or no) key could be guessed.
const minSecret = 16

// Start refuses a store without a secret, restores the persisted clock,
// adds the fixture accounts missing and resumes unfinished downloads.
func (e *Engine) Start(ctx context.Context) error {
	if n := len(e.Accounts.ids.secret); n < minSecret {
		return fmt.Errorf("engine: the store's secret has %d bytes, at least %d are needed", n, minSecret)
	}
	err := e.core.update(ctx, func(tx sim.Tx) error {
		if err := e.Clock.restore(tx); err != nil {
			return err
		}
		now := e.Clock.Now()
		if err := e.Data.seed(tx, now, true); err != nil {
			return err
		}
		return e.Accounts.ensureUsers(tx, now)
	})
	if err != nil {
		return err
	}
	return e.Artifacts.restartDownloads(ctx)
}

// StudioMedia is what artifact processing learns of a URL: its fixture
// rule, whether dubsim may fetch it, the download, and the derived duration
// of a URL it may not fetch.
type StudioMedia interface {
	Rule(rawURL string) (sim.MediaRule, bool)
	MayFetchURL(rawURL string) bool
	Download(ctx context.Context, rawURL string, w io.Writer, limit int64) (int64, error)
	Derived(rawURL string) time.Duration
}

// Inspector reads the format, duration and encoding of a media file.
type Inspector func(ra io.ReaderAt, size int64) (format string, d time.Duration, mf sim.MediaFormat, err error)

// Blobs keeps file bytes (presigned uploads, downloaded artifacts).
type Blobs interface {
	Write(name string, r io.Reader, limit int64) (int64, error)
	Open(name string) (*os.File, int64, error)
	Remove(name string) error
	Clear() error
}

// idgen makes the identifiers and tokens of the services that create
// records.
type idgen struct {
	seed   *sim.IDs // content derived from the public seed
	keys   *sim.IDs // identifiers, keyed by sim.Store.IDKey
	secret []byte   // sim.Store.Secret: keys whatever grants access
}

func newIDGen(st sim.Store, seed *sim.IDs) *idgen {
	g := &idgen{seed: seed}
	if g.seed == nil {
		g.seed = sim.NewIDs(0)
	}
	g.keys = g.seed
	if st != nil {
		g.secret = st.Secret()
		g.keys = sim.NewIDs(st.IDKey())
	}
	return g
}

const seqStudio = "studio"

// studioID returns a new 24-hex identifier built like a MongoDB ObjectId:
// the creation second, a seeded "process" token, then a counter. Ids made
// in the same second follow each other, so the B+tree takes a creation at
// its end rather than at a random place.
func (g *idgen) studioID(tx sim.Tx, now time.Time) (string, error) {
	seq, err := tx.NextSequence(seqStudio)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%08x%s%08x", uint32(now.Unix()), g.keys.Token(4, "studio process"), uint32(seq+g.keys.Hash("studio counter"))), nil
}

func (g *idgen) secretToken(n int, parts ...string) string {
	return sim.SecretToken(g.secret, n, parts...)
}

// uuid formats a secretToken as a version-4 UUID, for ids worth guessing
// (uploads).
func (g *idgen) uuid(parts ...string) string {
	h := []byte(g.secretToken(16, parts...))
	h[12] = '4'
	h[16] = "89ab"[h[16]%4]
	return string(h[0:8]) + "-" + string(h[8:12]) + "-" + string(h[12:16]) + "-" + string(h[16:20]) + "-" + string(h[20:32])
}
