package server

import (
	"context"
	"encoding/json"
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
	"github.com/dubsim/dubsim/sim/studio"
	"github.com/go-chi/chi/v5"
)

// Config is everything an instance is made of.
type Config struct {
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

	NoControl bool
	// The control API's protection (README, "Protecting the control
	// plane"; fidelity HC1-HC5): with ControlToken, every control call
	// must carry it (Authorization: Bearer, or HeaderControlToken);
	// without, only requests whose Host is an IP literal, localhost,
	// *.localhost or one of ControlHosts, and with no foreign Origin, are
	// answered. Always, a state-changing control call needs a JSON
	// Content-Type or HeaderControl. SeparateControl serves the control
	// API on ControlHandler only (a listener of its own): Handler then
	// answers only the health endpoint under /_sim.
	ControlToken    string
	ControlHosts    []string
	SeparateControl bool
	// CORSOrigins are the origins whose pages may call the platform and
	// studio interfaces ("*": any; nil: no CORS headers, preflights go to
	// the routers). The control API never grants CORS (fidelity EV4).
	CORSOrigins []string

	// JournalBytes bounds the bytes the instance's request journal keeps
	// (zero: journal.DefaultMaxBytes); JournalMemory bounds the journals
	// of every instance of a Shared together, or this one's alone
	// without Shared (zero: journal.DefaultMemory).
	JournalBytes    int64
	JournalMemory   int64
	MinPollInterval time.Duration
	// DateHeader is the clock of every answer's Date header: "simulated"
	// (the default, "") or "real".
	DateHeader string
	// AdvanceWait bounds how long a clock advance (or a read of an
	// artifact) waits for the downloads its answer depends on (zero: 30 s).
	AdvanceWait time.Duration

	// Studio interface: where uploaded and downloaded files are kept ("":
	// a temporary directory removed by Close), the processing-time model
	// (zero: the default), lax enumerations on video update, the rate
	// limit of keys without their own (zero: none), and the interface of
	// a POST /api/v1/projects on the shared address whose body has a name
	// but no other platform or studio field (Rules.SharedCreate: "studio",
	// also when empty, or "platform").
	BlobDir         string
	StudioTiming    sim.StudioTiming
	StudioLaxEnums  bool
	StudioRateLimit sim.RateLimit
	SharedCreate    string

	// Version is reported by GET /_sim/health ("": "dev").
	Version string

	// Early answers (fidelity X1-X3): after an answer sent before the
	// request body was read (a refusal), the rest of the body is read and
	// discarded, so that a client that writes its whole body before it
	// reads gets the answer instead of a connection reset. At most
	// DrainMaxBytes (zero: DefaultDrainMaxBytes, 5 GB, the largest body a
	// route accepts; negative: never drain), giving up when no byte arrives
	// for DrainIdleTimeout (zero: 30 s) or after DrainTimeout in all (zero:
	// 60 s); then the connection is closed.
	DrainMaxBytes int64
	// Quota bounds the uploaded files (zero value: unlimited, the in-process
	// default; the binary sets sim.DefaultBlobQuota and the others).
	Quota            sim.BlobQuota
	DrainIdleTimeout time.Duration
	DrainTimeout     time.Duration
	// BodyIdleTimeout ends the reading of a request body when no byte
	// arrives for that long (fidelity HW1): the connection's read deadline
	// moves with every read, so a long upload at any steady rate is never
	// cut. Zero: DefaultBodyIdleTimeout; negative: no deadline.
	BodyIdleTimeout time.Duration
	// BodyMinRate is the rate in bytes per second a request body must
	// average once BodyIdleTimeout has passed since its first read
	// (fidelity HW5), else it fails like a stalled one. Zero:
	// DefaultBodyMinRate; negative: no minimum. No effect without an idle
	// deadline.
	BodyMinRate int64
	// BodyMemory is the budget of request-body bytes the process holds in
	// memory at once, shared by every in-memory body read (fidelity HY1):
	// a request waits for its bytes before it reads its body. Zero:
	// DefaultBodyMemory; negative: no budget.
	BodyMemory int64
	// Shared holds the resources of the process that instances built
	// with it share (NewShared): the request-body budget, the storage
	// quota's total, the output cache and the journals' memory. nil: the
	// instance makes its own from this Config (BodyMemory, Quota,
	// OutputCacheBytes, JournalMemory), as a single instance does. With
	// Shared, those fields are read from the Config given to NewShared,
	// and Quota.Total bounds the files of every instance together
	// (Quota.PerCompany and the slot limits stay per instance).
	Shared *Shared
	// ControlExtensions are more routes of the control API (the process's
	// sandboxes: /_sim/sandboxes), served behind the same guard, journal
	// and envelope as every control call. Ignored with NoControl.
	ControlExtensions []control.Extension
	// KeyPrefix and StoredClock make the instance a sandbox's (sim/sandbox;
	// engine.Config): its API keys start with KeyPrefix, and its clock
	// keeps its own scale across a restart.
	KeyPrefix   string
	StoredClock bool
}

