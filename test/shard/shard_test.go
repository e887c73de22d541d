// Package shard serves one parallel suite from two dubsim processes behind
// a balancer that routes by sandbox id (docs/sharding.md): HAProxy with
// docs/sharding/haproxy.cfg as it is, and nginx with
// docs/sharding/nginx.conf.
//
// The balancer tests run in parallel, each with its own two dubsims and
// balancer: most of their time is waiting for HAProxy's health checks.
//
// It needs haproxy and nginx (Debian's packages); without one that balancer
// skips, or fails with DUBSIM_REQUIRE_TOOLS=1 (internal/tooltest).
package shard

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/tooltest"

	"github.com/dubsim/dubsim/dubsimtest"
	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	root = "../.."
	// token is the control token both dubsims run with: the recommended
	// setup of a shared dubsim, and proof that it passes the balancer.
	token = "shard-test-token"
	// clients is the number of sandboxed clients run in parallel.
	clients = 50
)

func TestMain(m *testing.M) {
	// What is tested here is routing between processes: the dubsims are
	// built without -race (the other suites race-test the server), which
	// under CI's -race run of every package made 50 parallel downloads
	// time out.
	proctest.BuildRace = false
	m.Run()
}

// tool finds a balancer's binary (Debian puts them in /usr/sbin, which a
// user's PATH may lack), or skips (fails with DUBSIM_REQUIRE_TOOLS=1).
func tool(t *testing.T, name string) string {
	t.Helper()
	return tooltest.Path(t, name, "apt-get install "+name)
}

// shards starts two dubsims, each on a data file of its own, with the
// control token.
func shards(t *testing.T) (a, b *proctest.Proc) {
	t.Helper()
	start := func(name string) *proctest.Proc {
		return proctest.Start(t, proctest.Binary(t), nil, "--addr", "127.0.0.1:0",
			"--data", filepath.Join(t.TempDir(), name+".db"), "--log-level", "off", "--control-token", token)
	}
	return start("a"), start("b")
}

// hostPort is the host:port of a dubsim's base URL.
func hostPort(p *proctest.Proc) string { return strings.TrimPrefix(p.Base, "http://") }

// probe asks a balancer whether it serves yet.
var probe = &http.Client{Timeout: 2 * time.Second}

// balancer runs cmd (a balancer in the foreground), stops it at cleanup,
// and waits until base answers /_sim/health. Files in handed are the
// child's (ExtraFiles): closed here once it has them. It returns the
// balancer's output, which grows as it runs.
func balancer(t *testing.T, cmd *exec.Cmd, base string, handed ...*os.File) *proctest.Buffer {
	t.Helper()
	logs := &proctest.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	// A group of its own: nginx's workers outlive a killed master (and
	// hold the output pipe), so the cleanup kills the whole group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	require.NoError(t, cmd.Start())
	// The child has its copies: if it dies, its socket closes.
	for _, f := range handed {
		require.NoError(t, f.Close())
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(cmd.Path), logs.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-exited:
			t.Fatalf("%s exited before serving: %v\n%s", filepath.Base(cmd.Path), cmd.ProcessState, logs.String())
		default:
		}
		if res, err := probe.Get(base + "/_sim/health"); err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return logs
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not serve /_sim/health within 30 s\n%s", filepath.Base(cmd.Path), logs.String())
		}
		time.Sleep(50 * time.Millisecond) // polling for readiness, not for state
	}
}

// startHAProxy runs HAProxy with docs/sharding/haproxy.cfg as it is, in
// front of a and b. Its listening socket is opened here and handed over as
// fd 3 (bind "fd@3"), so no port is guessed. It returns the balancer's
// address and its log.
func startHAProxy(t *testing.T, a, b *proctest.Proc) (string, *proctest.Buffer) {
	t.Helper()
	bin := tool(t, "haproxy")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f, err := ln.(*net.TCPListener).File()
	require.NoError(t, err)
	base := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close()) // the dup in f keeps the socket listening
	cmd := exec.Command(bin, "-f", filepath.Join(root, "docs/sharding/haproxy.cfg"), "-db")
	cmd.ExtraFiles = []*os.File{f}
	cmd.Env = append(os.Environ(), "SHARD_BIND=fd@3", "SHARD_A="+hostPort(a), "SHARD_B="+hostPort(b))
	return base, balancer(t, cmd, base, f)
}

