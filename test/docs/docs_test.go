// Package docs_test runs the shell blocks of the user documentation
// (README.md, docs/*.md, examples/README.md) against a fresh dubsim, so that
// every documented command works when pasted.
//
// What runs: every fenced block tagged sh, bash or shell, in document order,
// all blocks of one document in one bash session (a variable set by one block
// is there for the next), against a dubsim process of its own (frozen clock,
// temporary data file, a free port), in a fresh temporary working directory
// that holds a copy of the repository files blocks name (examples/clip.wav).
// The block of examples/README.md that runs the client walkthroughs is
// skipped: examples/examples_test.go runs them, each against a fresh dubsim,
// checks what they print, and checks that the block names them.
// The session has DUBSIM_URL set to that dubsim, its dubsim binary first on
// PATH (for dubsim ctl and dubsim parity), and TMPDIR set to a directory of
// its own.
//
// Conventions in the markdown:
//
//   - A block that cannot run in CI (it starts a server, runs the test suite,
//     needs docker, kubectl or the real service), or that another suite runs
//     (test/shard, examples), has, on the line before its fence, the marker
//     <!-- doc-test: skip: REASON -->
//     with a reason. Any other block must run and pass.
//   - Blocks use $DUBSIM_URL, never a fixed port; the first block of a
//     document sets the default: export DUBSIM_URL=${DUBSIM_URL:-http://localhost:8080}.
//   - Expected output: one or more comment lines right after a command,
//     # => TEXT
//     Each TEXT must appear in what the command printed (stdout, then stderr),
//     the lines in order. "…" in TEXT matches anything, and whitespace does
//     not count, on either side (so compact and pretty-printed JSON both
//     match). Other comments are prose and are not compared.
//
// Each command (a line, or the lines a trailing backslash or an open quote
// join) must exit 0, and curl in the session fails on an HTTP error status
// (it runs with --fail-with-body unless the command gives -f itself), so a
// documented call that dubsim refuses fails the test. A failure names the
// document, the line, the command, its exit status, the expected text and
// the tail of its output. Each command has 60 s. The session has no
// pipefail and no errexit, as a pasting user's shell; after a failure the
// next commands of the document still run.
package docs_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/dubsim/dubsim/internal/tooltest"
	"golang.org/x/sync/errgroup"
)

// commandTimeout bounds each command of a block. The slowest, a whole
// client walkthrough (examples/curl/walkthrough.sh, a few hundred curl,
// grep and sed processes), took up to 24 s on 2 cores under a load of 25.
const commandTimeout = 60 * time.Second

// shellLangs are the fence tags whose blocks run.
var shellLangs = map[string]bool{"sh": true, "bash": true, "shell": true}

// repoFiles are copied into each document's working directory, at the
// same relative path: the files blocks read.
var repoFiles = []string{"examples/clip.wav"}

// tools the blocks use, with how to install each.
var tools = [][2]string{{"bash", ""}, {"curl", "apt-get install curl"}, {"jq", "apt-get install jq"}, {"python3", "apt-get install python3"}}

func TestMain(m *testing.M) {
	// The blocks download the dubbed audio of 10-minute projects: 18 s
	// each under -race on a loaded machine, 3 s without. The test checks
	// the documents; the server's data races are the other suites' to find.
	proctest.BuildRace = false
	// Each document's session is a chain of short processes (bash, curl,
	// jq, dubsim ctl) that mostly wait on one another and on dubsim, and
	// TestFailureReport waits on its command timeout.
	tooltest.Parallel(4)
	m.Run()
}

var (
	totalRun     atomic.Int64
	totalSkipped atomic.Int64
	totalChecked atomic.Int64
)

func TestDocs(t *testing.T) {
	t.Parallel() // beside the tests of the parser and the session, which need no dubsim
	for _, tool := range tools {
		tooltest.Path(t, tool[0], tool[1])
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{"README.md", "examples/README.md"}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range more {
		rel, _ := filepath.Rel(root, p)
		docs = append(docs, rel)
	}
	totalRun.Store(0) // -count=N runs the test N times
	totalSkipped.Store(0)
	totalChecked.Store(0)
	t.Cleanup(func() {
		t.Logf("all documents: %d shell blocks run, %d skipped, %d outputs compared",
			totalRun.Load(), totalSkipped.Load(), totalChecked.Load())
	})
	for _, doc := range docs {
		t.Run(doc, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(filepath.Join(root, doc))
			if err != nil {
				t.Fatal(err)
			}
			runDocument(t, root, doc, string(src))
		})
	}
}

