package ui_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/audio"
	"github.com/dubsim/dubsim/sim/control/ui"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var t0 = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

// source is an in-memory ui.Source.
type source struct {
	projects map[string]sim.Project
	studio   sim.StudioDump
	fail     error
}

func (s *source) Now() time.Time { return t0.Add(time.Hour) }

func (s *source) ProjectOutput(_ context.Context, id string) (sim.Project, error) {
	if s.fail != nil {
		return sim.Project{}, s.fail
	}
	p, ok := s.projects[id]
	if !ok {
		return p, sim.Errorf(sim.CodeNotFound, sim.MsgProjectNotFound)
	}
	return p, nil
}

func (s *source) StudioDump(_ context.Context, f sim.StudioFilter) (sim.StudioDump, error) {
	if s.fail != nil {
		return sim.StudioDump{}, s.fail
	}
	if f.ProjectID == "" {
		return s.studio, nil
	}
	d := s.studio
	d.Projects, d.Videos, d.Artifacts = nil, nil, nil
	for _, p := range s.studio.Projects {
		if p.ID == f.ProjectID {
			d.Projects = append(d.Projects, p)
		}
	}
	if len(d.Projects) == 0 {
		return sim.StudioDump{}, sim.Errorf(sim.CodeNotFound, sim.MsgStudioProjectNotFound, f.ProjectID)
	}
	for _, v := range s.studio.Videos {
		if v.ProjectID == f.ProjectID {
			d.Videos = append(d.Videos, v)
		}
	}
	return d, nil
}

func ptr[T any](v T) *T { return &v }

func fixture() *source {
	ready := sim.Project{ID: "802323387", APIKey: "dubsim-pro", Name: "Launch <video> & \"friends\"", Status: sim.StatusReady,
		SourceVideoURL: "https://cdn.example.com/talk.mp4", SourceLang: "en", TargetLang: "es-ES", MixingMode: sim.MixVoiceoverOnly,
		TTSVolume: "normal", DurationMS: 4000, DurationSource: "rule", CostMinutes: 1, CreatedAt: t0, CompletedAt: t0.Add(90 * time.Second),
		TranslationsCount: 1, OutputGen: 2,
		SourceScript: []sim.Segment{{StartMS: 0, EndMS: 1500, Text: "Hello there.", SpeakerID: 1}, {StartMS: 2000, EndMS: 3500, Text: "Hi!", SpeakerID: 2}},
		TargetScript: []sim.Segment{{StartMS: 0, EndMS: 1500, Text: "Hola.", SpeakerID: 1}, {StartMS: 2000, EndMS: 3500, Text: "¡Hola!", SpeakerID: 2}},
		Speakers:     []sim.Speaker{{SpeakerID: 1, Style: sim.StyleMasculine, VoiceKey: "es-ES-m1"}, {SpeakerID: 2, Style: sim.StyleFeminine, VoiceKey: "es-ES-f1"}},
		History: []sim.Event{{At: t0, Kind: sim.EventCreated, EstimatedCompletion: t0.Add(80 * time.Second)}, {At: t0.Add(90 * time.Second), Kind: sim.EventCompleted},
			{At: t0.Add(2 * time.Minute), Kind: sim.EventRetranslation, Message: "target script changed"}},
	}
	running := sim.Project{ID: "802323388", APIKey: "dubsim-pro", Name: "Running", Status: sim.StatusInProgress, CreatedAt: t0,
		DueAt: t0.Add(time.Hour), Outcome: sim.Outcome{Error: true, Message: "boom"}, History: []sim.Event{{At: t0, Kind: sim.EventCreated}}}
	failed := sim.Project{ID: "802323389", APIKey: "dubsim-pro", Name: "Failed", Status: sim.StatusError, OutputGen: 1, ErrorMessage: "No speech detected", CreatedAt: t0}
	common := "Keep brand names in English."
	return &source{
		projects: map[string]sim.Project{ready.ID: ready, running.ID: running, failed.ID: failed},
		studio: sim.StudioDump{
			Companies:  []sim.Company{{ID: "c1", Name: "Acme <Media>", CreatedAt: t0}},
			Users:      []sim.User{{ID: "u1", CompanyID: "c1", Name: "Ada Manager", Email: "ada@acme.example", CreatedAt: t0}},
			Folders:    []sim.Folder{{ID: "f1", CompanyID: "c1", Name: "Marketing"}, {ID: "f2", CompanyID: "c1", Name: "2026 <Q1>", ParentID: "f1"}},
			Glossaries: []sim.Glossary{{ID: "g1", CompanyID: "c1", Kind: sim.GlossaryTranslation, Name: "Brand terms", Langs: []string{"en", "es"}}},
			Projects: []sim.StudioProject{{ID: "p1", CompanyID: "c1", Name: "Spring <script>alert(1)</script> campaign", Status: "new", ManagerID: "u1",
				TranslationGlossary: "g1", PronunciationGlossary: "g-missing", ClientName: "Globex", FolderID: "f2", CreatedBy: "u1",
				CreatedAt: t0, UpdatedAt: t0.Add(time.Minute)}},
			Videos: []sim.Video{
				{ID: "v2", ProjectID: "p1", CompanyID: "c1", Name: "Teaser", Status: sim.VideoInProgress, ProcessingType: "dubbing", SrcLang: "en",
					DstLangs: []string{"es-ES", "de-DE"}, DurationSeconds: ptr(3725.25), SourceArtifactID: "a1",
					StringVariables: []sim.StringVariable{{Key: "episode", Value: "7"}},
					Guidance:        &sim.Guidance{Common: &common, ByLang: map[string]string{"es-ES": "Use usted.", "de-DE": "Sie, not du."}},
					Pipeline:        &sim.PipelineOptions{ShouldAutomateTranslation: ptr(true)},
					DueAt:           t0.Add(2 * time.Hour), CreatedAt: t0.Add(time.Second)},
				{ID: "v1", ProjectID: "p1", CompanyID: "c1", Name: "Main cut", Status: sim.VideoCompleted, ProcessingType: "voiceover", SrcLang: "en",
					DstLangs: []string{}, StringVariables: []sim.StringVariable{}, CreatedAt: t0},
			},
			Artifacts: []sim.Artifact{{ID: "a1", CompanyID: "c1", Name: "teaser.mp4", Type: sim.ArtifactVideo, Status: sim.ArtifactCompleted, CreatedAt: t0}},
		},
	}
}

