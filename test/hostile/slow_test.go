package hostile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowStart runs dubsim with its log at INFO (kept in p.Stderr) and args;
// it returns the process and its data file.
func slowStart(t *testing.T, args ...string) (*proctest.Proc, string) {
	t.Helper()
	data := filepath.Join(t.TempDir(), "dubsim.db")
	base := []string{"--addr", "127.0.0.1:0", "--data", data, "--log-level", "info"}
	return proctest.Start(t, proctest.Binary(t), nil, append(base, args...)...), data
}

// slowDial opens a TCP connection to p.
func slowDial(t *testing.T, p *proctest.Proc) net.Conn {
	t.Helper()
	u, err := url.Parse(p.Base)
	require.NoError(t, err)
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// slowHead writes a request head with Content-Length length (-1: chunked).
func slowHead(t *testing.T, c net.Conn, method, target string, length int, header ...string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: dubsim\r\n", method, target)
	for _, h := range header {
		b.WriteString(h + "\r\n")
	}
	if length >= 0 {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", length)
	} else {
		b.WriteString("Transfer-Encoding: chunked\r\n")
	}
	b.WriteString("\r\n")
	_, err := io.WriteString(c, b.String())
	require.NoError(t, err)
}

// slowAnswer reads one answer from c within limit.
func slowAnswer(t *testing.T, c net.Conn, limit time.Duration) (int, string) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(limit)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err, "an answer within %s", limit)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// slowUploadTarget is the path and query of a fresh presigned upload URL.
func slowUploadTarget(t *testing.T, p *proctest.Proc) string {
	t.Helper()
	raw, status := boundsPresign(t, p, "dubsim-subscription")
	require.Equal(t, http.StatusOK, status)
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.RequestURI()
}

// slowNoLeak asserts that an answer names no network address and no file
// path of the machine.
func slowNoLeak(t *testing.T, body string, paths ...string) {
	t.Helper()
	for _, s := range append([]string{"127.0.0.1", "tcp", "i/o timeout", os.TempDir()}, paths...) {
		assert.NotContains(t, body, s)
	}
}

// A whole-request read timeout of 5 minutes would cut any 5 GB upload
// slower than 17 MB/s. The body's deadline moves while bytes arrive: an
// upload that takes 3.2 s at 1 s of --body-idle-timeout (so it would be cut
// by a whole-request timeout of that length) is stored. A chunk goes every
// 200 ms, so that a client or server held off the processor for most of a
// second (a loaded machine) still leaves no second without a byte.
func TestSlowUploadThatKeepsSendingIsStored(t *testing.T) {
	t.Parallel() // it mostly waits for the body timeouts
	p, _ := slowStart(t, "--body-idle-timeout", "1s")
	target := slowUploadTarget(t, p)
	c := slowDial(t, p)
	const chunks, size = 16, 2048
	slowHead(t, c, http.MethodPut, target, chunks*size)
	start := time.Now()
	for range chunks {
		time.Sleep(200 * time.Millisecond)
		_, err := c.Write(make([]byte, size))
		require.NoError(t, err, "after %s; dubsim's log:\n%s", time.Since(start).Round(time.Millisecond), p.Stderr())
	}
	status, body := slowAnswer(t, c, 10*time.Second)
	t.Logf("%d bytes in %s at 1 s idle timeout: %d %s", chunks*size, time.Since(start).Round(time.Millisecond), status, body)
	assert.Equal(t, http.StatusOK, status, body)
}

