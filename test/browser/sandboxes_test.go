package browser_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/dubsim/dubsim/dubsimtest"
	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/internal/simtest"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/sandbox"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/require"
)

// withSandboxes serves a default simulator (clock frozen at start) with
// sandboxes in front, assembled as the process assembles them: one
// server.Shared, the /_sim/sandboxes control extension, the sandbox
// dispatcher around the default's handler.
func withSandboxes(t *testing.T, start time.Time) string {
	t.Helper()
	dir := t.TempDir()
	sh, err := server.NewShared(server.Config{})
	require.NoError(t, err)
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	var def *simtest.Instance
	m, err := sandbox.New(sandbox.Config{
		Base:   server.Config{Fixtures: fx, FixtureFS: fixtures.FS, Timing: sim.DefaultTiming},
		Shared: sh, Dir: filepath.Join(dir, "sandboxes"),
		DefaultNow:   func() time.Time { return def.Clock.Now() },
		StoreOptions: []store.Option{store.NoSync()},
	})
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "default"), 0o755))
	def, err = simtest.Open(filepath.Join(dir, "default"), simtest.Options{Start: start, Config: func(c *server.Config) {
		c.Shared = sh
		c.ControlExtensions = append(c.ControlExtensions, m.ControlExtension(""))
	}})
	require.NoError(t, err)
	hs := httptest.NewServer(m.Handler(def.Server.Handler, sandbox.PickMain))
	t.Cleanup(func() {
		hs.Close()
		require.NoError(t, m.Close(context.Background()))
		require.NoError(t, def.Close())
		require.NoError(t, sh.Close())
	})
	return hs.URL
}

// TestDashboardSandboxesInChromium: the default dashboard lists the
// sandboxes; Open leads to a sandbox's dashboard (also reached at
// /_sim/sandboxes/{id}/ui/), which shows that sandbox's data only and whose
// actions and reads stay below /sbx/{id}; Delete removes one (sandboxes.mjs).
func TestDashboardSandboxesInChromium(t *testing.T) {
	node := requireTools(t)
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

	cmd := exec.Command(node, "sandboxes.mjs")
	cmd.Env = append(os.Environ(), "DUBSIM_URL="+url, "CHROMIUM="+chromium(), "SBX_A="+a.ID, "SBX_B="+b.ID)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("sandboxes.mjs:\n%s", out.String())
	require.NoError(t, err, "the browser scenario failed (output above)")
	require.Contains(t, out.String(), "ALL STEPS PASSED")
}
