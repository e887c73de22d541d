package crash

import (
	"strconv"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/internal/proctest"
)

// dubsimBinary is the binary under test (internal/proctest builds it once,
// with -race when this test runs with it).
func dubsimBinary(t *testing.T) string { return proctest.Binary(t) }

// proc is one run of the dubsim process (see proctest.Proc).
type proc struct {
	*proctest.Proc
	base   string // http://127.0.0.1:PORT
	exited chan struct{}
}

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
	p := proctest.Start(t, bin, nil, serverArgs(data, seed)...)
	return &proc{Proc: p, base: p.Base, exited: p.Exited}
}

func (p *proc) kill(t *testing.T)      { p.Kill(t) }
func (p *proc) terminate(t *testing.T) { p.Terminate(t) }

// checkStderr fails on a data race report or any output of the server
// (its logs are off, so stderr is empty unless something went wrong).
func (p *proc) checkStderr(t *testing.T, run string) {
	t.Helper()
	if s := p.Stderr(); s != "" {
		if strings.Contains(s, "WARNING: DATA RACE") {
			t.Errorf("%s: data race in dubsim:\n%s", run, s)
		} else {
			t.Errorf("%s: dubsim wrote to stderr:\n%s", run, s)
		}
	}
}