func track(p sim.Project) audio.Track {
	return audio.Track{SampleRate: 8000, Duration: time.Duration(p.DurationMS) * time.Millisecond}
}

// server mounts the UI as dubsim does: the control routes under /_sim and
// the page at the root.
func server(t *testing.T, src ui.Source) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(handler(src))
	t.Cleanup(srv.Close)
	return srv
}

// handler is the UI mounted as dubsim mounts it.
func handler(src ui.Source) http.Handler {
	u := ui.New(ui.Config{Source: src, Track: track})
	r := chi.NewRouter()
	ctl := chi.NewRouter()
	for _, p := range ui.ControlPaths {
		ctl.Handle(p, u.ControlRoutes())
	}
	r.Mount("/_sim", ctl)
	r.Handle("/projects/{id}", u.PageRoutes(true))
	return r
}

type answer struct {
	status int
	header http.Header
	body   string
}

func get(t *testing.T, srv *httptest.Server, method, path string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return answer{res.StatusCode, res.Header, string(b)}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./sim/ui -update to create it")
	assert.Equal(t, string(want), got, "golden file %s (go test ./sim/ui -update rewrites it)", path)
}

func TestProjectDetail(t *testing.T) {
	t.Parallel()
	srv := server(t, fixture())
	tests := []struct {
		name, id string
		golden   string
		check    func(t *testing.T, m map[string]any)
	}{
		{"ready with audio", "802323387", "detail_ready.golden.json", func(t *testing.T, m map[string]any) {
			assert.Equal(t, "/_sim/projects/802323387/audio.wav", m["audio_url"])
		}},
		{"in progress: planned error, no audio", "802323388", "detail_running.golden.json", func(t *testing.T, m map[string]any) {
			assert.Equal(t, "error", m["planned_outcome"])
			assert.NotContains(t, m, "audio_url")
			assert.Equal(t, []any{}, m["source_script"], "absent scripts are empty arrays, not null")
		}},
		{"error: no audio even with a generation", "802323389", "", func(t *testing.T, m map[string]any) {
			assert.NotContains(t, m, "audio_url")
			assert.Equal(t, "No speech detected", m["error_message"])
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := get(t, srv, "GET", "/_sim/projects/"+tc.id)
			require.Equal(t, 200, a.status, a.body)
			assert.Equal(t, "application/json; charset=utf-8", a.header.Get("Content-Type"))
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(a.body), &m))
			tc.check(t, m)
			if tc.golden != "" {
				golden(t, tc.golden, a.body)
			}
		})
	}
}

