package browser_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dubsim/dubsim/dubsimtest"
	"github.com/stretchr/testify/require"
)

// TestDashboardLayoutInChromium loads the dashboard at 1400×1000 with more
// than a page of platform projects, a studio artifact and a journal with a
// refused request, and checks by element geometry that the projects and the
// requests start on the first screen, before the action forms
// (layout.mjs). It keeps a screenshot of the first screen and one of the
// whole page.
func TestDashboardLayoutInChromium(t *testing.T) {
	t.Parallel()
	node := requireTools(t)
	sim := dubsimtest.Start(t) // frozen clock
	for i := range 55 {
		call(t, "POST", sim.URL+"/api/v1/projects", dubsimtest.KeyPro,
			fmt.Sprintf(`{"name":"Episode %02d","source_lang":"en","target_lang":"es-ES","source_video_url":"https://media.dubsim.test/short.mp4"}`, i+1), 200, nil)
	}
	call(t, "POST", sim.URL+"/api/v1/projects", dubsimtest.KeyPro,
		`{"name":"Refused","source_lang":"en","target_lang":"xx-XX","source_video_url":"https://media.dubsim.test/short.mp4"}`, 400, nil)
	call(t, "POST", sim.URL+"/api/v1/artifacts/create", dubsimtest.KeyPro,
		`{"name":"Trailer","type":"video","url":"https://media.dubsim.test/short.mp4"}`, 200, nil)

	shots := os.Getenv("DUBSIM_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(shots, 0o755))

	cmd := exec.Command(node, "layout.mjs")
	cmd.Env = append(os.Environ(), "DUBSIM_URL="+sim.URL, "CHROMIUM="+chromium(), "SCREENSHOTS="+shots)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("layout.mjs:\n%s", out.String())
	require.NoError(t, err, "the browser scenario failed (output above)")
	require.Contains(t, out.String(), "ALL STEPS PASSED")
	for _, name := range []string{"layout-1400x1000.png", "layout-full.png"} {
		st, err := os.Stat(filepath.Join(shots, name))
		require.NoError(t, err, "screenshot %s", name)
		require.Greater(t, st.Size(), int64(5000), "%s is not an empty image", name)
	}
}
