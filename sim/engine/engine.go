// Package engine holds the use cases of the simulator over a sim.Store: the
// platform and studio operations, the control operations, the sweep of due
// transitions and the background work (downloads), applying the rules of
// sim/statemachine.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/gencache"
	"github.com/dubsim/dubsim/sim/script"
	"github.com/dubsim/dubsim/sim/statemachine"
)

// Clock is the simulated clock the engine drives.
type Clock interface {
	sim.Clock
	Advance(d time.Duration) time.Time
	SetScale(scale float64)
	Scale() float64
	State() sim.ClockState
	Restore(st sim.ClockState)
	// Wall is real time plus every manual advance (see sim.SimClock.Wall).
	Wall() time.Time
}

// Prober resolves the duration of a source video (and any forced outcome).
// It returns a *sim.Error with CodeVideoInfo when the video cannot be read.
type Prober interface {
	Probe(ctx context.Context, url string) (sim.SourceInfo, error)
}

// Config wires an Engine.
type Config struct {
	Store    sim.Store
	Clock    Clock
	IDs      *sim.IDs
	Prober   Prober
	Timing   sim.Timing
	Fixtures *sim.Fixtures
	// FixtureFS is the file set Fixtures was loaded from; fixture files
	// loaded at run time override its files.
	FixtureFS fs.FS
	Log       *slog.Logger
	// WorkWait bounds how long a clock advance or a read waits for the
	// background work (artifact downloads) its answer depends on (zero:
	// DefaultWorkWait).
	WorkWait time.Duration
	// IdempotencyWindow is how long idempotency keys live in simulated time.
	IdempotencyWindow time.Duration

	// Studio: the processing-time model (zero: sim.DefaultStudioTiming),
	// URL resolution and downloads, media inspection and file storage.
	StudioTiming sim.StudioTiming
	Media        StudioMedia
	Inspect      Inspector
	Blobs        Blobs
}

// Engine applies the domain operations and lifecycle transitions to the store.
type Engine struct {
	clockMu     sync.Mutex
	frozenScale float64 // the scale to resume with; meaningful while frozen
	frozen      bool

	store     sim.Store
	clock     Clock
	ids       *sim.IDs
	prober    Prober
	timing    sim.Timing
	log       *slog.Logger
	idemTTL   time.Duration
	fixtures  atomic.Pointer[sim.Fixtures]
	fixtureFS fs.FS

	// Accounts are read on every request (authentication); a small cache
	// spares the store read. Every write transaction bumps writes, and an
	// entry is served only while writes equals the value read before the
	// entry was loaded, so a cached account is never older than the last
	// committed write.
	studio  sim.StudioTiming
	media   StudioMedia
	inspect Inspector
	blobs   Blobs
	// Artifact downloads run in the background until Close.
	bg    context.Context
	stop  context.CancelFunc
	dlWG  sync.WaitGroup
	dlSem chan struct{}
	// work is the background work in flight; workWait bounds how long an
	// advance or a read waits for the work its answer depends on.
	work     workSet
	workWait time.Duration

	writes atomic.Uint64
	// lastPurge is the simulated time (Unix ns) of the last purge of
	// expired idempotency records.
	lastPurge atomic.Int64
	// Caches of store reads (gencache): accounts by key, decoded ready
	// projects (their scripts are the costly part of a read) by id, studio
	// callers by key, studio projects by id, video lists by project id.
	accounts       gencache.Cache[sim.Account]
	ready          gencache.Cache[sim.Project]
	callers        gencache.Cache[sim.Caller]
	studioProjects gencache.Cache[sim.StudioProject]
	videoLists     gencache.Cache[videoList]
}

// videoList is a project's videos, sorted, its company, and the earliest
// time one of them is due (zero: none is): the list is served from the cache
// only before then.
type videoList struct {
	videos  []sim.Video
	company string
	until   time.Time
}

