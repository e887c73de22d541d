package journal

import (
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/go-chi/chi/v5"
)

// Routes of the journal, relative to the control API's mount point.
const (
	controlPrefix = "/_sim"
	pathRequests  = "/requests"
	pathVerify    = "/requests/verify"
	pathReport    = "/report"

	maxVerifyBody = 64 << 10
)

// Routes returns the journal's routes (docs/control-api.md), to be mounted
// at /_sim; unknown routes and methods answer in the control envelope.
func (j *Journal) Routes() chi.Router {
	r := httpx.NewControlRouter(api, httpx.MsgNoControlRoute)
	r.Get(pathRequests, api.Handle(j.handleList))
	r.Delete(pathRequests, api.Handle(j.handleReset))
	r.Post(pathVerify, api.Handle(j.handleVerify))
	r.Get(pathReport, api.Handle(j.handleReport))
	return r
}

// api writes this package's errors in the control API's envelope.
var api = httpx.API{Render: httpx.RenderControl}

type listResponse struct {
	Requests []Entry `json:"requests"`
	Stats    Stats   `json:"stats"`
}

func (j *Journal) handleList(w http.ResponseWriter, r *http.Request) error {
	f, err := parseFilterQuery(r.URL.RawQuery)
	if err != nil {
		return err
	}
	entries, stats := j.entries(f)
	httpx.WriteJSON(w, http.StatusOK, listResponse{Requests: entries, Stats: stats})
	return nil
}

func (j *Journal) handleReset(w http.ResponseWriter, r *http.Request) error {
	if r.URL.RawQuery != "" {
		return sim.Errorf(sim.CodeValidation, msgDeleteQuery, r.URL.Path, r.URL.RawQuery)
	}
	j.Reset()
	httpx.WriteJSON(w, http.StatusOK, map[string]bool{"reset": true})
	return nil
}

func (j *Journal) handleVerify(w http.ResponseWriter, r *http.Request) error {
	body, err := httpx.ReadJSONBody(w, r, maxVerifyBody)
	if err != nil {
		return err
	}
	m, err := decodeMatcher(body)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, j.Verify(m))
	return nil
}

var reportParams = []string{"api_key", "format"}

func (j *Journal) handleReport(w http.ResponseWriter, r *http.Request) error {
	q, err := parseQuery(r.URL.RawQuery, reportParams)
	if err != nil {
		return err
	}
	key := q.Get("api_key")
	if key == "" {
		return sim.Errorf(sim.CodeValidation, sim.MsgRequired, "api_key")
	}
	f := q.Get("format")
	if f != "" && f != "json" && f != "text" {
		return sim.Errorf(sim.CodeValidation, msgFormat, f)
	}
	text := f == "text" || (f == "" && prefersText(r.Header.Get("Accept")))
	rep := j.Report(key)
	if text {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, rep.Text())
		return nil
	}
	httpx.WriteJSON(w, http.StatusOK, rep)
	return nil
}

// prefersText reports whether an Accept header gives text/plain a higher
// quality than application/json, each taking the quality of the most
// specific range that covers it; ties go to JSON.
func prefersText(accept string) bool {
	return acceptQuality(accept, "text", "plain") > acceptQuality(accept, "application", "json")
}

func acceptQuality(accept, typ, sub string) float64 {
	best, q := -1, 0.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		spec := slices.Index([]string{"*/*", typ + "/*", typ + "/" + sub}, mt)
		if err != nil || spec <= best {
			continue
		}
		v := 1.0
		if qs, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(qs, 64); err == nil && f >= 0 && f <= 1 {
				v = f
			}
		}
		best, q = spec, v
	}
	return q
}
