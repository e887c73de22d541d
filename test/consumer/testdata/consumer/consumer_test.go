// Package consumer is a module outside the dubsim repository that uses
// the tagged modules github.com/dubsim/dubsim (dubsimtest) and
// github.com/dubsim/dubsim/contrib/testcontainers as any user would: no
// replace directive, the versions from a module proxy.
package consumer

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/dubsimtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"

	dubsim "github.com/dubsim/dubsim/contrib/testcontainers"
)

const body = `{"source_lang":"en","target_lang":"de-DE","source_video_url":"https://media.dubsim.test/short.mp4"}`

func create(t *testing.T, base, key string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", base+"/api/v1/projects", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestInProcess runs dubsim in the test process and drives it with the
// control client.
func TestInProcess(t *testing.T) {
	s := dubsimtest.Start(t, dubsimtest.WithSeed(1))
	ctx := t.Context()
	create(t, s.PlatformURL, dubsimtest.KeyPro)
	dubsimtest.Must(s.Clock.Advance(ctx, time.Hour))(t)

	st := dubsimtest.Must(s.State(ctx, dubsimtest.KeyPro))(t)
	require.Len(t, st.Projects, 1)
	assert.Equal(t, "ready", st.Projects[0].Status)
	// The journal records the path as sent, under PlatformURL's prefix.
	v := dubsimtest.Must(s.Journal.Verify(ctx, dubsimtest.Match{Method: "POST", Path: "/platform/api/v1/projects", Times: dubsimtest.Exactly(1)}))(t)
	assert.True(t, v.OK, "%+v", v)
	dubsimtest.Must(s.Reset(ctx))(t)
	assert.Empty(t, dubsimtest.Must(s.State(ctx, dubsimtest.KeyPro))(t).Projects)
}

// TestContainer runs the image with the testcontainers module; it is
// skipped without a Docker (or compatible) provider, but compiles either
// way.
func TestContainer(t *testing.T) {
	testcontainers.SkipIfProviderIsNotHealthy(t)
	ctx := t.Context()
	ctr, err := dubsim.Run(ctx, "")
	testcontainers.CleanupContainer(t, ctr)
	require.NoError(t, err)
	base, err := ctr.URL(ctx)
	require.NoError(t, err)
	create(t, base, dubsimtest.KeyPro)
	c := dubsimtest.NewClient(base)
	c.Token, err = ctr.ControlToken(ctx)
	require.NoError(t, err)
	dubsimtest.Must(c.Clock.Advance(ctx, time.Hour))(t)
	st := dubsimtest.Must(c.State(ctx, dubsimtest.KeyPro))(t)
	require.Len(t, st.Projects, 1)
	assert.Equal(t, "ready", st.Projects[0].Status)
}
