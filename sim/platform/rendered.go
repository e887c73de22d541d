package platform

import (
	"net/http"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// Generations is what a Service may also implement to let the API keep
// rendered Get Project answers: a counter that changes after every
// committed write (the engine's). An answer is served again only while the
// counter is where it was before the project was read, the rule the
// engine's own caches follow.
type Generations interface {
	Generation() uint64
}

// renderedSize bounds the answers kept (a ready project's is a few KB).
const renderedSize = 4096

// rendered is an encoded Get Project answer of a ready or failed project,
// kept in API.rendered (gencache, by project id): those views change only
// with a write (re-translation, delete, reset, forced outcome), and encoding
// a ready project's scripts was the largest part of a Get Project
// (encoding/json on every segment's text).
type rendered struct {
	apiKey string
	base   string // the download URLs' base: it depends on the request
	body   []byte // with its newline, as httpx.WriteJSON writes it
}

// writeProject answers Get Project, from the rendered answers when it can.
func (a *API) writeProject(w http.ResponseWriter, r *http.Request, apiKey, id string) error {
	gens, cache := a.svc.(Generations)
	var gen uint64
	base := a.baseURL(r)
	if cache {
		gen = gens.Generation()
		if e, ok := a.rendered.Get(id, gen); ok && e.apiKey == apiKey && e.base == base {
			writeJSONBody(w, e.body)
			return nil
		}
	}
	p, err := a.svc.Project(r.Context(), apiKey, id)
	if err != nil {
		return err
	}
	body, err := httpx.Marshal(a.view(base, p))
	if err != nil {
		return err
	}
	body = append(body, '\n')
	if cache && (p.Status == sim.StatusReady || p.Status == sim.StatusError) {
		a.rendered.Put(id, rendered{apiKey: apiKey, base: base, body: body}, gen)
	}
	writeJSONBody(w, body)
	return nil
}

// writeJSONBody writes a 200 with an encoded body (newline included), the
// headers httpx.WriteJSON sets.
func writeJSONBody(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", httpx.ContentTypeJSON)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