// Shared is what the instances of one process (sandboxes) share, made once
// by NewShared and closed by its creator after the instances (an instance's
// Close leaves it open).
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
		bodyMemory = DefaultBodyMemory
	}
	dir, err := makeTempDir(outputsPrefix)
	if err != nil {
		return nil, err
	}
	return &Shared{budget: httpx.NewBodyBudget(bodyMemory), streams: ui.NewStreams(), probes: media.NewProbeSlots(media.MaxProcessProbes), quota: engine.NewQuotaPool(),
		outputs: platform.NewOutputCache(dir, cfg.OutputCacheBytes), journals: journal.NewMemory(cfg.JournalMemory)}, nil
}

// JournalMemory is the bytes the journals of the instances keep together
// now, and their bound.
func (sh *Shared) JournalMemory() (used, limit int64) {
	return sh.journals.Used(), sh.journals.Limit()
}

// BodyMemoryUsed is the bytes of the shared body budget taken now.
func (sh *Shared) BodyMemoryUsed() int64 { return sh.budget.Used() }

// Close removes the shared output cache; call it after closing every
// instance that uses it.
func (sh *Shared) Close() error { return sh.outputs.Close() }

// DefaultBodyIdleTimeout is the default of Config.BodyIdleTimeout.
const DefaultBodyIdleTimeout = 60 * time.Second

// DefaultBodyMemory is the default of Config.BodyMemory: 64 MiB, six
// bodies of the JSON routes' 10 MiB limit at once (three on the shared
// address's create, which holds two copies). Decoding takes about twice a
// body's bytes again, outside the budget: the process holds about three
// times the budget in request bodies at most.
const DefaultBodyMemory = 64 << 20

// DefaultBodyMinRate is the default of Config.BodyMinRate: 1 KiB/s (8
// kbit/s), below any link a client uploads over (GPRS does about 5 KB/s, a
// 56k modem 7 KB/s), averaged over the whole body after a minute, so a
// body that keeps a real link's pace is never cut while a trickle of a
// byte every few seconds is.
const DefaultBodyMinRate = 1024

// Server is an assembled instance.
type Server struct {
	Engine  *engine.Engine
	Journal *journal.Journal
	Faults  *faults.Faults
	// Handler serves every interface: the platform and studio APIs (see
	// Decide), output files, presigned uploads, the studio interface alone
	// under StudioPrefix, the platform interface (and its output files)
	// alone under PlatformPrefix and, unless NoControl, the control API under
	// /_sim/. Every answer carries HeaderInterface.
	Handler http.Handler
	// StudioHandler serves only the studio interface (and presigned
	// uploads), for a separate studio address.
	StudioHandler http.Handler
	// ControlHandler serves only the control API, the dashboard and the
	// health endpoint, for a separate control address (nil unless
	// Config.SeparateControl).
	ControlHandler http.Handler

	tempBlobs string
	platform  *platform.API // its output cache is removed at Close
	bodies    *httpx.BodyTenant
}

