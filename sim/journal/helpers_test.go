package journal_test

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/journal"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"
)

var (
	t0    = time.Date(2026, 2, 4, 12, 0, 0, 0, time.UTC)
	simT0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
)

// clock is a manual clock for real and simulated time.
type clock struct {
	mu       sync.Mutex
	now, sim time.Time
}

func newClock() *clock { return &clock{now: t0, sim: simT0} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) SimNow() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sim
}

// Advance moves real and simulated time forward together.
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now, c.sim = c.now.Add(d), c.sim.Add(d)
}

// AdvanceSim moves simulated time only (the control API's clock advance).
func (c *clock) AdvanceSim(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sim = c.sim.Add(d)
}

func newJournal(c *clock, cfg journal.Config) *journal.Journal {
	if c != nil {
		cfg.Now, cfg.SimNow = c.Now, c.SimNow
	}
	if cfg.Route == nil {
		cfg.Route = testRoute
	}
	return journal.New(cfg)
}

// testRoute stands for the server's routing decision (sim/server.RouteOf)
// in the journal's own tests: the interface by path prefix.
func testRoute(r *http.Request) (string, string) {
	for _, i := range []struct{ prefix, name string }{
		{"/api/v1/artifacts", journal.InterfaceStudio},
		{"/api/projects/", journal.InterfaceStudio},
		{"/_uploads/", journal.InterfaceStudio},
		{"/api/", journal.InterfacePlatform},
		{"/files/", journal.InterfacePlatform},
		{"/_sim/", journal.InterfaceControl},
	} {
		if strings.HasPrefix(r.URL.Path, i.prefix) {
			return i.name, ""
		}
	}
	return journal.InterfaceOther, ""
}

// serve runs one request through h. A handler that aborts (panics) yields
// status 0 and the panic value, as a dropped connection would.
func serve(h http.Handler, req *http.Request) (rec *httptest.ResponseRecorder, panicked any) {
	rec = httptest.NewRecorder()
	defer func() {
		if v := recover(); v != nil {
			panicked = v
			rec.Code = 0
		}
	}()
	h.ServeHTTP(rec, req)
	return rec, nil
}

func newRequest(method, target, body string, header ...string) *http.Request {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return req
}

// client scripts requests of one API key against a handler.
type client struct {
	t     *testing.T
	h     http.Handler
	key   string
	clock *clock
	// gap is the real time that passes before each request (default 3s,
	// longer than the default minimum poll interval).
	gap time.Duration
	// autoIdem sends a fresh Idempotency-Key with every POST unless the
	// script gives one.
	autoIdem bool
	n        int
}

type response struct {
	status int
	body   string
	header http.Header
}