// saveIntent stores the idempotency record of the request that caused this
// write, in the write's own transaction (see sim.IdemIntent).
func saveIntent(ctx context.Context, tx sim.Tx, result any, now time.Time) error {
	in := sim.IdemIntentFrom(ctx)
	if in == nil || in.Render == nil {
		return nil
	}
	status, ct, body, err := in.Render(result)
	if err != nil {
		return err
	}
	return tx.PutIdempotency(in.Scope, in.Key, sim.IdemRecord{Fingerprint: in.Fingerprint, Status: status, ContentType: ct, Body: body, CreatedAt: now})
}

// markIntent records that a committed write stored its idempotency record.
func markIntent(ctx context.Context) {
	if in := sim.IdemIntentFrom(ctx); in != nil && in.Render != nil {
		in.MarkSaved()
	}
}

// update runs fn in a write transaction and invalidates the caches. The
// transaction also persists the simulated clock: whatever a write stamped
// and answered (created_at, updatedAt, ...) is never after the time a
// restart resumes from (test/crash, the studio writes did not).
func (e *Engine) update(ctx context.Context, fn func(sim.Tx) error) error {
	defer e.writes.Add(1)
	return e.store.Update(ctx, e.savingClock(fn))
}

// batch is update for creations: concurrent ones share a transaction. fn may
// run more than once.
func (e *Engine) batch(ctx context.Context, fn func(sim.Tx) error) error {
	defer e.writes.Add(1)
	return e.store.Batch(ctx, e.savingClock(fn))
}

func (e *Engine) savingClock(fn func(sim.Tx) error) func(sim.Tx) error {
	return func(tx sim.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return e.saveClock(tx)
	}
}

// New returns an Engine. Call Start before serving.
func New(cfg Config) *Engine {
	e := &Engine{store: cfg.Store, clock: cfg.Clock, ids: cfg.IDs, prober: cfg.Prober, timing: cfg.Timing, log: cfg.Log, idemTTL: cfg.IdempotencyWindow}
	e.accounts.Size, e.callers.Size = 10_000, 10_000
	e.ready.Size, e.studioProjects.Size, e.videoLists.Size = 4096, 4096, 4096
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.ids == nil {
		e.ids = sim.NewIDs(0)
	}
	if e.idemTTL <= 0 {
		e.idemTTL = sim.DefaultIdempotencyWindow
	}
	e.workWait = cfg.WorkWait
	if e.workWait <= 0 {
		e.workWait = DefaultWorkWait
	}
	e.fixtures.Store(cfg.Fixtures)
	e.fixtureFS = cfg.FixtureFS
	e.studio, e.media, e.inspect, e.blobs = cfg.StudioTiming, cfg.Media, cfg.Inspect, cfg.Blobs
	if e.studio == (sim.StudioTiming{}) {
		e.studio = sim.DefaultStudioTiming
	}
	e.bg, e.stop = context.WithCancel(context.Background())
	e.dlSem = make(chan struct{}, maxDownloads)
	return e
}

// Close stops the background downloads and waits for them; unfinished ones
// resume at the next Start on the same store.
func (e *Engine) Close() {
	e.stop()
	e.dlWG.Wait()
}

const (
	metaClock   = "clock"
	seqProjects = "platform_projects"
	seqAccounts = "accounts"
	sweepBatch  = 512
)

// Start restores the persisted clock and makes sure every fixture account
// exists (accounts already stored keep their state).
func (e *Engine) Start(ctx context.Context) error {
	err := e.update(ctx, func(tx sim.Tx) error {
		raw, err := tx.Meta(metaClock)
		switch {
		case err == nil:
			var st sim.ClockState
			if err := json.Unmarshal(raw, &st); err != nil {
				return fmt.Errorf("engine: stored clock: %w", err)
			}
			e.clock.Restore(st)
		case !errors.Is(err, sim.ErrNotFound):
			return err
		}
		now := e.clock.Now()
		if err := e.seedStudio(tx, now); err != nil {
			return err
		}
		for _, spec := range e.Fixtures().Accounts {
			if _, err := tx.Account(spec.APIKey); errors.Is(err, sim.ErrNotFound) {
				if err := tx.PutAccount(accountFrom(spec, now, true)); err != nil {
					return err
				}
			} else if err != nil {
				return err
			}
		}
		return e.ensureUsers(tx, now)
	})
	if err != nil {
		return err
	}
	return e.restartDownloads(ctx)
}

