package docs_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseBlocks(t *testing.T) {
	t.Parallel()
	const doc = "# Title\n" + // 1
		"```sh\n" + // 2
		"A=1   # a comment\n" + // 3
		"curl -s x \\\n" + // 4
		"  -d '{\n" + // 5
		"  }'\n" + // 6
		"# => {\"a\":…}\n" + // 7
		"# => done\n" + // 8
		"# prose\n" + // 9
		"if true; then\n" + // 10
		"  echo y\n" + // 11
		"fi\n" + // 12
		"```\n" + // 13
		"\n" + // 14
		"<!-- doc-test: skip: needs docker -->\n" + // 15
		"```bash\n" + // 16
		"docker run x\n" + // 17
		"```\n" + // 18
		"```\n" + // 19
		"not shell\n" + // 20
		"```\n" // 21
	blocks, err := parseBlocks("d.md", doc)
	require.NoError(t, err)
	require.Len(t, blocks, 2)
	assert.Equal(t, 2, blocks[0].line)
	assert.Equal(t, []command{
		{line: 3, text: "A=1   # a comment"},
		{line: 4, text: "curl -s x \\\n  -d '{\n  }'", expect: []string{`{"a":…}`, "done"}},
		{line: 10, text: "if true; then\n  echo y\nfi"},
	}, blocks[0].cmds)
	assert.Equal(t, "needs docker", blocks[1].skip)
	assert.Equal(t, 16, blocks[1].line)
}

func TestParseBlocksRefuses(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"skip without a reason":      "<!-- doc-test: skip: -->\n```sh\nls\n```\n",
		"skip before prose":          "<!-- doc-test: skip: x -->\ntext\n```sh\nls\n```\n",
		"skip before a non-shell":    "<!-- doc-test: skip: x -->\n```go\nx\n```\n",
		"skip at the end":            "```sh\nls\n```\n<!-- doc-test: skip: x -->\n",
		"unknown marker":             "<!-- doc-test: run -->\n```sh\nls\n```\n",
		"expectation before command": "```sh\n# => x\nls\n```\n",
		"block ends inside a quote":  "```sh\necho 'x\n```\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseBlocks("d.md", doc)
			assert.Error(t, err)
		})
	}
}

func TestMatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		expect []string
		output string
		want   bool
	}{
		{"substring", []string{`"status":"ready"`}, `{"id":"1","status":"ready"}`, true},
		{"wildcard", []string{`{"id":"…","status":"ready"}`}, `{"id":"1","status":"ready"}`, true},
		{"wildcard does not skip the literal", []string{`{"id":"…","status":"ready"}`}, `{"id":"1","status":"error"}`, false},
		{"pretty-printed JSON", []string{`{"interface": "studio", "routed_by": "default"}`}, "{\n  \"interface\": \"studio\",\n  \"routed_by\": \"default\"\n}\n", true},
		{"lines in order", []string{"a", "b"}, "a\nb\n", true},
		{"lines out of order", []string{"b", "a"}, "a\nb\n", false},
		{"regexp characters are literal", []string{`a.c`}, "abc", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, matches(tc.expect, tc.output))
		})
	}
}

// TestFailureReport runs failing commands in a session (no dubsim) and
// checks that each report names what a reader needs to fix the document.
func TestFailureReport(t *testing.T) {
	t.Parallel()
	const doc = "```sh\n" + // 1
		"X=hello\n" + // 2
		"echo \"$X\"; echo oops >&2\n" + // 3
		"# => bye\n" + // 4
		"echo \"$X\"\n" + // 5
		"# => hel…o\n" + // 6
		"V=$(exit 3); echo after\n" + // 7
		"grep -q nothing /dev/null\n" + // 8
		"curl -s $DUBSIM_URL/missing\n" + // 9
		"```\n" + // 10
		"<!-- doc-test: skip: never runs -->\n" + // 11
		"```sh\n" + // 12
		"exit 9\n" + // 13
		"```\n" + // 14
		"```sh\n" + // 15
		"read -r _ </dev/zero\n" + // 16: reads forever, until the timeout
		"```\n"
	blocks, err := parseBlocks("d.md", doc)
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"NotFoundError"}`, http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	s := startSession(t, t.TempDir(), srv.URL, t.TempDir())
	s.timeout = 2 * time.Second
	n, failures := runBlocks(s, blocks)
	require.Len(t, failures, 6, "%q", failures)
	assert.Equal(t, 7, n.commands)
	assert.Equal(t, 2, n.checked)
	for i, want := range [][]string{
		{"d.md:3 (block at line 1): the output does not hold the expected text", `echo "$X"; echo oops >&2`, "# => bye", "stdout:\n    hello", "stderr:\n    oops"},
		{"d.md:7 ", "exit status 0, but a command inside it failed", `"V=$(exit 3)", exit status 3, at line 7`, "stdout:\n    after"},
		{"d.md:8 ", "exit status 1", "grep -q nothing /dev/null", "stdout: (empty)"},
		{"d.md:9 ", "exit status 22", "curl -s " + srv.URL + "/missing", "the answer was an HTTP error", `{"error":"NotFoundError"}`},
		{"d.md:16 ", "did not finish within 2s (killed)", "read -r _ </dev/zero"},
		{"the shell is gone; the commands after line 16 did not run"},
	} {
		for _, w := range want {
			assert.Contains(t, failures[i], w, "failure %d", i)
		}
	}
}