// The addresses docs/sharding/nginx.conf names, replaced by the test's.
const (
	nginxListen = "127.0.0.1:8080"
	nginxA      = "127.0.0.1:8081"
	nginxB      = "127.0.0.1:8082"
)

// startNginx runs nginx with docs/sharding/nginx.conf, its three addresses
// replaced (everywhere), from a prefix directory of its own.
func startNginx(t *testing.T, a, b *proctest.Proc) string {
	t.Helper()
	bin := tool(t, "nginx")
	conf, err := os.ReadFile(filepath.Join(root, "docs/sharding/nginx.conf"))
	require.NoError(t, err)
	for _, addr := range []string{nginxListen, nginxA, nginxB} {
		require.Contains(t, string(conf), addr)
	}
	// nginx binds the address itself: a free port, found just before.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	listen := ln.Addr().String()
	require.NoError(t, ln.Close())
	s := strings.NewReplacer(nginxListen, listen, nginxA, hostPort(a), nginxB, hostPort(b)).Replace(string(conf))
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(s), 0o644))
	cmd := exec.Command(bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", "stderr", "-g", "daemon off;")
	base := "http://" + listen
	balancer(t, cmd, base)
	return base
}

func TestHAProxy(t *testing.T) {
	t.Parallel()
	a, b := shards(t)
	lb, _ := startHAProxy(t, a, b)
	suite(t, lb, a, b)
	// The Go helper through the balancer: Connect creates with PUT, and
	// its Client reaches the sandbox's control API by /sbx/<id>/_sim.
	t.Run("Connect", func(t *testing.T) {
		for i := range 8 {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				sb := dubsimtest.Connect(t, lb, dubsimtest.WithControlToken(token))
				key := sb.Key(dubsimtest.KeyPro)
				var p project
				body := `{"name":"connect","source_lang":"en","target_lang":"de-DE","source_video_url":"https://media.dubsim.test/short-c.mp4"}`
				require.NoError(t, expect("POST", lb+"/api/v1/projects", key, body, http.StatusOK, &p))
				_, err := sb.Clock.Advance(t.Context(), 2*time.Hour)
				require.NoError(t, err)
				require.NoError(t, expect("GET", lb+"/api/v1/projects/"+p.ProjectID, key, "", http.StatusOK, &p))
				assert.Equal(t, "ready", p.Status)
				reqs, err := sb.Journal.Requests(t.Context(), dubsimtest.RequestFilter{})
				require.NoError(t, err)
				for _, r := range reqs {
					assert.Contains(t, []string{"", key}, r.APIKey, "%s %s", r.Method, r.Path)
				}
			})
		}
	})
}

func TestNginx(t *testing.T) {
	t.Parallel()
	a, b := shards(t)
	suite(t, startNginx(t, a, b), a, b)
}

// The alphabet of sandbox ids: lower-case Crockford base32.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	for i := range b {
		b[i] = idAlphabet[b[i]&31]
	}
	return string(b[:])
}

// client is one HTTP client for all the suite's requests: keep-alive
// connections to the balancer carry requests of different sandboxes, each
// routed on its own.
var client = &http.Client{Timeout: time.Minute}

// call sends one request; control paths (/_sim, /sbx/<id>/_sim) carry the
// control token, others key as their bearer key. It returns the status
// and the body.
func call(method, url, key, body string) (int, []byte, error) {
	st, _, raw, err := send(method, url, key, body)
	return st, raw, err
}

// send is call that returns the answer's header too.
func send(method, url, key, body string) (int, http.Header, []byte, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if strings.Contains(url, "/_sim") {
		req.Header.Set("X-Dubsim-Control", "1")
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, raw, err
}

// expect sends a request and decodes its JSON answer into out (when not
// nil), failing unless the status is want.
func expect(method, url, key, body string, want int, out any) error {
	st, raw, err := call(method, url, key, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, url, err)
	}
	if st != want {
		return fmt.Errorf("%s %s: status %d, want %d: %.300s", method, url, st, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: %w: %.300s", method, url, err, raw)
		}
	}
	return nil
}

type sandboxView struct {
	ID      string            `json:"id"`
	APIKeys map[string]string `json:"api_keys"`
	BaseURL string            `json:"base_url"`
}

