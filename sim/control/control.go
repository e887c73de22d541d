package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
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

// Extension is a part of the control API served by another package (the
// request journal, the fault rules): its router answers the listed paths.
type Extension struct {
	Paths   []string
	Handler http.Handler
}

// API is the control API.
type API struct {
	ctl  Controller
	http httpx.API
	dec  httpx.Decoder
	ext  []Extension
	// dumps bounds the state dumps read and written at once.
	dumps *httpx.Gate
}

// MaxDumps is how many dumps (state, studio) are read and written at once;
// more wait for a place while their request lasts. With pages of
// sim.MaxStateLimit projects, it bounds what all dumps together hold.
const MaxDumps = 2

// NewDumpGate returns the gate the dumps of one server share.
func NewDumpGate() *httpx.Gate { return httpx.NewGate(MaxDumps) }

// WithDumpGate makes the state dump share g (with the dashboard's studio
// dump).
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
	r := chi.NewRouter()
	r.Use(a.http.Recover)
	r.NotFound(a.http.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return sim.Errorf(sim.CodeRoute, httpx.MsgNoControlRoute, r.Method, r.URL.Path)
	}))
	r.MethodNotAllowed(httpx.WithAllow(r, a.http.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return sim.Errorf(sim.CodeMethod, httpx.MsgMethodNotAllowed, r.Method, r.URL.Path)
	})))
	r.Get("/clock", a.http.Handle(a.handleClock))
	r.Post("/clock/advance", a.http.Handle(a.handleAdvance))
	r.Post("/clock/scale", a.http.Handle(a.handleScale))
	r.Post("/clock/freeze", a.http.Handle(a.handleFreeze))
	r.Post("/clock/resume", a.http.Handle(a.handleResume))
	r.Get("/work", a.http.Handle(a.handleWork))
	r.Post("/accounts", a.http.Handle(a.handleCreateAccount))
	r.Patch("/accounts/{api_key}", a.http.Handle(a.handleUpdateAccount))
	r.Post("/artifacts/{id}/outcome", a.http.Handle(a.handleForceArtifact))
	r.Post("/videos/{id}/status", a.http.Handle(a.handleVideoStatus))
	r.Post("/reset", a.http.Handle(a.handleReset))
	r.Get("/state", a.http.Handle(a.handleState))
	r.Post("/fixtures", a.http.Handle(a.handleFixtures))
	r.Post("/projects/{id}/outcome", a.http.Handle(a.handleForceProject))
	r.Get("/outcomes", a.http.Handle(a.handleListOutcomes))
	r.Post("/outcomes", a.http.Handle(a.handleAddOutcome))
	r.Delete("/outcomes/{id}", a.http.Handle(a.handleRemoveOutcome))
	for _, e := range a.ext {
		for _, p := range e.Paths {
			r.Handle(p, e.Handler)
		}
	}
	return r
}

// Time formats control API timestamps: ISO 8601 UTC with milliseconds.
func Time(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

type clockResponse struct {
	Now       string   `json:"now"`
	TimeScale *float64 `json:"time_scale,omitempty"`
	Frozen    *bool    `json:"frozen,omitempty"`
}

func (a *API) clock() clockResponse {
	scale, frozen := a.ctl.TimeScale(), a.ctl.Frozen()
	return clockResponse{Now: Time(a.ctl.Now()), TimeScale: &scale, Frozen: &frozen}
}

// handleClock serves GET /_sim/clock.
func (a *API) handleClock(w http.ResponseWriter, r *http.Request) error {
	httpx.WriteJSON(w, http.StatusOK, a.clock())
	return nil
}

type scaleBody struct {
	TimeScale *float64 `json:"time_scale"`
}

// handleScale serves POST /_sim/clock/scale {"time_scale": x}.
func (a *API) handleScale(w http.ResponseWriter, r *http.Request) error {
	var b scaleBody
	if err := a.dec.Decode(w, r, &b); err != nil {
		return err
	}
	if b.TimeScale == nil {
		return sim.Errorf(sim.CodeValidation, sim.MsgRequired, "time_scale")
	}
	if s := *b.TimeScale; math.IsNaN(s) || s < 0 || s > 1e6 {
		return sim.Errorf(sim.CodeValidation, msgTimeScale, s)
	}
	if err := a.ctl.SetTimeScale(r.Context(), *b.TimeScale); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, a.clock())
	return nil
}

