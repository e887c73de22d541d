package ui

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/audio"
	"github.com/dubsim/dubsim/sim/control"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/go-chi/chi/v5"
)

//go:embed static templates
var files embed.FS

// Source is what the web application reads.
type Source interface {
	Now() time.Time
	// ProjectOutput returns a platform project of any account, settled.
	ProjectOutput(ctx context.Context, id string) (sim.Project, error)
	StudioDump(ctx context.Context, f sim.StudioFilter) (sim.StudioDump, error)
}

// Config wires the web application.
type Config struct {
	Source Source
	// Track renders a project's dubbed audio (the platform's output file).
	Track func(sim.Project) audio.Track
	Log   *slog.Logger
	// Dumps bounds the studio dumps (shared with the state dump; nil: own).
	Dumps *httpx.Gate
	// Changes is the version the event stream follows (nil: never changes).
	Changes func() Version
	// Streams bounds the event streams of a process (NewStreams; nil: none).
	Streams *httpx.Gate
}

// NewStreams returns the process-wide bound of event streams.
func NewStreams() *httpx.Gate { return httpx.NewGate(MaxProcessEventStreams) }

// UI is the web application.
type UI struct {
	src   Source
	track func(sim.Project) audio.Track
	api   httpx.API
	dumps *httpx.Gate

	changes func() Version
	streams *httpx.Gate // places of this UI's open event streams
	process *httpx.Gate // places of the process's (Config.Streams)
}

// ControlPaths are the paths under the control API's mount point that ControlRoutes answers.
var ControlPaths = []string{"/ui", "/ui/*", "/projects/{id}", "/projects/{id}/audio.wav", "/studio", "/events"}

// DashboardPath is where the dashboard is served.
const DashboardPath = "/_sim/ui/"

// New returns the web application.
func New(cfg Config) *UI {
	return &UI{src: cfg.Source, track: cfg.Track, api: httpx.API{Render: httpx.RenderControl, Log: cfg.Log},
		dumps: cmp.Or(cfg.Dumps, control.NewDumpGate()), changes: cfg.Changes, streams: httpx.NewGate(MaxEventStreams), process: cfg.Streams}
}

// ControlRoutes answers ControlPaths under /_sim:
//
//	GET /ui/                       the dashboard (and its files under /ui/)
//	GET /projects/{id}             a platform project with scripts, speakers and history
//	GET /projects/{id}/audio.wav   its dubbed audio, while it has an output
//	GET /studio[?company_id=]      the studio records (the first sim.MaxStateList of each kind)
//	GET /events                    text/event-stream: "changed" when the version changes, "heartbeat"
func (u *UI) ControlRoutes() chi.Router {
	r := httpx.NewControlRouter(u.api, httpx.MsgNoControlRoute, u.api.Recover)
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		r.MethodFunc(m, "/ui", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, httpx.BasePath(r.Context())+DashboardPath, http.StatusMovedPermanently)
		})
		r.MethodFunc(m, "/ui/*", u.api.Handle(u.handleStatic))
		r.MethodFunc(m, "/projects/{id}", u.api.Handle(u.handleProject))
		r.MethodFunc(m, "/projects/{id}/audio.wav", u.api.Handle(u.handleAudio))
		r.MethodFunc(m, "/studio", u.api.Handle(u.handleStudio))
		r.MethodFunc(m, "/events", u.api.Handle(u.handleEvents))
	}
	return r
}

// dashboardCSP keeps the dashboard to its own files: no inline script, no
// other origin (blob: plays the audio it fetched with the control token).
const dashboardCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; media-src 'self' blob:; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

func (u *UI) handleStatic(w http.ResponseWriter, r *http.Request) error {
	name := path.Clean("static/" + cmp.Or(chi.URLParam(r, "*"), "index.html"))
	b, err := fs.ReadFile(files, name)
	if err != nil || !strings.HasPrefix(name, "static/") {
		return sim.Errorf(sim.CodeRoute, msgNoDashboardFile, r.URL.Path)
	}
	if name == "static/index.html" {
		b = withBase(b, httpx.BasePath(r.Context()))
	}
	h := setHeaders(w, contentType(name))
	h.Set("Content-Security-Policy", dashboardCSP)
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
	return nil
}

// baseMeta records the path prefix the page was served under (a sandbox's
// /sbx/{id}); app.js builds every address from it.
const baseMeta = `<meta name="dubsim-base" content="">`

func withBase(page []byte, base string) []byte {
	if base == "" {
		return page
	}
	meta := `<meta name="dubsim-base" content="` + template.HTMLEscapeString(base) + `">`
	return bytes.Replace(page, []byte(baseMeta), []byte(meta), 1)
}

// setHeaders sets the content type; nothing of the UI is cached or sniffed.
func setHeaders(w http.ResponseWriter, contentType string) http.Header {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	return h
}

// contentTypes are the types of the dashboard's files, by extension.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

func contentType(name string) string {
	return cmp.Or(contentTypes[path.Ext(name)], "application/octet-stream")
}

func (u *UI) handleProject(w http.ResponseWriter, r *http.Request) error {
	p, err := u.src.ProjectOutput(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, detailOf(p, httpx.BasePath(r.Context())))
	return nil
}

// handleAudio serves the platform's output audio, without a journal entry.
func (u *UI) handleAudio(w http.ResponseWriter, r *http.Request) error {
	p, err := u.src.ProjectOutput(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	if !hasOutput(p) {
		return sim.Errorf(sim.CodeNotFound, msgNoOutputAudio, p.ID, p.Status)
	}
	w.Header().Set("Content-Type", "audio/wav")
	cw := &httpx.ContentErrorWriter{ResponseWriter: w, Body: audioErrorBody}
	http.ServeContent(cw, r, "audio.wav", p.CompletedAt, audio.NewWAVReader(u.track(p)))
	return nil
}

// audioErrorBody renders http.ServeContent's errors in the control envelope.
func audioErrorBody(status int) []byte {
	var e httpx.ControlEnvelope
	switch status {
	case http.StatusRequestedRangeNotSatisfiable:
		e = httpx.ControlEnvelope{Error: "ValidationError", Message: msgRangeNotSatisfiable}
	case http.StatusPreconditionFailed:
		e = httpx.ControlEnvelope{Error: "ValidationError", Message: msgPreconditionFailed}
	default:
		e = httpx.ControlEnvelope{Error: "InternalServerError", Message: http.StatusText(status)}
	}
	b, _ := json.Marshal(e)
	return append(b, '\n')
}

// hasOutput is the platform's rule for its output files.
func hasOutput(p sim.Project) bool { return p.OutputGen > 0 && p.Status != sim.StatusError }

func (u *UI) handleStudio(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	for k := range q {
		if k != "company_id" {
			return sim.Errorf(sim.CodeValidation, msgUnknownQueryParam, k)
		}
	}
	if err := u.dumps.Enter(r.Context()); err != nil {
		return err
	}
	defer u.dumps.Leave()
	d, err := u.src.StudioDump(r.Context(), sim.StudioFilter{CompanyID: q.Get("company_id")})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, d)
	return nil
}