// block is one fenced shell block of a document.
type block struct {
	file string
	line int // of the opening fence
	skip string
	cmds []command
}

// command is one complete shell command of a block with the output the
// document shows for it.
type command struct {
	line   int // of its first line in the document
	text   string
	expect []string // the "# =>" lines, in order
}

var (
	fenceRe  = regexp.MustCompile("^\\s*(```+|~~~+)\\s*([^\\s`]*)")
	skipRe   = regexp.MustCompile(`^\s*<!--\s*doc-test:\s*skip:\s*(.*?)\s*-->\s*$`)
	markerRe = regexp.MustCompile(`^\s*<!--\s*doc-test:`)
	expectRe = regexp.MustCompile(`^\s*# => ?(.*)$`)
)

// parseBlocks finds the shell blocks of a markdown document and splits each
// into commands. The blocks are split at once (each split runs bash -n
// once per line); of the errors, the first in the document is returned.
func parseBlocks(file, src string) ([]block, error) {
	blocks, bodies, scanErr := findBlocks(file, src)
	splitErrs := make([]error, len(blocks))
	var g errgroup.Group
	g.SetLimit(4)
	for k := range blocks {
		g.Go(func() error {
			blocks[k].cmds, splitErrs[k] = splitCommands(file, blocks[k].line+1, bodies[k])
			return nil
		})
	}
	_ = g.Wait()
	for _, err := range splitErrs {
		if err != nil {
			return nil, err
		}
	}
	if scanErr != nil {
		return nil, scanErr
	}
	return blocks, nil
}

// findBlocks finds the shell blocks of a markdown document, with the lines
// of each; on an error, it returns the blocks before it too.
func findBlocks(file, src string) ([]block, [][]string, error) {
	lines := strings.Split(src, "\n")
	var blocks []block
	var bodies [][]string
	pendingSkip, pendingLine := "", 0
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := skipRe.FindStringSubmatch(line); m != nil {
			if m[1] == "" {
				return blocks, bodies, fmt.Errorf("%s:%d: a skip marker needs a reason: <!-- doc-test: skip: REASON -->", file, i+1)
			}
			pendingSkip, pendingLine = m[1], i+1
			continue
		} else if markerRe.MatchString(line) {
			return blocks, bodies, fmt.Errorf("%s:%d: unknown doc-test marker %q (the one marker is <!-- doc-test: skip: REASON -->)", file, i+1, line)
		}
		m := fenceRe.FindStringSubmatch(line)
		if m == nil {
			if pendingSkip != "" && strings.TrimSpace(line) != "" {
				return blocks, bodies, fmt.Errorf("%s:%d: the skip marker is not on the line before a shell block's fence", file, pendingLine)
			}
			continue
		}
		// A fenced block: find its end, whatever its language.
		fence, lang, start := m[1], m[2], i
		var body []string
		for i++; i < len(lines); i++ {
			if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, fence) && strings.Trim(l, fence[:1]) == "" {
				break
			}
			body = append(body, lines[i])
		}
		if !shellLangs[lang] {
			if pendingSkip != "" {
				return blocks, bodies, fmt.Errorf("%s:%d: the skip marker is before a %q block, which does not run anyway", file, pendingLine, lang)
			}
			continue
		}
		blocks = append(blocks, block{file: file, line: start + 1, skip: pendingSkip})
		bodies = append(bodies, body)
		pendingSkip = ""
	}
	if pendingSkip != "" {
		return blocks, bodies, fmt.Errorf("%s:%d: the skip marker is not on the line before a shell block's fence", file, pendingLine)
	}
	return blocks, bodies, nil
}