// handleFreeze serves POST /_sim/clock/freeze.
func (a *API) handleFreeze(w http.ResponseWriter, r *http.Request) error {
	if err := a.ctl.Freeze(r.Context()); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, a.clock())
	return nil
}

// handleResume serves POST /_sim/clock/resume.
func (a *API) handleResume(w http.ResponseWriter, r *http.Request) error {
	if err := a.ctl.Resume(r.Context()); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, a.clock())
	return nil
}

type advanceBody struct {
	Seconds *float64 `json:"seconds"`
	NextDue bool     `json:"next_due"`
}

// advanceResponse is the clock after an advance; Transition is the one an
// advance to the next due transition went to.
type advanceResponse struct {
	clockResponse
	Transition *transitionJSON `json:"transition,omitempty"`
}

type transitionJSON struct {
	Resource string `json:"resource"`
	ID       string `json:"id"`
	From     string `json:"from"`
	To       string `json:"to"`
	DueAt    string `json:"due_at"`
}

// maxSimTime is as far as the clock may be advanced.
var maxSimTime = time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC)

// maxAdvance bounds one advance (about 100 years), so durations cannot overflow.
const maxAdvance = 100 * 365 * 24 * 3600

// handleAdvance serves POST /_sim/clock/advance {"seconds": N}.
func (a *API) handleAdvance(w http.ResponseWriter, r *http.Request) error {
	var b advanceBody
	if err := a.dec.Decode(w, r, &b); err != nil {
		return err
	}
	if b.NextDue {
		if b.Seconds != nil {
			return sim.Errorf(sim.CodeValidation, MsgAdvanceOneOf)
		}
		return a.advanceToNext(w, r)
	}
	if b.Seconds == nil {
		return sim.Errorf(sim.CodeValidation, msgAdvanceMissing)
	}
	s := *b.Seconds
	if math.IsNaN(s) || s < 0 || s > maxAdvance {
		return sim.Errorf(sim.CodeValidation, msgAdvanceSeconds, maxAdvance, s)
	}
	d := time.Duration(s * float64(time.Second))
	if a.ctl.Now().Add(d).After(maxSimTime) {
		return sim.Errorf(sim.CodeValidation, msgPastMaxTime, Time(maxSimTime), Time(a.ctl.Now()))
	}
	if _, err := a.ctl.Advance(r.Context(), d); err != nil {
		return a.pending(w, err)
	}
	httpx.WriteJSON(w, http.StatusOK, a.clock())
	return nil
}

// advanceToNext moves the clock to the earliest pending transition (not back:
// one already due is applied at the current time).
func (a *API) advanceToNext(w http.ResponseWriter, r *http.Request) error {
	t, ok, err := a.ctl.NextDue(r.Context())
	if err != nil {
		return a.pending(w, err)
	}
	if !ok {
		return sim.Errorf(sim.CodeConflict, MsgNothingDue)
	}
	d := max(t.DueAt.Sub(a.ctl.Now()), 0)
	if _, err := a.ctl.Advance(r.Context(), d); err != nil {
		return a.pending(w, err)
	}
	httpx.WriteJSON(w, http.StatusOK, advanceResponse{clockResponse: a.clock(),
		Transition: &transitionJSON{Resource: t.Resource, ID: t.ID, From: t.From, To: t.To, DueAt: Time(t.DueAt)}})
	return nil
}

// workJSON is a piece of background work in flight (GET /_sim/work and
// the 504 of an advance that waited for it in vain).
type workJSON struct {
	Kind       string `json:"kind"`
	Resource   string `json:"resource,omitempty"`
	ID         string `json:"id,omitempty"`
	URL        string `json:"url"`
	StartedAt  string `json:"started_at"`
	NeededAt   string `json:"needed_at,omitempty"`
	WaitingFor string `json:"waiting_for"`
	Bytes      int64  `json:"bytes"`
}

