// Package examples_test runs every client example of this directory against a
// real dubsim process (cmd/dubsim, built once per checkout by
// internal/proctest and shared with the other process suites), one fresh
// process per example, and checks that it succeeds and prints its
// walkthrough.
//
// An example whose tool is missing (bash and curl, python3) skips, or fails
// with DUBSIM_REQUIRE_TOOLS=1 (internal/tooltest). The examples run with a
// PATH that has no jq, which proves they need none.
package examples_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/dubsim/dubsim/internal/tooltest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var examples = []struct {
	name  string
	tools []string // programs the example needs besides go
	args  []string // run in this directory
}{
	{"go", nil, []string{"go", "run", "./goclient"}},
	{"curl", []string{"bash", "curl", "od"}, []string{"bash", "curl/walkthrough.sh"}},
	{"python", []string{"python3"}, []string{"python3", "python/walkthrough.py"}},
}

// expected are lines every example prints, in this order, against a fresh
// dubsim with the key dubsim-pro.
var expected = []string{
	`balance: 600 minutes`,
	`created project \d+ \(cost 1 min, balance 599\)`,
	`project \d+: in_progress`,
	`project \d+: ready`,
	`downloaded dubbed audio: \d+ bytes, RIFF/WAVE`,
	`presigned upload: s3://\S+/clip\.wav`,
	`uploaded clip\.wav \(16044 bytes\)`,
	`created artifact [0-9a-f]{24}: created`,
	`artifact [0-9a-f]{24}: upload_completed`,
	`artifact size 16044 bytes, duration 1 s`,
	`created studio project [0-9a-f]{24}: new`,
	`created video [0-9a-f]{24}: new`,
	`report: 0 findings \(\d+ requests\)`, // the examples are model clients
	`done`,
}

func TestExamples(t *testing.T) {
	path := pathWithout(t, "jq") // one for the three: it links thousands of programs
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			t.Parallel()
			for _, tool := range ex.tools {
				requireTool(t, tool)
			}
			base := startDubsim(t)

			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, ex.args[0], ex.args[1:]...)
			// No jq on PATH: the walkthroughs read JSON with grep and sed, or
			// their language's own parser.
			cmd.Env = append(environWith("PATH", path), "DUBSIM_URL="+base, "DUBSIM_API_KEY=dubsim-pro")
			cmd.WaitDelay = 10 * time.Second // a grandchild of go run may hold the pipes
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			require.NoError(t, err, "%s failed\nstdout:\n%s\nstderr:\n%s", strings.Join(ex.args, " "), &stdout, &stderr)
			assert.NotContains(t, stderr.String(), "jq", "the example looked for jq")

			// Every expected line, in order, each a whole line.
			out := stdout.String()
			for _, want := range expected {
				loc := regexp.MustCompile(`(?m)^` + want + `$`).FindStringIndex(out)
				if !assert.NotNil(t, loc, "no line %q in what is left of the output:\n%s\nstderr:\n%s", want, out, &stderr) {
					break
				}
				out = out[loc[1]:]
			}
			assert.Equal(t, "\n", out, "the last line is done")
		})
	}
}

// TestReadmeRunsTheseExamples: the block of README.md that runs the
// examples from the repository root holds the commands TestExamples runs
// here, so the doc test (test/docs), which skips that block, need not run
// them a second time.
func TestReadmeRunsTheseExamples(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	var lines []string
	for _, ex := range examples {
		args := slices.Clone(ex.args)
		dir := args[len(args)-1] // relative to this directory
		args[len(args)-1] = path.Join("examples", dir)
		if strings.HasPrefix(dir, "./") {
			args[len(args)-1] = "./" + args[len(args)-1]
		}
		lines = append(lines, strings.Join(args, " "))
	}
	block := "```sh\n" + strings.Join(lines, "\n") + "\n```\n"
	assert.Contains(t, string(readme), block, "README.md runs the examples from the repository root")
}

// requireTool skips the test when a program is missing (fails it with
// DUBSIM_REQUIRE_TOOLS=1).
func requireTool(t *testing.T, name string) {
	t.Helper()
	tooltest.Path(t, name, "")
}

// startDubsim runs a fresh dubsim on a free loopback port, with a frozen
// clock and its own data file, checks that it answers, and returns its
// base URL. The process is killed when the test ends.
func startDubsim(t *testing.T) string {
	t.Helper()
	p := proctest.Start(t, proctest.Binary(t), nil, "--addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "d.db"),
		"--time-scale", "0", "--log-level", "off")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(p.Base + "/_sim/health")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "GET /_sim/health")
	return p.Base
}

// pathWithout returns a PATH of one directory that links every program of
// this process's PATH but the named ones (the first of each name, as a
// lookup finds it), and checks that they are not found there.
func pathWithout(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if slices.Contains(names, e.Name()) {
				continue
			}
			target := filepath.Join(d, e.Name())
			if fi, err := os.Stat(target); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
				continue
			}
			if _, err := os.Lstat(filepath.Join(dir, e.Name())); err == nil {
				continue // an earlier PATH entry has it
			}
			require.NoError(t, os.Symlink(target, filepath.Join(dir, e.Name())))
		}
	}
	for _, n := range names {
		_, err := os.Stat(filepath.Join(dir, n))
		require.True(t, os.IsNotExist(err), "%s is still on the PATH", n)
	}
	return dir
}

// environWith is environWithoutDubsim with the variable name set to value.
func environWith(name, value string) []string {
	var env []string
	for _, kv := range environWithoutDubsim() {
		if !strings.HasPrefix(kv, name+"=") {
			env = append(env, kv)
		}
	}
	return append(env, name+"="+value)
}

// environWithoutDubsim is this process's environment without DUBSIM_*
// variables, which would configure dubsim or the examples.
func environWithoutDubsim() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DUBSIM_") {
			env = append(env, kv)
		}
	}
	return env
}

// TestMain builds dubsim without the race detector, as a user runs it:
// the examples check what the clients print, and the server's data races
// are the other suites' to find.
func TestMain(m *testing.M) {
	proctest.BuildRace = false
	m.Run()
}

// TestShippedClipIsTheWalkthroughsWAV: examples/clip.wav, the sample the
// README's requests upload, is the one-second WAV the walkthroughs write
// (a 44-byte header: 16-bit mono PCM at 8 kHz; 16000 zero bytes).
func TestShippedClipIsTheWalkthroughsWAV(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("clip.wav")
	require.NoError(t, err)
	want := append([]byte("RIFF\xa4\x3e\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00data\x80\x3e\x00\x00"),
		make([]byte, 16000)...)
	assert.Equal(t, want, b)
}
