// Package app is dubsim's composition root. NewServer builds one simulator
// in order: its shared resources, blob directory, media resolver, engine,
// journal, faults, the two interfaces, the dashboard and the control API,
// then the router that serves them (sim/server). New builds a process: the
// default simulator and its sandboxes (sim/sandbox), each sandbox a
// NewServer of its own. cmd/dubsim, dubsimtest and the test harnesses all
// assemble through it.
package app

import (
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
	Clock engine.TimeSource
	// OutputCacheBytes bounds the disk the cache of rendered output files
	// uses (zero: platform.DefaultOutputCacheBytes).
	OutputCacheBytes int64
	Fixtures         *sim.Fixtures
	FixtureFS        fs.FS
	Seed             uint64
	Timing           sim.Timing
	Log              *slog.Logger

	FetchHosts []string
	MediaHTTP  *http.Client // nil: a default client
	// NoLoopbackFetch: media on this machine is not fetched (fidelity HF1).
	NoLoopbackFetch bool
	// FetchErrorDetail tells a creation why its source video could not be
	// read (closed port, HTTP status...); off, only that it could not
	// (fidelity HF2).
	FetchErrorDetail bool

	PublicURL           string
	RejectUnknownFields bool
	CreateStatus        int

	// JournalBytes bounds the bytes the instance's request journal keeps
	// (zero: journal.DefaultMaxBytes); JournalMemory bounds the journals
	// of every instance of a Shared together (zero: journal.DefaultMemory).
	JournalBytes    int64
	JournalMemory   int64
	MinPollInterval time.Duration
	// AdvanceWait bounds how long a clock advance (or a read of an
	// artifact) waits for the downloads its answer depends on (zero: 30 s).
	AdvanceWait time.Duration

	// Studio interface: where uploaded and downloaded files are kept ("":
	// a temporary directory removed by Close), the processing-time model
	// (zero: the default), lax enumerations on video update and the rate
	// limit of keys without their own (zero: none).
	BlobDir         string
	StudioTiming    sim.StudioTiming
	StudioLaxEnums  bool
	StudioRateLimit sim.RateLimit

	// Quota bounds the uploaded files (zero value: unlimited, the in-process
	// default; the binary sets sim.DefaultBlobQuota and the others).
	Quota sim.BlobQuota
	// BodyMemory is the budget of request-body bytes the process holds in
	// memory at once, shared by every in-memory body read (fidelity HY1):
	// a request waits for its bytes before it reads its body. Zero:
	// server.DefaultBodyMemory; negative: no budget.
	BodyMemory int64
	// Shared holds the resources of the process that instances built
	// with it share (NewShared): the request-body budget, the storage
	// quota's total, the output cache and the journals' memory. nil: the
	// instance makes its own from this Config, as a single instance does.
	// With Shared, those fields are read from the Config given to
	// NewShared, and Quota.Total bounds the files of every instance
	// together (Quota.PerCompany and the slot limits stay per instance).
	Shared *Shared
	// APIKeys and StoredClock make the instance a sandbox's (sim/sandbox;
	// engine.Config): its API keys take the sandbox's form, and its clock
	// keeps its own scale across a restart.
	APIKeys     engine.APIKeys
	StoredClock bool
}

// Shared is what the instances of one process (sandboxes) share, made once
// by NewShared and closed by its creator after the instances.
type Shared struct {
	budget   *httpx.BodyBudget
	streams  *httpx.Gate // the dashboards' event streams (ui.Config.Streams)
	probes   media.ProbeSlots
	quota    *engine.QuotaPool
	outputs  *platform.OutputCache
	journals *journal.Memory
}

// NewShared makes the shared resources from cfg's BodyMemory,
// OutputCacheBytes and JournalMemory (the output cache's directory is a
// temporary one, removed by Close).
func NewShared(cfg Config) (*Shared, error) {
	bodyMemory := cfg.BodyMemory
	if bodyMemory == 0 {
		bodyMemory = server.DefaultBodyMemory
	}
	dir, err := server.MakeTempOutputDir()
	if err != nil {
		return nil, err
	}
	return &Shared{budget: httpx.NewBodyBudget(bodyMemory), streams: ui.NewStreams(), probes: media.NewProbeSlots(media.MaxProcessProbes), quota: engine.NewQuotaPool(),
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
	_ engine.TimeSource  = (*sim.SimClock)(nil)
)

// undo is what a build made, to be released newest first.
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
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
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

// newEngine builds the media resolver, the blob directory and the engine.
func newEngine(cfg Config) (*engine.Engine, error) {
	blobs, err := blob.Open(cfg.BlobDir)
	if err != nil {
		return nil, err
	}
	ids := sim.NewIDs(cfg.Seed)
	resolver := &media.Resolver{AllowHosts: cfg.FetchHosts, IDs: ids, Client: cfg.MediaHTTP,
		NoLoopback: cfg.NoLoopbackFetch, GenericErrors: !cfg.FetchErrorDetail, Log: cfg.Log, Process: cfg.Shared.probes}
	e := engine.New(engine.Config{
		Store: cfg.Store, Clock: cfg.Clock, IDs: ids, Prober: resolver, Timing: cfg.Timing,
		Fixtures: cfg.Fixtures, FixtureFS: cfg.FixtureFS, Log: cfg.Log,
		StudioTiming: cfg.StudioTiming, Media: resolver, Inspect: media.Inspect, Blobs: blobs, WorkWait: cfg.AdvanceWait,
		Quota: cfg.Quota, QuotaPool: cfg.Shared.quota, FetchErrorDetail: cfg.FetchErrorDetail, OnEvent: server.EventLog(cfg.Log),
		APIKeys: cfg.APIKeys, StoredClock: cfg.StoredClock,
	})
	// The media rules are the fixtures' the engine holds now (the control
	// API replaces them); nothing is probed before Start.
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
	// One set of Idempotency-Key slots in flight for both interfaces: their
	// records share the store and the scope (the API key).
	slots := &idempotency.Slots{}
	// Rendered output files are cached in a directory of this process,
	// removed with Shared (fidelity HO1).
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
		Bodies: cfg.Shared.budget.Tenant(), Log: log, Close: api.Close}
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
