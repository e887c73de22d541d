package server

import (
	"cmp"
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

// Config is how the router answers; sim/app builds the parts it routes.
type Config struct {
	NoControl bool
	// The control API's protection (controlGuard). With SeparateControl
	// the control API is served on ControlHandler only, and Handler
	// answers only the health endpoint under /_sim.
	ControlToken    string
	ControlHosts    []string
	SeparateControl bool
	// CORSOrigins may call the platform and studio interfaces from a page
	// ("*": any; nil: no CORS).
	CORSOrigins []string
	// DateHeader is the clock of the Date header: DateReal, or simulated.
	DateHeader string
	// SharedCreate is Rules.SharedCreate of the shared address.
	SharedCreate string
	// Version is reported by GET /_sim/health ("": "dev").
	Version string

	// Bounds of the reading of a refused request's body (earlyAnswers):
	// zero is the default, a negative DrainMaxBytes never drains.
	DrainMaxBytes    int64
	DrainIdleTimeout time.Duration
	DrainTimeout     time.Duration
	// BodyIdleTimeout and BodyMinRate bound the reading of every request
	// body (httpx.IdleBody; fidelity HW1, HW5): zero is the default,
	// negative none.
	BodyIdleTimeout time.Duration
	BodyMinRate     int64
}

// DefaultBodyIdleTimeout is the default of Config.BodyIdleTimeout.
const DefaultBodyIdleTimeout = 60 * time.Second

// DefaultBodyMemory is the default body budget: six bodies of the JSON
// routes' 10 MiB limit at once (decoding takes about twice as much again,
// outside the budget).
const DefaultBodyMemory = 64 << 20

// DefaultBodyMinRate is below any link a client uploads over (GPRS does
// about 5 KB/s): only a trickle is cut.
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
	Turns    *httpx.TurnTenant // the instance's tenant of the process's running requests
	Log      *slog.Logger
	Close    func() error // releases the parts once the handlers are done
}

// Server is an assembled instance: its parts and the handlers that route
// to them.
type Server struct {
	Engine  *engine.Engine
	Journal *journal.Journal
	Faults  *faults.Faults
	// Handler serves every interface; StudioHandler the studio interface
	// alone; ControlHandler the control API alone (nil unless
	// Config.SeparateControl).
	Handler, StudioHandler, ControlHandler http.Handler

	bodies *httpx.BodyTenant
	close  func() error
}

// BodyMemoryUsed is the bytes of the body budget this instance holds now.
func (s *Server) BodyMemoryUsed() int64 { return s.bodies.Used() }

// RemoveStaleSpools removes the request bodies a crashed dubsim left
// spooled in the temporary directory, and returns how many.
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
// SeparateControl, the control address's (nil otherwise); they answer
// unknown methods and paths in the envelope.
func (s *Server) routers(cfg Config, p Parts) (root, controlRoot chi.Router) {
	var controlRoutes chi.Router
	methodNotAllowed := func(w http.ResponseWriter, r *http.Request) {
		if RouteOf(r).Interface == Control {
			httpx.SetAllow(w, httpx.Allowed(httpx.RoutePath(r), controlRoutes))
		} else {
			httpx.SetAllow(w, httpx.Allowed(httpx.RoutePath(r), p.Platform, p.Studio))
		}
		writeError(w, r, http.StatusMethodNotAllowed, "MethodNotAllowedError", "Method "+r.Method+" is not allowed on "+r.URL.Path)
	}
	notFound := func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, http.StatusNotFound, "NotFoundError", "No route "+r.Method+" "+r.URL.Path)
	}
	newRouter := func() chi.Router {
		r := chi.NewRouter()
		r.MethodNotAllowed(methodNotAllowed)
		r.NotFound(notFound)
		return r
	}
	root = newRouter()
	controlRoutes = root
	switch {
	case p.Control != nil && cfg.SeparateControl:
		controlRoot = newRouter()
		controlRoutes = controlRoot
		controlRoot.Mount("/_sim", p.Control)
	case p.Control != nil:
		root.Mount("/_sim", p.Control)
	}
	root.Mount("/", dispatch{platform: p.Platform, studio: p.Studio, control: http.HandlerFunc(notFound)})
	return root, controlRoot
}

