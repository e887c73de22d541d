package faults

import (
	"net/http"

	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/go-chi/chi/v5"
)

// MaxBodyBytes limits the body of POST /faults.
const MaxBodyBytes = 64 << 10

// Routes returns the fault control API of the package doc, to be mounted
// under /_sim. Errors use the control envelope: ValidationError,
// ConflictError (past MaxLive or MaxRuleBytes), NotFoundError and
// MethodNotAllowedError.
func (f *Faults) Routes() chi.Router {
	r := httpx.NewControlRouter(api)
	r.Get("/faults", handle(f.handleList))
	r.Post("/faults", handle(f.handleAdd))
	r.Delete("/faults", handle(f.handleClear))
	r.Delete("/faults/{id}", handle(f.handleRemove))
	return r
}

func (f *Faults) handleList(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string][]RuleView{"rules": f.List()})
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
	v, err := f.add(rule)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, v)
	return nil
}

func (f *Faults) handleRemove(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	if err := f.Remove(id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"removed": id})
	return nil
}

func (f *Faults) handleClear(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]int{"removed": f.Clear()})
	return nil
}

// api writes this package's errors through the shared adapter, in the
// control API's envelope, so every /_sim error has one writer.
var api = httpx.API{Render: httpx.RenderControl}

// handle adapts a handler: a returned error is written once, by api.
func handle(h httpx.HandlerFunc) http.HandlerFunc { return api.Handle(h) }

func writeJSON(w http.ResponseWriter, status int, v any) { httpx.WriteJSON(w, status, v) }
