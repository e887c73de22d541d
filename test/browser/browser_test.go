// Package browser runs the dashboard and the projectUrl page in a real
// browser: Debian's chromium, driven by playwright-core from npm (see
// package.json and dashboard.mjs), against an in-process dubsim.
// The tests run in parallel: each has a dubsim and browser contexts of its
// own in the one chromium of runner.mjs, and much of a scenario is waiting
// (idle windows in which nothing may happen, the page's refreshes).
//
// It needs node, npm (it runs npm ci in this directory when the packages are
// missing) and chromium; without them it skips, or fails with
// DUBSIM_REQUIRE_TOOLS=1 (internal/tooltest). DUBSIM_SCREENSHOTS=dir takes
// the screenshots a person looks at and keeps them in dir; the layout test's
// first screen is taken in any case.
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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chromium is the browser the test drives: $DUBSIM_CHROMIUM or Debian's.
func chromium() string {
	if p := os.Getenv("DUBSIM_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

func requireTools(t *testing.T) {
	t.Helper()
	node := tooltest.Path(t, "node", "apt-get install nodejs")
	if _, err := os.Stat(chromium()); err != nil {
		tooltest.Missing(t, "chromium ("+chromium()+", apt-get install chromium)")
	}
	tooltest.NodeModules(t, ".", "playwright-core/package.json")
	startRunner(t, node)
}

// runner is the node process that runs every scenario (runner.mjs) in its
// one chromium. It serves at url; one that has exited is started again.
var runner struct {
	sync.Mutex
	cmd    *exec.Cmd
	stdin  io.Closer // closing it stops the runner and its browser
	done   chan struct{}
	url    string
	stderr syncBuffer
}

func startRunner(t *testing.T, node string) {
	t.Helper()
	runner.Lock()
	defer runner.Unlock()
	if runner.done != nil {
		select {
		case <-runner.done:
		default:
			return
		}
	}
	cmd := exec.Command(node, "runner.mjs")
	cmd.Env = append(os.Environ(), "CHROMIUM="+chromium())
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = &runner.stderr
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	lines := bufio.NewScanner(stdout)
	url := ""
	for url == "" && lines.Scan() {
		if line := lines.Text(); strings.HasPrefix(line, "http://") {
			url = line
		} else {
			t.Log("runner.mjs: " + line)
		}
	}
	go func() {
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
		close(done)
	}()
	if url == "" {
		_ = stdin.Close()
		<-done
		t.Fatalf("runner.mjs printed no address: %v\n%s", cmd.ProcessState, runner.stderr.String())
	}
	runner.cmd, runner.stdin, runner.done, runner.url = cmd, stdin, done, url
}

// syncBuffer is a bytes.Buffer that the runner writes while tests read it.
type syncBuffer struct {
	sync.Mutex
	b bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.Lock()
	defer s.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.Lock()
	defer s.Unlock()
	return s.b.String()
}

// scenario runs script (a scenario of runner.mjs) with env and fails t
// unless every step of it passed; its output goes to the test's log.
func scenario(t *testing.T, script string, env map[string]string) {
	t.Helper()
	runner.Lock()
	url := runner.url
	runner.Unlock()
	body, err := json.Marshal(env)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), "POST", url+"/"+script, bytes.NewReader(body))
	require.NoError(t, err)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "runner.mjs: %s", runner.stderr.String())
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	t.Logf("%s:\n%s", script, out)
	require.NoError(t, err, "the runner stopped (runner.mjs: %s)", runner.stderr.String())
	require.Contains(t, string(out), "ALL STEPS PASSED", "the browser scenario failed (output above)")
}

// screenshots is where the scenarios keep their screenshots: only when
// DUBSIM_SCREENSHOTS names a folder (nobody compares them), "" otherwise.
func screenshots(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("DUBSIM_SCREENSHOTS")
	if dir != "" {
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	return dir
}

// requireShots checks that each of names is in dir, and not an empty image.
func requireShots(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, name := range names {
		st, err := os.Stat(filepath.Join(dir, name))
		if assert.NoError(t, err, "screenshot %s", name) {
			assert.Greater(t, st.Size(), int64(5000), "%s is not an empty image", name)
		}
	}
}

// TestMain stops the runner after the tests; it lets four tests run at
// once unless -parallel says otherwise, where go test's default,
// GOMAXPROCS, would let two: most of a scenario is the browser's waits.
// Not all six: their first page loads at once, on a loaded machine, came
// to the scenarios' 10 s waits.
func TestMain(m *testing.M) {
	tooltest.Parallel(4)
	code := m.Run()
	if runner.done != nil {
		_ = runner.stdin.Close()
		select {
		case <-runner.done:
		case <-time.After(10 * time.Second):
			_ = runner.cmd.Process.Kill()
			<-runner.done
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
	requireTools(t)
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

	shots := screenshots(t)
	scenario(t, "dashboard.mjs", map[string]string{
		"DUBSIM_URL":          sim.URL,
		"PROJECT_ID":          created.ID,
		"ARTIFACT_ID":         artifact.ID,
		"PROJECT_NAME":        "Browser demo",
		"API_KEY":             dubsimtest.KeyPro,
		"STUDIO_PROJECT_URL":  studio[0].ProjectURL,
		"STUDIO_PROJECT_NAME": studio[0].Name,
		"SCREENSHOTS":         shots,
	})
	if shots != "" {
		requireShots(t, shots, "01-dashboard.png", "02-after-advance.png", "03-project-detail.png", "04-journal.png", "05-faults.png", "06-report.png", "07-studio-project.png")
	}
}
