package dubsim_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"

	dubsim "github.com/dubsim/dubsim/contrib/testcontainers"
)

// TestOptions needs no Docker: the options are environment variables of
// the container request.
func TestOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		opt      testcontainers.CustomizeRequestOption
		key, val string
	}{
		{"time scale", dubsim.WithTimeScale(60), "DUBSIM_TIME_SCALE", "60"},
		{"fractional time scale", dubsim.WithTimeScale(0.5), "DUBSIM_TIME_SCALE", "0.5"},
		{"seed", dubsim.WithSeed(42), "DUBSIM_SEED", "42"},
		{"control token", dubsim.WithControlToken("t0k"), "DUBSIM_CONTROL_TOKEN", "t0k"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var req testcontainers.GenericContainerRequest
			require.NoError(t, tc.opt.Customize(&req))
			assert.Equal(t, map[string]string{tc.key: tc.val}, req.Env)
		})
	}
}

// TestClient checks the wire form of the control calls against a stand-in
// of the control API (the module does not depend on dubsim, so a real one
// runs only in TestRun): method, path, headers, body, decoding, errors.
func TestClient(t *testing.T) {
	t.Parallel()
	type seen struct{ method, path, control, auth, ctype, body string }
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.Path, r.Header.Get("X-Dubsim-Control"), r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(b)}
		switch r.URL.Path {
		case "/_sim/health":
			_, _ = io.WriteString(w, `{"status":"ok","version":"v1"}`)
		case "/_sim/clock", "/_sim/clock/advance":
			_, _ = io.WriteString(w, `{"now":"2030-01-02T03:04:05Z","time_scale":0,"frozen":true}`)
		case "/_sim/reset":
			w.WriteHeader(http.StatusNoContent)
		case "/_sim/teapot":
			w.WriteHeader(http.StatusTeapot)
			_, _ = io.WriteString(w, "not json")
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":"NotFoundError","message":"no such route"}`)
		}
	}))
	t.Cleanup(srv.Close)
	c := &dubsim.Client{BaseURL: srv.URL + "/", Token: "tok"}
	ctx := t.Context()
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

	h, err := c.Health(ctx)
	require.NoError(t, err)
	assert.Equal(t, dubsim.Health{Status: "ok", Version: "v1"}, h)
	assert.Equal(t, seen{"GET", "/_sim/health", "1", "Bearer tok", "", ""}, <-got)

	ck, err := c.Clock(ctx)
	require.NoError(t, err)
	assert.Equal(t, dubsim.Clock{Now: at, Frozen: true}, ck)
	<-got

	now, err := c.Advance(ctx, 90*time.Minute)
	require.NoError(t, err)
	assert.Equal(t, at, now)
	s := <-got
	assert.Equal(t, "/_sim/clock/advance", s.path)
	assert.Equal(t, "application/json", s.ctype)
	assert.JSONEq(t, `{"seconds":5400}`, s.body)

	require.NoError(t, c.Reset(ctx))
	assert.Equal(t, seen{"POST", "/_sim/reset", "1", "Bearer tok", "", ""}, <-got)

	var ce *dubsim.ControlError
	err = c.Do(ctx, "DELETE", "/_sim/nowhere", nil, nil)
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, dubsim.ControlError{Method: "DELETE", Path: "/_sim/nowhere", Status: 404, Name: "NotFoundError", Message: "no such route"}, *ce)
	<-got
	err = c.Do(ctx, "GET", "/_sim/teapot", nil, nil)
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, dubsim.ControlError{Method: "GET", Path: "/_sim/teapot", Status: 418, Name: "I'm a teapot", Message: "not json"}, *ce)
	<-got

	anon := &dubsim.Client{BaseURL: srv.URL}
	_, err = anon.Health(ctx)
	require.NoError(t, err)
	assert.Empty(t, (<-got).auth, "no token, no Authorization")
}

// TestRun starts the image (DUBSIM_IMAGE, else DefaultImage, which
// scripts/image or `docker build -t dubsim/dubsim:latest .` at the
// repository root makes) and drives it through the platform and control
// APIs. It is skipped without a working Docker (or compatible) provider.
func TestRun(t *testing.T) {
	testcontainers.SkipIfProviderIsNotHealthy(t)
	ctx := t.Context()
	ctr, err := dubsim.Run(ctx, os.Getenv("DUBSIM_IMAGE"))
	testcontainers.CleanupContainer(t, ctr)
	require.NoError(t, err)

	c, err := ctr.Client(ctx)
	require.NoError(t, err)
	h, err := c.Health(ctx)
	require.NoError(t, err)
	assert.Equal(t, "ok", h.Status)
	ck, err := c.Clock(ctx)
	require.NoError(t, err)
	assert.True(t, ck.Frozen, "frozen by default")

	base, err := ctr.URL(ctx)
	require.NoError(t, err)
	platformURL, err := ctr.PlatformURL(ctx)
	require.NoError(t, err)
	assert.Equal(t, base+"/platform", platformURL)
	studioURL, err := ctr.StudioURL(ctx)
	require.NoError(t, err)
	assert.Equal(t, base+"/studio", studioURL)
	req, err := http.NewRequestWithContext(ctx, "POST", platformURL+"/api/v1/projects",
		strings.NewReader(`{"source_lang":"en","target_lang":"de-DE","source_video_url":"https://media.dubsim.test/short.mp4"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer dubsim-pro")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var created struct {
		ProjectID string `json:"project_id"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&created))
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	_, err = c.Advance(ctx, time.Hour)
	require.NoError(t, err)
	var st struct {
		Projects []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"projects"`
	}
	require.NoError(t, c.Do(ctx, "GET", "/_sim/state?api_key=dubsim-pro", nil, &st))
	require.Len(t, st.Projects, 1)
	assert.Equal(t, "ready", st.Projects[0].Status)

	// Two sandboxes of the container: each its own clock.
	a, err := ctr.Sandbox(ctx, t)
	require.NoError(t, err)
	b, err := ctr.Sandbox(ctx, t)
	require.NoError(t, err)
	before, err := b.Client.Clock(ctx)
	require.NoError(t, err)
	_, err = a.Client.Advance(ctx, time.Hour)
	require.NoError(t, err)
	after, err := b.Client.Clock(ctx)
	require.NoError(t, err)
	assert.Equal(t, before, after, "a's advance leaves b's clock")
	assert.Equal(t, "sbx_"+a.ID+"_dubsim-pro", a.Key("dubsim-pro"))
}
