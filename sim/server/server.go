package server

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/dubsim/dubsim/sim/control"
	"github.com/dubsim/dubsim/sim/control/ui"
	"github.com/dubsim/dubsim/sim/engine"
	"github.com/dubsim/dubsim/sim/faults"
	"github.com/dubsim/dubsim/sim/idempotency"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/dubsim/dubsim/sim/journal"
	"github.com/dubsim/dubsim/sim/platform"
	"github.com/dubsim/dubsim/sim/studio"
	"github.com/go-chi/chi/v5"
)

// Config is how the router answers: the control API's protection, CORS,
// the Date header, the shared address's routing and the bounds of request
// bodies. sim/app builds the parts it routes (Parts).
type Config struct {
	NoControl bool
	// The control API's protection (controlGuard; README, "Protecting the
	// control plane"). SeparateControl serves the control API on
	// ControlHandler only (a listener of its own): Handler then answers
	// only the health endpoint under /_sim.
	ControlToken    string
	ControlHosts    []string
	SeparateControl bool
	// CORSOrigins are the origins whose pages may call the platform and
	// studio interfaces ("*": any; nil: no CORS headers, preflights go to
	// the routers). The control API never grants CORS (fidelity EV4).
	CORSOrigins []string
	// DateHeader is the clock of every answer's Date header: "simulated"
	// (the default, "") or "real".
	DateHeader string
	// SharedCreate is the interface of a POST /api/v1/projects on the
	// shared address whose body has a name but no other platform or studio
	// field (Rules.SharedCreate: "studio", also when empty, or "platform").
	SharedCreate string
	// Version is reported by GET /_sim/health ("": "dev").
	Version string

	// The bounds of the reading of a refused request's body (earlyAnswers,
	// fidelity X1-X3): DrainMaxBytes (zero: DefaultDrainMaxBytes; negative:
	// never drain), DrainIdleTimeout and DrainTimeout (zero: their defaults).
	DrainMaxBytes    int64
	DrainIdleTimeout time.Duration
	DrainTimeout     time.Duration
	// BodyIdleTimeout ends the reading of a request body when no byte
	// arrives for that long (fidelity HW1); BodyMinRate is the rate in
	// bytes per second a body must average once BodyIdleTimeout has passed
	// since its first read (HW5). Zero: their defaults; negative: none
	// (httpx.IdleBody).
	BodyIdleTimeout time.Duration
	BodyMinRate     int64
}

// DefaultBodyIdleTimeout is the default of Config.BodyIdleTimeout.
const DefaultBodyIdleTimeout = 60 * time.Second

// DefaultBodyMemory is the default of the body budget (sim/app's
// Config.BodyMemory): 64 MiB, six bodies of the JSON routes' 10 MiB limit
// at once (three on the shared address's create, which holds two copies).
// Decoding takes about twice a body's bytes again, outside the budget: the
// process holds about three times the budget in request bodies at most.
const DefaultBodyMemory = 64 << 20

// DefaultBodyMinRate is the default of Config.BodyMinRate: 1 KiB/s, below
// any link a client uploads over (GPRS does about 5 KB/s), so a body that
// keeps a real link's pace is never cut while a trickle is.
const DefaultBodyMinRate = 1024

// Parts are what New routes, built by sim/app.
type Parts struct {
	Engine   *engine.Engine
	Journal  *journal.Journal
	Faults   *faults.Faults
	Platform chi.Router
	Studio   chi.Router
	Control  http.Handler // mounted at /_sim (nil with NoControl)
	UI       *ui.UI
	Bodies   *httpx.BodyTenant // the instance's tenant of the process's body budget
	Log      *slog.Logger
	Close    func() error // releases the parts once the handlers are done
}

