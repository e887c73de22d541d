// Package proctest runs the real dubsim binary in tests: built once per test binary (with -race
// when the test has it), started on a free port, watched, measured (RSS) and stopped.
package proctest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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

// BuildRace says whether Binary builds dubsim with -race: by default when
// the test itself runs under -race. A suite that measures the process
// (memory, CPU) sets it to false in TestMain, before any Binary call: the
// race detector multiplies memory use several times.
var BuildRace = RaceEnabled

// The dubsim binary under test, built once per test binary.
var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go") //nolint:staticcheck // SA1019: the toolchain that built the test, when no go is on PATH
}

// Binary builds ./cmd/dubsim (with -race when BuildRace) once per test
// binary, into a directory of the user's cache shared, under a file lock,
// by the test binaries of the checkout: go build leaves an up-to-date
// binary as it is, so of the packages of one `go test ./...` only the first
// links it (seconds of CPU each). The others skip go build, whose
// up-to-date check alone costs about 0.7 s of CPU, when a stamp beside the
// binary names the go command that runs them (goRun).
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() { binPath, buildErr = build() })
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func build() (string, error) {
	goBin := goTool()
	out, err := exec.Command(goBin, "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("go env GOMOD: not inside a module")
	}
	root := filepath.Dir(gomod)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(cache, "dubsim-test-bin", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close() // and so unlocked
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	bin := filepath.Join(dir, "dubsim")
	args := []string{"build"}
	if BuildRace {
		bin += "-race"
		args = append(args, "-race")
	}
	args = append(args, "-o", bin, "./cmd/dubsim")
	stamp, run := bin+".built-for", goRun()
	if run != "" {
		if b, err := os.ReadFile(stamp); err == nil && string(b) == run {
			if _, err := os.Stat(bin); err == nil {
				return bin, nil
			}
		}
	}
	_ = os.Remove(stamp)
	cmd := exec.Command(goBin, args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	if run != "" {
		_ = os.WriteFile(stamp, []byte(run), 0o644)
	}
	return bin, nil
}

// goRun names the go command that runs this test binary, `go test`, by its
// process id and start time (Linux's /proc), or is "" when the parent is
// not a go command (an -exec wrapper, a shell running a test binary by
// hand: each of those builds, since the sources may have changed between
// two of its runs) or cannot be read.
func goRun() string {
	ppid := os.Getppid()
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", ppid))
	if err != nil || strings.TrimSpace(string(comm)) != "go" {
		return ""
	}
	fields, err := statFields(ppid)
	if err != nil || len(fields) < 20 {
		return ""
	}
	// The start time is field 22 of proc(5).
	return strconv.Itoa(ppid) + " " + fields[19]
}

var listenRe = regexp.MustCompile(`listening on (http://\S+)`)

// Proc is one run of the dubsim process.
type Proc struct {
	// Base is the address its banner names, such as http://127.0.0.1:41234.
	Base   string
	cmd    *exec.Cmd
	stderr *Buffer
	// Exited is closed when the process has exited; Err is then its result.
	Exited  chan struct{}
	waitErr error
}

// Start starts bin with args (without the DUBSIM_* variables of the test's
// environment, plus env) and returns once its banner names the address it
// listens on. t.Cleanup kills it if it still runs.
func Start(t testing.TB, bin string, env []string, args ...string) *Proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DUBSIM_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	p := &Proc{cmd: cmd, stderr: &Buffer{}, Exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	addr := make(chan string, 1)
	go func() { // sends the address of the banner's "listening on" line; the rest is discarded
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := listenRe.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dubsim: %v", err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		_ = pw.Close()
		close(p.Exited)
	}()
	t.Cleanup(func() { p.Kill(t) })
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	select {
	case p.Base = <-addr:
		return p
	case <-p.Exited:
		t.Fatalf("dubsim exited before listening: %v\nstderr:\n%s", p.waitErr, p.stderr.String())
	case <-deadline.C:
		t.Fatalf("dubsim printed no address within 60 s\nstderr:\n%s", p.stderr.String())
	}
	return nil
}

// Err is the result of the process once Exited is closed.
func (p *Proc) Err() error { return p.waitErr }

// Stderr is what the process has written to its standard error so far.
func (p *Proc) Stderr() string { return p.stderr.String() }

// WaitStderr returns the process's standard error once it contains want.
// The log line of an answer may reach the pipe after the answer reaches the
// client, so a test that reads the log after an answer waits for it here;
// it fails after timeout, or when the process exits without writing it.
func (p *Proc) WaitStderr(t testing.TB, want string, timeout time.Duration) string {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		text, written := p.stderr.next()
		if strings.Contains(text, want) {
			return text
		}
		select {
		case <-written:
		case <-p.Exited:
			if text = p.stderr.String(); strings.Contains(text, want) {
				return text
			}
			t.Fatalf("dubsim exited without logging %q: %v\nstderr:\n%s", want, p.waitErr, text)
		case <-deadline.C:
			t.Fatalf("dubsim did not log %q within %s\nstderr:\n%s", want, timeout, text)
		}
	}
}

// OpenFiles counts the process's open file descriptors (Linux: the
// entries of /proc/PID/fd).
func (p *Proc) OpenFiles() (int, error) {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.cmd.Process.Pid))
	return len(entries), err
}

// Alive reports whether the process is still running.
func (p *Proc) Alive() bool {
	select {
	case <-p.Exited:
		return false
	default:
		return true
	}
}

// Kill sends SIGKILL and waits for the process to be gone (its bbolt file
// lock released).
func (p *Proc) Kill(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && p.Alive() && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("SIGKILL: %v", err)
	}
	<-p.Exited
}

// Terminate sends SIGTERM and expects a clean exit (status 0) within 30 s.
func (p *Proc) Terminate(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && p.Alive() {
		t.Fatalf("SIGTERM: %v", err)
	}
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	select {
	case <-p.Exited:
		if p.waitErr != nil {
			t.Fatalf("dubsim did not exit cleanly after SIGTERM: %v\nstderr:\n%s", p.waitErr, p.stderr.String())
		}
	case <-deadline.C:
		t.Fatalf("dubsim still running 30 s after SIGTERM\nstderr:\n%s", p.stderr.String())
	}
}

// Memory is the process's resident memory from /proc/PID/status: now
// (VmRSS) and the peak since it started (VmHWM), in bytes.
func (p *Proc) Memory() (rss, peak int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", name, err)
		}
		if name == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
	}
	return rss, peak, nil
}

// CPU is the processor time the process has used so far (user + system),
// from /proc/PID/stat, in clock ticks of 1/100 s.
func (p *Proc) CPU() (time.Duration, error) {
	f, err := statFields(p.cmd.Process.Pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 13 { // utime and stime are fields 14 and 15 of proc(5)
		return 0, errors.New("unexpected /proc stat format")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// statFields are the fields of /proc/PID/stat after the command name, which
// may hold spaces: the first is field 3 of proc(5), the state.
func statFields(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, errors.New("unexpected /proc stat format")
	}
	return strings.Fields(string(b[i+1:])), nil
}
