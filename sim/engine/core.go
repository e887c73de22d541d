package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// core is what every service shares: the transaction runner (the store,
// the clock it persists with every write, the events a write reports and
// the write generation the caches follow), the id generators and the
// fixtures.
type core struct {
	store sim.Store
	clock TimeSource
	log   *slog.Logger
	// onEvent is told the transitions a write applied (events.go).
	onEvent func(Event)
	// The clock's freeze, persisted with it by every write.
	clockMu     sync.Mutex
	frozenScale float64 // the scale to resume with; meaningful while frozen
	frozen      bool
	// storedClock: Start restores the stored scale too (Config.StoredClock).
	storedClock bool

	// keyPrefix starts every API key of a sandbox's engine (Config.KeyPrefix).
	keyPrefix string
	// secret is the store's (sim.Store.Secret): it keys whatever grants
	// access, where ids (the public seed) makes content.
	secret []byte
	// ids derives content from the seed; keys makes identifiers, keyed by
	// the store's id key (sim.Store.IDKey), so that two stores of one seed
	// make other ids.
	ids       *sim.IDs
	keys      *sim.IDs
	fixtures  atomic.Pointer[sim.Fixtures]
	fixtureFS fs.FS
	// fixtureCur is the file set of the fixtures in use once fixtures
	// were loaded at run time (nil: fixtureFS); fixtureMu serialises
	// those loads.
	fixtureMu  sync.Mutex
	fixtureCur fs.FS

	// writes counts the committed write transactions: the generation of
	// the services' caches (gencache), so a cached record is never older
	// than the last committed write.
	writes atomic.Uint64
	// changes counts the write transactions a reader can see: all but the
	// periodic clock saves (Data.Changes).
	changes atomic.Uint64
}

// saveIdem stores the idempotency record of the write in its own
// transaction (idem nil: the request had no Idempotency-Key).
func saveIdem[T any](tx sim.Tx, idem *sim.IdemWrite[T], result T, now time.Time) error {
	if idem == nil {
		return nil
	}
	rec, err := idem.Record(result, now)
	if err != nil {
		return err
	}
	return tx.PutIdempotency(idem.Scope, idem.Key, rec)
}

// update runs fn in a write transaction and invalidates the caches. The
// transaction also persists the simulated clock: whatever a write stamped
// and answered (created_at, updatedAt, ...) is never after the time a
// restart resumes from (test/crash, the studio writes did not).
func (e *core) update(ctx context.Context, fn func(sim.Tx) error) error {
	defer e.changes.Add(1)
	return e.write(ctx, fn)
}

// write is update without counting a change a reader can see: for the
// periodic clock save alone.
func (e *core) write(ctx context.Context, fn func(sim.Tx) error) error {
	defer e.writes.Add(1)
	return e.withEvents(func(fn func(sim.Tx) error) error { return e.store.Update(ctx, e.savingClock(fn)) }, fn)
}

// batch is update for creations: concurrent ones share a transaction. fn may
// run more than once.
func (e *core) batch(ctx context.Context, fn func(sim.Tx) error) error {
	defer e.changes.Add(1)
	defer e.writes.Add(1)
	return e.withEvents(func(fn func(sim.Tx) error) error { return e.store.Batch(ctx, e.savingClock(fn)) }, fn)
}

func (e *core) savingClock(fn func(sim.Tx) error) func(sim.Tx) error {
	return func(tx sim.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return e.saveClock(tx)
	}
}

// storedClock is the clock's record (metaClock): its state, and whether
// Freeze stopped it and at which scale Resume restarts it.
type storedClock struct {
	sim.ClockState
	Frozen      bool    `json:"frozen,omitempty"`
	ResumeScale float64 `json:"resume_scale,omitempty"`
}

const (
	metaClock   = "clock"
	seqProjects = "platform_projects"
	seqAccounts = "accounts"
	sweepBatch  = 512
)

func (e *core) saveClock(tx sim.Tx) error {
	st := storedClock{ClockState: e.clock.State()}
	e.clockMu.Lock()
	if e.frozen {
		st.Frozen, st.ResumeScale = true, e.frozenScale
	}
	e.clockMu.Unlock()
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return tx.PutMeta(metaClock, b)
}

func unauthorized() error { return sim.Errorf(sim.CodeUnauthorized, sim.MsgInvalidAPIKey) }

