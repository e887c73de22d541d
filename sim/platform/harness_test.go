package platform_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/control"
	"github.com/dubsim/dubsim/sim/engine"
	"github.com/dubsim/dubsim/sim/media"
	"github.com/dubsim/dubsim/sim/platform"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

var t0 = time.Date(2026, 2, 4, 12, 0, 0, 0, time.UTC)

type env struct {
	t      testing.TB
	engine *engine.Engine
	clock  *sim.SimClock
	h      http.Handler
}

type envOption func(*platform.Config)

// newEnv wires the platform and control APIs like cmd/dubsim does, over a
// store in memory and a frozen clock, with the embedded fixtures.
func newEnv(t testing.TB, opts ...envOption) *env {
	t.Helper()
	st, err := store.OpenMemory(store.KeySeed(42))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	clock := sim.NewSimClock(func() time.Time { return t0 }, 0)
	ids := sim.NewIDs(42)
	eng := engine.New(engine.Config{
		Store: st, Clock: clock, IDs: ids, Timing: sim.DefaultTiming, Fixtures: fx,
		Prober: &media.Resolver{Rules: func() []sim.MediaRule { return fx.MediaRules }, IDs: ids},
	})
	require.NoError(t, eng.Start(context.Background()))
	cfg := platform.Config{Service: server.PlatformService(eng)}
	for _, o := range opts {
		o(&cfg)
	}
	root := chi.NewRouter()
	root.Mount("/_sim", control.New(server.Controller(eng), nil).Routes())
	root.Mount("/", platform.New(cfg).Routes())
	return &env{t: t, engine: eng, clock: clock, h: root}
}

type call struct {
	method, path, key, body string
	header                  map[string]string
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), "body: %s", r.body)
	return m
}

func (e *env) do(c call) reply {
	req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	for k, v := range c.header {
		if k == "Host" {
			req.Host = v
		} else if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return reply{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

func (e *env) advance(seconds int) {
	e.t.Helper()
	r := e.do(call{method: "POST", path: "/_sim/clock/advance", body: `{"seconds":` + itoa(seconds) + `}`})
	require.Equal(e.t, http.StatusOK, r.status, "%s", r.body)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// create makes a project and returns its id.
func (e *env) create(key, body string) string {
	e.t.Helper()
	r := e.do(call{method: "POST", path: "/api/v1/projects", key: key, body: body})
	require.Equal(e.t, http.StatusOK, r.status, "%s", r.body)
	return r.json(e.t)["project_id"].(string)
}

func (e *env) newAccount(body string) string {
	e.t.Helper()
	r := e.do(call{method: "POST", path: "/_sim/accounts", body: body})
	require.Equal(e.t, http.StatusCreated, r.status, "%s", r.body)
	return r.json(e.t)["api_key"].(string)
}

// goldenSignature matches the signature of an output download URL.
var goldenSignature = regexp.MustCompile(`signed=[0-9a-f]{32}\b`)

// golden compares got (indented JSON) with testdata/name.golden.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, json.Indent(&buf, bytes.TrimSpace(got), "", "  "), "body: %s", got)
	buf.WriteByte('\n')
	// Download signatures are keyed by the store's random secret: the
	// golden keeps their shape, not their value.
	got = goldenSignature.ReplaceAll(buf.Bytes(), []byte("signed=<32 hex digits>"))
	buf.Reset()
	buf.Write(got)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./sim/platform -update to create %s", path)
	assert.Equal(t, string(want), buf.String(), "golden %s (go test ./sim/platform -update to accept)", path)
}

const docsExample = `{"name":"My Project","source_lang":"en","target_lang":"fr-FR","source_video_url":"https://example.com/video.mp4","use_soundalike_voices":true,"mixing_mode":"voiceover_with_original_track"}`
