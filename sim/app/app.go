// Package app is dubsim's composition root. NewServer builds one simulator
// and the router that serves it (sim/server); New builds a process: the
// default simulator and its sandboxes (sim/sandbox), each a NewServer of
// its own. cmd/dubsim, dubsimtest and the test harnesses all use it.
package app

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/blob"
	"github.com/dubsim/dubsim/sim/control"
	"github.com/dubsim/dubsim/sim/control/ui"
	"github.com/dubsim/dubsim/sim/engine"
	"github.com/dubsim/dubsim/sim/faults"
	"github.com/dubsim/dubsim/sim/idempotency"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/dubsim/dubsim/sim/journal"
	"github.com/dubsim/dubsim/sim/media"
	"github.com/dubsim/dubsim/sim/openapi"
	"github.com/dubsim/dubsim/sim/platform"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/dubsim/dubsim/sim/studio"
)

// Config is everything a simulator is made of: how its router answers
// (server.Config) and the parts NewServer builds.
type Config struct {
	server.Config

	Store sim.Store
	Clock *sim.SimClock
	// OutputCacheBytes bounds the disk of the rendered output files' cache
	// (zero: platform.DefaultOutputCacheBytes).
	OutputCacheBytes int64
	Fixtures         *sim.Fixtures
	FixtureFS        fs.FS
	Seed             uint64
	Timing           sim.Timing
	Log              *slog.Logger

	FetchHosts       []string
	NoLoopbackFetch  bool // fidelity HF1
	FetchErrorDetail bool // fidelity HF2

	PublicURL           string
	RejectUnknownFields bool
	CreateStatus        int

	// JournalBytes bounds the instance's request journal (zero:
	// journal.DefaultMaxBytes), JournalMemory the journals of a Shared
	// together (zero: journal.DefaultMemory).
	JournalBytes    int64
	JournalMemory   int64
	MinPollInterval time.Duration
	// AdvanceWait bounds how long a clock advance (or a read of an
	// artifact) waits for the downloads its answer depends on (zero: 30 s).
	AdvanceWait time.Duration

	// BlobDir keeps the studio's files ("": a temporary directory removed
	// by Close).
	BlobDir         string
	StudioTiming    sim.StudioTiming
	StudioLaxEnums  bool
	StudioRateLimit sim.RateLimit

	// Quota bounds the uploaded files (zero value: unlimited).
	Quota sim.BlobQuota
	// BodyMemory is the request-body bytes the process holds in memory at
	// once (fidelity HY1). Zero: server.DefaultBodyMemory; negative: no
	// budget.
	BodyMemory int64
	// Shared holds what the instances of a process share (NewShared); nil:
	// the instance makes its own. With Shared, Quota.Total bounds the files
	// of every instance together.
	Shared *Shared
	// APIKeys and StoredClock make the instance a sandbox's (engine.Config).
	APIKeys     engine.APIKeys
	StoredClock bool
}

// Shared is what the instances of one process share, closed by its creator
// after the instances.
type Shared struct {
	budget   *httpx.BodyBudget
	turns    *httpx.Turns // requests running at once (server.Parts.Turns)
	streams  *httpx.Gate  // the dashboards' event streams (ui.Config.Streams)
	probes   media.ProbeSlots
	quota    *engine.QuotaPool
	outputs  *platform.OutputCache
	journals *journal.Memory
}

// NewShared makes the shared resources from cfg's BodyMemory,
// OutputCacheBytes and JournalMemory.
func NewShared(cfg Config) (*Shared, error) {
	bodyMemory := cmp.Or(cfg.BodyMemory, server.DefaultBodyMemory)
	dir, err := server.MakeTempOutputDir()
	if err != nil {
		return nil, err
	}
	return &Shared{budget: httpx.NewBodyBudget(bodyMemory), turns: httpx.NewTurns(httpx.DefaultTurns()), streams: ui.NewStreams(), probes: make(media.ProbeSlots, media.MaxProcessProbes), quota: engine.NewQuotaPool(),
		outputs: platform.NewOutputCache(dir, cfg.OutputCacheBytes), journals: journal.NewMemory(cfg.JournalMemory)}, nil
}

// BodyMemoryUsed is the bytes of the shared body budget taken now.
func (sh *Shared) BodyMemoryUsed() int64 { return sh.budget.Used() }

// Close removes the shared output cache; call it after closing every
// instance that uses it.
func (sh *Shared) Close() error { return sh.outputs.Close() }

// Compile-time checks of the wiring.
var (
	_ engine.Prober      = (*media.Resolver)(nil)
	_ engine.StudioMedia = (*media.Resolver)(nil)
	_ engine.Blobs       = (*blob.Dir)(nil)
)

// undo is what a build made, released newest first.
type undo []func() error

func (u undo) run() error {
	var errs []error
	for i := len(u) - 1; i >= 0; i-- {
		errs = append(errs, u[i]())
	}
	return errors.Join(errs...)
}

// NewServer builds a simulator over cfg.Store and cfg.Clock and starts its
// engine (clock restored, fixture accounts ensured); exts are more routes
// of its control API (the process's sandboxes). Its Close releases what
// NewServer made, not the store.
func NewServer(ctx context.Context, cfg Config, exts ...control.Extension) (_ *server.Server, err error) {
	cfg.Log = cmp.Or(cfg.Log, slog.New(slog.DiscardHandler))
	var made undo
	defer func() {
		if err != nil {
			err = errors.Join(err, made.run())
		}
	}()
	if cfg.Shared == nil {
		if cfg.Shared, err = NewShared(cfg); err != nil {
			return nil, err
		}
		made = append(made, cfg.Shared.Close)
	}
	if cfg.BlobDir == "" {
		if cfg.BlobDir, err = server.MakeTempBlobDir(); err != nil {
			return nil, err
		}
		dir := cfg.BlobDir
		made = append(made, func() error { return os.RemoveAll(dir) })
	}
	e, err := newEngine(cfg)
	if err != nil {
		return nil, err
	}
	made = append(made, func() error { e.Close(); return nil })
	if err := e.Start(ctx); err != nil {
		return nil, err
	}
	p := adapters(cfg, e, exts)
	made = append(made, func() error { p.Journal.Close(); return nil }, p.Close)
	p.Close = made.run
	return server.New(cfg.Config, p), nil
}