func worksJSON(ws []sim.Work) []workJSON {
	out := make([]workJSON, len(ws))
	for i, w := range ws {
		out[i] = workJSON{Kind: w.Kind, Resource: w.Resource, ID: w.ID, URL: w.URL, StartedAt: Time(w.StartedAt),
			WaitingFor: w.WaitingFor, Bytes: w.Bytes}
		if !w.NeededAt.IsZero() {
			out[i].NeededAt = Time(w.NeededAt)
		}
	}
	return out
}

// handleWork serves GET /_sim/work: the background work in flight.
func (a *API) handleWork(w http.ResponseWriter, r *http.Request) error {
	httpx.WriteJSON(w, http.StatusOK, struct {
		Now  string     `json:"now"`
		Work []workJSON `json:"work"`
	}{Time(a.ctl.Now()), worksJSON(a.ctl.Work())})
	return nil
}

// ErrPendingName is the error name of the 504 of a clock advance whose new
// time depends on background work that did not end within the bound: the
// clock has moved, what was due without that work has been applied, and the
// message names what still runs.
const ErrPendingName = "PendingWorkError"

// pending writes the 504 of a *sim.PendingError; other errors are returned.
func (a *API) pending(w http.ResponseWriter, err error) error {
	var pe *sim.PendingError
	if !errors.As(err, &pe) {
		return err
	}
	httpx.WriteJSON(w, http.StatusGatewayTimeout, httpx.ControlEnvelope{Error: ErrPendingName, Message: pe.Error()})
	return nil
}

type accountBody struct {
	APIKey               string   `json:"api_key"`
	Name                 string   `json:"name"`
	Plan                 *string  `json:"plan"`
	BalanceMinutes       *float64 `json:"balance_minutes"`
	RetranslationEnabled *bool    `json:"retranslation_enabled"`
	CloningEnabled       *bool    `json:"cloning_enabled"`
	// Studio: the company to join ("" = a new one), the new user's email,
	// external-bucket credentials and a rate limit.
	CompanyID string                  `json:"company_id"`
	UserEmail string                  `json:"user_email"`
	Storage   *sim.StorageCredentials `json:"storage"`
	RateLimit *sim.RateLimit          `json:"rate_limit"`
}

type accountResponse struct {
	APIKey               string         `json:"api_key"`
	Name                 string         `json:"name"`
	Plan                 string         `json:"plan"`
	BalanceMinutes       int64          `json:"balance_minutes"`
	RetranslationEnabled bool           `json:"retranslation_enabled"`
	CloningEnabled       bool           `json:"cloning_enabled"`
	CreatedAt            string         `json:"created_at"`
	CompanyID            string         `json:"company_id"`
	UserID               string         `json:"user_id"`
	UserEmail            string         `json:"user_email"`
	Storage              *storageView   `json:"storage"`
	RateLimit            *sim.RateLimit `json:"rate_limit"`
}

// storageView shows credentials without their secret.
type storageView struct {
	AccessKeyID string   `json:"access_key_id"`
	Region      string   `json:"region,omitempty"`
	Buckets     []string `json:"buckets,omitempty"`
}

func (a *API) accountResponse(r *http.Request, acct sim.Account) (accountResponse, error) {
	out := accountResponse{
		APIKey: acct.APIKey, Name: acct.Name, Plan: string(acct.Plan), BalanceMinutes: acct.BalanceMinutes,
		RetranslationEnabled: acct.RetranslationEnabled, CloningEnabled: acct.CloningEnabled, CreatedAt: Time(acct.CreatedAt),
		RateLimit: acct.RateLimit,
	}
	if st := acct.Storage; st != nil {
		out.Storage = &storageView{AccessKeyID: st.AccessKeyID, Region: st.Region, Buckets: st.Buckets}
	}
	c, err := a.ctl.Caller(r.Context(), acct.APIKey)
	if err != nil {
		return out, err
	}
	out.CompanyID, out.UserID, out.UserEmail = c.Company.ID, c.User.ID, c.User.Email
	return out, nil
}