// Fixtures returns the fixture set in use.
func (e *Engine) Fixtures() *sim.Fixtures { return e.fixtures.Load() }

// Catalog returns the options and voices in use.
func (e *Engine) Catalog() *sim.Catalog { return e.Fixtures().Catalog }

// Generation changes after every committed write transaction: a value read
// before a read of the store still equals it afterwards only if no write
// committed in between (the rule of the engine's caches and of the platform
// API's rendered answers).
func (e *Engine) Generation() uint64 { return e.writes.Load() }

// Now is the current simulated time.
func (e *Engine) Now() time.Time { return e.clock.Now() }

// Wall is real time plus every manual advance of the clock: rate-limit
// windows pass on it, so a client that waits and a test that advances the
// clock both get through (fidelity ST5).
func (e *Engine) Wall() time.Time { return e.clock.Wall() }

func (e *Engine) saveClock(tx sim.Tx) error {
	b, err := json.Marshal(e.clock.State())
	if err != nil {
		return err
	}
	return tx.PutMeta(metaClock, b)
}

// SaveClock persists the clock state (called periodically and at shutdown):
// a write transaction with nothing else in it (update saves the clock).
func (e *Engine) SaveClock(ctx context.Context) error {
	return e.update(ctx, func(sim.Tx) error { return nil })
}

func accountFrom(spec sim.AccountSpec, now time.Time, fixture bool) sim.Account {
	return sim.Account{
		APIKey: spec.APIKey, Name: spec.Name, Plan: spec.Plan, BalanceMinutes: spec.BalanceMinutes, InitialBalance: spec.BalanceMinutes,
		RetranslationEnabled: spec.RetranslationEnabled, CloningEnabled: spec.CloningEnabled,
		Fixture: fixture, CreatedAt: now, UserID: spec.UserID, Storage: spec.Storage, RateLimit: spec.RateLimit,
	}
}

func unauthorized() error { return sim.Errorf(sim.CodeUnauthorized, sim.MsgInvalidAPIKey) }
func notFound() error     { return sim.Errorf(sim.CodeNotFound, sim.MsgProjectNotFound) }

func accountIn(tx sim.Tx, key string) (sim.Account, error) {
	a, err := tx.Account(key)
	if errors.Is(err, sim.ErrNotFound) {
		return a, unauthorized()
	}
	return a, err
}

// Account returns the account of an API key, or an unauthorized error.
func (e *Engine) Account(ctx context.Context, apiKey string) (sim.Account, error) {
	var a sim.Account
	if apiKey == "" {
		return a, unauthorized()
	}
	gen := e.writes.Load()
	if a, ok := e.accounts.Get(apiKey, gen); ok {
		return a, nil
	}
	err := e.store.View(ctx, func(tx sim.Tx) error {
		var err error
		a, err = accountIn(tx, apiKey)
		return err
	})
	if err == nil {
		e.accounts.Put(apiKey, a, gen)
	}
	return a, err
}

// settle applies the due transition of p, if any, inside tx.
func (e *Engine) settle(tx sim.Tx, p sim.Project, now time.Time) (sim.Project, error) {
	np, effects := statemachine.Next(p, now)
	if np.Status == p.Status && np.DueAt.Equal(p.DueAt) {
		return p, nil
	}
	if np.Status == sim.StatusReady {
		Materialize(e.Catalog(), e.ids, &np)
	}
	// The transition is stamped with simulated time; the transaction
	// (update, batch) persists the clock with it.
	for _, ef := range effects {
		if ef.RefundAPIKey == "" {
			continue
		}
		a, err := tx.Account(ef.RefundAPIKey)
		if errors.Is(err, sim.ErrNotFound) {
			continue // the account was removed; nothing to credit
		}
		if err != nil {
			return p, err
		}
		a.BalanceMinutes += ef.RefundMinutes
		if err := tx.PutAccount(a); err != nil {
			return p, err
		}
	}
	return np, tx.PutProject(np)
}

