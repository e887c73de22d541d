// Package clients holds the control clients for other languages (python/, js/) and this
// test, which runs each client's own test suite against the real dubsim binary: once
// without a control token and once started with --control-token (the clients take it from
// DUBSIM_CONTROL_TOKEN), the base URL in DUBSIM_URL. It also type-checks the JavaScript
// client's declarations with tsc --strict.
//
// It needs python3, node and npm (it runs npm ci in js/ when the packages are missing); without them it skips,
// or fails with DUBSIM_REQUIRE_TOOLS=1 (internal/tooltest).
package clients

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/tooltest"

	"github.com/dubsim/dubsim/internal/proctest"
)

// tool finds a program the test needs, or skips (fails with DUBSIM_REQUIRE_TOOLS=1).
func tool(t *testing.T, name, hint string) string {
	t.Helper()
	return tooltest.Path(t, name, hint)
}

// python is the interpreter python3 runs, asked once: the python3 on PATH
// may be a version manager's shim (pyenv's is a shell script that costs
// 0.3 s of CPU per start, eight times the interpreter's own start).
func python(t *testing.T) string {
	t.Helper()
	shim := tool(t, "python3", "apt-get install python3")
	pythonOnce.Do(func() {
		out, err := exec.Command(shim, "-c", "import sys; print(sys.executable)").Output()
		pythonExe = strings.TrimSpace(string(out))
		if err != nil || pythonExe == "" {
			pythonExe = shim
		}
	})
	return pythonExe
}

var (
	pythonOnce sync.Once
	pythonExe  string
)

// suite is one client's test suite and how to read its closing lines.
type suite struct {
	lang string
	dir  string
	args func(t *testing.T) []string
	// counts reads the number of tests passed and skipped from the output; ok says
	// whether the runner reported success.
	counts func(out string) (passed, skipped int, ok bool)
	// userAgent starts the User-Agent the client sends.
	userAgent string
	// minPassed is the number of tests the suite has against a dubsim without a
	// token (the token test is skipped there, and runs with one).
	minPassed int
}

var (
	pyRan     = regexp.MustCompile(`(?m)^Ran (\d+) tests? in `)
	pyOK      = regexp.MustCompile(`(?m)^OK(?: \(skipped=(\d+)\))?$`)
	nodeCount = regexp.MustCompile(`(?m)^# (pass|fail|skipped|cancelled|todo) (\d+)$`)
)

var suites = []suite{
	{
		lang: "python",
		dir:  "python",
		args: func(t *testing.T) []string {
			return []string{python(t), "-m", "unittest", "-v", "test_dubsim_control"}
		},
		counts: func(out string) (int, int, bool) {
			ran := pyRan.FindStringSubmatch(out)
			ok := pyOK.FindStringSubmatch(out)
			if ran == nil || ok == nil {
				return 0, 0, false
			}
			n, _ := strconv.Atoi(ran[1])
			skipped, _ := strconv.Atoi(ok[1])
			return n - skipped, skipped, true
		},
		userAgent: "dubsim-control-python/",
		minPassed: 19,
	},
	{
		lang: "js",
		dir:  "js",
		args: func(t *testing.T) []string {
			// The file run as a program runs its node:test tests and
			// reports them as --test does, without --test's second node
			// process.
			return []string{tool(t, "node", "apt-get install nodejs"), "test/dubsim-control.test.js"}
		},
		counts: func(out string) (int, int, bool) {
			c := map[string]int{}
			for _, m := range nodeCount.FindAllStringSubmatch(out, -1) {
				c[m[1]], _ = strconv.Atoi(m[2])
			}
			if _, seen := c["pass"]; !seen {
				return 0, 0, false
			}
			return c["pass"], c["skipped"], c["fail"] == 0 && c["cancelled"] == 0 && c["todo"] == 0
		},
		userAgent: "dubsim-control-js/",
		minPassed: 19,
	},
}

// childEnv is the test's environment without its DUBSIM_* variables, plus env.
func childEnv(env ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DUBSIM_") {
			out = append(out, kv)
		}
	}
	return append(out, env...)
}

func TestClientSuites(t *testing.T) {
	t.Parallel()
	modes := []struct {
		name, token string
	}{
		{"open", ""},
		{"token", "clients-test-token-7f3a9c"},
	}
	for _, s := range suites {
		for _, mode := range modes {
			t.Run(s.lang+"/"+mode.name, func(t *testing.T) {
				t.Parallel() // each run has its own dubsim process and data file
				args := s.args(t)
				dubsim := []string{"--addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "dubsim.db"), "--log-level", "off"}
				if mode.token != "" {
					dubsim = append(dubsim, "--control-token", mode.token)
				}
				p := proctest.Start(t, proctest.Binary(t), nil, dubsim...)

				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, args[0], args[1:]...)
				cmd.Dir = s.dir
				cmd.Env = childEnv("DUBSIM_URL="+p.Base, "DUBSIM_CONTROL_TOKEN="+mode.token, "PYTHONDONTWRITEBYTECODE=1")
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s\ndubsim stderr:\n%s", strings.Join(args, " "), err, out, p.Stderr())
				}
				passed, skipped, ok := s.counts(string(out))
				// The token test runs only against a dubsim with a token.
				wantPassed, wantSkipped := s.minPassed, 1
				if mode.token != "" {
					wantPassed, wantSkipped = s.minPassed+1, 0
				}
				if !ok || passed < wantPassed || skipped != wantSkipped {
					t.Fatalf("%s: %d passed (want at least %d), %d skipped (want %d), success reported: %v\n%s",
						strings.Join(args, " "), passed, wantPassed, skipped, wantSkipped, ok, out)
				}
				t.Logf("%s: %d passed, %d skipped", s.lang, passed, skipped)

				// The suite really talked to this dubsim through its client: the journal
				// holds the client's control calls, with its User-Agent.
				agents := journalAgents(t, p.Base, mode.token, "/_sim/faults")
				found := false
				for _, ua := range agents {
					found = found || strings.HasPrefix(ua, s.userAgent)
				}
				if !found {
					t.Fatalf("no POST /_sim/faults with User-Agent %s* in the journal; agents seen: %q", s.userAgent, agents)
				}
			})
		}
	}
}

// journalAgents lists the User-Agent of every journal entry with that path.
func journalAgents(t *testing.T, base, token, path string) []string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/_sim/requests?path="+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Requests []struct {
			Headers map[string]string `json:"headers"`
		} `json:"requests"`
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /_sim/requests: %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	var agents []string
	for _, r := range out.Requests {
		agents = append(agents, r.Headers["User-Agent"])
	}
	return agents
}

// TestJSDeclarations type-checks dubsim-control.d.ts with tsc --strict against
// js/test/types-check.ts, which uses every call and expects wrong uses not to compile.
func TestJSDeclarations(t *testing.T) {
	t.Parallel()
	node := tool(t, "node", "apt-get install nodejs")
	tooltest.NodeModules(t, "js", "typescript/bin/tsc")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// --skipDefaultLibCheck: TypeScript's own lib files (lib.dom.d.ts and
	// the rest) are not type-checked again, half of tsc's CPU here;
	// dubsim-control.d.ts is still checked (what --skipLibCheck would skip).
	cmd := exec.CommandContext(ctx, node, filepath.Join("node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json", "--skipDefaultLibCheck")
	cmd.Dir = "js"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc -p tsconfig.json: %v\n%s", err, out)
	}
}
