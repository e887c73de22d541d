// Package tooltest is how a test finds a program it needs that may not be
// installed (ffprobe, node, chromium, haproxy, ...): without it the test
// skips, saying what is missing and how to install it, except under
// DUBSIM_REQUIRE_TOOLS=1 (as .ci/run sets), where the absence fails it, so
// CI never passes a suite it did not run.
package tooltest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Required reports whether a missing tool fails the test (DUBSIM_REQUIRE_TOOLS=1).
func Required() bool { return os.Getenv("DUBSIM_REQUIRE_TOOLS") == "1" }

// Missing ends t for a missing tool: what names it and how to install it
// ("chromium (apt-get install chromium)").
func Missing(t testing.TB, what string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s is required (DUBSIM_REQUIRE_TOOLS=1)", what)
	}
	t.Skipf("%s is missing; install it to run this test", what)
}

// Path is the path of the program name, from PATH or /usr/sbin (where
// Debian puts haproxy and nginx, which a user's PATH may lack); when it is
// not found, Missing ends t with hint, the way to install it.
func Path(t testing.TB, name, hint string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if p := filepath.Join("/usr/sbin", name); isExecutable(p) {
		return p
	}
	what := name
	if hint != "" {
		what += " (" + hint + ")"
	}
	Missing(t, what)
	return ""
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// NodeModules makes sure dir/node_modules holds file (a path inside
// node_modules, such as "playwright-core/package.json"): when it does not,
// and npm is installed, it runs `npm ci` in dir once, at the versions
// dir/package-lock.json pins, so that the README's test command installs
// what these suites need from the npm registry. Without npm, or when the
// install fails (no network), Missing ends t with what to run.
func NodeModules(t testing.TB, dir, file string) {
	t.Helper()
	npmMu.Lock() // parallel tests of one package would run npm ci in one folder at once
	defer npmMu.Unlock()
	want := filepath.Join(dir, "node_modules", file)
	if _, err := os.Stat(want); err == nil {
		return
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	hint := "npm ci in " + abs
	npm, err := exec.LookPath("npm")
	if err != nil {
		Missing(t, file+" ("+hint+")")
		return
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		Missing(t, file+" ("+hint+" failed: "+lastLine(out)+")")
		return
	}
	if _, err := os.Stat(want); err != nil {
		Missing(t, file+" ("+hint+" did not install it)")
	}
}

var npmMu sync.Mutex

func lastLine(out []byte) string {
	s := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