type project struct {
	ProjectID string `json:"project_id"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Output    string `json:"output_tts_audio_url"`
}

// listed is the set of sandbox ids GET <base>/_sim/sandboxes lists.
func listed(t *testing.T, base string) map[string]bool {
	t.Helper()
	var l struct {
		Sandboxes []sandboxView `json:"sandboxes"`
	}
	require.NoError(t, expect("GET", base+"/_sim/sandboxes", token, "", http.StatusOK, &l))
	ids := map[string]bool{}
	for _, s := range l.Sandboxes {
		ids[s.ID] = true
	}
	return ids
}

// suite runs clients sandboxed clients in parallel through the balancer at
// lb, in front of the dubsims a and b, and checks every answer; while all
// of them hold their sandboxes, it asks a and b directly which they hold.
func suite(t *testing.T, lb string, a, b *proctest.Proc) {
	t.Helper()
	// The control token is needed through the balancer too.
	st, raw, err := call("GET", lb+"/_sim/sandboxes", "", "")
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, st, "%s", raw)

	var (
		created sync.WaitGroup // every client holds its sandbox, or gave up
		checked = make(chan struct{})
		mu      sync.Mutex
		ids     []string
		errs    = make([]error, clients)
		done    sync.WaitGroup
	)
	created.Add(clients)
	done.Add(clients)
	for i := range clients {
		go func() {
			defer done.Done()
			var once sync.Once
			hold := func() { once.Do(created.Done) }
			defer hold()
			id := newID()
			errs[i] = run(lb, id, func() {
				mu.Lock()
				ids = append(ids, id)
				mu.Unlock()
				hold()
				<-checked
			})
		}()
	}

	// While every client holds its sandbox: each lives on one process, and
	// both processes hold some.
	func() {
		defer close(checked)
		created.Wait()
		onA, onB := listed(t, a.Base), listed(t, b.Base)
		mu.Lock()
		all := append([]string(nil), ids...)
		mu.Unlock()
		sort.Strings(all)
		for _, id := range all {
			assert.True(t, onA[id] != onB[id], "sandbox %s: on a %v, on b %v; want exactly one", id, onA[id], onB[id])
		}
		assert.Equal(t, len(all), len(onA)+len(onB), "the two processes hold the clients' sandboxes and no others")
		assert.NotEmpty(t, onA, "process a holds sandboxes")
		assert.NotEmpty(t, onB, "process b holds sandboxes")
		t.Logf("%d sandboxes: %d on a, %d on b", len(all), len(onA), len(onB))
		// Requests that name no sandbox go to one fixed process (a): its
		// list is the balancer's.
		assert.Equal(t, onA, listed(t, lb), "GET /_sim/sandboxes through the balancer lists process a's")
	}()
	done.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "client %d", i)
	}

	// Afterwards, both processes are empty again.
	assert.Empty(t, listed(t, a.Base))
	assert.Empty(t, listed(t, b.Base))
	defaultSimulator(t, lb, a, b)
}

// run is one sandboxed client: create its sandbox, a project with its key,
// advance its clock, read the project ready, download the output through
// the URL the answer gives, check its journal and state hold its own
// requests only, then (after hold) delete the sandbox.
func run(lb, id string, hold func()) error {
	sb, key, err := createSandbox(lb, id)
	if err != nil {
		return err
	}
	name := "client-" + id
	p, err := createProject(lb, key, name)
	if err != nil {
		return err
	}
	if err := expect("GET", lb+"/api/v1/projects/"+p.ProjectID, key, "", http.StatusOK, &p); err != nil {
		return err
	}
	if p.Status != "in_progress" || p.Name != name {
		return fmt.Errorf("sandbox %s: project %s is %q named %q before the clock moved", id, p.ProjectID, p.Status, p.Name)
	}
	// The clock by the /sbx path, with the control token as the bearer:
	// the path routes (and wins over the header, as in dubsim).
	if err := expect("POST", lb+"/sbx/"+id+"/_sim/clock/advance", token, `{"seconds":7200}`, http.StatusOK, nil); err != nil {
		return err
	}
	if err := expect("GET", lb+"/api/v1/projects/"+p.ProjectID, key, "", http.StatusOK, &p); err != nil {
		return err
	}
	if p.Status != "ready" || !strings.HasPrefix(p.Output, sb.BaseURL+"/") {
		return fmt.Errorf("sandbox %s: project %q, output %q; want ready under %s", id, p.Status, p.Output, sb.BaseURL)
	}
	st, wav, err := call("GET", p.Output, "", "")
	if err != nil || st != http.StatusOK || !bytes.HasPrefix(wav, []byte("RIFF")) {
		return fmt.Errorf("sandbox %s: GET %s: %d %v %.60q", id, p.Output, st, err, wav)
	}
	// Its journal holds its requests only: its key, or none (the clock,
	// the download).
	var j struct {
		Requests []struct {
			Path   string `json:"path"`
			APIKey string `json:"api_key"`
		} `json:"requests"`
	}
	if err := expect("GET", lb+"/_sim/sandboxes/"+id+"/requests", token, "", http.StatusOK, &j); err != nil {
		return err
	}
	mine := 0
	for _, r := range j.Requests {
		switch {
		case r.APIKey == key:
			mine++
		case r.APIKey != "":
			return fmt.Errorf("sandbox %s: its journal holds %s %q", id, r.Path, r.APIKey)
		}
	}
	if mine != 3 {
		return fmt.Errorf("sandbox %s: its journal holds %d requests with its key, want 3: %+v", id, mine, j.Requests)
	}
	var state struct {
		Projects []project `json:"projects"`
	}
	if err := expect("GET", lb+"/sbx/"+id+"/_sim/state", token, "", http.StatusOK, &state); err != nil {
		return err
	}
	if len(state.Projects) != 1 || state.Projects[0].Name != name {
		return fmt.Errorf("sandbox %s: state holds %+v, want its one project", id, state.Projects)
	}

	hold()
	if err := expect("DELETE", lb+"/_sim/sandboxes/"+id, token, "", http.StatusNoContent, nil); err != nil {
		return err
	}
	if err := expect("GET", lb+"/_sim/sandboxes/"+id, token, "", http.StatusNotFound, nil); err != nil {
		return errors.Join(errors.New("deleted"), err)
	}
	return nil
}

// createSandbox creates sandbox id through the balancer at lb with PUT
// and checks its answer: its id, its key dubsim-pro (returned) and a
// base_url that names the balancer.
func createSandbox(lb, id string) (sandboxView, string, error) {
	var sb sandboxView
	if err := expect("PUT", lb+"/_sim/sandboxes/"+id, token, `{}`, http.StatusCreated, &sb); err != nil {
		return sb, "", err
	}
	key := sb.APIKeys["dubsim-pro"]
	if sb.ID != id || key != "sbx_"+id+"_dubsim-pro" || sb.BaseURL != lb+"/sbx/"+id {
		return sb, "", fmt.Errorf("sandbox %s: id %q, key %q, base_url %q (want the balancer's address)", id, sb.ID, key, sb.BaseURL)
	}
	return sb, key, nil
}

// createProject creates a dubbing project named name with key through the
// balancer at lb. The answer holds its id (the name is set here).
func createProject(lb, key, name string) (project, error) {
	var p project
	body := `{"name":"` + name + `","source_lang":"en","target_lang":"de-DE","source_video_url":"https://media.dubsim.test/short-` + name + `.mp4"}`
	err := expect("POST", lb+"/api/v1/projects", key, body, http.StatusOK, &p)
	p.Name = name
	return p, err
}

// defaultProject creates a project named "default" in the default
// simulator through the balancer at lb and reads it back.
func defaultProject(t *testing.T, lb string) project {
	t.Helper()
	p, err := createProject(lb, "dubsim-pro", "default")
	require.NoError(t, err)
	require.NoError(t, readDefault(lb, p))
	return p
}

// readDefault reads the default simulator's project p through the
// balancer at lb.
func readDefault(lb string, p project) error {
	var got project
	if err := expect("GET", lb+"/api/v1/projects/"+p.ProjectID, "dubsim-pro", "", http.StatusOK, &got); err != nil {
		return err
	}
	if got.Name != p.Name {
		return fmt.Errorf("default project %s is named %q, want %q", p.ProjectID, got.Name, p.Name)
	}
	return nil
}

// defaultSimulator: requests that name no sandbox all reach process a, so
// the default simulator behaves as one.
func defaultSimulator(t *testing.T, lb string, a, b *proctest.Proc) {
	t.Helper()
	p := defaultProject(t, lb)
	for range 10 {
		assert.NoError(t, readDefault(lb, p))
	}
	require.NoError(t, expect("GET", a.Base+"/api/v1/projects/"+p.ProjectID, "dubsim-pro", "", http.StatusOK, nil))
	require.NoError(t, expect("GET", b.Base+"/api/v1/projects/"+p.ProjectID, "dubsim-pro", "", http.StatusNotFound, nil))
}