func TestControlErrors(t *testing.T) {
	t.Parallel()
	srv := server(t, fixture())
	tests := []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/_sim/projects/404", 404, `{"error":"NotFoundError","message":"Project not found"}`},
		{"GET", "/_sim/projects/802323388/audio.wav", 404, `{"error":"NotFoundError","message":"Project 802323388 has no output audio (status in_progress)"}`},
		{"GET", "/_sim/projects/802323389/audio.wav", 404, `{"error":"NotFoundError","message":"Project 802323389 has no output audio (status error)"}`},
		{"GET", "/_sim/studio?company=c1", 400, `{"error":"ValidationError","message":"Unknown query parameter \"company\"; use company_id"}`},
		{"GET", "/_sim/ui/nothing.js", 404, `{"error":"NotFoundError","message":"No dashboard file /_sim/ui/nothing.js"}`},
		{"GET", "/_sim/ui/../ui.go", 404, ``}, // cleaned by the client or the router: never a file outside static/
		{"GET", "/_sim/ui/%2e%2e/ui.go", 404, `{"error":"NotFoundError","message":"No dashboard file /_sim/ui/../ui.go"}`},
		{"POST", "/_sim/studio", 405, `{"error":"MethodNotAllowedError","message":"Method POST is not allowed on /_sim/studio"}`},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			t.Parallel()
			a := get(t, srv, tc.method, tc.path)
			assert.Equal(t, tc.status, a.status, a.body)
			if tc.body != "" {
				assert.JSONEq(t, tc.body, a.body)
			}
			assert.NotContains(t, a.body, "package ui")
		})
	}
}

func TestAudio(t *testing.T) {
	t.Parallel()
	srv := server(t, fixture())
	a := get(t, srv, "GET", "/_sim/projects/802323387/audio.wav")
	require.Equal(t, 200, a.status)
	assert.Equal(t, "audio/wav", a.header.Get("Content-Type"))
	require.Greater(t, len(a.body), 44)
	assert.Equal(t, "RIFF", a.body[:4])
	assert.Equal(t, "WAVE", a.body[8:12])
	assert.Equal(t, 44+4*8000*2, len(a.body), "4 s of 8 kHz 16-bit mono after the header")
	r := get(t, srv, "GET", "/_sim/projects/802323387/audio.wav", "Range", "bytes=0-3")
	assert.Equal(t, 206, r.status)
	assert.Equal(t, "RIFF", r.body)
}

func TestStudioDump(t *testing.T) {
	t.Parallel()
	srv := server(t, fixture())
	a := get(t, srv, "GET", "/_sim/studio?company_id=c1")
	require.Equal(t, 200, a.status, a.body)
	var d sim.StudioDump
	require.NoError(t, json.Unmarshal([]byte(a.body), &d))
	assert.Len(t, d.Projects, 1)
	assert.Len(t, d.Videos, 2)
	assert.Len(t, d.Artifacts, 1)
}