// authenticated tells whether a request carries a key of this instance
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
// every interface shares, outermost first: drain (a refused body is read
// after the answer), body bounds (inside drain, which keeps its own),
// routing, turns, the access log (outside CORS, so preflights are logged),
// CORS, health (always open), the guard (a refused call is not recorded,
// an accepted one is, without its token), the journal (it records the path
// as sent: prefixes are removed inside it).
func (s *Server) outer(cfg Config, p Parts, guard *controlGuard) func(Rules, http.Handler, bool) http.Handler {
	early := newEarlyAnswers(cfg)
	bodyIdle := cmp.Or(cfg.BodyIdleTimeout, DefaultBodyIdleTimeout)
	bodyMinRate := cmp.Or(cfg.BodyMinRate, DefaultBodyMinRate)
	started := time.Now()
	access := newAccessLog(p.Log, p.Engine.Accounts.Account)
	return func(rules Rules, h http.Handler, guarded bool) http.Handler {
		inner := p.Journal.Middleware(early.answer(limitURI(h)))
		if guarded {
			inner = guard.wrap(inner, early.answer)
		}
		served := cors(cfg.CORSOrigins, s.health(inner, early.answer, cfg.Version, started, p.Engine.Clock.Now))
		if access != nil {
			served = access(served)
		}
		served = early.drain(httpx.IdleBody(bodyIdle, bodyMinRate, p.Log, p.Bodies.Middleware(routing(rules, s.turns(p.Turns, served)))))
		if cfg.DateHeader != DateReal {
			served = simulatedDate(served, p.Engine.Clock.Now)
		}
		return served
	}
}

// DateReal is Config.DateHeader for net/http's real Date header.
const DateReal = "real"

// simulatedDate sets the Date header to the simulated time the request
// arrived, the clock every body's timestamps use (fidelity K10), so a
// client that compares them with Date, or corrects its skew from it, sees
// one clock.
func simulatedDate(next http.Handler, now func() time.Time) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", now().UTC().Format(http.TimeFormat))
		next.ServeHTTP(w, r)
	})
}

// PlatformService gives the platform interface the engine services it uses.
func PlatformService(e *engine.Engine) platform.Service {
	return struct {
		*engine.Accounts
		*engine.Projects
		*engine.Data
		*engine.Idempotency
	}{e.Accounts, e.Projects, e.Data, e.Idempotency}
}

// StudioService gives the studio interface the engine services it uses.
func StudioService(e *engine.Engine) studio.Service {
	return struct {
		*engine.Clock
		*engine.Data
		*engine.Accounts
		*engine.Uploads
		*engine.Artifacts
		*engine.StudioProjects
		*engine.Videos
		*engine.Idempotency
	}{e.Clock, e.Data, e.Accounts, e.Uploads, e.Artifacts, e.StudioProjects, e.Videos, e.Idempotency}
}

// Controller gives the control API the engine services it drives.
func Controller(e *engine.Engine) control.Controller {
	return struct {
		*engine.Clock
		*engine.Accounts
		*engine.Data
		*engine.Outcomes
		*engine.Videos
	}{e.Clock, e.Accounts, e.Data, e.Outcomes, e.Videos}
}

// UISource gives the dashboard the engine services it reads.
func UISource(e *engine.Engine) ui.Source {
	return struct {
		*engine.Clock
		*engine.Projects
		*engine.Data
	}{e.Clock, e.Projects, e.Data}
}

// writeError answers an error in the envelope of r's interface.
func writeError(w http.ResponseWriter, r *http.Request, status int, name, message string) {
	ct, body := Envelope(r, status, name, message)
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Envelope renders an error body in the envelope of r's interface.
func Envelope(r *http.Request, status int, name, message string) (string, []byte) {
	return EnvelopeOf(RouteOf(r).Interface, name, message)
}

// EnvelopeOf renders an error body in the envelope of an interface.
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