func ownedProject(tx sim.Tx, apiKey, id string) (sim.Project, error) {
	p, err := tx.Project(id)
	if errors.Is(err, sim.ErrNotFound) || (err == nil && p.APIKey != apiKey) {
		return p, notFound()
	}
	return p, err
}

// Project returns a project of the account, with any due transition
// applied. Scripts are read only when the status shows them (ready).
func (e *Engine) Project(ctx context.Context, apiKey, id string) (sim.Project, error) {
	now := e.clock.Now()
	writes := e.writes.Load()
	if p, ok := e.ready.Get(id, writes); ok && p.APIKey == apiKey {
		return p, nil
	}
	var p sim.Project
	err := e.store.View(ctx, func(tx sim.Tx) error {
		head, err := tx.ProjectHead(id)
		if errors.Is(err, sim.ErrNotFound) || (err == nil && head.APIKey != apiKey) {
			return notFound()
		}
		if err != nil {
			return err
		}
		p = head
		if head.Status == sim.StatusReady {
			if p, err = tx.Project(id); err == nil {
				e.ready.Put(id, p, writes)
			}
		}
		return err
	})
	if err != nil || p.Status != sim.StatusInProgress || p.DueAt.After(now) {
		return p, err
	}
	err = e.update(ctx, func(tx sim.Tx) error {
		q, err := ownedProject(tx, apiKey, id)
		if err != nil {
			return err
		}
		p, err = e.settle(tx, q, now)
		return err
	})
	return p, err
}

// ProjectOutput returns a project for serving its output files, whoever
// asks (download URLs carry no key, like presigned links).
func (e *Engine) ProjectOutput(ctx context.Context, id string) (sim.Project, error) {
	var p sim.Project
	err := e.store.View(ctx, func(tx sim.Tx) error {
		var err error
		p, err = tx.Project(id)
		if errors.Is(err, sim.ErrNotFound) {
			return notFound()
		}
		return err
	})
	if err == nil && p.Status == sim.StatusInProgress && !p.DueAt.After(e.clock.Now()) {
		return e.Project(ctx, p.APIKey, id)
	}
	return p, err
}

// Balance returns the account's balance in minutes.
func (e *Engine) Balance(ctx context.Context, apiKey string) (int64, error) {
	a, err := e.Account(ctx, apiKey)
	return a.BalanceMinutes, err
}

// CreateProject charges the account and creates a project in progress. The
// whole check-charge-create runs in one transaction, so the balance never
// goes negative under concurrent requests; a refusal changes nothing.
func (e *Engine) CreateProject(ctx context.Context, apiKey string, np sim.NewProject) (sim.Receipt, error) {
	var rc sim.Receipt
	acct, err := e.Account(ctx, apiKey)
	if err != nil {
		return rc, err
	}
	if err := statemachine.CheckCreateAccess(acct, np); err != nil {
		return rc, err
	}
	var utterances []string
	if np.SourceScriptContent != nil {
		if _, utterances, err = script.ParseContent(*np.SourceScriptContent); err != nil {
			return rc, sim.Errorf(sim.CodeValidation, "source_script_content %v", err)
		}
	}
	info, err := e.probe(ctx, np.SourceVideoURL)
	if err != nil {
		return rc, err
	}
	duration := info.Duration
	if n := len(np.SourceScript); n > 0 {
		end := time.Duration(np.SourceScript[n-1].EndMS) * time.Millisecond
		for i, s := range np.SourceScript {
			if time.Duration(s.EndMS)*time.Millisecond <= duration {
				continue
			}
			if info.Origin != sim.OriginDerived {
				return rc, sim.Errorf(sim.CodeValidation, "source_script[%d] ends at %d ms, after the end of the source video (%d ms)", i, s.EndMS, duration.Milliseconds())
			}
			end = max(end, time.Duration(s.EndMS)*time.Millisecond)
		}
		if info.Origin == sim.OriginDerived && end > duration {
			// A duration invented from the URL yields to the client's script.
			duration = (end + time.Second).Truncate(time.Second)
		}
	}
	if duration > sim.MaxSourceDuration {
		return rc, sim.Errorf(sim.CodeVideoInfo, "The source video lasts %s; videos up to %s are accepted", duration.Round(time.Second), sim.MaxSourceDuration)
	}
	cost := sim.CostMinutes(duration)
	err = e.batch(ctx, func(tx sim.Tx) error {
		now := e.clock.Now()
		acct, err := accountIn(tx, apiKey)
		if err != nil {
			return err
		}
		if acct.BalanceMinutes < cost {
			return sim.Errorf(sim.CodePaymentRequired, sim.MsgInsufficientBalance)
		}
		seq, err := tx.NextSequence(seqProjects)
		if err != nil {
			return err
		}
		p := e.buildProject(e.ids.PlatformProjectID(seq-1), apiKey, np, info, duration, utterances, now)
		p.CostMinutes = cost
		if err := applyOutcomeRules(tx, &p, now); err != nil {
			return err
		}
		acct.BalanceMinutes -= cost
		if err := tx.PutAccount(acct); err != nil {
			return err
		}
		if err := tx.PutProject(p); err != nil {
			return err
		}
		rc = sim.Receipt{ProjectID: p.ID, CostMinutes: cost, EstimatedCompletion: p.DueAt, BalanceMinutes: acct.BalanceMinutes}
		return saveIntent(ctx, tx, rc, now)
	})
	if err == nil {
		markIntent(ctx)
	}
	return rc, err
}