// splitCommands cuts a block's lines into complete commands: a line, or the
// lines a trailing backslash, an open quote or an open compound command
// join, as bash -n sees them. first is the document line of body[0].
func splitCommands(file string, first int, body []string) ([]command, error) {
	var cmds []command
	var cur []string
	curLine := 0
	for k, line := range body {
		n := first + k
		if len(cur) == 0 {
			if m := expectRe.FindStringSubmatch(line); m != nil {
				if len(cmds) == 0 {
					return nil, fmt.Errorf("%s:%d: an expected output (# =>) before any command", file, n)
				}
				cmds[len(cmds)-1].expect = append(cmds[len(cmds)-1].expect, m[1])
				continue
			}
			if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			curLine = n
		}
		cur = append(cur, line)
		if strings.HasSuffix(line, `\`) {
			continue
		}
		text := strings.Join(cur, "\n")
		if !complete(text) {
			continue
		}
		cmds = append(cmds, command{line: curLine, text: text})
		cur = nil
	}
	if len(cur) > 0 {
		text := strings.Join(cur, "\n")
		out, _ := exec.Command("bash", "-n", "-c", text).CombinedOutput()
		return nil, fmt.Errorf("%s:%d: the block ends inside a command:\n%s\nbash -n: %s", file, curLine, text, out)
	}
	return cmds, nil
}

// complete says whether bash parses text as whole commands.
func complete(text string) bool {
	return exec.Command("bash", "-n", "-c", text).Run() == nil
}

// driver reads the path of the next command file from fd 3, runs it in this
// shell with its output in files beside it, and writes its exit status to
// fd 4. The ERR trap records the first command of the file that failed (in
// a command substitution, one of a list), not the driver's own. curl fails
// on an HTTP error status, printing the body (--fail-with-body), unless the
// command chose -f itself: a documented call that answers 4xx or 5xx is a
// mistake of the document; a failed curl names itself to the trap, which
// would see the function's last command instead.
const driver = `
curl() {
  local a f=--fail-with-body
  for a in "$@"; do
    [[ $a == --fail || $a == --fail-with-body || $a =~ ^-[sSLkiIvgqN]*f ]] && f=
  done
  command curl $f "$@" && return
  __doc_rc=$?; __doc_curl="curl $*"
  return $__doc_rc
}
while IFS= read -r __doc_cmd <&3; do
  __doc_fail=$__doc_cmd.fail __doc_curl=
  trap '__doc_rc=$? __doc_what=${__doc_curl:-$BASH_COMMAND} __doc_curl=; [ "${BASH_SOURCE[0]}" != "$__doc_cmd" ] || [ -e "$__doc_fail" ] || printf "%s\t%s\t%s\n" "$__doc_rc" "$LINENO" "$__doc_what" >"$__doc_fail"' ERR
  . "$__doc_cmd" >"$__doc_cmd.out" 2>"$__doc_cmd.err" </dev/null 3<&- 4>&-
  __doc_rc=$?
  trap - ERR
  printf '%s\n' "$__doc_rc" >&4
done
`

// session is one bash process that runs a document's commands in turn.
type session struct {
	cmd    *exec.Cmd
	dir    string // where the command files go
	next   *os.File
	status *bufio.Reader
	stderr proctest.Buffer // the shell's own messages; commands write theirs to files
	n      int
	// timeout bounds each command (commandTimeout; a test of the session
	// sets less).
	timeout time.Duration
}

// startSession starts bash in work with DUBSIM_URL=base and binDir first on
// PATH.
func startSession(t *testing.T, work, base, binDir string) *session {
	t.Helper()
	s := &session{dir: t.TempDir(), timeout: commandTimeout}
	drv := filepath.Join(s.dir, "driver.sh")
	if err := os.WriteFile(drv, []byte(driver), 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	s.cmd = exec.Command("bash", "--noprofile", "--norc", drv)
	s.cmd.Dir = work
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DUBSIM_") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "TMPDIR=") && !strings.HasPrefix(kv, "BASH_ENV=") {
			s.cmd.Env = append(s.cmd.Env, kv)
		}
	}
	s.cmd.Env = append(s.cmd.Env, "DUBSIM_URL="+base, "TMPDIR="+tmp, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	// Its own process group: a block's background process goes with it.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s.cmd.Stderr = &s.stderr
	nextR, nextW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.ExtraFiles = []*os.File{nextR, statusW} // fd 3, fd 4
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start bash: %v", err)
	}
	_ = nextR.Close()
	_ = statusW.Close()
	s.next, s.status = nextW, bufio.NewReader(statusR)
	t.Cleanup(func() {
		_ = nextW.Close()
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		_ = s.cmd.Wait()
		_ = statusR.Close()
	})
	return s
}

// result is what one command did.
type result struct {
	status   int
	failed   string // the first failing command inside it: "STATUS\tLINE\tCOMMAND", or ""
	stdout   string
	stderr   string
	timedOut bool
	exited   bool // the shell itself ended (the command ran exit)
}

// run runs one command in the session and waits for it, at most
// s.timeout.
func (s *session) run(text string) (result, error) {
	s.n++
	f := filepath.Join(s.dir, fmt.Sprintf("cmd%03d.sh", s.n))
	if err := os.WriteFile(f, []byte(text+"\n"), 0o600); err != nil {
		return result{}, err
	}
	if _, err := fmt.Fprintln(s.next, f); err != nil {
		return result{exited: true}, nil
	}
	type line struct {
		s   string
		err error
	}
	got := make(chan line, 1)
	go func() {
		l, err := s.status.ReadString('\n')
		got <- line{l, err}
	}()
	var r result
	timer := time.NewTimer(s.timeout)
	defer timer.Stop()
	select {
	case l := <-got:
		if l.err != nil {
			r.exited = true
		} else if r.status, l.err = strconv.Atoi(strings.TrimSpace(l.s)); l.err != nil {
			return r, fmt.Errorf("driver answered %q", l.s)
		}
	case <-timer.C:
		r.timedOut = true
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	read := func(ext string) string {
		b, _ := os.ReadFile(f + ext)
		return string(b)
	}
	r.stdout, r.stderr, r.failed = read(".out"), read(".err"), strings.TrimSpace(read(".fail"))
	return r, nil
}

// runDocument runs the shell blocks of doc, whose text is src. The blocks
// are split into commands (bash -n, line by line) while dubsim starts.
func runDocument(t *testing.T, root, doc, src string) {
	type parsed struct {
		blocks []block
		err    error
	}
	split := make(chan parsed, 1)
	go func() {
		blocks, err := parseBlocks(doc, src)
		split <- parsed{blocks, err}
	}()
	commands := func() []block {
		r := <-split
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.blocks
	}
	found, _, _ := findBlocks(doc, src) // its error is parseBlocks's too
	runnable, skipped := 0, 0
	for _, b := range found {
		if b.skip != "" {
			skipped++
		} else {
			runnable++
		}
	}
	if runnable == 0 {
		commands()
		t.Logf("%s: 0 shell blocks run, %d skipped", doc, skipped)
		totalSkipped.Add(int64(skipped))
		return
	}

	work := t.TempDir()
	for _, f := range repoFiles {
		copyFile(t, filepath.Join(root, f), filepath.Join(work, f))
	}
	p := proctest.Start(t, proctest.Binary(t), nil, "--addr", "127.0.0.1:0",
		"--data", filepath.Join(t.TempDir(), "dubsim.db"), "--time-scale", "0", "--log-level", "warn")
	s := startSession(t, work, p.Base, filepath.Dir(proctest.Binary(t)))
	blocks := commands()

	began := time.Now()
	n, failures := runBlocks(s, blocks)
	for _, f := range failures {
		t.Error(f)
	}
	if len(failures) > 0 {
		t.Logf("%s: dubsim's log (warnings and errors):\n%s", doc, tail("stderr", p.Stderr()))
	}
	t.Logf("%s: %d shell blocks run (%d commands, %d outputs compared), %d skipped; %s, the slowest command %s (line %d)",
		doc, runnable, n.commands, n.checked, skipped, time.Since(began).Round(time.Millisecond), n.slowest.Round(time.Millisecond), n.slowLine)
	totalRun.Add(int64(runnable))
	totalSkipped.Add(int64(skipped))
	totalChecked.Add(int64(n.checked))
	if !p.Alive() {
		t.Errorf("%s: dubsim exited during the blocks: %v\n%s", doc, p.Err(), p.Stderr())
	}
}

// tally counts what runBlocks did.
type tally struct {
	commands, checked int
	slowest           time.Duration
	slowLine          int
}

// runBlocks runs the blocks that are not skipped, in order, in s, and
// returns one message per failing command. It stops when the shell is gone.
func runBlocks(s *session, blocks []block) (tally, []string) {
	var n tally
	var failures []string
	for _, b := range blocks {
		if b.skip != "" {
			continue
		}
		for _, c := range b.cmds {
			at := time.Now()
			r, err := s.run(c.text)
			if d := time.Since(at); d > n.slowest {
				n.slowest, n.slowLine = d, c.line
			}
			if err != nil {
				return n, append(failures, fmt.Sprintf("%s:%d: %v", b.file, c.line, err))
			}
			n.commands++
			if len(c.expect) > 0 {
				n.checked++
			}
			if msg := judge(c, r, s.timeout); msg != "" {
				failures = append(failures, fmt.Sprintf("%s:%d (block at line %d): %s\ncommand:\n%s\n%s%s%s",
					b.file, c.line, b.line, msg, indent(c.text), expected(c), tail("stdout", r.stdout), tail("stderr", r.stderr)))
			}
			if r.timedOut || r.exited {
				return n, append(failures, fmt.Sprintf("%s: the shell is gone; the commands after line %d did not run (shell stderr: %s)",
					b.file, c.line, s.stderr.String()))
			}
		}
	}
	return n, failures
}

// judge says what is wrong with a command's result (run with timeout), or "".
func judge(c command, r result, timeout time.Duration) string {
	switch {
	case r.timedOut:
		return fmt.Sprintf("did not finish within %s (killed)", timeout)
	case r.exited:
		return "the shell exited (a block must not run exit)"
	case r.status != 0:
		return fmt.Sprintf("exit status %d%s", r.status, inner(r.failed, c.line))
	case r.failed != "":
		return fmt.Sprintf("exit status 0, but a command inside it failed%s", inner(r.failed, c.line))
	}
	if len(c.expect) > 0 && !matches(c.expect, r.stdout+r.stderr) {
		return "the output does not hold the expected text"
	}
	return ""
}

// inner describes the ERR trap's record of the first failing command.
func inner(failed string, line int) string {
	parts := strings.SplitN(failed, "\t", 3)
	if len(parts) != 3 {
		return ""
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil {
		return ""
	}
	why := ""
	if parts[0] == "22" && strings.HasPrefix(parts[2], "curl ") {
		why = ": the answer was an HTTP error, its body is in stdout"
	}
	return fmt.Sprintf(" (first failure: %q, exit status %s%s, at line %d)", parts[2], parts[0], why, line+n-1)
}

var spaceRe = regexp.MustCompile(`\s+`)

// matches says whether output holds a command's "# =>" lines: each in
// turn, "…" matching anything, whitespace removed from both sides.
func matches(expect []string, output string) bool {
	var parts []string
	for _, l := range expect {
		var lit []string
		for _, piece := range strings.Split(spaceRe.ReplaceAllString(l, ""), "…") {
			lit = append(lit, regexp.QuoteMeta(piece))
		}
		parts = append(parts, strings.Join(lit, `.*?`))
	}
	return regexp.MustCompile(`(?s)` + strings.Join(parts, `.*?`)).MatchString(spaceRe.ReplaceAllString(output, ""))
}

func expected(c command) string {
	if len(c.expect) == 0 {
		return ""
	}
	return "expected, in order (… matches anything):\n" + indent("# => "+strings.Join(c.expect, "\n# => ")) + "\n"
}

// tail is the end of an output, at most 20 lines and 2000 bytes.
func tail(name, s string) string {
	if s == "" {
		return name + ": (empty)\n"
	}
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	if ls := strings.Split(strings.TrimRight(s, "\n"), "\n"); len(ls) > 20 {
		s = "…\n" + strings.Join(ls[len(ls)-20:], "\n")
	}
	return name + ":\n" + indent(s) + "\n"
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