func checkStorage(st *sim.StorageCredentials) error {
	if st == nil {
		return nil
	}
	if st.AccessKeyID == "" || len(st.AccessKeyID) > 128 {
		return sim.Errorf(sim.CodeValidation, msgAccessKeyID)
	}
	if len(st.SecretAccessKey) > 256 || len(st.Region) > 64 {
		return sim.Errorf(sim.CodeValidation, msgStorageTooLong)
	}
	if len(st.Buckets) > 100 {
		return sim.Errorf(sim.CodeValidation, msgBucketCount, len(st.Buckets))
	}
	for i, b := range st.Buckets {
		if b == "" || len(b) > 63 || strings.ContainsAny(b, "/ ") {
			return sim.Errorf(sim.CodeValidation, msgBucketName, i, b)
		}
	}
	return nil
}

func checkRateLimit(rl *sim.RateLimit) error {
	if rl != nil && (rl.PerMinute < 0 || rl.PerDay < 0 || rl.PerMinute > 1e9 || rl.PerDay > 1e9) {
		return sim.Errorf(sim.CodeValidation, msgRateLimit)
	}
	return nil
}

// handleCreateAccount serves POST /_sim/accounts.
func (a *API) handleCreateAccount(w http.ResponseWriter, r *http.Request) error {
	var b accountBody
	if err := a.dec.Decode(w, r, &b); err != nil {
		return err
	}
	if err := checkStorage(b.Storage); err != nil {
		return err
	}
	if err := checkRateLimit(b.RateLimit); err != nil {
		return err
	}
	// Fields left out take the values of the plan's fixture account, so a
	// new pro account can create a project at once, as dubsim-pro can.
	spec := sim.AccountSpec{APIKey: b.APIKey, Name: b.Name, Plan: sim.PlanNone,
		CompanyID: b.CompanyID, UserEmail: b.UserEmail, Storage: b.Storage, RateLimit: b.RateLimit,
		FromPlan: sim.PlanDefaults{Balance: b.BalanceMinutes == nil, Retranslation: b.RetranslationEnabled == nil, Cloning: b.CloningEnabled == nil}}
	if b.RetranslationEnabled != nil {
		spec.RetranslationEnabled = *b.RetranslationEnabled
	}
	if b.CloningEnabled != nil {
		spec.CloningEnabled = *b.CloningEnabled
	}
	if b.Plan != nil {
		spec.Plan = sim.Plan(*b.Plan)
	}
	if b.BalanceMinutes != nil {
		m := *b.BalanceMinutes
		if m != math.Trunc(m) || m < 0 || m > 1e12 {
			return sim.Errorf(sim.CodeValidation, msgBalanceMinutes, m)
		}
		spec.BalanceMinutes = int64(m)
	}
	acct, err := a.ctl.CreateAccount(r.Context(), spec)
	if err != nil {
		return err
	}
	out, err := a.accountResponse(r, acct)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, out)
	return nil
}

