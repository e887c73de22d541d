package browser_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dubsim/dubsim/dubsimtest"
	"github.com/stretchr/testify/require"
)

// TestDashboardControlTokenInChromium: with --control-token the dashboard
// asks for the token, says when it is refused, loads with the right one,
// sends it with every call (an advance, the audio) and never puts it in an
// address (token.mjs; fidelity HC4).
func TestDashboardControlTokenInChromium(t *testing.T) {
	t.Parallel()
	node := requireTools(t)
	const token = "browser-test-control-token-5c1e"
	sim := dubsimtest.Start(t, dubsimtest.WithControlToken(token))

	var created struct {
		ID string `json:"project_id"`
	}
	call(t, "POST", sim.URL+"/api/v1/projects", dubsimtest.KeyPro,
		`{"name":"Token demo","source_lang":"en","target_lang":"es-ES","source_video_url":"https://media.dubsim.test/short.mp4"}`, 200, &created)

	shots := os.Getenv("DUBSIM_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(shots, 0o755))

	cmd := exec.Command(node, "token.mjs")
	cmd.Env = append(os.Environ(),
		"DUBSIM_URL="+sim.URL,
		"CHROMIUM="+chromium(),
		"CONTROL_TOKEN="+token,
		"PROJECT_ID="+created.ID,
		"SCREENSHOTS="+shots,
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("token.mjs:\n%s", out.String())
	require.NoError(t, err, "the browser scenario failed (output above)")
	require.Contains(t, out.String(), "ALL STEPS PASSED")
	for _, name := range []string{"token-01-refused.png", "token-02-loaded.png"} {
		st, err := os.Stat(filepath.Join(shots, name))
		if err == nil {
			require.Greater(t, st.Size(), int64(5000), "%s is not an empty image", name)
		} else {
			t.Errorf("screenshot %s: %v", name, err)
		}
	}
}