func TestDashboardFiles(t *testing.T) {
	t.Parallel()
	srv := server(t, fixture())
	redirect := get(t, srv, "GET", "/_sim/ui")
	assert.Equal(t, http.StatusMovedPermanently, redirect.status)
	assert.Equal(t, ui.DashboardPath, redirect.header.Get("Location"))
	for _, f := range []struct{ path, ctype, contains string }{
		{"/_sim/ui/", "text/html; charset=utf-8", "<title>dubsim dashboard</title>"},
		{"/_sim/ui/index.html", "text/html; charset=utf-8", `src="app.js"`},
		{"/_sim/ui/app.js", "text/javascript; charset=utf-8", "fetch("},
		{"/_sim/ui/app.css", "text/css; charset=utf-8", "{"},
		{"/_sim/ui/favicon.svg", "image/svg+xml", "<svg"},
	} {
		a := get(t, srv, "GET", f.path)
		if assert.Equal(t, 200, a.status, f.path) {
			assert.Equal(t, f.ctype, a.header.Get("Content-Type"), f.path)
			assert.Contains(t, a.body, f.contains, f.path)
			assert.Contains(t, a.header.Get("Content-Security-Policy"), "script-src 'self'", f.path)
			assert.Equal(t, "nosniff", a.header.Get("X-Content-Type-Options"))
		}
		head := get(t, srv, "HEAD", f.path)
		assert.Equal(t, 200, head.status, f.path)
		assert.Empty(t, head.body)
	}
	// Offline: the dashboard refers to nothing outside its own origin.
	for _, f := range []string{"/_sim/ui/", "/_sim/ui/app.js", "/_sim/ui/app.css"} {
		body := get(t, srv, "GET", f).body
		for _, ext := range []string{"http://", "https://", "//cdn", "@import"} {
			for _, line := range strings.Split(body, "\n") {
				if strings.Contains(line, ext) && !strings.Contains(line, "example") && !strings.Contains(strings.TrimSpace(line), "//") {
					t.Errorf("%s refers outside: %q", f, line)
				}
			}
		}
	}
}

func TestProjectPage(t *testing.T) {
	t.Parallel()
	srv := server(t, fixture())
	a := get(t, srv, "GET", "/projects/p1")
	require.Equal(t, 200, a.status, a.body)
	assert.Equal(t, "text/html; charset=utf-8", a.header.Get("Content-Type"))
	assert.Contains(t, a.header.Get("Content-Security-Policy"), "default-src 'none'")
	assert.NotContains(t, a.body, "<script>", "names are escaped")
	assert.Contains(t, a.body, "Spring &lt;script&gt;alert(1)&lt;/script&gt; campaign")
	for _, want := range []string{
		"Marketing / 2026 &lt;Q1&gt;",                // the folder path, top first
		"Brand terms",                                // a known glossary by name
		"<code>g-missing</code>",                     // an unknown one by id
		"Ada Manager &lt;ada@acme.example&gt;",       // the manager
		"1:02:05.3",                                  // the duration
		"Use usted.", "Keep brand names in English.", // guidance
		"episode", // metadata
		`href="/_sim/ui/"`,
	} {
		assert.Contains(t, a.body, want)
	}
	assert.Less(t, strings.Index(a.body, "Main cut"), strings.Index(a.body, "Teaser"), "videos in creation order")
	golden(t, "project.golden.html", a.body)

	head := get(t, srv, "HEAD", "/projects/p1")
	assert.Equal(t, 200, head.status)
	assert.Empty(t, head.body)
	assert.Equal(t, a.header.Get("Content-Length"), head.header.Get("Content-Length"))

	missing := get(t, srv, "GET", "/projects/nope")
	assert.Equal(t, 404, missing.status)
	assert.Contains(t, missing.body, "There is no studio project nope.")
	assert.Equal(t, "text/html; charset=utf-8", missing.header.Get("Content-Type"))
}

func TestProjectPageStoreFailure(t *testing.T) {
	t.Parallel()
	src := fixture()
	src.fail = errors.New("disk on fire")
	srv := server(t, src)
	a := get(t, srv, "GET", "/projects/p1")
	assert.Equal(t, 500, a.status)
	assert.NotContains(t, a.body, "disk on fire", "the cause is logged, not shown")
	j := get(t, srv, "GET", "/_sim/projects/802323387")
	assert.Equal(t, 500, j.status)
	assert.NotContains(t, j.body, "disk on fire")
}