func newEngine(cfg Config) (*engine.Engine, error) {
	blobs, err := blob.Open(cfg.BlobDir)
	if err != nil {
		return nil, err
	}
	ids := sim.NewIDs(cfg.Seed)
	resolver := &media.Resolver{AllowHosts: cfg.FetchHosts, IDs: ids,
		NoLoopback: cfg.NoLoopbackFetch, GenericErrors: !cfg.FetchErrorDetail, Log: cfg.Log, Process: cfg.Shared.probes}
	e := engine.New(engine.Config{
		Store: cfg.Store, Clock: cfg.Clock, IDs: ids, Prober: resolver, Timing: cfg.Timing,
		Fixtures: cfg.Fixtures, FixtureFS: cfg.FixtureFS, Log: cfg.Log,
		StudioTiming: cfg.StudioTiming, Media: resolver, Inspect: media.Inspect, Blobs: blobs, WorkWait: cfg.AdvanceWait,
		Quota: cfg.Quota, QuotaPool: cfg.Shared.quota, FetchErrorDetail: cfg.FetchErrorDetail, OnEvent: server.EventLog(cfg.Log),
		APIKeys: cfg.APIKeys, StoredClock: cfg.StoredClock,
	})
	// The control API replaces the fixtures; nothing is probed before Start.
	resolver.Rules = func() []sim.MediaRule { return e.Data.Fixtures().MediaRules }
	return e, nil
}

// adapters builds the middleware, the two interfaces, the dashboard and
// the control API over a started engine. The returned Close closes the
// platform interface (its part of the output cache).
func adapters(cfg Config, e *engine.Engine, exts []control.Extension) server.Parts {
	log := cfg.Log
	j := journal.New(journal.Config{MaxBytes: cfg.JournalBytes, Memory: cfg.Shared.journals, SimNow: cfg.Clock.Now, MinPollInterval: cfg.MinPollInterval, Route: server.JournalRoute,
		// The project pages are a person reading, like the dashboard: not
		// recorded (fidelity EF3).
		Unrecorded: func(r *http.Request) bool { return !cfg.NoControl && server.IsPageView(r) }})
	// Fault rules expire on real time plus clock advances, as rate-limit
	// windows pass (fidelity K9).
	f := faults.New(faults.Config{Envelope: server.Envelope, Seed: cfg.Seed, Now: e.Clock.Wall,
		OnFire: func(r *http.Request, id string) { journal.SetFault(r.Context(), id) },
		// The control API is never faulted: the routing decision says which
		// requests are its (RouteOf).
		Exempt: func(r *http.Request) bool { return server.RouteOf(r).Interface == server.Control }})
	// Both interfaces' records share the store and the scope (the API key).
	slots := &idempotency.Slots{}
	api := platform.New(platform.Config{
		Service: server.PlatformService(e), Log: log, PublicURL: cfg.PublicURL,
		RejectUnknownFields: cfg.RejectUnknownFields, CreateStatus: cfg.CreateStatus, IdemSlots: slots,
		OutputCache: cfg.Shared.outputs,
	})
	st := studio.New(studio.Config{
		Service: server.StudioService(e),
		Log:     log, PublicURL: cfg.PublicURL, RejectUnknownFields: cfg.RejectUnknownFields,
		CreateStatus: cfg.CreateStatus, LaxEnums: cfg.StudioLaxEnums, DefaultRateLimit: cfg.StudioRateLimit, IdemSlots: slots,
	})
	dumps := control.NewDumpGate()
	web := ui.New(ui.Config{Source: server.UISource(e), Track: platform.Track, Log: log, Dumps: dumps, Streams: cfg.Shared.streams,
		Changes: func() ui.Version {
			js := j.Stats()
			return ui.Version{Data: e.Data.Changes(), Journal: js.LastSeq, JournalTotal: js.Total,
				Frozen: e.Clock.Frozen(), TimeScale: e.Clock.TimeScale()}
		}})
	p := server.Parts{Engine: e, Journal: j, Faults: f, Platform: api.Routes(), Studio: st.Routes(), UI: web,
		Bodies: cfg.Shared.budget.Tenant(), Turns: cfg.Shared.turns.Tenant(), Log: log, Close: api.Close}
	if !cfg.NoControl {
		// The OpenAPI documents name the address they are served from.
		docBase := func(r *http.Request) string { return httpx.BaseURL(r, strings.TrimRight(cfg.PublicURL, "/")) }
		exts = append([]control.Extension{
			{Paths: ui.ControlPaths, Handler: web.ControlRoutes()},
			{Paths: []string{"/requests", "/requests/*", "/report"}, Handler: j.Routes()},
			{Paths: []string{"/faults", "/faults/*"}, Handler: f.Routes()},
			{Paths: []string{"/openapi.json", "/openapi/*"}, Handler: openapi.Handler(docBase)},
			{Paths: openapi.ReferencePaths, Handler: openapi.Reference(docBase)},
		}, exts...)
		p.Control = control.New(server.Controller(e), log, exts...).WithDumpGate(dumps).Routes()
	}
	return p
}