// handleUpdateAccount serves PATCH /_sim/accounts/{api_key}: storage
// credentials and rate limit (null removes them).
func (a *API) handleUpdateAccount(w http.ResponseWriter, r *http.Request) error {
	body, err := httpx.ReadJSONBody(w, r, 1<<20)
	if err != nil {
		return err
	}
	var raw map[string]json.RawMessage
	if err := a.dec.DecodeBytes(body, &raw); err != nil {
		return err
	}
	var b struct {
		Storage   *sim.StorageCredentials `json:"storage"`
		RateLimit *sim.RateLimit          `json:"rate_limit"`
	}
	if err := a.dec.DecodeBytes(body, &b); err != nil {
		return err
	}
	_, setStorage := raw["storage"]
	_, setRate := raw["rate_limit"]
	if !setStorage && !setRate {
		return sim.Errorf(sim.CodeValidation, msgStudioChangeEmpty)
	}
	if err := checkStorage(b.Storage); err != nil {
		return err
	}
	if err := checkRateLimit(b.RateLimit); err != nil {
		return err
	}
	acct, err := a.ctl.SetAccountStudio(r.Context(), chi.URLParam(r, "api_key"), sim.AccountStudioChange{
		SetStorage: setStorage, Storage: b.Storage, SetRateLimit: setRate, RateLimit: b.RateLimit})
	if err != nil {
		return err
	}
	out, err := a.accountResponse(r, acct)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

type forceArtifactBody struct {
	Outcome         string   `json:"outcome"`
	ErrorMessage    string   `json:"error_message"`
	Size            *int64   `json:"size"`
	DurationSeconds *float64 `json:"duration_seconds"`
	Now             bool     `json:"now"`
}

// handleForceArtifact serves POST /_sim/artifacts/{id}/outcome.
func (a *API) handleForceArtifact(w http.ResponseWriter, r *http.Request) error {
	var b forceArtifactBody
	if err := a.dec.Decode(w, r, &b); err != nil {
		return err
	}
	if b.Outcome == "" {
		return sim.Errorf(sim.CodeValidation, sim.MsgRequired, "outcome")
	}
	if b.Size != nil && (*b.Size < 0 || *b.Size > sim.MaxArtifactBytes) {
		return sim.Errorf(sim.CodeValidation, msgArtifactSize, int64(sim.MaxArtifactBytes))
	}
	if d := b.DurationSeconds; d != nil && (*d < 0 || *d > sim.MaxSourceDuration.Seconds() || *d != *d) {
		return sim.Errorf(sim.CodeValidation, msgArtifactDuration, sim.MaxSourceDuration.Seconds())
	}
	art, err := a.ctl.ForceArtifact(r.Context(), chi.URLParam(r, "id"), b.Outcome, b.ErrorMessage, b.Size, b.DurationSeconds, b.Now)
	if err != nil {
		return err
	}
	out := map[string]any{"artifact_id": art.ID, "status": art.Status}
	if !art.DueAt.IsZero() {
		out["due_at"] = Time(art.DueAt)
		out["planned_outcome"] = b.Outcome
	}
	if art.ErrorMessage != "" {
		out["error_message"] = art.ErrorMessage
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

type videoStatusBody struct {
	Status string `json:"status"`
	Auto   bool   `json:"auto"`
}

// handleVideoStatus serves POST /_sim/videos/{id}/status.
func (a *API) handleVideoStatus(w http.ResponseWriter, r *http.Request) error {
	var b videoStatusBody
	if err := a.dec.Decode(w, r, &b); err != nil {
		return err
	}
	if b.Status == "" {
		return sim.Errorf(sim.CodeValidation, sim.MsgRequired, "status")
	}
	v, err := a.ctl.SetVideoStatus(r.Context(), chi.URLParam(r, "id"), b.Status, b.Auto)
	if err != nil {
		return err
	}
	out := map[string]any{"video_id": v.ID, "status": v.Status}
	if !v.DueAt.IsZero() {
		out["next_transition_at"] = Time(v.DueAt)
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

type resetBody struct {
	APIKey string `json:"api_key"`
}

// handleReset serves POST /_sim/reset: with no body, fixtures restored and
// everything else emptied; with {"api_key": k}, only that account reset.
func (a *API) handleReset(w http.ResponseWriter, r *http.Request) error {
	var b resetBody
	if r.ContentLength != 0 {
		if err := a.dec.Decode(w, r, &b); err != nil && !(r.ContentLength < 0 && sim.ErrorMessage(err) == sim.MsgBodyNotObject) {
			return err
		}
	}
	if b.APIKey != "" {
		if err := a.ctl.ResetAccount(r.Context(), b.APIKey); err != nil {
			return err
		}
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"reset": true, "api_key": b.APIKey})
		return nil
	}
	if err := a.ctl.Reset(r.Context()); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]bool{"reset": true})
	return nil
}

// handleState serves GET /_sim/state?api_key=&limit=&cursor=: one page of
// the dump. A limit over sim.MaxStateLimit is clamped to it.
//
// The page is read whole in one store transaction (its memory bounded by
// the page size), then the transaction ends and the page is written one
// project at a time: a slow client never holds a read transaction open
// (which would stall the store's file growth and every writer behind it),
// and no encoding of the whole answer is ever built. At most MaxDumps
// dumps run at once; the others wait while their request lasts.
func (a *API) handleState(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := sim.StateFilter{APIKey: q.Get("api_key"), Cursor: q.Get("cursor")}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			return sim.Errorf(sim.CodeValidation, msgStateLimit, l)
		}
		f.Limit = n
	}
	if err := a.dumps.Enter(r.Context()); err != nil {
		return err
	}
	defer a.dumps.Leave()
	st, err := a.ctl.State(r.Context(), f)
	if err != nil {
		return err
	}
	return writeState(w, &st)
}