// BodyMemoryUsed is the bytes of the body budget this instance's requests
// hold now (its tenant's part).
func (s *Server) BodyMemoryUsed() int64 { return s.bodies.Used() }

// RemoveStaleSpools removes the request bodies an earlier dubsim process
// spooled to the temporary directory and left there when it crashed (the
// idempotency middleware's, named idempotency.SpoolPattern), and no other file.
// The binary calls it once at start; it returns how many it removed.
func RemoveStaleSpools() (int, error) {
	return idempotency.RemoveSpools(os.TempDir())
}

// Close stops background work (artifact downloads) and removes a temporary
// blob directory.
func (s *Server) Close() error {
	s.Engine.Close()
	if s.Journal != nil {
		s.Journal.Close()
	}
	var err error
	if s.platform != nil {
		err = s.platform.Close()
	}
	if s.tempBlobs != "" {
		err = errors.Join(err, os.RemoveAll(s.tempBlobs))
	}
	return err
}

// Each HTTP adapter declares the methods it needs; these give it the engine
// services that provide them.
type (
	platformService struct {
		*engine.Accounts
		*engine.Projects
		*engine.Data
		*engine.Idempotency
	}
	studioService struct {
		*engine.Clock
		*engine.Data
		*engine.Accounts
		*engine.Uploads
		*engine.Artifacts
		*engine.StudioProjects
		*engine.Videos
		*engine.Idempotency
	}
	controller struct {
		*engine.Clock
		*engine.Accounts
		*engine.Data
		*engine.Outcomes
		*engine.Videos
	}
	uiSource struct {
		*engine.Clock
		*engine.Projects
		*engine.Data
	}
)

// PlatformService gives the platform interface the engine services it uses.
func PlatformService(e *engine.Engine) platform.Service {
	return platformService{e.Accounts, e.Projects, e.Data, e.Idempotency}
}

// StudioService gives the studio interface the engine services it uses.
func StudioService(e *engine.Engine) studio.Service {
	return studioService{e.Clock, e.Data, e.Accounts, e.Uploads, e.Artifacts, e.StudioProjects, e.Videos, e.Idempotency}
}

// Controller gives the control API the engine services it drives.
func Controller(e *engine.Engine) control.Controller {
	return controller{e.Clock, e.Accounts, e.Data, e.Outcomes, e.Videos}
}

// UISource gives the dashboard the engine services it reads.
func UISource(e *engine.Engine) ui.Source { return uiSource{e.Clock, e.Projects, e.Data} }

// Compile-time checks of the wiring.
var (
	_ engine.Prober        = (*media.Resolver)(nil)
	_ platform.Service     = platformService{}
	_ platform.Generations = platformService{}
	_ control.Controller   = controller{}
	_ studio.Service       = studioService{}
	_ ui.Source            = uiSource{}
	_ engine.StudioMedia   = (*media.Resolver)(nil)
	_ engine.Blobs         = (*blob.Dir)(nil)
	_ engine.TimeSource    = (*sim.SimClock)(nil)
)

