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