// stateHead and stateTail are the fields of sim.State before and after its
// projects, in its order: the answer is the same bytes httpx.WriteJSON
// writes of the whole State.
type stateHead struct {
	Now       string        `json:"now"`
	TimeScale float64       `json:"time_scale"`
	Frozen    bool          `json:"frozen"`
	Accounts  []sim.Account `json:"accounts"`
}

type stateTail struct {
	PendingTransitions      []sim.Transition  `json:"pending_transitions"`
	OutcomeRules            []sim.OutcomeRule `json:"outcome_rules"`
	IdempotencyKeys         int               `json:"idempotency_keys"`
	Fixtures                map[string]int    `json:"fixtures"`
	Studio                  map[string]int    `json:"studio"`
	Truncated               bool              `json:"truncated,omitempty"`
	NextCursor              string            `json:"next_cursor,omitempty"`
	AccountsTotal           int               `json:"accounts_total,omitempty"`
	PendingTransitionsTotal int               `json:"pending_transitions_total,omitempty"`
}

// writeState writes st with status 200, one project at a time, dropping
// each project from st once written.
func writeState(w http.ResponseWriter, st *sim.State) error {
	head, err := httpx.Marshal(stateHead{st.Now, st.TimeScale, st.Frozen, st.Accounts})
	if err != nil {
		return err
	}
	tail, err := httpx.Marshal(stateTail{st.PendingTransitions, st.OutcomeRules, st.IdempotencyKeys, st.Fixtures, st.Studio,
		st.Truncated, st.NextCursor, st.AccountsTotal, st.PendingTransitionsTotal})
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", httpx.ContentTypeJSON)
	w.WriteHeader(http.StatusOK)
	parts := [][]byte{head[:len(head)-1], []byte(`,"projects":[`)}
	for i := range st.Projects {
		b, err := httpx.Marshal(st.Projects[i])
		if err != nil {
			// Headers are sent: leave the JSON unterminated, so the client
			// sees a broken answer rather than a short list.
			return nil //nolint:nilerr // nothing more can be said to the client
		}
		st.Projects[i] = sim.ProjectState{}
		if i > 0 {
			parts = append(parts, []byte{','})
		}
		parts = append(parts, b)
		if _, err := w.Write(bytes.Join(parts, nil)); err != nil {
			return nil //nolint:nilerr // the client is gone
		}
		parts = parts[:0]
	}
	parts = append(parts, []byte("],"), tail[1:], []byte{'\n'})
	_, _ = w.Write(bytes.Join(parts, nil))
	return nil
}

type fixturesBody struct {
	Accounts   json.RawMessage `json:"accounts"`
	Options    json.RawMessage `json:"options"`
	Voices     json.RawMessage `json:"voices"`
	MediaRules json.RawMessage `json:"media_rules"`
	// Studio is the content of a studio.json (companies, users, ...).
	Studio json.RawMessage `json:"studio"`
	// FromStartup: lay the content over the startup set instead of the set
	// in use (alone, it restores the startup set).
	FromStartup bool `json:"from_startup"`
}

