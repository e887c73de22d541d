// Package browser runs the dashboard and the projectUrl page in a real
// browser: Debian's chromium, driven by playwright-core from npm (see
// package.json and dashboard.mjs), against an in-process dubsim.
// The tests run in parallel: each has a dubsim and browser contexts of its
// own in the one chromium they share, and much of a scenario is waiting
// (idle windows in which nothing may happen, the page's refreshes).
//
// It needs node, npm (it runs npm ci in this directory when the packages are
// missing) and chromium; without them it skips, or fails with
// DUBSIM_REQUIRE_TOOLS=1 (internal/tooltest). DUBSIM_SCREENSHOTS=dir keeps the screenshots it takes.
package browser_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/tooltest"

	"github.com/dubsim/dubsim/dubsimtest"
	"github.com/stretchr/testify/require"
)

// chromium is the browser the test drives: $DUBSIM_CHROMIUM or Debian's.
func chromium() string {
	if p := os.Getenv("DUBSIM_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

func requireTools(t *testing.T) (node string) {
	t.Helper()
	node = tooltest.Path(t, "node", "apt-get install nodejs")
	if _, err := os.Stat(chromium()); err != nil {
		tooltest.Missing(t, "chromium ("+chromium()+", apt-get install chromium)")
	}
	tooltest.NodeModules(t, ".", "playwright-core/package.json")
	shareBrowser(t, node)
	return node
}

// browser is the chromium the scripts share (server.mjs): a start costs
// about 3.5 s of CPU, and each script works in browser contexts of its
// own. Its address is BROWSER_WS in the environment the scripts inherit;
// one that has exited is started again.
var browser struct {
	sync.Mutex
	cmd   *exec.Cmd
	stdin io.Closer // closing it stops the browser
	done  chan struct{}
}

func shareBrowser(t *testing.T, node string) {
	t.Helper()
	browser.Lock()
	defer browser.Unlock()
	if browser.done != nil {
		select {
		case <-browser.done:
		default:
			return
		}
	}
	cmd := exec.Command(node, "server.mjs")
	cmd.Env = append(os.Environ(), "CHROMIUM="+chromium())
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	lines := bufio.NewScanner(stdout)
	var ws string
	for ws == "" && lines.Scan() {
		if line := lines.Text(); strings.HasPrefix(line, "ws://") {
			ws = line
		} else {
			t.Log("server.mjs: " + line)
		}
	}
	go func() {
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
		close(done)
	}()
	if ws == "" {
		_ = stdin.Close()
		<-done
		t.Fatalf("server.mjs printed no address: %v\n%s", cmd.ProcessState, stderr.String())
	}
	browser.cmd, browser.stdin, browser.done = cmd, stdin, done
	require.NoError(t, os.Setenv("BROWSER_WS", ws))
}

// TestMain stops the shared browser after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if browser.done != nil {
		_ = browser.stdin.Close()
		select {
		case <-browser.done:
		case <-time.After(10 * time.Second):
			_ = browser.cmd.Process.Kill()
			<-browser.done
		}
	}
	os.Exit(code)
}

// call sends one request to dubsim and decodes its JSON answer.
func call(t *testing.T, method, url, key, body string, want int, out any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, want, res.StatusCode, "%s %s: %s", method, url, b)
	if out != nil {
		require.NoError(t, json.Unmarshal(b, out), "%s", b)
	}
}

func TestDashboardInChromium(t *testing.T) {
	t.Parallel()
	node := requireTools(t)
	sim := dubsimtest.Start(t) // frozen clock: only the dashboard's buttons move it

	// A platform project through the API, and a refused request for the
	// journal to explain.
	var created struct {
		ID string `json:"project_id"`
	}
	call(t, "POST", sim.URL+"/api/v1/projects", dubsimtest.KeyPro,
		`{"name":"Browser demo","source_lang":"en","target_lang":"es-ES","source_video_url":"https://media.dubsim.test/short.mp4"}`, 200, &created)
	call(t, "POST", sim.URL+"/api/v1/projects", dubsimtest.KeyPro,
		`{"name":"Refused","source_lang":"en","target_lang":"xx-XX","source_video_url":"https://media.dubsim.test/short.mp4"}`, 400, nil)

	// An artifact, whose lifecycle the dashboard shows.
	var artifact struct {
		ID string `json:"id"`
	}
	call(t, "POST", sim.URL+"/api/v1/artifacts/create", dubsimtest.KeyPro,
		`{"name":"Trailer","type":"video","url":"https://media.dubsim.test/short.mp4"}`, 200, &artifact)

	// A studio project as the API hands it out, with its projectUrl.
	var studio []struct {
		ID         string `json:"id"`
		Name       string `json:"name"`
		ProjectURL string `json:"projectUrl"`
	}
	call(t, "GET", sim.URL+"/api/v1/projects", dubsimtest.KeyPro, "", 200, &studio)
	require.NotEmpty(t, studio, "dubsim-pro's company has fixture studio projects")

	shots := os.Getenv("DUBSIM_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(shots, 0o755))

	cmd := exec.Command(node, "dashboard.mjs")
	cmd.Env = append(os.Environ(),
		"DUBSIM_URL="+sim.URL,
		"CHROMIUM="+chromium(),
		"PROJECT_ID="+created.ID,
		"ARTIFACT_ID="+artifact.ID,
		"PROJECT_NAME=Browser demo",
		"API_KEY="+dubsimtest.KeyPro,
		"STUDIO_PROJECT_URL="+studio[0].ProjectURL,
		"STUDIO_PROJECT_NAME="+studio[0].Name,
		"SCREENSHOTS="+shots,
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("dashboard.mjs:\n%s", out.String())
	require.NoError(t, err, "the browser scenario failed (output above)")
	require.Contains(t, out.String(), "ALL STEPS PASSED")
	for _, name := range []string{"01-dashboard.png", "02-after-advance.png", "03-project-detail.png", "04-journal.png", "05-faults.png", "06-report.png", "07-studio-project.png"} {
		st, err := os.Stat(filepath.Join(shots, name))
		if err == nil {
			require.Greater(t, st.Size(), int64(5000), "%s is not an empty image", name)
		} else {
			t.Errorf("screenshot %s: %v", name, err)
		}
	}
}
