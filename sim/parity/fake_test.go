package parity_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is the kit's clock in tests: Sleep moves it, never the test.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 2, 4, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

func (c *fakeClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

const fakeKey = "fake-key"

// fakeOptions shape a fake target.
type fakeOptions struct {
	// control serves /_sim/health, /_sim/clock and /_sim/clock/advance;
	// then only clock advances move the fake's time (a frozen dubsim),
	// unless realTime.
	control  bool
	realTime bool
	// steps is how many reads (or, with control, clock advances) a project,
	// re-translation or artifact needs to end; negative: never.
	steps int
	// drift makes the target answer unlike the simulator: balance_minutes
	// renamed, options failing with 500, project_id a number, artifact size
	// a string.
	drift bool
	// externalUploads puts presigned uploads on another host.
	externalUploads bool
	// projectError ends the platform project in error.
	projectError bool
	// studioKey is the key of the studio interface (default fakeKey).
	studioKey string
}

// fake is a small imitation of the service on one address, routed like
// dubsim's shared address but by X-Dubsim-Interface only, so that it also
// proves the kit sends the header.
type fake struct {
	opt     fakeOptions
	srv     *httptest.Server
	storage *httptest.Server

	mu        sync.Mutex
	seq       int
	remaining map[string]int // id -> reads or advances left before the end
	projects  map[string]map[string]any
	artifacts map[string]map[string]any
	sprojects map[string]map[string]any
	videos    map[string]map[string]any
	uploads   map[string][]byte
	advances  []float64
	headers   []string // X-Dubsim-Interface values seen on POST /api/v1/projects
}

func newFake(t *testing.T, opt fakeOptions) *fake {
	t.Helper()
	f := &fake{opt: opt, remaining: map[string]int{}, projects: map[string]map[string]any{}, artifacts: map[string]map[string]any{},
		sprojects: map[string]map[string]any{}, videos: map[string]map[string]any{}, uploads: map[string][]byte{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	f.storage = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.uploads[r.URL.Path] = b
		f.mu.Unlock()
		w.Header().Set("ETag", `"x"`)
	}))
	t.Cleanup(f.storage.Close)
	return f
}

func (f *fake) Advances() []float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]float64(nil), f.advances...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fake) id(width int) string {
	f.seq++
	if width == 24 {
		return fmt.Sprintf("65f0a1b2c3d4e5f6%08x", f.seq)
	}
	return fmt.Sprintf("%09d", 100000000+f.seq)
}

// tick ends one read of id (without control) and says whether it has ended.
func (f *fake) tick(id string) bool {
	if f.opt.steps < 0 {
		return false
	}
	if !f.opt.control || f.opt.realTime {
		f.remaining[id]--
	}
	return f.remaining[id] < 0
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	route := r.Method + " " + r.URL.Path
	if strings.HasPrefix(r.URL.Path, "/_sim/") {
		f.serveControl(w, r, route)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/_uploads/") && r.Method == http.MethodPut {
		b, _ := io.ReadAll(r.Body)
		f.uploads[r.URL.Path] = b
		w.Header().Set("ETag", `"x"`)
		return
	}
	studio := r.Header.Get("X-Dubsim-Interface") == "studio" || strings.HasPrefix(r.URL.Path, "/api/v1/artifacts") ||
		strings.HasPrefix(r.URL.Path, "/api/projects/") || route == "GET /api/v1/projects" ||
		(len(p) >= 4 && p[2] == "projects" && len(p[3]) == 24) || (len(p) >= 5 && p[4] == "videos")
	key := fakeKey
	if studio && f.opt.studioKey != "" {
		key = f.opt.studioKey
	}
	if r.Header.Get("Authorization") != "Bearer "+key {
		if studio {
			writeJSON(w, 400, map[string]any{"error": "Missing or invalid authorization token"})
		} else {
			writeJSON(w, 401, map[string]any{"error": "UnauthorizedError", "message": "Invalid API key"})
		}
		return
	}
	if r.URL.Path == "/api/v1/projects" && r.Method == http.MethodPost {
		f.headers = append(f.headers, r.Header.Get("X-Dubsim-Interface"))
	}
	var body map[string]any
	if r.Body != nil && (r.Method == http.MethodPost || r.Method == http.MethodPatch) {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil && err != io.EOF {
			if studio {
				writeJSON(w, 400, map[string]any{"error": "Malformed JSON"})
			} else {
				writeJSON(w, 400, map[string]any{"error": "ValidationError", "message": "Malformed JSON body"})
			}
			return
		}
	}
	if studio {
		f.serveStudio(w, r, p, body)
		return
	}
	f.servePlatform(w, r, p, body)
}