// A stalled upload is the client's doing, and an i/o timeout names
// addresses: it gets S3's RequestTimeout (400, the documented text) once no
// byte arrived for --body-idle-timeout, naming no address. The minimum rate
// is off: it would judge the same bodies at the same instant (once the idle
// timeout has passed since the body started), and which of the two answers
// first is then a race; TestTrickledBodyIsCutByTheMinimumRate has it.
func TestStalledUploadGetsS3RequestTimeout(t *testing.T) {
	t.Parallel() // it mostly waits for the body timeouts
	p, _ := slowStart(t, "--body-idle-timeout", "1s", "--body-min-rate", "0")
	target := slowUploadTarget(t, p)
	c := slowDial(t, p)
	slowHead(t, c, http.MethodPut, target, 1<<20)
	_, err := c.Write(make([]byte, 1024))
	require.NoError(t, err)
	start := time.Now()
	status, body := slowAnswer(t, c, 10*time.Second)
	t.Logf("after %s: %d %s", time.Since(start).Round(time.Millisecond), status, body)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, "<Code>RequestTimeout</Code><Message>Your socket connection to the server was not read from or written to within the timeout period. Idle connections will be closed.</Message>")
	slowNoLeak(t, body)

	// A JSON route says the body stopped arriving, in its envelope.
	c = slowDial(t, p)
	slowHead(t, c, http.MethodPost, "/api/v1/projects", 100, "Authorization: Bearer dubsim-subscription", "Content-Type: application/json")
	_, err = io.WriteString(c, `{"name": "x"`)
	require.NoError(t, err)
	status, body = slowAnswer(t, c, 10*time.Second)
	t.Logf("JSON: %d %s", status, body)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, "The request body stopped arriving: no byte came for 1s (12 bytes received)")
	slowNoLeak(t, body)
	assert.NotContains(t, p.Stderr(), "level=ERROR")
}

// slowPid finds the process whose command line names data (proctest does
// not say the pid).
func slowPid(t *testing.T, data string) string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	require.NoError(t, err)
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err == nil && bytes.Contains(b, []byte(data)) && !bytes.Contains(b, []byte("go\x00test")) {
			return filepath.Base(d)
		}
	}
	t.Skip("no /proc entry names the process")
	return ""
}

