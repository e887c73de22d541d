package crash

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The dubsim binary under test, built once per test binary.
var (
	buildOnce sync.Once
	buildDir  string
	binPath   string
	buildErr  error
)

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go") //nolint:staticcheck // SA1019: the toolchain that built the test, when no go is on PATH
}

// dubsimBinary builds ./cmd/dubsim (with -race when this test runs with
// it) from the module root found through `go env GOMOD`.
func dubsimBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		goBin := goTool()
		out, err := exec.Command(goBin, "env", "GOMOD").Output()
		if err != nil {
			buildErr = fmt.Errorf("go env GOMOD: %w", err)
			return
		}
		gomod := strings.TrimSpace(string(out))
		if gomod == "" || gomod == os.DevNull {
			buildErr = errors.New("go env GOMOD: not inside a module")
			return
		}
		if buildDir, err = os.MkdirTemp("", "dubsim-crash-bin-"); err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(buildDir, "dubsim")
		args := []string{"build"}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, "-o", binPath, "./cmd/dubsim")
		cmd := exec.Command(goBin, args...)
		cmd.Dir = filepath.Dir(gomod)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// syncBuffer is a bytes.Buffer safe for a writer goroutine and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// bannerWatcher is the process's stdout: it sends the address of the
// "listening on" line of the banner once and discards the rest.
type bannerWatcher struct {
	addr chan<- string
	line []byte
	sent bool
}

func (w *bannerWatcher) Write(p []byte) (int, error) {
	if w.sent {
		return len(p), nil
	}
	w.line = append(w.line, p...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			break
		}
		if m := listenRe.FindSubmatch(w.line[:i]); m != nil {
			w.addr <- string(m[1])
			w.sent, w.line = true, nil
			break
		}
		w.line = w.line[i+1:]
	}
	return len(p), nil
}

// proc is one run of the dubsim process.
type proc struct {
	cmd     *exec.Cmd
	base    string // http://127.0.0.1:PORT
	stderr  *syncBuffer
	exited  chan struct{}
	waitErr error // valid once exited is closed
}

var listenRe = regexp.MustCompile(`listening on (http://\S+)`)

// serverArgs are the flags of every run: fast lifecycles (a one-minute
// video is ready a few real milliseconds after creation) so that
// transitions happen while the process is killed.
func serverArgs(data string, seed uint64) []string {
	return []string{
		"--addr", "127.0.0.1:0", "--data", data, "--time-scale", "600", "--log-level", "off",
		"--processing-base", "2s", "--processing-per-minute", "1s", "--retranslation-base", "1s",
		"--tick", "20ms", "--seed", strconv.FormatUint(seed, 10),
	}
}

// startProc starts dubsim on data and returns once its banner names the
// address it listens on.
func startProc(t *testing.T, bin, data string, seed uint64) *proc {
	t.Helper()
	cmd := exec.Command(bin, serverArgs(data, seed)...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DUBSIM_") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	p := &proc{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	addr := make(chan string, 1)
	cmd.Stdout = &bannerWatcher{addr: addr}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dubsim: %v", err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.exited
		}
	})
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	select {
	case p.base = <-addr:
		return p
	case <-p.exited:
		t.Fatalf("dubsim exited before listening: %v\nstderr:\n%s", p.waitErr, p.stderr.String())
	case <-deadline.C:
		t.Fatalf("dubsim printed no address within 60 s\nstderr:\n%s", p.stderr.String())
	}
	return nil
}

// alive reports whether the process is still running.
func (p *proc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL and waits for the process to be gone (its bbolt file
// lock released).
func (p *proc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && p.alive() {
		t.Fatalf("SIGKILL: %v", err)
	}
	<-p.exited
}

// terminate sends SIGTERM and expects a clean exit (status 0) within 30 s.
func (p *proc) terminate(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && p.alive() {
		t.Fatalf("SIGTERM: %v", err)
	}
	p.waitExit(t)
}

// waitExit waits for an exit requested by SIGTERM and expects status 0.
func (p *proc) waitExit(t *testing.T) {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	select {
	case <-p.exited:
		if p.waitErr != nil {
			t.Fatalf("dubsim did not exit cleanly after SIGTERM: %v\nstderr:\n%s", p.waitErr, p.stderr.String())
		}
	case <-deadline.C:
		t.Fatalf("dubsim still running 30 s after SIGTERM\nstderr:\n%s", p.stderr.String())
	}
}

// checkStderr fails on a data race report or any output of the server
// (its logs are off, so stderr is empty unless something went wrong).
func (p *proc) checkStderr(t *testing.T, run string) {
	t.Helper()
	if s := p.stderr.String(); s != "" {
		if strings.Contains(s, "WARNING: DATA RACE") {
			t.Errorf("%s: data race in dubsim:\n%s", run, s)
		} else {
			t.Errorf("%s: dubsim wrote to stderr:\n%s", run, s)
		}
	}
}
