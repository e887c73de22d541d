// Package hostile repeats, against the real dubsim binary, the attacks a shared dubsim must
// withstand, and asserts the bound of each: memory, disk, the answer, the process alive.
package hostile

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/dubsim/dubsim/internal/tooltest"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	// The bounds are the product's: a binary built with -race uses several
	// times the memory (the probes attack peaked at 497 MB with it, 103 MB
	// without). Data races of the server are the other suites' to find.
	proctest.BuildRace = false
	var err error
	if stateDir, err = os.MkdirTemp("", "dubsim-hostile-state-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Every test runs its own dubsim, and most of them wait on the server's
	// timeouts and delays (slow bodies, paced sandbox creations, the 431's
	// second): eight at once unless -parallel says otherwise, where go
	// test's default, GOMAXPROCS, would let two.
	tooltest.Parallel(8)
	code := m.Run()
	_ = os.RemoveAll(stateDir)
	os.Exit(code)
}

// start runs dubsim on a data file of its own with logs off, plus args.
func start(t *testing.T, args ...string) *proctest.Proc {
	t.Helper()
	return startEnv(t, nil, args...)
}

// startEnv is start with more environment variables (NAME=VALUE).
func startEnv(t *testing.T, env []string, args ...string) *proctest.Proc {
	t.Helper()
	base := []string{"--addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "dubsim.db"), "--log-level", "off"}
	return proctest.Start(t, proctest.Binary(t), env, append(base, args...)...)
}

// memory reads the process's resident and peak memory, failing the test
// when it cannot.
func memory(t *testing.T, p *proctest.Proc) (rss, peak int64) {
	t.Helper()
	rss, peak, err := p.Memory()
	if err != nil {
		t.Fatalf("memory of dubsim: %v", err)
	}
	return rss, peak
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

// call sends method to url with key as a bearer token (none if empty) and
// body as JSON (none if empty), and returns the status and the body.
func call(t *testing.T, method, url, key, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}