// do sends a request. hdr are name/value pairs; a JSON Content-Type is set
// for a body unless hdr has a Content-Type ("" to send none).
func (c *client) do(method, path, body string, hdr ...string) response {
	c.t.Helper()
	c.clock.Advance(c.gap)
	req := newRequest(method, path, body)
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	c.n++
	if c.autoIdem && method == http.MethodPost {
		req.Header.Set("Idempotency-Key", fmt.Sprintf("idem-%d", c.n))
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	rec, _ := serve(c.h, req)
	return response{status: rec.Code, body: rec.Body.String(), header: rec.Header()}
}

// createProject creates a project and returns its id.
func (c *client) createProject() string {
	c.t.Helper()
	res := c.do("POST", "/api/v1/projects", `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://example.com/video.mp4"}`)
	require.Equal(c.t, http.StatusOK, res.status, res.body)
	var out struct {
		ProjectID string `json:"project_id"`
	}
	require.NoError(c.t, json.Unmarshal([]byte(res.body), &out))
	return out.ProjectID
}

const (
	catalogueVoice = "f4fb50:fr-FR-AlainNeural"
	workTime       = 40 * time.Millisecond
)

func retranslationBody(voice string) string {
	return `{"target_script":[{"start_ms":100,"end_ms":1544,"text":"Au revoir le monde!","speaker_id":1}],` +
		`"target_speakers":[{"speaker_id":1,"voice_key":"` + voice + `","style":"masculine"}]}`
}

// fakeAPI answers like the platform API, with projects whose status the
// test sets, and one-shot faults.
type fakeAPI struct {
	clock *clock
	mu    sync.Mutex
	next  int
	projs map[string]sim.ProjectStatus
	fault map[string][]string // "METHOD path" -> actions: "409", "429", "500", "503", "abort", "truncate"
}

func newFakeAPI(c *clock) *fakeAPI {
	return &fakeAPI{clock: c, next: 100000001, projs: map[string]sim.ProjectStatus{}, fault: map[string][]string{}}
}

func (f *fakeAPI) set(id string, st sim.ProjectStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.projs[id] = st
}

// failNext makes the next request to "METHOD path" fail with action.
func (f *fakeAPI) failNext(route, action string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault[route] = append(f.fault[route], action)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, name, msg string) {
	writeJSON(w, status, map[string]string{"error": name, "message": msg})
}

func isJSON(ct string) bool {
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// handler returns the fake API behind its fault layer.
func (f *fakeAPI) handler() http.Handler {
	r := chi.NewRouter()
	r.Get("/api/v1/balance", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]int{"balance_minutes": 90})
	})
	r.Get("/api/v1/voices", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"voices": map[string]any{"fr-FR": []map[string]string{{"name": "Alain", "voice_key": catalogueVoice, "style": "masculine"}}}})
	})
	r.Post("/api/v1/projects", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		if !isJSON(r.Header.Get("Content-Type")) {
			writeErr(w, 400, "ValidationError", sim.MsgContentType)
			return
		}
		f.mu.Lock()
		id := fmt.Sprint(f.next)
		f.next++
		f.projs[id] = sim.StatusInProgress
		f.mu.Unlock()
		writeJSON(w, 200, map[string]any{"project_id": id, "cost_minutes": 10, "balance_minutes": 90, "translations_count": 0})
	})
	r.Get("/api/v1/projects/{id}", func(w http.ResponseWriter, r *http.Request) {
		st, ok := f.status(chi.URLParam(r, "id"))
		if !ok {
			writeErr(w, 404, "NotFoundError", sim.MsgProjectNotFound)
			return
		}
		writeJSON(w, 200, map[string]any{"name": "", "status": st})
	})
	r.Delete("/api/v1/projects/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := chi.URLParam(r, "id")
		st, ok := f.status(id)
		switch {
		case !ok:
			writeErr(w, 404, "NotFoundError", sim.MsgProjectNotFound)
		case st == sim.StatusInProgress:
			writeErr(w, 400, "ValidationError", sim.MsgDeleteInProgress)
		default:
			f.mu.Lock()
			delete(f.projs, id)
			f.mu.Unlock()
			writeJSON(w, 200, map[string]bool{"success": true})
		}
	})
	retranslate := func(dry bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if !isJSON(r.Header.Get("Content-Type")) {
				writeErr(w, 400, "ValidationError", sim.MsgContentType)
				return
			}
			id := chi.URLParam(r, "id")
			st, ok := f.status(id)
			if !ok {
				writeErr(w, 404, "NotFoundError", sim.MsgProjectNotFound)
				return
			}
			if st != sim.StatusReady {
				writeErr(w, 400, "ValidationError", fmt.Sprintf(sim.MsgRetranslationNotReady, id, st))
				return
			}
			var in struct {
				TargetSpeakers []struct {
					VoiceKey string `json:"voice_key"`
				} `json:"target_speakers"`
			}
			_ = json.Unmarshal(body, &in)
			for _, s := range in.TargetSpeakers {
				if s.VoiceKey != catalogueVoice && s.VoiceKey != sim.VoiceSoundalike && s.VoiceKey != sim.VoiceEmotionalTransfer {
					writeErr(w, 400, "ValidationError", fmt.Sprintf(sim.MsgUnknownVoice, s.VoiceKey))
					return
				}
			}
			if dry {
				writeJSON(w, 200, map[string]bool{"valid": true})
				return
			}
			f.set(id, sim.StatusInProgress)
			writeJSON(w, 200, map[string]any{"project_id": id, "cost_minutes": 0, "translations_count": 1})
		}
	}
	r.Post("/api/v1/projects/{id}/translations", retranslate(false))
	r.Post("/api/v1/projects/{id}/validate-translation-request", retranslate(true))
	r.Post("/api/v1/cloning/synthesize", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
			writeErr(w, 400, "ValidationError", fmt.Sprintf(sim.MsgCloningMultipart, r.Header.Get("Content-Type")))
			return
		}
		w.Header().Set("Content-Type", "audio/wav")
		_, _ = w.Write([]byte("RIFF\x00\x00\x00\x00WAVE"))
	})
	r.Post("/_sim/clock/advance", func(w http.ResponseWriter, r *http.Request) {
		var b struct{ Seconds float64 }
		_ = json.NewDecoder(r.Body).Decode(&b)
		f.clock.AdvanceSim(time.Duration(b.Seconds * float64(time.Second)))
		writeJSON(w, 200, map[string]string{"now": f.clock.SimNow().Format("2006-01-02T15:04:05.000Z")})
	})
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		f.clock.Advance(workTime) // every request takes some real time
		f.mu.Lock()
		route := req.Method + " " + req.URL.Path
		var action string
		if q := f.fault[route]; len(q) > 0 {
			action, f.fault[route] = q[0], q[1:]
		}
		f.mu.Unlock()
		switch action {
		case "429":
			journal.SetFault(req.Context(), "rate-limit-1")
			w.Header().Set("Retry-After", "5")
			writeErr(w, 429, "RateLimitError", "Too many requests")
		case "409", "500", "503":
			journal.SetFault(req.Context(), "status-"+action)
			code, _ := strconv.Atoi(action)
			writeErr(w, code, http.StatusText(code), "Injected "+action)
		case "abort":
			journal.SetFault(req.Context(), "drop")
			panic(http.ErrAbortHandler)
		case "truncate":
			journal.SetFault(req.Context(), "truncate")
			w.Header().Set("Content-Length", "400")
			w.WriteHeader(200)
			_, _ = w.Write([]byte(`{"project_id":"1`))
		default:
			r.ServeHTTP(w, req)
		}
	})
}

func (f *fakeAPI) status(id string) (sim.ProjectStatus, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.projs[id]
	return st, ok
}

// setup returns a journal in front of a fake API and a client of key "k".
func setup(t *testing.T, cfg journal.Config) (*journal.Journal, *fakeAPI, *client) {
	c := newClock()
	j := newJournal(c, cfg)
	api := newFakeAPI(c)
	cl := &client{t: t, h: j.Middleware(api.handler()), key: "k", clock: c, gap: 3 * time.Second, autoIdem: true}
	return j, api, cl
}