func (f *fake) serveControl(w http.ResponseWriter, r *http.Request, route string) {
	if !f.opt.control {
		http.NotFound(w, r)
		return
	}
	switch route {
	case "GET /_sim/health":
		writeJSON(w, 200, map[string]any{"status": "ok"})
	case "GET /_sim/clock":
		writeJSON(w, 200, map[string]any{"now": "2026-02-04T12:00:00.000Z"})
	case "POST /_sim/clock/advance":
		var b struct{ Seconds float64 }
		_ = json.NewDecoder(r.Body).Decode(&b)
		f.advances = append(f.advances, b.Seconds)
		for id := range f.remaining {
			f.remaining[id]--
		}
		writeJSON(w, 200, map[string]any{"now": "2026-02-04T12:00:10.000Z"})
	default:
		http.NotFound(w, r)
	}
}

var script = []any{map[string]any{"start_ms": 100, "end_ms": 1544, "text": "Bonjour le monde!", "speaker_id": 1}}

func (f *fake) servePlatform(w http.ResponseWriter, r *http.Request, p []string, body map[string]any) {
	notFound := func() { writeJSON(w, 404, map[string]any{"error": "NotFoundError", "message": "Project not found"}) }
	switch {
	case r.Method == "GET" && r.URL.Path == "/api/v1/balance":
		if f.opt.drift {
			writeJSON(w, 200, map[string]any{"balance": 90})
			return
		}
		writeJSON(w, 200, map[string]any{"balance_minutes": 90})
	case r.Method == "GET" && r.URL.Path == "/api/v1/options":
		if f.opt.drift {
			writeJSON(w, 500, map[string]any{"error": "InternalServerError", "message": "boom"})
			return
		}
		writeJSON(w, 200, map[string]any{"source_langs": []string{"en"}, "target_langs": []string{"fr-FR"}})
	case r.Method == "GET" && r.URL.Path == "/api/v1/voices":
		writeJSON(w, 200, map[string]any{"voices": map[string]any{"fr-FR": []any{map[string]any{"name": "Denise", "voice_key": "53f154:fr-FR-DeniseNeural", "style": "feminine"}}}})
	case r.Method == "POST" && r.URL.Path == "/api/v1/projects":
		for _, k := range []string{"source_lang", "target_lang", "source_video_url"} {
			if body[k] == nil {
				writeJSON(w, 400, map[string]any{"error": "ValidationError", "message": k + " is required"})
				return
			}
		}
		id := f.id(9)
		f.projects[id] = map[string]any{"name": body["name"], "source_lang": body["source_lang"], "target_lang": body["target_lang"],
			"mixing_mode": "voiceover_with_original_track", "cost_minutes": 1, "created_date": "2026-02-04T12:00:00Z", "status": "in_progress",
			"estimated_completion_date": "2026-02-04T12:01:06Z"}
		f.remaining[id] = f.opt.steps
		var pid any = id
		if f.opt.drift {
			pid = 100000001
		}
		writeJSON(w, 200, map[string]any{"project_id": pid, "cost_minutes": 1, "estimated_completion_date": "2026-02-04T12:01:06Z", "balance_minutes": 89, "translations_count": 0})
	case len(p) == 4 && r.Method == "GET":
		pr := f.projects[p[3]]
		if pr == nil {
			notFound()
			return
		}
		if pr["status"] == "in_progress" && f.tick(p[3]) {
			delete(pr, "estimated_completion_date")
			if f.opt.projectError {
				pr["status"], pr["error_message"] = "error", "No speech found in the source video"
			} else {
				pr["status"], pr["completion_date"] = "ready", "2026-02-04T12:01:06Z"
				pr["output_video_url"], pr["output_tts_audio_url"] = "https://cdn.example/v.mov", "https://cdn.example/a.wav"
				pr["output_source_script"], pr["output_target_script"] = script, script
				pr["output_target_speakers"] = []any{map[string]any{"speaker_id": 1, "voice_key": "53f154:fr-FR-DeniseNeural", "style": "feminine"}}
			}
		}
		writeJSON(w, 200, pr)
	case len(p) == 4 && r.Method == "DELETE":
		pr := f.projects[p[3]]
		switch {
		case pr == nil:
			notFound()
		case pr["status"] == "in_progress":
			writeJSON(w, 400, map[string]any{"error": "ValidationError", "message": "Cannot delete project while processing is in progress"})
		default:
			delete(f.projects, p[3])
			writeJSON(w, 200, map[string]any{"success": true})
		}
	case len(p) == 5 && r.Method == "POST":
		pr := f.projects[p[3]]
		if pr == nil {
			notFound()
			return
		}
		if body["target_script"] == nil || body["target_speakers"] == nil {
			writeJSON(w, 400, map[string]any{"error": "ValidationError", "message": "target_script is required"})
			return
		}
		if p[4] == "validate-translation-request" {
			writeJSON(w, 200, map[string]any{"valid": true})
			return
		}
		pr["status"], pr["estimated_completion_date"] = "in_progress", "2026-02-04T12:02:00Z"
		f.remaining[p[3]] = f.opt.steps
		writeJSON(w, 200, map[string]any{"project_id": p[3], "cost_minutes": 0, "estimated_completion_date": "2026-02-04T12:02:00Z", "balance_minutes": 89, "translations_count": 1})
	default:
		notFound()
	}
}

