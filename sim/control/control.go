// Package control serves the simulator's control API under /_sim/: the
// clock, accounts and reset. It is not part of the provider's interface.
package control

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/go-chi/chi/v5"
)

// Controller is what the control API drives; the statemachine Engine
// provides it.
type Controller interface {
	Now() time.Time
	TimeScale() float64
	Advance(ctx context.Context, d time.Duration) (time.Time, error)
	CreateAccount(ctx context.Context, spec sim.AccountSpec) (sim.Account, error)
	Reset(ctx context.Context) error
}

// Envelope is the control API's error body (the platform's shape).
type Envelope struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

var names = map[sim.Code]struct {
	status int
	name   string
}{
	sim.CodeValidation: {http.StatusBadRequest, "ValidationError"},
	sim.CodeTooLarge:   {http.StatusRequestEntityTooLarge, "ValidationError"},
	sim.CodeConflict:   {http.StatusConflict, "ConflictError"},
	sim.CodeRoute:      {http.StatusNotFound, "NotFoundError"},
	sim.CodeNotFound:   {http.StatusNotFound, "NotFoundError"},
	sim.CodeMethod:     {http.StatusMethodNotAllowed, "MethodNotAllowedError"},
}

// Render maps an error to the control API's status and envelope.
func Render(err error) (int, any) {
	m, ok := names[sim.ErrorCode(err)]
	if !ok {
		m = struct {
			status int
			name   string
		}{http.StatusInternalServerError, "InternalServerError"}
	}
	msg := sim.ErrorMessage(err)
	if msg == "" {
		msg = sim.MsgInternal
	}
	return m.status, Envelope{Error: m.name, Message: msg}
}

// API is the control API.
type API struct {
	ctl  Controller
	http httpx.API
	dec  httpx.Decoder
}

// New returns the control API.
func New(ctl Controller, log *slog.Logger) *API {
	return &API{ctl: ctl, http: httpx.API{Render: Render, Log: log}, dec: httpx.Decoder{MaxBytes: 1 << 20, RejectUnknown: true}}
}

// Routes returns the whole route table of the control API, mounted at /_sim.
func (a *API) Routes() chi.Router {
	r := chi.NewRouter()
	r.Use(a.http.Recover)
	r.NotFound(a.http.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return sim.Errorf(sim.CodeRoute, "No control route %s %s", r.Method, r.URL.Path)
	}))
	r.MethodNotAllowed(a.http.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return sim.Errorf(sim.CodeMethod, "Method %s is not allowed on %s", r.Method, r.URL.Path)
	}))
	r.Get("/clock", a.http.Handle(a.handleClock))
	r.Post("/clock/advance", a.http.Handle(a.handleAdvance))
	r.Post("/accounts", a.http.Handle(a.handleCreateAccount))
	r.Post("/reset", a.http.Handle(a.handleReset))
	return r
}

// Time formats control API timestamps: ISO 8601 UTC with milliseconds.
func Time(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

type clockResponse struct {
	Now       string   `json:"now"`
	TimeScale *float64 `json:"time_scale,omitempty"`
}

// handleClock serves GET /_sim/clock.
func (a *API) handleClock(w http.ResponseWriter, r *http.Request) error {
	scale := a.ctl.TimeScale()
	httpx.WriteJSON(w, http.StatusOK, clockResponse{Now: Time(a.ctl.Now()), TimeScale: &scale})
	return nil
}

type advanceBody struct {
	Seconds *float64 `json:"seconds"`
}

// maxAdvance bounds one advance (about 100 years), so durations cannot overflow.
const maxAdvance = 100 * 365 * 24 * 3600

// handleAdvance serves POST /_sim/clock/advance {"seconds": N}.
func (a *API) handleAdvance(w http.ResponseWriter, r *http.Request) error {
	var b advanceBody
	if err := a.dec.Decode(w, r, &b); err != nil {
		return err
	}
	if b.Seconds == nil {
		return sim.Errorf(sim.CodeValidation, sim.MsgRequired, "seconds")
	}
	s := *b.Seconds
	if math.IsNaN(s) || s < 0 || s > maxAdvance {
		return sim.Errorf(sim.CodeValidation, "seconds must be between 0 and %d; got %v", maxAdvance, s)
	}
	now, err := a.ctl.Advance(r.Context(), time.Duration(s*float64(time.Second)))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, clockResponse{Now: Time(now)})
	return nil
}

type accountBody struct {
	APIKey               string   `json:"api_key"`
	Name                 string   `json:"name"`
	Plan                 *string  `json:"plan"`
	BalanceMinutes       *float64 `json:"balance_minutes"`
	RetranslationEnabled bool     `json:"retranslation_enabled"`
	CloningEnabled       bool     `json:"cloning_enabled"`
}

type accountResponse struct {
	APIKey               string `json:"api_key"`
	Name                 string `json:"name"`
	Plan                 string `json:"plan"`
	BalanceMinutes       int64  `json:"balance_minutes"`
	RetranslationEnabled bool   `json:"retranslation_enabled"`
	CloningEnabled       bool   `json:"cloning_enabled"`
	CreatedAt            string `json:"created_at"`
}

// handleCreateAccount serves POST /_sim/accounts.
func (a *API) handleCreateAccount(w http.ResponseWriter, r *http.Request) error {
	var b accountBody
	if err := a.dec.Decode(w, r, &b); err != nil {
		return err
	}
	spec := sim.AccountSpec{APIKey: b.APIKey, Name: b.Name, Plan: sim.PlanNone, RetranslationEnabled: b.RetranslationEnabled, CloningEnabled: b.CloningEnabled}
	if b.Plan != nil {
		spec.Plan = sim.Plan(*b.Plan)
	}
	if b.BalanceMinutes != nil {
		m := *b.BalanceMinutes
		if m != math.Trunc(m) || m < 0 || m > 1e12 {
			return sim.Errorf(sim.CodeValidation, "balance_minutes must be a whole number of minutes between 0 and 1e12; got %v", m)
		}
		spec.BalanceMinutes = int64(m)
	}
	acct, err := a.ctl.CreateAccount(r.Context(), spec)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, accountResponse{
		APIKey: acct.APIKey, Name: acct.Name, Plan: string(acct.Plan), BalanceMinutes: acct.BalanceMinutes,
		RetranslationEnabled: acct.RetranslationEnabled, CloningEnabled: acct.CloningEnabled, CreatedAt: Time(acct.CreatedAt),
	})
	return nil
}

// handleReset serves POST /_sim/reset: fixtures restored, everything else emptied.
func (a *API) handleReset(w http.ResponseWriter, r *http.Request) error {
	if err := a.ctl.Reset(r.Context()); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]bool{"reset": true})
	return nil
}
