package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/control"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newServer builds a simulator with the control token "s3cret" and exts.
func newServer(t *testing.T, exts ...control.Extension) *server.Server {
	t.Helper()
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	st, err := store.Open(filepath.Join(t.TempDir(), "dubsim.db"), store.NoSync())
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, st.Close()) })
	cfg := app.Config{Config: server.Config{ControlToken: "s3cret"}, Store: st, Fixtures: fx, FixtureFS: fixtures.FS, Timing: sim.DefaultTiming,
		Clock: sim.NewSimClock(func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }, 0)}
	srv, err := app.NewServer(context.Background(), cfg, exts...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Close()) })
	return srv
}

// serve serves h for the test and returns its base URL.
func serve(t *testing.T, h http.Handler) string {
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL
}

func call(t *testing.T, base, method, path, token string) (int, map[string]any) {
	t.Helper()
	r, err := http.NewRequest(method, base+path, strings.NewReader("{}"))
	require.NoError(t, err)
	r.Header.Set("Content-Type", "application/json")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(r)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

// TestControlExtensions: a route given to NewServer is served under /_sim
// behind the control guard and recorded in the journal, as every control
// call is.
func TestControlExtensions(t *testing.T) {
	t.Parallel()
	ext := control.Extension{Paths: []string{"/things", "/things/*"}, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"path":"` + r.URL.Path + `"}`))
	})}
	h := serve(t, newServer(t, ext).Handler)
	status, body := call(t, h, http.MethodPost, "/_sim/things/one", "")
	assert.Equal(t, http.StatusUnauthorized, status, "no token: refused by the guard")
	assert.Nil(t, body["path"])
	status, body = call(t, h, http.MethodPost, "/_sim/things/one", "s3cret")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "/_sim/things/one", body["path"])
	status, body = call(t, h, http.MethodGet, "/_sim/requests?path=/_sim/things/*&method=POST", "s3cret")
	require.Equal(t, http.StatusOK, status)
	assert.Len(t, body["requests"], 1, "the accepted call is in the journal, the refused one is not: %v", body)

	status, _ = call(t, serve(t, newServer(t).Handler), http.MethodGet, "/_sim/things/one", "s3cret")
	assert.Equal(t, http.StatusNotFound, status, "without the extension the path is unknown")
}