// probe reads the source video's duration; while it runs it is listed as
// background work (a request in flight waits for it; no advance does).
func (e *Engine) probe(ctx context.Context, url string) (sim.SourceInfo, error) {
	w := &work{kind: WorkProbe, started: e.clock.Now()}
	w.setURL(url)
	w.set(waitHost)
	e.work.add(w)
	defer e.work.remove(w)
	return e.prober.Probe(ctx, url)
}

func ceilSecond(t time.Time) time.Time {
	if u := t.Truncate(time.Second); !u.Equal(t) {
		return u.Add(time.Second)
	}
	return t
}

func (e *Engine) buildProject(id, apiKey string, np sim.NewProject, info sim.SourceInfo, duration time.Duration, utterances []string, now time.Time) sim.Project {
	p := sim.Project{
		ID: id, APIKey: apiKey, Name: np.Name,
		SourceLang: np.SourceLang, TargetLang: np.TargetLang, SourceVideoURL: np.SourceVideoURL,
		MixingMode: np.MixingMode, TTSVolume: np.TTSVolume,
		UseSoundalike: np.UseSoundalike, UseEmotionalTransfer: np.UseEmotionalTransfer, UseFixedTimings: np.UseFixedTimings,
		HasGlossary: np.GlossaryContent != nil,
		DurationMS:  duration.Milliseconds(), DurationSource: info.Origin,
		Status: sim.StatusInProgress, CreatedAt: now,
		DueAt:          ceilSecond(now.Add(e.timing.Processing(duration))),
		ScriptsPending: true,
	}
	if np.SourceScript != nil || utterances != nil {
		p.ScriptInput = &sim.ScriptInput{SourceScript: np.SourceScript, Utterances: utterances}
	}
	p.History = []sim.Event{{At: now, Kind: sim.EventCreated, EstimatedCompletion: p.DueAt}}
	if info.Fail != "" {
		p.Outcome = sim.Outcome{Error: true, Message: info.Fail}
	}
	return p
}

