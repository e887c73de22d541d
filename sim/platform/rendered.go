package platform

import (
	"net/http"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// renderedSize bounds the answers kept (a ready project's is a few KB).
const renderedSize = 4096

// rendered is an encoded Get Project answer of a ready or failed project,
// which only a write changes: encoding a ready project's scripts is the
// largest part of a Get Project (BenchmarkGetProject).
type rendered struct {
	apiKey string
	base   string // the download URLs' base: it depends on the request
	body   []byte // with its newline, as httpx.WriteJSON writes it
}

// writeProject answers Get Project, from the rendered answers when it can.
func (a *API) writeProject(w http.ResponseWriter, r *http.Request, apiKey, id string) error {
	gen, base := a.svc.Generation(), httpx.BaseURL(r, a.publicURL)
	if e, ok := a.rendered.Get(id, gen); ok && e.apiKey == apiKey && e.base == base {
		writeJSONBody(w, e.body)
		return nil
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
	if p.Status == sim.StatusReady || p.Status == sim.StatusError {
		a.rendered.Put(id, rendered{apiKey: apiKey, base: base, body: body}, gen)
	}
	writeJSONBody(w, body)
	return nil
}

// writeJSONBody writes a 200 with an encoded body, as httpx.WriteJSON does.
func writeJSONBody(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", httpx.ContentTypeJSON)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