// slowSockets counts the open sockets of process pid.
func slowSockets(t *testing.T, pid string) int {
	t.Helper()
	fds, err := os.ReadDir(filepath.Join("/proc", pid, "fd"))
	require.NoError(t, err)
	n := 0
	for _, fd := range fds {
		if l, err := os.Readlink(filepath.Join("/proc", pid, "fd", fd.Name())); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// Every slow-body connection holds a socket, a goroutine and buffers, so
// their number is capped. With --max-connections 20, 200
// connections that send a head and 10 bytes of a 1,000-byte body leave the
// process with at most 20 of them open (the others wait in the kernel's
// accept queue); once they close, new requests are answered.
func TestSlowBodyConnectionsBeyondTheCap(t *testing.T) {
	t.Parallel()
	const limit, conns = 20, 200
	p, data := slowStart(t, "--max-connections", fmt.Sprint(limit), "--body-idle-timeout", "30s", "--log-level", "off")
	pid := slowPid(t, data)
	before := slowSockets(t, pid)
	u, err := url.Parse(p.Base)
	require.NoError(t, err)
	var open []net.Conn
	for i := range conns {
		c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
		require.NoError(t, err, "connection %d (the accept queue holds it)", i)
		open = append(open, c)
		_, err = io.WriteString(c, "POST /api/v1/projects HTTP/1.1\r\nHost: dubsim\r\nAuthorization: Bearer dubsim-subscription\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"name\":\"x\"")
		require.NoError(t, err)
	}
	// Let the server accept all it will.
	var during int
	for range 20 {
		time.Sleep(50 * time.Millisecond)
		during = max(during, slowSockets(t, pid))
	}
	t.Logf("sockets of the process: %d before, %d with %d slow-body connections open (cap %d)", before, during, conns, limit)
	assert.LessOrEqual(t, during, before+limit, "sockets held")
	for _, c := range open {
		c.Close()
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(p.Base + "/_sim/health")
	require.NoError(t, err, "a request once the slow connections closed")
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.True(t, p.Alive())
}

// slowJournal waits for the journal to hold n entries of path and returns
// their statuses.
func slowJournal(t *testing.T, p *proctest.Proc, path string, n int) []int {
	t.Helper()
	var statuses []int
	for range 100 {
		resp, err := http.Get(p.Base + "/_sim/requests?path=" + url.QueryEscape(path))
		require.NoError(t, err)
		var v struct {
			Entries []struct {
				Status int `json:"status"`
			} `json:"requests"`
		}
		err = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		require.NoError(t, err)
		statuses = statuses[:0]
		for _, e := range v.Entries {
			statuses = append(statuses, e.Status)
		}
		if len(statuses) >= n {
			return statuses
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the journal has %d entries of %s, want %d", len(statuses), path, n)
	return nil
}

// A client that closes the connection mid-upload is not a fault of the
// simulator: S3's 400 IncompleteBody (nobody reads it), an INFO line, and
// 400 in the journal, not 500 InternalError ("The upload could not be
// stored: unexpected EOF") nor an ERROR line; a JSON route likewise
// records 400, not 500 nor "must be a JSON object".
func TestAbortedClientIsNotAServerError(t *testing.T) {
	t.Parallel()
	p, _ := slowStart(t)
	target := slowUploadTarget(t, p)
	c := slowDial(t, p)
	slowHead(t, c, http.MethodPut, target, 1<<20)
	_, err := c.Write(make([]byte, 4096))
	require.NoError(t, err)
	require.NoError(t, c.Close())
	upload, _, _ := strings.Cut(target, "?")
	statuses := slowJournal(t, p, upload, 1)
	t.Logf("journal statuses of the aborted upload: %v", statuses)
	assert.Equal(t, []int{http.StatusBadRequest}, statuses)

	// Half-closed: the client sends 12 of 100 bytes and stops writing, but
	// reads the answer.
	c = slowDial(t, p)
	slowHead(t, c, http.MethodPost, "/api/v1/projects", 100, "Authorization: Bearer dubsim-subscription", "Content-Type: application/json")
	_, err = io.WriteString(c, `{"name": "x"`)
	require.NoError(t, err)
	require.NoError(t, c.(*net.TCPConn).CloseWrite())
	status, body := slowAnswer(t, c, 10*time.Second)
	t.Logf("half-closed JSON body: %d %s", status, body)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, "The request body ended early: 12 of the 100 bytes declared by Content-Length arrived before the client closed the connection")
	slowNoLeak(t, body)
	statuses = slowJournal(t, p, "/api/v1/projects", 1)
	assert.NotContains(t, statuses, http.StatusInternalServerError)

	logs := p.WaitStderr(t, "level=INFO msg=\"request body not received\"", 10*time.Second)
	assert.NotContains(t, logs, "level=ERROR")
}

// A truncated JSON body is told that the JSON ends early, not "unexpected
// EOF" nor (when shorter than its Content-Length) "Request body must be a
// JSON object", on both interfaces, under Content-Length and chunked.
func TestTruncatedJSONSaysItEndsEarly(t *testing.T) {
	t.Parallel()
	p, _ := slowStart(t, "--log-level", "off")
	for _, tc := range []struct{ name, body string }{
		{"studio", `{"name": "x", "targetLanguages": ["de"]`},
		{"platform", `{"name": "x", "source_lang": "en"`},
	} {
		for _, chunked := range []bool{false, true} {
			c := slowDial(t, p)
			if chunked {
				slowHead(t, c, http.MethodPost, "/api/v1/projects", -1, "Authorization: Bearer dubsim-subscription", "Content-Type: application/json")
				_, err := fmt.Fprintf(c, "%x\r\n%s\r\n0\r\n\r\n", len(tc.body), tc.body)
				require.NoError(t, err)
			} else {
				slowHead(t, c, http.MethodPost, "/api/v1/projects", len(tc.body), "Authorization: Bearer dubsim-subscription", "Content-Type: application/json")
				_, err := io.WriteString(c, tc.body)
				require.NoError(t, err)
			}
			status, body := slowAnswer(t, c, 10*time.Second)
			t.Logf("%s, chunked %v: %d %s", tc.name, chunked, status, body)
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Contains(t, body, "Malformed JSON body: the JSON ends early", "%s, chunked %v", tc.name, chunked)
		}
	}
}

// An upload the simulator could not store answers 500 InternalError
// without the cause's path ("open /home/.../dubsim.db.blobs/.tmp-...: no
// such file or directory"): the log keeps it.
func TestUploadErrorsNameNoPath(t *testing.T) {
	t.Parallel()
	p, data := slowStart(t)
	target := slowUploadTarget(t, p)
	blobs := data + ".blobs"
	require.NoError(t, os.RemoveAll(blobs))
	req, err := http.NewRequest(http.MethodPut, p.Base+target, bytes.NewReader(make([]byte, 1024)))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body := string(b)
	t.Logf("%d %s", resp.StatusCode, body)
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	assert.Contains(t, body, "<Code>InternalError</Code><Message>The upload could not be stored: see the dubsim log</Message>")
	slowNoLeak(t, body, blobs, filepath.Dir(data), ".tmp")
	p.WaitStderr(t, blobs, 10*time.Second) // the log keeps the cause
}
