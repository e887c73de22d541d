// Package tooltest is how a test finds a program it needs that may not be
// installed (ffprobe, node, chromium, haproxy, ...). Without it the tests
// that need it skip, so that the README's `go test ./...` passes on a
// fresh machine; and since `go test` shows nothing of a package that
// passes, the skip is said in one line on the terminal (/dev/tty), once
// per program and package, naming it and how to install it.
// DUBSIM_REQUIRE_TOOLS=1 (as .ci/run sets) makes a missing program a
// failure instead.
//
// It is also how a test asks for the long run: DUBSIM_LONG=1 (as .ci/run
// sets) runs the tests that build the release or prove a bound at full
// scale, which the README's `go test ./...` skips or runs smaller so that
// it ends within two minutes on two cores.
package tooltest

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Missing ends t for a missing tool: what names it and how to install it
// ("chromium (apt-get install chromium)"). It fails t when
// DUBSIM_REQUIRE_TOOLS=1, else skips it; the first test of the package
// that misses it also says so on the terminal, where go test cannot hide it.
func Missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("DUBSIM_REQUIRE_TOOLS") == "1" {
		t.Fatalf("%s is missing (DUBSIM_REQUIRE_TOOLS=1)", what)
	}
	tellOnce(what, fmt.Sprintf("%s: skipping the tests that need %s; DUBSIM_REQUIRE_TOOLS=1 makes this a failure\n", packageDir(), what))
	t.Skipf("%s is missing (DUBSIM_REQUIRE_TOOLS=1 makes this a failure)", what)
}

// Long reports whether the long run was asked for (DUBSIM_LONG=1): a test
// that proves a bound runs at full scale then, and at a smaller scale that
// still fails without the bound otherwise.
func Long() bool { return os.Getenv("DUBSIM_LONG") == "1" }

// LongOnly skips t unless Long, saying so on the terminal once per package:
// for a test with no smaller scale worth running (what says what it does).
func LongOnly(t testing.TB, what string) {
	t.Helper()
	if Long() {
		return
	}
	tellOnce("long:"+what, fmt.Sprintf("%s: skipping %s; DUBSIM_LONG=1 runs it, as CI does\n", packageDir(), what))
	t.Skipf("%s: DUBSIM_LONG=1 runs it", what)
}

// tellOnce tells line the first time key is reported in this process.
func tellOnce(key, line string) {
	reportedMu.Lock()
	first := !reported[key]
	reported[key] = true
	reportedMu.Unlock()
	if first {
		tell(line)
	}
}

var (
	reportedMu sync.Mutex
	reported   = map[string]bool{}
	// tell writes a line where the person running go test sees it: the
	// terminal, when there is one (a test replaces it).
	tell = func(line string) {
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			_, _ = tty.WriteString(line)
			_ = tty.Close()
		}
	}
)

// packageDir is the test's package as go test names it: its working
// directory relative to the module's root (the folder with go.mod).
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "?"
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if rel, err := filepath.Rel(dir, wd); err == nil {
				return "./" + filepath.ToSlash(rel)
			}
			return wd
		}
		if filepath.Dir(dir) == dir {
			return wd
		}
	}
}

// Path is the path of the program name, from PATH or /usr/sbin (where
// Debian puts haproxy and nginx, which a user's PATH may lack); when it is
// not found, Missing ends t with hint, the way to install it (by default
// the apt-get line of the Debian package that has it).
func Path(t testing.TB, name, hint string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if p := filepath.Join("/usr/sbin", name); isExecutable(p) {
		return p
	}
	hint = cmp.Or(hint, "apt-get install "+cmp.Or(debian[name], name))
	Missing(t, name+" ("+hint+")")
	return ""
}

// debian names the Debian package of the programs whose package has
// another name.
var debian = map[string]string{"ffprobe": "ffmpeg", "node": "nodejs", "readelf": "binutils", "od": "coreutils"}

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

// Parallel sets go test's -parallel to n unless the command line gives
// it, for a package whose parallel tests mostly wait (on processes they
// start, on timeouts), where go test's default, GOMAXPROCS, would run two
// at once. TestMain calls it before m.Run.
func Parallel(n int) {
	flag.Parse()
	setParallel(flag.CommandLine, n)
}

func setParallel(fs *flag.FlagSet, n int) {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = fs.Set("test.parallel", strconv.Itoa(n))
	}
}