// Materialize produces the source and target scripts and the speakers of a
// project whose scripts are pending (the first run completing), from the
// client's script input or a synthetic transcript, with voices from cat.
// The result depends only on the project's fields and ids' seed, so it is
// the same whenever it runs.
func Materialize(cat *sim.Catalog, ids *sim.IDs, p *sim.Project) {
	if !p.ScriptsPending {
		return
	}
	r := sim.NewRand(ids.Hash("project", p.ID, p.SourceVideoURL))
	duration := time.Duration(p.DurationMS) * time.Millisecond
	var in sim.ScriptInput
	if p.ScriptInput != nil {
		in = *p.ScriptInput
	}
	var source []sim.Segment
	switch {
	case in.SourceScript != nil && p.UseFixedTimings:
		source = append(source, in.SourceScript...)
	case in.SourceScript != nil:
		source = script.Realign(in.SourceScript, duration)
	case in.Utterances != nil:
		source = script.Align(in.Utterances, duration)
	default:
		source = script.Synthesize(r, duration)
	}
	nSpeakers := 1 + r.Intn(3)
	source = script.AssignSpeakers(r, source, nSpeakers)
	target := script.TranslateScript(ids, source, p.TargetLang)
	if lang, _, _ := strings.Cut(p.TargetLang, "-"); lang == p.SourceLang {
		target = append([]sim.Segment(nil), source...) // pre-translated: same language
	}
	var speakers []sim.Speaker
	used := map[string]bool{}
	for _, sid := range script.Speakers(source) {
		style := sim.Styles[r.Intn(2)]
		key := ""
		switch {
		case p.UseEmotionalTransfer:
			key = sim.VoiceEmotionalTransfer
		case p.UseSoundalike:
			key = sim.VoiceSoundalike
		default:
			voices := cat.VoicesFor(p.TargetLang, style)
			for try := 0; try < len(voices) && len(voices) > 0; try++ {
				v := voices[(r.Intn(len(voices))+try)%len(voices)]
				key = v.VoiceKey
				style = v.Style
				if !used[key] {
					break
				}
			}
			used[key] = true
		}
		speakers = append(speakers, sim.Speaker{SpeakerID: sid, Style: style, VoiceKey: key})
	}
	p.SourceScript, p.TargetScript, p.Speakers = source, target, speakers
	p.ScriptsPending, p.ScriptInput = false, nil
}

// Retranslate checks a re-translation request and, unless dryRun, puts the
// project back through processing. dryRun answers exactly what the real
// request would (an error or nil) without changing the project.
func (e *Engine) Retranslate(ctx context.Context, apiKey, id string, in sim.RetranslationInput, dryRun bool) (sim.Receipt, error) {
	var rc sim.Receipt
	err := e.update(ctx, func(tx sim.Tx) error {
		now := e.clock.Now()
		acct, err := accountIn(tx, apiKey)
		if err != nil {
			return err
		}
		if !acct.RetranslationEnabled {
			return sim.Errorf(sim.CodeForbidden, sim.MsgRetranslationDisabled)
		}
		p, err := ownedProject(tx, apiKey, id)
		if err != nil {
			return err
		}
		if p, err = e.settle(tx, p, now); err != nil {
			return err
		}
		if p.Status != sim.StatusReady {
			return sim.Errorf(sim.CodeValidation, sim.MsgRetranslationNotReady, p.ID, p.Status)
		}
		rt, err := statemachine.ValidateRetranslation(e.Catalog(), acct, p, in)
		if err != nil || dryRun {
			return err
		}
		if !rt.UseFixedTimings {
			rt.TargetScript = script.Realign(rt.TargetScript, time.Duration(p.DurationMS)*time.Millisecond)
		}
		p.Pending = &rt
		p.Status = sim.StatusInProgress
		p.DueAt = ceilSecond(now.Add(e.timing.Retranslation(time.Duration(p.DurationMS) * time.Millisecond)))
		p.Outcome = sim.Outcome{}
		p.TranslationsCount++
		p.History = append(p.History, sim.Event{At: now, Kind: sim.EventRetranslation, EstimatedCompletion: p.DueAt})
		if err := tx.PutProject(p); err != nil {
			return err
		}
		rc = sim.Receipt{ProjectID: p.ID, EstimatedCompletion: p.DueAt, BalanceMinutes: acct.BalanceMinutes, TranslationsCount: p.TranslationsCount}
		return saveIntent(ctx, tx, rc, now)
	})
	if err == nil && !dryRun {
		markIntent(ctx)
	}
	return rc, err
}