func (f *fake) serveStudio(w http.ResponseWriter, r *http.Request, p []string, body map[string]any) {
	notFound := func() { writeJSON(w, 404, map[string]any{"error": "Not Found"}) }
	company := map[string]any{"id": "507f1f77bcf86cd799439011"}
	switch {
	case r.Method == "GET" && r.URL.Path == "/api/v1/artifacts/create":
		name := r.URL.Query().Get("fileName")
		up := "550e8400-e29b-41d4-a716-446655440000"
		u := f.srv.URL + "/_uploads/" + up + "/" + name + "?X-Amz-Signature=abc"
		if f.opt.externalUploads {
			u = f.storage.URL + "/bucket/temp/" + up + "/" + name + "?X-Amz-Signature=abc"
		}
		writeJSON(w, 200, map[string]any{"s3Path": "s3://fake-artifacts/temp/" + up + "/" + name, "presignedUploadUrl": u, "expiresAt": "2026-02-05T12:00:00.000Z"})
	case r.Method == "POST" && r.URL.Path == "/api/v1/artifacts/create":
		if body["s3Path"] == nil && body["url"] == nil {
			writeJSON(w, 400, map[string]any{"error": "Exactly one of s3Path, url or fragments is required"})
			return
		}
		id := f.id(24)
		a := map[string]any{"id": id, "name": body["name"], "type": body["type"], "status": "created", "uploadMethod": "direct_url",
			"size": nil, "duration": nil, "errorMessage": nil, "s3Path": "uploads/" + id + "/x.wav", "createdAt": "2026-02-04T12:00:00.000Z",
			"updatedAt": "2026-02-04T12:00:00.000Z", "company": company, "createdBy": map[string]any{"id": "507f191e810c19729de860ea"}}
		f.artifacts[id] = a
		f.remaining[id] = f.opt.steps
		writeJSON(w, 200, a)
	case r.Method == "GET" && len(p) == 4 && p[2] == "artifacts":
		a := f.artifacts[p[3]]
		if a == nil {
			notFound()
			return
		}
		if a["status"] == "created" && f.tick(p[3]) {
			a["status"], a["size"], a["duration"] = "upload_completed", 32044, 1
			if f.opt.drift {
				a["size"] = "32044"
			}
		}
		writeJSON(w, 200, a)
	case r.URL.Path == "/api/v1/projects" && r.Method == "GET":
		list := []any{}
		for _, sp := range f.sprojects {
			list = append(list, sp)
		}
		writeJSON(w, 200, list)
	case r.URL.Path == "/api/v1/projects" && r.Method == "POST":
		id := f.id(24)
		sp := map[string]any{"id": id, "name": body["name"], "status": "new", "translationGlossary": nil, "voicesGlossary": nil, "pronunciationGlossary": nil,
			"remark": nil, "clientName": nil, "folderId": nil, "projectUrl": "https://studio.example/projects/" + id,
			"createdAt": "2026-02-04T12:00:00.000Z", "updatedAt": "2026-02-04T12:00:00.000Z"}
		f.sprojects[id] = sp
		writeJSON(w, 200, sp)
	case len(p) == 4 && p[2] == "projects":
		sp := f.sprojects[p[3]]
		if sp == nil {
			notFound()
			return
		}
		if r.Method == "PATCH" {
			sp["name"] = body["name"]
		}
		writeJSON(w, 200, sp)
	case len(p) == 6 && p[5] == "create" && r.Method == "POST":
		if f.sprojects[p[3]] == nil {
			notFound()
			return
		}
		id := f.id(24)
		v := map[string]any{"id": id, "name": body["name"], "status": "new", "processingType": body["workflowType"], "srcLang": body["sourceLanguage"],
			"dstLangs": body["targetLanguages"], "videoUrl": f.srv.URL + "/api/v1/projects/" + p[3] + "/videos/" + id, "videoDuration": 1,
			"remark": nil, "stringVariables": nil, "createdAt": "2026-02-04T12:00:00.000Z", "updatedAt": "2026-02-04T12:00:00.000Z"}
		f.videos[p[3]+"/"+id] = v
		writeJSON(w, 200, v)
	case len(p) == 5 && p[4] == "videos":
		list := []any{}
		for k, v := range f.videos {
			if strings.HasPrefix(k, p[3]+"/") {
				list = append(list, v)
			}
		}
		writeJSON(w, 200, list)
	case len(p) == 6 && r.Method == "GET", len(p) == 5 && p[0] == "api" && p[1] == "projects" && r.Method == "PATCH":
		pid, vid := p[len(p)-3], p[len(p)-1]
		v := f.videos[pid+"/"+vid]
		if v == nil {
			notFound()
			return
		}
		if r.Method == "PATCH" {
			if len(body) == 0 {
				writeJSON(w, 400, map[string]any{"error": "No valid fields to update"})
				return
			}
			for k, x := range body {
				v[k] = x
			}
		}
		writeJSON(w, 200, v)
	default:
		notFound()
	}
}