// New assembles an instance and starts its engine (clock restored, fixture
// accounts ensured).
func New(ctx context.Context, cfg Config) (*Server, error) {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ids := sim.NewIDs(cfg.Seed)
	s := &Server{}
	shared := cfg.Shared
	if shared == nil {
		// Its own: a nil quota pool and output cache are made below.
		shared = &Shared{}
	}
	resolver := &media.Resolver{Rules: func() []sim.MediaRule { return s.Engine.Data.Fixtures().MediaRules },
		AllowHosts: cfg.FetchHosts, IDs: ids, Client: cfg.MediaHTTP,
		NoLoopback: cfg.NoLoopbackFetch, GenericErrors: !cfg.FetchErrorDetail, Log: log, Process: shared.probes}
	blobDir := cfg.BlobDir
	if blobDir == "" {
		d, err := makeTempDir(blobsPrefix)
		if err != nil {
			return nil, err
		}
		blobDir, s.tempBlobs = d, d
	}
	blobs, err := blob.Open(blobDir)
	if err != nil {
		return nil, err
	}
	s.Engine = engine.New(engine.Config{
		Store: cfg.Store, Clock: cfg.Clock, IDs: ids, Prober: resolver, Timing: cfg.Timing,
		Fixtures: cfg.Fixtures, FixtureFS: cfg.FixtureFS, Log: log,
		StudioTiming: cfg.StudioTiming, Media: resolver, Inspect: media.Inspect, Blobs: blobs, WorkWait: cfg.AdvanceWait,
		Quota: cfg.Quota, QuotaPool: shared.quota, FetchErrorDetail: cfg.FetchErrorDetail, OnEvent: eventLog(log),
		KeyPrefix: cfg.KeyPrefix, StoredClock: cfg.StoredClock,
	})
	e := s.Engine
	if err := e.Start(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	journals := shared.journals
	if journals == nil {
		journals = journal.NewMemory(cfg.JournalMemory)
	}
	s.Journal = journal.New(journal.Config{MaxBytes: cfg.JournalBytes, Memory: journals, SimNow: cfg.Clock.Now, MinPollInterval: cfg.MinPollInterval, Route: journalRoute,
		// The project pages are a person reading, like the dashboard: not
		// recorded (fidelity EF3).
		Unrecorded: func(r *http.Request) bool { return !cfg.NoControl && isPageView(r) }})
	// Fault rules expire on real time plus clock advances, as rate-limit
	// windows pass (fidelity K9).
	s.Faults = faults.New(faults.Config{Envelope: Envelope, Seed: cfg.Seed, Now: s.Engine.Clock.Wall,
		OnFire: func(r *http.Request, id string) { journal.SetFault(r.Context(), id) },
		// The control API is never faulted: the routing decision says which
		// requests are its (RouteOf).
		Exempt: func(r *http.Request) bool { return RouteOf(r).Interface == Control }})

	// One set of Idempotency-Key slots in flight for both interfaces: their
	// records share the store and the scope (the API key).
	slots := &idempotency.Slots{}
	// Rendered output files are cached in a directory of this process,
	// removed at Close (fidelity HO1): the shared cache's, or one of its
	// own.
	var outputs string
	if shared.outputs == nil {
		var err error
		if outputs, err = makeTempDir(outputsPrefix); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	api := platform.New(platform.Config{
		Service: PlatformService(e), Log: log, PublicURL: cfg.PublicURL,
		RejectUnknownFields: cfg.RejectUnknownFields, CreateStatus: cfg.CreateStatus, IdemSlots: slots,
		OutputCacheDir: outputs, OutputCacheBytes: cfg.OutputCacheBytes, OutputCache: shared.outputs,
	})
	s.platform = api
	root := chi.NewRouter()
	// The root router answers methods it does not know (PROPFIND, ...) and
	// unknown paths before any mounted API sees them: in the envelope.
	// Allow names the methods the address serves on the path (chi cannot
	// see into the dispatch of the platform and studio routers).
	var platformRoutes, studioRoutes, controlRoutes chi.Router = api.Routes(), nil, root
	methodNotAllowed := func(w http.ResponseWriter, r *http.Request) {
		if RouteOf(r).Interface == Control {
			httpx.SetAllow(w, httpx.Allowed(controlRoutes, httpx.RoutePath(r)))
		} else {
			httpx.SetAllow(w, dispatch{platform: platformRoutes, studio: studioRoutes}.allowed(httpx.RoutePath(r)))
		}
		ct, body := Envelope(r, http.StatusMethodNotAllowed, "MethodNotAllowedError", "Method "+r.Method+" is not allowed on "+r.URL.Path)
		writeRaw(w, http.StatusMethodNotAllowed, ct, body)
	}
	root.MethodNotAllowed(methodNotAllowed)
	notFound := func(w http.ResponseWriter, r *http.Request) {
		ct, body := Envelope(r, http.StatusNotFound, "NotFoundError", "No route "+r.Method+" "+r.URL.Path)
		writeRaw(w, http.StatusNotFound, ct, body)
	}
	root.NotFound(notFound)
	dumps := control.NewDumpGate()
	web := ui.New(ui.Config{Source: UISource(e), Track: platform.Track, Log: log, Dumps: dumps, Streams: shared.streams,
		Changes: func() ui.Version {
			js := s.Journal.Stats()
			return ui.Version{Data: e.Data.Changes(), Journal: js.LastSeq, JournalTotal: js.Total,
				Frozen: e.Clock.Frozen(), TimeScale: e.Clock.TimeScale()}
		}})
	var controlRoot chi.Router
	// The OpenAPI documents name the address they are served from.
	docBase := func(r *http.Request) string { return httpx.BaseURL(r, strings.TrimRight(cfg.PublicURL, "/")) }
	if !cfg.NoControl {
		exts := append([]control.Extension{
			{Paths: ui.ControlPaths, Handler: web.ControlRoutes()},
			{Paths: []string{"/requests", "/requests/*", "/report"}, Handler: s.Journal.Routes()},
			{Paths: []string{"/faults", "/faults/*"}, Handler: s.Faults.Routes()},
			{Paths: []string{"/openapi.json", "/openapi/*"}, Handler: openapi.Handler(docBase)},
			{Paths: openapi.ReferencePaths, Handler: openapi.Reference(docBase)},
		}, cfg.ControlExtensions...)
		ctl := control.New(Controller(e), log, exts...).WithDumpGate(dumps).Routes()
		if cfg.SeparateControl {
			controlRoot = chi.NewRouter()
			controlRoot.NotFound(notFound)
			controlRoot.MethodNotAllowed(methodNotAllowed)
			controlRoutes = controlRoot
			controlRoot.Mount("/_sim", ctl)
		} else {
			root.Mount("/_sim", ctl)
		}
	}
	st := studio.New(studio.Config{
		Service: StudioService(e),
		Log:     log, PublicURL: cfg.PublicURL, RejectUnknownFields: cfg.RejectUnknownFields,
		CreateStatus: cfg.CreateStatus, LaxEnums: cfg.StudioLaxEnums, DefaultRateLimit: cfg.StudioRateLimit, IdemSlots: slots,
	})
	studioRoutes = st.Routes()
	root.Mount("/", dispatch{platform: platformRoutes, studio: studioRoutes, control: http.HandlerFunc(notFound)})
	started := time.Now()
	main, studioOnly, platformOnly := s.Faults.Middleware(root), s.Faults.Middleware(studioRoutes), s.Faults.Middleware(platformRoutes)
	guard := newControlGuard(cfg.ControlToken, cfg.ControlHosts)
	if !cfg.NoControl {
		// The web application shows any company's records without a login,
		// so it goes with the control API (fidelity UI1), and its token.
		main, studioOnly = pages(main, web, !cfg.SeparateControl, guard), pages(studioOnly, web, false, guard)
	}
	// Outermost, around every interface: a refused request's body is read
	// after the answer (early answers, fidelity X1-X3). Routing comes next:
	// it decides once (Decide) and names the interface on every answer, the
	// health endpoint's included; the journal records the path as sent, so
	// the prefix is removed inside it.
	//
	// The control guard comes after the health endpoint (always open) and
	// before the journal: a refused call is not recorded, and an accepted
	// one is recorded without its token.
	early := newEarlyAnswers(cfg)
	// Inside drain, so that drain's own reading of a refused body keeps
	// its bounds; outside routing, whose Decide reads the body.
	bodyIdle := cfg.BodyIdleTimeout
	if bodyIdle == 0 {
		bodyIdle = DefaultBodyIdleTimeout
	}
	bodyMinRate := cfg.BodyMinRate
	if bodyMinRate == 0 {
		bodyMinRate = DefaultBodyMinRate
	}
	// The instance is one tenant of the process's body budget (of every
	// instance of a Shared), for every listener.
	budget := shared.budget
	if cfg.Shared == nil {
		bodyMemory := cfg.BodyMemory
		if bodyMemory == 0 {
			bodyMemory = DefaultBodyMemory
		}
		budget = httpx.NewBodyBudget(bodyMemory)
	}
	bodies := budget.Tenant()
	s.bodies = bodies
	// The routing reads a create's body in full only for a key of this
	// instance: before authentication it reads a bounded prefix and holds
	// none of the budget (Rules.Authenticated).
	authenticated := func(r *http.Request) bool {
		key, _ := httpx.Bearer(r.Header.Get("Authorization"))
		if key == "" {
			return false
		}
		_, err := e.Accounts.Account(r.Context(), key)
		return err == nil
	}
	// The access log sits inside routing (it names the interface) and
	// around everything that answers (fidelity EL1).
	access := newAccessLog(log, e.Accounts.Account)
	outer := func(rules Rules, h http.Handler, guarded bool) http.Handler {
		inner := s.Journal.Middleware(early.answer(limitURI(h)))
		if guarded {
			inner = guard.wrap(inner, early.answer)
		}
		// The access log sits outside CORS, so preflights answered there
		// are logged too.
		served := cors(cfg.CORSOrigins, s.health(inner, early.answer, cfg.Version, started, cfg.Clock.Now))
		if access != nil {
			served = access(served)
		}
		return early.drain(httpx.IdleBody(bodyIdle, bodyMinRate, log, bodies.Middleware(routing(rules, served))))
	}
	s.Handler = outer(Rules{SharedCreate: cfg.SharedCreate, Pages: !cfg.NoControl, Authenticated: authenticated}, byPrefix(studioOnly, platformOnly, main), controlRoot == nil && !cfg.NoControl)
	s.StudioHandler = outer(Rules{StudioOnly: true}, studioOnly, false)
	if controlRoot != nil {
		s.ControlHandler = outer(Rules{ControlOnly: true}, pages(controlRoot, web, true, guard), true)
	}
	if cfg.DateHeader != DateReal {
		s.Handler, s.StudioHandler = simulatedDate(s.Handler, cfg.Clock.Now), simulatedDate(s.StudioHandler, cfg.Clock.Now)
		if s.ControlHandler != nil {
			s.ControlHandler = simulatedDate(s.ControlHandler, cfg.Clock.Now)
		}
	}
	return s, nil
}

func writeRaw(w http.ResponseWriter, status int, ct string, body []byte) {
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Envelope renders an error body in the envelope of the interface that
// serves a request (RouteOf), for injected faults and the root router.
func Envelope(r *http.Request, status int, name, message string) (string, []byte) {
	return EnvelopeOf(RouteOf(r).Interface, name, message)
}

// EnvelopeOf renders an error body in the envelope of an interface
// (Platform, Studio or Control): for a front of the servers (sim/sandbox)
// that answers before any of them has routed the request.
func EnvelopeOf(iface, name, message string) (string, []byte) {
	var v any
	switch iface {
	case Control:
		v = httpx.ControlEnvelope{Error: name, Message: message}
	case Studio:
		v = studio.Envelope{Error: message}
	default:
		v = platform.Envelope{Error: name, Message: message}
	}
	b, _ := json.Marshal(v)
	return "application/json; charset=utf-8", append(b, '\n')
}