// Server is an assembled instance: its parts and the handlers that route
// to them. Every answer carries HeaderInterface.
type Server struct {
	Engine  *engine.Engine
	Journal *journal.Journal
	Faults  *faults.Faults
	// Handler serves every interface (Decide); StudioHandler the studio
	// interface alone, for a separate studio address; ControlHandler the
	// control API, the dashboard and the health endpoint alone, for a
	// separate control address (nil unless Config.SeparateControl).
	Handler, StudioHandler, ControlHandler http.Handler

	bodies *httpx.BodyTenant
	close  func() error
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

// Close releases the parts (Parts.Close).
func (s *Server) Close() error {
	if s.close == nil {
		return nil
	}
	return s.close()
}

// New routes the parts: one handler per listener, each wrapped in the
// middleware every interface shares.
func New(cfg Config, p Parts) *Server {
	s := &Server{Engine: p.Engine, Journal: p.Journal, Faults: p.Faults, bodies: p.Bodies, close: p.Close}
	root, controlRoot := s.routers(cfg, p)
	main, studioOnly, platformOnly := p.Faults.Middleware(root), p.Faults.Middleware(p.Studio), p.Faults.Middleware(p.Platform)
	guard := newControlGuard(cfg.ControlToken, cfg.ControlHosts)
	if p.Control != nil {
		// The web application shows any company's records without a login,
		// so it goes with the control API (fidelity UI1), and its token.
		main, studioOnly = pages(main, p.UI, !cfg.SeparateControl, guard), pages(studioOnly, p.UI, false, guard)
	}
	outer := s.outer(cfg, p, guard)
	s.Handler = outer(Rules{SharedCreate: cfg.SharedCreate, Pages: p.Control != nil, Authenticated: s.authenticated},
		byPrefix(studioOnly, platformOnly, main), controlRoot == nil && p.Control != nil)
	s.StudioHandler = outer(Rules{StudioOnly: true}, studioOnly, false)
	if controlRoot != nil {
		s.ControlHandler = outer(Rules{ControlOnly: true}, pages(controlRoot, p.UI, true, guard), true)
	}
	return s
}

// routers makes the root router of the main address and, with
// SeparateControl, the control address's (nil otherwise). They answer
// methods they do not know (PROPFIND, ...) and unknown paths before any
// mounted API sees them: in the envelope. Allow names the methods the
// address serves on the path (chi cannot see into the dispatch of the
// platform and studio routers).
func (s *Server) routers(cfg Config, p Parts) (root, controlRoot chi.Router) {
	root = chi.NewRouter()
	controlRoutes := root
	methodNotAllowed := func(w http.ResponseWriter, r *http.Request) {
		if RouteOf(r).Interface == Control {
			httpx.SetAllow(w, httpx.Allowed(controlRoutes, httpx.RoutePath(r)))
		} else {
			httpx.SetAllow(w, dispatch{platform: p.Platform, studio: p.Studio}.allowed(httpx.RoutePath(r)))
		}
		writeError(w, r, http.StatusMethodNotAllowed, "MethodNotAllowedError", "Method "+r.Method+" is not allowed on "+r.URL.Path)
	}
	notFound := func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, http.StatusNotFound, "NotFoundError", "No route "+r.Method+" "+r.URL.Path)
	}
	root.MethodNotAllowed(methodNotAllowed)
	root.NotFound(notFound)
	if p.Control != nil {
		if cfg.SeparateControl {
			controlRoot = chi.NewRouter()
			controlRoot.NotFound(notFound)
			controlRoot.MethodNotAllowed(methodNotAllowed)
			controlRoutes = controlRoot
			controlRoot.Mount("/_sim", p.Control)
		} else {
			root.Mount("/_sim", p.Control)
		}
	}
	root.Mount("/", dispatch{platform: p.Platform, studio: p.Studio, control: http.HandlerFunc(notFound)})
	return root, controlRoot
}

// authenticated tells whether a request carries a key of this instance:
// the routing reads a create's body in full only then; before
// authentication it reads a bounded prefix and holds none of the budget
// (Rules.Authenticated).
func (s *Server) authenticated(r *http.Request) bool {
	key, _ := httpx.Bearer(r.Header.Get("Authorization"))
	if key == "" {
		return false
	}
	_, err := s.Engine.Accounts.Account(r.Context(), key)
	return err == nil
}

// outer returns the wrapping of one listener's handler in the middleware
// every interface shares. Outermost: a refused request's body is read
// after the answer (early answers, fidelity X1-X3). Routing comes next: it
// decides once (Decide) and names the interface on every answer, the
// health endpoint's included; the journal records the path as sent, so
// the prefix is removed inside it. The control guard comes after the
// health endpoint (always open) and before the journal: a refused call is
// not recorded, and an accepted one is recorded without its token.
func (s *Server) outer(cfg Config, p Parts, guard *controlGuard) func(Rules, http.Handler, bool) http.Handler {
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
	started := time.Now()
	// The access log sits inside routing (it names the interface) and
	// around everything that answers (fidelity EL1).
	access := newAccessLog(p.Log, p.Engine.Accounts.Account)
	return func(rules Rules, h http.Handler, guarded bool) http.Handler {
		inner := p.Journal.Middleware(early.answer(limitURI(h)))
		if guarded {
			inner = guard.wrap(inner, early.answer)
		}
		// The access log sits outside CORS, so preflights answered there
		// are logged too.
		served := cors(cfg.CORSOrigins, s.health(inner, early.answer, cfg.Version, started, p.Engine.Clock.Now))
		if access != nil {
			served = access(served)
		}
		served = early.drain(httpx.IdleBody(bodyIdle, bodyMinRate, p.Log, p.Bodies.Middleware(routing(rules, served))))
		if cfg.DateHeader != DateReal {
			served = simulatedDate(served, p.Engine.Clock.Now)
		}
		return served
	}
}

// The engine services that provide the methods each HTTP adapter declares.
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

// The platform interface keeps rendered answers only with Generations; the
// functions above check the other interfaces by their result types.
var _ platform.Generations = platformService{}

// writeError answers an error in the envelope of r's interface.
func writeError(w http.ResponseWriter, r *http.Request, status int, name, message string) {
	ct, body := Envelope(r, status, name, message)
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