// DeleteProject removes a project that is not in progress. No refund.
func (e *Engine) DeleteProject(ctx context.Context, apiKey, id string) error {
	return e.update(ctx, func(tx sim.Tx) error {
		now := e.clock.Now()
		if _, err := accountIn(tx, apiKey); err != nil {
			return err
		}
		p, err := ownedProject(tx, apiKey, id)
		if err != nil {
			return err
		}
		if p, err = e.settle(tx, p, now); err != nil {
			return err
		}
		if p.Status == sim.StatusInProgress {
			return sim.Errorf(sim.CodeValidation, sim.MsgDeleteInProgress)
		}
		return tx.DeleteProject(id)
	})
}

// Tick applies every transition due at the current simulated time, earliest
// first, and purges expired idempotency keys. It returns how many
// transitions it applied.
func (e *Engine) Tick(ctx context.Context) (int, error) {
	return e.sweep(ctx, e.clock.Now())
}

// sweep applies the due transitions of platform projects, then of studio
// artifacts and videos.
func (e *Engine) sweep(ctx context.Context, now time.Time) (int, error) {
	if idle, err := e.idle(ctx, now); err != nil || idle {
		return 0, err
	}
	n, err := e.sweepProjects(ctx, now)
	if err != nil {
		return n, err
	}
	m, err := e.sweepStudio(ctx, now)
	return n + m, err
}

// purgeEvery is how much simulated time passes between purges of expired
// idempotency records (lookups ignore expired records anyway).
const purgeEvery = time.Minute

// idle reports whether a sweep at now has nothing to do: no transition is
// due and expired idempotency records were purged less than purgeEvery
// ago. It only reads: an empty write transaction still rewrites the
// freelist and syncs the file, which the 200 ms tick did five times a
// second on an idle server (and it invalidated the read caches).
func (e *Engine) idle(ctx context.Context, now time.Time) (bool, error) {
	if d := now.Sub(time.Unix(0, e.lastPurge.Load())); d >= purgeEvery || d < 0 {
		return false, nil
	}
	idle := true
	err := e.store.View(ctx, func(tx sim.Tx) error {
		for _, due := range []func(time.Time, int) ([]string, error){tx.DueProjects, tx.DueArtifacts, tx.DueVideos} {
			ids, err := due(now, 1)
			if err != nil || len(ids) > 0 {
				idle = false
				return err
			}
		}
		return nil
	})
	return idle, err
}

func (e *Engine) sweepProjects(ctx context.Context, now time.Time) (int, error) {
	total := 0
	for {
		n := 0
		err := e.update(ctx, func(tx sim.Tx) error {
			ids, err := tx.DueProjects(now, sweepBatch)
			if err != nil {
				return err
			}
			for _, id := range ids {
				p, err := tx.Project(id)
				if err != nil {
					return err
				}
				if _, err := e.settle(tx, p, now); err != nil {
					return err
				}
			}
			n = len(ids)
			if n < sweepBatch {
				if _, err := tx.PurgeIdempotency(now.Add(-e.idemTTL)); err != nil {
					return err
				}
				e.lastPurge.Store(now.UnixNano())
			}
			return nil
		})
		total += n
		if err != nil || n < sweepBatch {
			return total, err
		}
	}
}

// Advance moves simulated time forward by d, waits for the background work
// whose results are needed by the new time (artifact downloads), applies
// every transition that became due (earliest first) and persists the clock
// before it returns. Work still running after the bound is returned as a
// *PendingError; the clock has moved and what was due without it applied.
func (e *Engine) Advance(ctx context.Context, d time.Duration) (time.Time, error) {
	now := e.clock.Advance(d)
	pending := e.waitWork(ctx, now, "")
	if _, err := e.sweep(ctx, now); err != nil {
		return now, err
	}
	if err := e.SaveClock(ctx); err != nil {
		return now, err
	}
	if pending != nil {
		return now, pending
	}
	return now, nil
}

// TimeScale returns the clock's scale.
func (e *Engine) TimeScale() float64 { return e.clock.Scale() }

