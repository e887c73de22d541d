package faults

import (
	"net/http"

	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/go-chi/chi/v5"
)

// MaxBodyBytes limits the body of POST /faults.
const MaxBodyBytes = 64 << 10

// Routes returns the fault control API, to be mounted under /_sim; errors
// use the control envelope (ConflictError past MaxLive or MaxRuleBytes).
func (f *Faults) Routes() chi.Router {
	r := httpx.NewControlRouter(api, httpx.MsgNoControlRoute)
	r.Get("/faults", api.Handle(f.handleList))
	r.Post("/faults", api.Handle(f.handleAdd))
	r.Delete("/faults", api.Handle(f.handleClear))
	r.Delete("/faults/{id}", api.Handle(f.handleRemove))
	return r
}

func (f *Faults) handleList(w http.ResponseWriter, r *http.Request) error {
	httpx.WriteJSON(w, http.StatusOK, map[string][]RuleView{"rules": f.List()})
	return nil
}

func (f *Faults) handleAdd(w http.ResponseWriter, r *http.Request) error {
	body, err := httpx.ReadJSONBody(w, r, MaxBodyBytes)
	if err != nil {
		return err
	}
	rule, err := DecodeRule(body)
	if err != nil {
		return err
	}
	v, err := f.Add(rule)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, v)
	return nil
}

func (f *Faults) handleRemove(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	if err := f.Remove(id); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]string{"removed": id})
	return nil
}

func (f *Faults) handleClear(w http.ResponseWriter, r *http.Request) error {
	httpx.WriteJSON(w, http.StatusOK, map[string]int{"removed": f.Clear()})
	return nil
}

// api writes this package's errors in the control API's envelope.
var api = httpx.API{Render: httpx.RenderControl}