func notFound() error { return sim.Errorf(sim.CodeNotFound, sim.MsgProjectNotFound) }

func ceilSecond(t time.Time) time.Time {
	if u := t.Truncate(time.Second); !u.Equal(t) {
		return u.Add(time.Second)
	}
	return t
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

const (
	seqStudio       = "studio"
	studioSweep     = 512
	maxDownloads    = 4
	derivedBitrate  = 2_500_000 / 8 // bytes per second of a derived video's size
	derivedAudioBPS = 128_000 / 8
	scriptBytes     = 48 * 1024
)

func studioDenied() error { return sim.Errorf(sim.CodeAccessDenied, sim.MsgStudioDenied) }

func studioMissing() error { return sim.Errorf(sim.CodeNotFound, sim.MsgStudioNotFound) }

// studioID returns a new 24-hex identifier built like a MongoDB ObjectId:
// the creation second, a seeded "process" token, then a counter (the store
// sequence from a seeded start). Ids made in the same second follow each
// other, so the B+tree takes a creation at its end rather than at a random
// place (the reason platform project keys follow their sequence too).
func (e *core) studioID(tx sim.Tx, now time.Time) (string, error) {
	seq, err := tx.NextSequence(seqStudio)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%08x%s%08x", uint32(now.Unix()), e.keys.Token(4, "studio process"), uint32(seq+e.keys.Hash("studio counter"))), nil
}

// secretToken is a hex token of n bytes keyed by the store's secret (see
// sim.SecretToken): nobody who knows only the seed can make it.
func (e *core) secretToken(n int, parts ...string) string {
	return sim.SecretToken(e.secret, n, parts...)
}

// uuid formats a token keyed by the store's secret as a version-4 UUID:
// unpredictable, for ids that are worth guessing (uploads).
func (e *core) uuid(parts ...string) string {
	h := []byte(e.secretToken(16, parts...))
	h[12] = '4'
	h[16] = "89ab"[h[16]%4]
	return string(h[0:8]) + "-" + string(h[8:12]) + "-" + string(h[12:16]) + "-" + string(h[16:20]) + "-" + string(h[20:32])
}

func secs(d time.Duration) *float64 { s := d.Seconds(); return &s }

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func newCore(cfg Config) *core {
	e := &core{store: cfg.Store, clock: cfg.Clock, ids: cfg.IDs, log: cfg.Log, onEvent: cfg.OnEvent}
	if cfg.Store != nil {
		e.secret = cfg.Store.Secret()
		e.keys = sim.NewIDs(cfg.Store.IDKey())
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.ids == nil {
		e.ids = sim.NewIDs(0)
	}
	if e.keys == nil {
		e.keys = e.ids
	}
	e.keyPrefix, e.storedClock = cfg.KeyPrefix, cfg.StoredClock
	e.fixtures.Store(e.ownKeys(cfg.Fixtures))
	e.fixtureFS = cfg.FixtureFS
	return e
}

// ownKeys is fx with every account key given this engine's key prefix (a
// copy: the set may be shared with other engines), or fx itself without one.
func (e *core) ownKeys(fx *sim.Fixtures) *sim.Fixtures {
	if e.keyPrefix == "" || fx == nil {
		return fx
	}
	own := *fx
	own.Accounts = make([]sim.AccountSpec, len(fx.Accounts))
	for i, a := range fx.Accounts {
		a.APIKey = e.keyPrefix + strings.TrimPrefix(a.APIKey, e.keyPrefix)
		own.Accounts[i] = a
	}
	return &own
}

// ownKey is the key an account asked for with key k gets (CreateAccount):
// k with the sandbox's prefix, or an error when k names another sandbox or,
// in the default simulator, any.
func (e *core) ownKey(k string) (string, error) {
	if e.keyPrefix != "" && strings.HasPrefix(k, e.keyPrefix) {
		return k, nil
	}
	if strings.HasPrefix(k, sim.SandboxKeyPrefix) {
		return "", sim.Errorf(sim.CodeValidation, sim.MsgSandboxKey, clip(k, 80))
	}
	return e.keyPrefix + k, nil
}

// fixtureSet is the fixture set in use.
func (e *core) fixtureSet() *sim.Fixtures { return e.fixtures.Load() }

// catalog is the options and voices in use.
func (e *core) catalog() *sim.Catalog { return e.fixtureSet().Catalog }
