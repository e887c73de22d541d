package browser_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/dubsim/dubsim/dubsimtest"
	"github.com/dubsim/dubsim/internal/simtest"
	"github.com/stretchr/testify/require"
)

// withSandboxes serves a default simulator (clock frozen at start) with
// sandboxes in front, assembled as the process assembles them
// (simtest.Sandboxed).
func withSandboxes(t *testing.T, start time.Time) string {
	t.Helper()
	s := simtest.NewSandboxed(t, simtest.Options{Start: start}, nil)
	hs := httptest.NewServer(s.Handler)
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestDashboardSandboxesInChromium: the default dashboard lists the
// sandboxes; Open leads to a sandbox's dashboard (also reached at
// /_sim/sandboxes/{id}/ui/), which shows that sandbox's data only and whose
// actions and reads stay below /sbx/{id}; Delete removes one (sandboxes.mjs).
func TestDashboardSandboxesInChromium(t *testing.T) {
	t.Parallel()
	requireTools(t)
	t0 := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	url := withSandboxes(t, t0)
	type box struct {
		ID      string            `json:"id"`
		APIKeys map[string]string `json:"api_keys"`
	}
	var a, b box
	call(t, "POST", url+"/_sim/sandboxes", "", `{"start":"2026-05-01T00:00:00Z"}`, 201, &a)
	call(t, "POST", url+"/_sim/sandboxes", "", `{}`, 201, &b)
	call(t, "POST", url+"/api/v1/projects", dubsimtest.KeyPro, `{"name":"Default only","source_lang":"en","target_lang":"es-ES","source_video_url":"https://media.dubsim.test/short.mp4"}`, 200, nil)
	keyA := a.APIKeys[dubsimtest.KeyPro]
	require.NotEmpty(t, keyA, "sandbox A has a key for %s: %v", dubsimtest.KeyPro, a.APIKeys)
	call(t, "POST", url+"/api/v1/projects", keyA, `{"name":"Sandbox A only","source_lang":"en","target_lang":"es-ES","source_video_url":"https://media.dubsim.test/short.mp4"}`, 200, nil)

	scenario(t, "sandboxes.mjs", map[string]string{"DUBSIM_URL": url, "SBX_A": a.ID, "SBX_B": b.ID})
}
