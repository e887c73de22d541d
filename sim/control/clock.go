package control

import (
	"errors"
	"math"
	"net/http"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
)

type clockResponse struct {
	Now       string   `json:"now"`
	TimeScale *float64 `json:"time_scale,omitempty"`
	Frozen    *bool    `json:"frozen,omitempty"`
}

func (a *API) clock() clockResponse {
	scale, frozen := a.ctl.TimeScale(), a.ctl.Frozen()
	return clockResponse{Now: Time(a.ctl.Now()), TimeScale: &scale, Frozen: &frozen}
}

func (a *API) handleClock(http.ResponseWriter, *http.Request) (int, any, error) {
	return http.StatusOK, a.clock(), nil
}

type scaleBody struct {
	TimeScale *float64 `json:"time_scale"`
}

func (a *API) scale(r *http.Request, b scaleBody) (int, any, error) {
	if b.TimeScale == nil {
		return 0, nil, sim.Errorf(sim.CodeValidation, sim.MsgRequired, "time_scale")
	}
	if s := *b.TimeScale; math.IsNaN(s) || s < 0 || s > 1e6 {
		return 0, nil, sim.Errorf(sim.CodeValidation, msgTimeScale, s)
	}
	err := a.ctl.SetTimeScale(r.Context(), *b.TimeScale)
	return http.StatusOK, a.clock(), err
}

func (a *API) handleFreeze(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := a.ctl.Freeze(r.Context()); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, a.clock(), nil
}

func (a *API) handleResume(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := a.ctl.Resume(r.Context()); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, a.clock(), nil
}

type advanceBody struct {
	Seconds *float64 `json:"seconds"`
	NextDue bool     `json:"next_due"`
}

// advanceResponse is the clock after an advance, and the transition a
// next_due advance went to.
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

// advanceToNext moves the clock to the earliest pending transition (never
// back: one already due is applied now).
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

// workJSON is a piece of background work in flight.
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
func (a *API) handleWork(http.ResponseWriter, *http.Request) (int, any, error) {
	return http.StatusOK, struct {
		Now  string     `json:"now"`
		Work []workJSON `json:"work"`
	}{Time(a.ctl.Now()), worksJSON(a.ctl.Work())}, nil
}

// ErrPendingName names the 504 of a clock advance that waited in vain for
// background work: the clock has moved, and the message names what runs.
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
