package dubsim_test

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/dubsimtest"
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

// TestRun starts the image (DUBSIM_IMAGE, else dubsim/dubsim:latest, which
// `docker build -t dubsim/dubsim:latest .` at the repository root makes)
// and drives it through the platform and control APIs. It is skipped
// without a working Docker (or compatible) provider.
func TestRun(t *testing.T) {
	testcontainers.SkipIfProviderIsNotHealthy(t)
	ctx := t.Context()
	ctr, err := dubsim.Run(ctx, os.Getenv("DUBSIM_IMAGE"))
	testcontainers.CleanupContainer(t, ctr)
	require.NoError(t, err)

	c, err := ctr.Client(ctx)
	require.NoError(t, err)
	h := dubsimtest.Must(c.Health(ctx))(t)
	assert.Equal(t, "ok", h.Status)
	assert.Zero(t, dubsimtest.Must(c.Clock.Get(ctx))(t).TimeScale, "frozen by default")

	base, err := ctr.URL(ctx)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/api/v1/projects",
		strings.NewReader(`{"source_lang":"en","target_lang":"de-DE","source_video_url":"https://media.dubsim.test/short.mp4"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+dubsimtest.KeyPro)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	dubsimtest.Must(c.Clock.Advance(ctx, time.Hour))(t)
	st := dubsimtest.Must(c.State(ctx, dubsimtest.KeyPro))(t)
	require.Len(t, st.Projects, 1)
	assert.Equal(t, "ready", st.Projects[0].Status)
}
