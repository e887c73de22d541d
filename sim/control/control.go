package control

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/go-chi/chi/v5"
)

// Controller is what the control API drives.
type Controller interface {
	Now() time.Time
	TimeScale() float64
	Frozen() bool
	Advance(ctx context.Context, d time.Duration) (time.Time, error)
	SetTimeScale(ctx context.Context, scale float64) error
	Freeze(ctx context.Context) error
	Resume(ctx context.Context) error
	CreateAccount(ctx context.Context, spec sim.AccountSpec) (sim.Account, error)
	Reset(ctx context.Context) error
	ResetAccount(ctx context.Context, apiKey string) error
	State(ctx context.Context, f sim.StateFilter) (sim.State, error)
	LoadFixtureFiles(ctx context.Context, files map[string][]byte, fromStartup bool) (*sim.Fixtures, error)
	ForceProject(ctx context.Context, id, outcome, message string, now bool) (sim.Project, error)
	AddOutcomeRule(ctx context.Context, r sim.OutcomeRule) (sim.OutcomeRule, error)
	OutcomeRules(ctx context.Context) ([]sim.OutcomeRule, error)
	RemoveOutcomeRule(ctx context.Context, id string) error
	NextDue(ctx context.Context) (sim.Transition, bool, error)
	Work() []sim.Work

	// Studio.
	Caller(ctx context.Context, apiKey string) (sim.Caller, error)
	SetAccountStudio(ctx context.Context, apiKey string, ch sim.AccountStudioChange) (sim.Account, error)
	ForceArtifact(ctx context.Context, id, outcome, message string, size *int64, duration *float64, now bool) (sim.Artifact, error)
	SetVideoStatus(ctx context.Context, id, status string, auto bool) (sim.Video, error)
}

// Extension is a part of the control API served by another package: its
// router answers the listed paths.
type Extension struct {
	Paths   []string
	Handler http.Handler
}

// API is the control API.
type API struct {
	ctl   Controller
	http  httpx.API
	dec   httpx.Decoder
	ext   []Extension
	dumps *httpx.Gate // state dumps read and written at once
}

// MaxDumps is how many dumps (state, studio) are read and written at once,
// so that pages of sim.MaxStateLimit projects bound what they all hold.
const MaxDumps = 2

// NewDumpGate returns the gate the dumps of one server share.
func NewDumpGate() *httpx.Gate { return httpx.NewGate(MaxDumps) }

// WithDumpGate makes the state dump share g with the dashboard's.
func (a *API) WithDumpGate(g *httpx.Gate) *API {
	a.dumps = g
	return a
}

// New returns the control API; extensions add their routes to it.
func New(ctl Controller, log *slog.Logger, ext ...Extension) *API {
	return &API{ctl: ctl, http: httpx.API{Render: httpx.RenderControl, Log: log}, dec: httpx.Decoder{MaxBytes: 64 << 20, RejectUnknown: true}, ext: ext,
		dumps: NewDumpGate()}
}

// Routes returns the whole route table of the control API, mounted at /_sim.
func (a *API) Routes() chi.Router {
	r := httpx.NewControlRouter(a.http, httpx.MsgNoControlRoute, a.http.Recover)
	r.Get("/clock", a.reply(a.handleClock))
	r.Post("/clock/advance", a.http.Handle(a.handleAdvance))
	r.Post("/clock/scale", handleJSON(a, a.scale))
	r.Post("/clock/freeze", a.reply(a.handleFreeze))
	r.Post("/clock/resume", a.reply(a.handleResume))
	r.Get("/work", a.reply(a.handleWork))
	r.Post("/accounts", handleJSON(a, a.createAccount))
	r.Patch("/accounts/{api_key}", a.reply(a.handleUpdateAccount))
	r.Post("/artifacts/{id}/outcome", handleJSON(a, a.forceArtifact))
	r.Post("/videos/{id}/status", handleJSON(a, a.videoStatus))
	r.Post("/reset", a.reply(a.handleReset))
	r.Get("/state", a.http.Handle(a.handleState))
	r.Post("/fixtures", handleJSON(a, a.loadFixtures))
	r.Post("/projects/{id}/outcome", handleJSON(a, a.forceProject))
	r.Get("/outcomes", a.reply(a.handleListOutcomes))
	r.Post("/outcomes", handleJSON(a, a.addOutcome))
	r.Delete("/outcomes/{id}", a.reply(a.handleRemoveOutcome))
	for _, e := range a.ext {
		for _, p := range e.Paths {
			r.Handle(p, e.Handler)
		}
	}
	return r
}

// reply serves a call with the status and answer h returns, or its error.
func (a *API) reply(h func(w http.ResponseWriter, r *http.Request) (status int, out any, err error)) http.HandlerFunc {
	return a.http.Handle(func(w http.ResponseWriter, r *http.Request) error {
		status, out, err := h(w, r)
		if err != nil {
			return err
		}
		httpx.WriteJSON(w, status, out)
		return nil
	})
}

// handleJSON serves a call whose JSON body is a B with what h returns.
func handleJSON[B any](a *API, h func(r *http.Request, b B) (status int, out any, err error)) http.HandlerFunc {
	return a.reply(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		var b B
		if err := a.dec.Decode(w, r, &b); err != nil {
			return 0, nil, err
		}
		return h(r, b)
	})
}

// Time formats control API timestamps: ISO 8601 UTC with milliseconds.
func Time(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