// handleFixtures serves POST /_sim/fixtures: any of accounts, options,
// voices, media_rules and studio, each in the shape of its fixture file's
// content, laid entry by entry over the fixture set in use (or the
// startup set with from_startup; see fixtures.Merge).
func (a *API) handleFixtures(w http.ResponseWriter, r *http.Request) error {
	var b fixturesBody
	if err := a.dec.Decode(w, r, &b); err != nil {
		return err
	}
	files := map[string][]byte{}
	wrap := func(name, key string, raw json.RawMessage) {
		if len(raw) == 0 {
			return
		}
		if key == "" {
			files[name] = raw
			return
		}
		files[name] = append(append([]byte(`{"`+key+`":`), raw...), '}')
	}
	wrap(sim.FixtureAccounts, "accounts", b.Accounts)
	wrap(sim.FixtureOptions, "", b.Options)
	wrap(sim.FixtureVoices, "voices", b.Voices)
	wrap(sim.FixtureMedia, "rules", b.MediaRules)
	wrap(sim.FixtureStudio, "", b.Studio)
	if len(files) == 0 && !b.FromStartup {
		return sim.Errorf(sim.CodeValidation, msgFixturesEmpty)
	}
	fx, err := a.ctl.LoadFixtureFiles(r.Context(), files, b.FromStartup)
	if err != nil {
		return err
	}
	voices := 0
	for _, vs := range fx.Catalog.Voices {
		voices += len(vs)
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"loaded": map[string]int{
		"accounts": len(fx.Accounts), "source_langs": len(fx.Catalog.SourceLangs), "target_langs": len(fx.Catalog.TargetLangs),
		"voices": voices, "media_rules": len(fx.MediaRules)}})
	return nil
}

type forceBody struct {
	Outcome      string `json:"outcome"`
	ErrorMessage string `json:"error_message"`
	Now          bool   `json:"now"`
}

// handleForceProject serves POST /_sim/projects/{id}/outcome.
func (a *API) handleForceProject(w http.ResponseWriter, r *http.Request) error {
	var b forceBody
	if err := a.dec.Decode(w, r, &b); err != nil {
		return err
	}
	if b.Outcome == "" {
		return sim.Errorf(sim.CodeValidation, sim.MsgRequired, "outcome")
	}
	p, err := a.ctl.ForceProject(r.Context(), chi.URLParam(r, "id"), b.Outcome, b.ErrorMessage, b.Now)
	if err != nil {
		return err
	}
	out := map[string]any{"project_id": p.ID, "status": p.Status}
	if !p.DueAt.IsZero() {
		out["due_at"] = Time(p.DueAt)
		out["planned_outcome"], _ = p.PlannedOutcome()
	}
	if p.ErrorMessage != "" {
		out["error_message"] = p.ErrorMessage
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

type outcomeBody struct {
	APIKey           string `json:"api_key"`
	SourceURLPattern string `json:"source_url_pattern"`
	Count            *int   `json:"count"`
	Outcome          string `json:"outcome"`
	ErrorMessage     string `json:"error_message"`
	Resource         string `json:"resource"`
}

// handleAddOutcome serves POST /_sim/outcomes.
func (a *API) handleAddOutcome(w http.ResponseWriter, r *http.Request) error {
	var b outcomeBody
	if err := a.dec.Decode(w, r, &b); err != nil {
		return err
	}
	if b.Outcome == "" {
		return sim.Errorf(sim.CodeValidation, sim.MsgRequired, "outcome")
	}
	count := 1
	if b.Count != nil {
		count = *b.Count
	}
	rule, err := a.ctl.AddOutcomeRule(r.Context(), sim.OutcomeRule{APIKey: b.APIKey, SourceURLPattern: b.SourceURLPattern,
		Remaining: count, Outcome: b.Outcome, ErrorMessage: b.ErrorMessage, Resource: b.Resource})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, rule)
	return nil
}

// handleListOutcomes serves GET /_sim/outcomes.
func (a *API) handleListOutcomes(w http.ResponseWriter, r *http.Request) error {
	rules, err := a.ctl.OutcomeRules(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"rules": rules})
	return nil
}

// handleRemoveOutcome serves DELETE /_sim/outcomes/{id}.
func (a *API) handleRemoveOutcome(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	if err := a.ctl.RemoveOutcomeRule(r.Context(), id); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]string{"removed": id})
	return nil
}