// CreateAccount adds an account; an empty APIKey gets a generated one.
func (e *Engine) CreateAccount(ctx context.Context, spec sim.AccountSpec) (sim.Account, error) {
	var a sim.Account
	if !spec.Plan.Valid() {
		return a, sim.Errorf(sim.CodeValidation, "plan must be one of none, subscription, pro, enterprise; got %q", spec.Plan)
	}
	if spec.BalanceMinutes < 0 {
		return a, sim.Errorf(sim.CodeValidation, "balance_minutes must not be negative")
	}
	if err := sim.CheckAPIKey(spec.APIKey); err != nil {
		return a, sim.Errorf(sim.CodeValidation, "%v", err)
	}
	if len(spec.CompanyID) > 64 {
		return a, sim.Errorf(sim.CodeValidation, "company_id must be at most 64 characters; got %d", len(spec.CompanyID))
	}
	if e := spec.UserEmail; e != "" && (len(e) > 254 || strings.Count(e, "@") != 1 || strings.ContainsAny(e, " \t\r\n") || strings.HasPrefix(e, "@") || strings.HasSuffix(e, "@")) {
		return a, sim.Errorf(sim.CodeValidation, "user_email must be an email address of at most 254 characters; got %q", clip(e, 80))
	}
	if spec.UserID != "" {
		return a, sim.Errorf(sim.CodeValidation, "user_id cannot be chosen; use company_id to join a company, and user_email to name the new user")
	}
	err := e.update(ctx, func(tx sim.Tx) error {
		now := e.clock.Now()
		if spec.APIKey == "" {
			seq, err := tx.NextSequence(seqAccounts)
			if err != nil {
				return err
			}
			spec.APIKey = "dsk_" + e.ids.Token(16, "account", fmt.Sprint(seq))
		}
		if _, err := tx.Account(spec.APIKey); err == nil {
			return sim.Errorf(sim.CodeConflict, "An account with api_key %q already exists", spec.APIKey)
		} else if !errors.Is(err, sim.ErrNotFound) {
			return err
		}
		if spec.Name == "" {
			spec.Name = fmt.Sprintf("%s account", spec.Plan)
		}
		a = accountFrom(spec, now, false)
		if err := e.placeAccount(tx, &a, spec.CompanyID, spec.UserEmail, now); err != nil {
			return err
		}
		return tx.PutAccount(a)
	})
	return a, err
}

// Reset deletes every project, account and idempotency record and restores
// the fixture accounts. The clock and id sequences carry on.
func (e *Engine) Reset(ctx context.Context) error {
	return e.update(ctx, func(tx sim.Tx) error {
		if err := tx.ResetData(); err != nil {
			return err
		}
		// Forced-outcome rules are test set-up, like the data they name.
		if err := saveOutcomeRules(tx, nil); err != nil {
			return err
		}
		if e.blobs != nil {
			if err := e.blobs.Clear(); err != nil {
				return err
			}
		}
		now := e.clock.Now()
		if err := e.seedStudio(tx, now); err != nil {
			return err
		}
		for _, spec := range e.Fixtures().Accounts {
			if err := tx.PutAccount(accountFrom(spec, now, true)); err != nil {
				return err
			}
		}
		return nil
	})
}

// IdempotencyLookup returns the live record for a key, if any.
func (e *Engine) IdempotencyLookup(ctx context.Context, scope, key string) (sim.IdemRecord, bool, error) {
	var rec sim.IdemRecord
	found := false
	now := e.clock.Now()
	err := e.store.View(ctx, func(tx sim.Tx) error {
		r, err := tx.Idempotency(scope, key)
		if errors.Is(err, sim.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if now.Sub(r.CreatedAt) < e.idemTTL {
			rec, found = r, true
		}
		return nil
	})
	return rec, found, err
}

// IdempotencySave stores the response for a key.
func (e *Engine) IdempotencySave(ctx context.Context, scope, key string, rec sim.IdemRecord) error {
	rec.CreatedAt = e.clock.Now()
	return e.batch(ctx, func(tx sim.Tx) error { return tx.PutIdempotency(scope, key, rec) })
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
