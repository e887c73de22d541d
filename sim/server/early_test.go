package server_test

// Early answers: a request refused before its body was read (401, 403,
// 413, a bad presigned URL, an injected fault) must reach a client that
// writes its whole body before it reads the reply, as Python's urllib does,
// instead of a "connection reset by peer" (fidelity X1-X5).
// Every test goes through the real listener with real clients: Go's
// net/http, python3's urllib and curl, which the tests run when installed
// (their absence skips the test; DUBSIM_REQUIRE_TOOLS=1 fails it instead).

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/dubsim/dubsim/internal/tooltest"
	"github.com/dubsim/dubsim/sim/app"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	mb60 = 60 << 20 // far past the 256 KiB net/http reads of an unread body on its own
	gb1  = 1 << 30
)

// needTool returns the path of a command line tool, or ends the test when
// it is missing (internal/tooltest).
func needTool(t testing.TB, name string) string {
	t.Helper()
	return tooltest.Path(t, name, "apt-get install "+name)
}

// bodyFile writes a sparse file of size bytes in dir: head, zeros, tail.
// Nothing of it is held in memory and it takes almost no disk.
func bodyFile(t testing.TB, dir string, head, tail []byte, size int64) string {
	t.Helper()
	f, err := os.CreateTemp(dir, "body-*")
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Write(head)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(size))
	_, err = f.WriteAt(tail, size-int64(len(tail)))
	require.NoError(t, err)
	return f.Name()
}

// reply is what a client received: a status and the whole body.
type reply struct {
	status int
	body   string
}

// client sends method url with the headers and the file as its body, the
// way one real HTTP client does it.
type client struct {
	name string
	tool string // command it needs ("" for Go)
	send func(t testing.TB, method, rawURL string, header map[string]string, file string) (reply, error)
}

// goSend is Go's net/http client, on a connection of its own.
func goSend(t testing.TB, method, rawURL string, header map[string]string, file string) (reply, error) {
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	req, err := http.NewRequest(method, rawURL, f)
	require.NoError(t, err)
	req.ContentLength = st.Size()
	for k, v := range header {
		req.Header.Set(k, v)
	}
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, string(b)}, err
}

// rawSend writes the request and its whole body on a TCP connection, and
// only then reads the answer: a client as blunt as urllib, in Go. (Go's
// own client reads the answer while it writes and stops writing when a
// refusal arrives.)
func rawSend(t testing.TB, method, rawURL string, header map[string]string, file string) (reply, error) {
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(2*time.Minute)))
	rawRequest(t, conn, method, rawURL, header, st.Size())
	if _, err := io.Copy(conn, f); err != nil {
		return reply{}, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: method})
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, string(b)}, err
}

// pythonClient is urllib, which writes the whole body (from a generator,
// with a Content-Length) before it reads the reply. It sends one request
// for each line on its stdin, a JSON array [method, url, file, headers],
// and writes each reply as "STATUS LENGTH\n" and the body: one interpreter
// sends the requests of a whole test, since starting python3 costs more CPU
// than a request of 60 MB.
const pythonClient = `
import json, os, sys, urllib.request, urllib.error
def chunks(path):
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                return
            yield b
for line in sys.stdin:
    method, url, path, headers = json.loads(line)
    headers["Content-Length"] = str(os.path.getsize(path))
    req = urllib.request.Request(url, data=chunks(path), method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            status, body = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, body = e.code, e.read()
    sys.stdout.buffer.write(b"%d %d\n" % (status, len(body)) + body)
    sys.stdout.flush()
`

// python is one python3 running pythonClient.
type python struct {
	stdin  io.WriteCloser
	out    *bufio.Reader
	errOut *proctest.Buffer
}

// startPython starts pythonClient; it ends with the test t.
func startPython(t testing.TB) (*python, error) {
	cmd := exec.Command("python3", "-c", pythonClient)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &python{stdin: stdin, out: bufio.NewReader(stdout), errOut: &proctest.Buffer{}}
	cmd.Stderr = p.errOut
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("python3: %v: %s", err, p.errOut)
		}
	})
	return p, nil
}

// send sends one request and reads its reply.
func (p *python) send(method, rawURL string, header map[string]string, file string) (reply, error) {
	if header == nil {
		header = map[string]string{}
	}
	line, err := json.Marshal([]any{method, rawURL, file, header})
	if err != nil {
		return reply{}, err
	}
	if _, err := p.stdin.Write(append(line, '\n')); err != nil {
		return reply{}, fmt.Errorf("python3: %w: %s", err, p.errOut)
	}
	var r reply
	var n int
	if _, err := fmt.Fscanf(p.out, "%d %d\n", &r.status, &n); err != nil {
		return reply{}, fmt.Errorf("python3: %w: %s", err, p.errOut)
	}
	body := make([]byte, n)
	_, err = io.ReadFull(p.out, body)
	r.body = string(body)
	return r, err
}

// curlSend uploads the file with -T (curl streams it; --data-binary @file
// would read it into memory first). expect false removes the
// "Expect: 100-continue" curl sends for large bodies; with it, curl waits up
// to a minute for "100 Continue" (its default, one second, would make the
// case depend on the machine's speed).
func curlSend(expect bool) func(t testing.TB, method, rawURL string, header map[string]string, file string) (reply, error) {
	return func(t testing.TB, method, rawURL string, header map[string]string, file string) (reply, error) {
		args := []string{"-sS", "-X", method, "-T", file, "-o", "-", "-w", "\n%{http_code}", "--max-time", "120", "--expect100-timeout", "60"}
		if !expect {
			args = append(args, "-H", "Expect:")
		}
		for k, v := range header {
			args = append(args, "-H", k+": "+v)
		}
		a, err := runClient(exec.Command("curl", append(args, rawURL)...))
		if err != nil {
			return a, err
		}
		// curl writes the body, then the status on a last line.
		i := strings.LastIndexByte(a.body, '\n')
		st, err := strconv.Atoi(a.body[i+1:])
		return reply{st, a.body[:i]}, err
	}
}

// runClient runs curl, whose output is "BODY\nSTATUS" (parsed by its
// caller).
func runClient(cmd *exec.Cmd) (reply, error) {
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return reply{}, fmt.Errorf("%s: %w: %s", filepath.Base(cmd.Path), err, errOut.String())
	}
	return reply{body: out.String()}, nil
}

// earlyClients are the clients of the test t: one python3 sends all its
// urllib requests, started at the first and ended with t.
func earlyClients(t testing.TB) []client {
	var py *python
	pythonSend := func(_ testing.TB, method, rawURL string, header map[string]string, file string) (reply, error) {
		if py == nil {
			var err error
			if py, err = startPython(t); err != nil {
				return reply{}, err
			}
		}
		return py.send(method, rawURL, header, file)
	}
	return []client{
		{name: "go", send: goSend},
		{name: "go-raw", send: rawSend},
		{name: "python", tool: "python3", send: pythonSend},
		{name: "curl", tool: "curl", send: curlSend(false)},
		{name: "curl-expect", tool: "curl", send: curlSend(true)},
	}
}

// earlyCase is one refusal decided before the body is read.
type earlyCase struct {
	name string
	path string // cloning, uploads or projects: the 1 GB runs take one case of each
	// prepare returns the method, URL, headers and the exact reply.
	prepare    func(t testing.TB, in *inst) (method, rawURL string, header map[string]string, want reply)
	head, tail []byte
}

const cloneBoundary = "dubsim-early-reply"

var (
	cloneHead = []byte("--" + cloneBoundary + "\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\nHello there\r\n" +
		"--" + cloneBoundary + "\r\nContent-Disposition: form-data; name=\"language\"\r\n\r\nen\r\n" +
		"--" + cloneBoundary + "\r\nContent-Disposition: form-data; name=\"reference_audio_files\"; filename=\"reference.wav\"\r\nContent-Type: audio/wav\r\n\r\nRIFF")
	cloneTail   = []byte("\r\n--" + cloneBoundary + "--\r\n")
	projectHead = []byte(`{"source_lang":"en","target_lang":"de-DE","source_video_url":"https://cdn.test/a.mp4","padding":"`)
	projectTail = []byte(`"}`)
)

func cloning(key string, want reply) func(testing.TB, *inst) (string, string, map[string]string, reply) {
	return func(_ testing.TB, in *inst) (string, string, map[string]string, reply) {
		return http.MethodPost, in.url + "/api/v1/cloning/synthesize",
			map[string]string{"Authorization": "Bearer " + key, "Content-Type": "multipart/form-data; boundary=" + cloneBoundary}, want
	}
}

func project(key string, want reply) func(testing.TB, *inst) (string, string, map[string]string, reply) {
	return func(_ testing.TB, in *inst) (string, string, map[string]string, reply) {
		return http.MethodPost, in.url + "/api/v1/projects",
			map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}, want
	}
}

func s3Answer(status int, code, msg, resource string) reply {
	return reply{status, `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		"<Error><Code>" + code + "</Code><Message>" + msg + "</Message><Resource>" + resource + "</Resource><RequestId>dubsim</RequestId></Error>"}
}

var earlyCases = []earlyCase{
	{name: "cloning 403 free plan", path: "cloning", head: cloneHead, tail: cloneTail, prepare: cloning("dubsim-free",
		reply{http.StatusForbidden, `{"error":"` + sim.MsgCloningPlan + `"}` + "\n"})},
	{name: "cloning 401 bad key", path: "cloning", head: cloneHead, tail: cloneTail, prepare: cloning("not-a-key",
		reply{http.StatusUnauthorized, `{"error":"UnauthorizedError","message":"` + sim.MsgInvalidAPIKey + `"}` + "\n"})},
	{name: "cloning 429 injected fault", path: "cloning", head: cloneHead, tail: cloneTail,
		prepare: func(t testing.TB, in *inst) (string, string, map[string]string, reply) {
			// dubsim-pro may clone: without the rule, its body would be read.
			st, m := in.call("POST", "/_sim/faults", "", `{"api_key":"dubsim-pro","path":"/api/v1/cloning/synthesize","count":1,"action":{"type":"rate_limit","retry_after_seconds":5}}`)
			require.Equal(t, http.StatusCreated, st, "%v", m)
			method, u, h, _ := cloning("dubsim-pro", reply{})(t, in)
			return method, u, h, reply{http.StatusTooManyRequests,
				`{"error":"RateLimitError","message":"Rate limit exceeded; retry after 5 seconds (injected by dubsim fault rule ` + m["id"].(string) + `)"}` + "\n"}
		}},
	{name: "upload 403 bad signature", path: "uploads", head: []byte("RIFF"), tail: []byte("data"),
		prepare: func(t testing.TB, in *inst) (string, string, map[string]string, reply) {
			_, uploadURL := presign(t, in, "dubsim-free", "take.wav")
			u, err := url.Parse(uploadURL)
			require.NoError(t, err)
			q := u.Query()
			q.Set("X-Amz-Signature", strings.Repeat("0", 64))
			u.RawQuery = q.Encode()
			return http.MethodPut, u.String(), map[string]string{"Content-Type": "audio/wav"}, s3Answer(http.StatusForbidden, "SignatureDoesNotMatch",
				"The request signature does not match; use the presignedUploadUrl exactly as returned, query string included", u.Path)
		}},
	{name: "upload 403 expired", path: "uploads", head: []byte("RIFF"), tail: []byte("data"),
		prepare: func(t testing.TB, in *inst) (string, string, map[string]string, reply) {
			expires := in.srv.Engine.Clock.Now().Add(sim.UploadValidity)
			_, uploadURL := presign(t, in, "dubsim-free", "take.wav")
			studioAdvance(t, in, sim.UploadValidity+time.Hour)
			u, err := url.Parse(uploadURL)
			require.NoError(t, err)
			return http.MethodPut, uploadURL, map[string]string{"Content-Type": "audio/wav"}, s3Answer(http.StatusForbidden, "AccessDenied",
				"Request has expired: the presigned URL expired at "+sim.StudioTime(expires), u.Path)
		}},
	{name: "project 401 bad key", path: "projects", head: projectHead, tail: projectTail, prepare: project("not-a-key",
		reply{http.StatusUnauthorized, `{"error":"UnauthorizedError","message":"` + sim.MsgInvalidAPIKey + `"}` + "\n"})},
	{name: "project 413 too large", path: "projects", head: projectHead, tail: projectTail, prepare: project("dubsim-free",
		reply{http.StatusRequestEntityTooLarge, `{"error":"ValidationError","message":"` + fmt.Sprintf(sim.MsgBodyTooLarge, 10<<20) + `"}` + "\n"})},
}

// TestEarlyAnswerReachesEveryClient: each refusal, to each client, with a
// 60 MB body (more than loopback's socket buffers hold: without the drain,
// the raw, urllib and Go clients are reset); and in the long run
// (tooltest.Long), per client, one refused upload of 1 GB (presigned uploads
// are the route whose bodies are the largest, up to 5 GB). The client gets
// the status and the exact body, not a reset. The drain's speed on each path
// is BenchmarkEarlyAnswerDrain's.
func TestEarlyAnswerReachesEveryClient(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := start(t, nil)
	files := map[string]string{}
	for _, c := range earlyClients(t) {
		t.Run(c.name, func(t *testing.T) {
			if c.tool != "" {
				needTool(t, c.tool)
			}
			gbDone := false
			for _, ec := range earlyCases {
				sizes := []int64{mb60}
				if ec.path == "uploads" && !gbDone && !testing.Short() && tooltest.Long() {
					gbDone = true
					sizes = append(sizes, gb1)
				}
				for _, size := range sizes {
					t.Run(fmt.Sprintf("%s %dMB", ec.name, size>>20), func(t *testing.T) {
						fk := fmt.Sprintf("%s/%d", ec.path, size)
						if files[fk] == "" {
							files[fk] = bodyFile(t, dir, ec.head, ec.tail, size)
						}
						method, u, h, want := ec.prepare(t, in)
						got, err := c.send(t, method, u, h, files[fk])
						require.NoError(t, err)
						assert.Equal(t, want, got)
					})
				}
			}
		})
	}
}

// BenchmarkEarlyAnswerDrain sends a 1 GB body that is refused before it is
// read, written whole before the answer is read (rawSend), on each path:
// MB/s is how fast the refused body is read and discarded (X2 quotes it).
//
//	go test -run XXX -bench EarlyAnswerDrain -benchtime 3x ./sim/server
func BenchmarkEarlyAnswerDrain(b *testing.B) {
	in := start(b, nil)
	dir := b.TempDir()
	seen := map[string]bool{}
	for _, ec := range earlyCases {
		if seen[ec.path] {
			continue
		}
		seen[ec.path] = true
		b.Run(ec.path, func(b *testing.B) {
			file := bodyFile(b, dir, ec.head, ec.tail, gb1)
			b.SetBytes(gb1)
			for b.Loop() {
				b.StopTimer()
				method, u, h, want := ec.prepare(b, in)
				b.StartTimer()
				got, err := rawSend(b, method, u, h, file)
				if err != nil || got != want {
					b.Fatalf("%v: %+v, want %+v", err, got, want)
				}
			}
		})
	}
}

// TestEarlyAnswerFiftyTimesInARow repeats the case most prone to a reset: a
// 16 MB body (64 times the 256 KiB net/http reads of an unread body on its
// own) refused early (a free account's cloning request, 403), fifty times
// in a row, Go's client and urllib taking turns.
func TestEarlyAnswerFiftyTimesInARow(t *testing.T) {
	t.Parallel()
	needTool(t, "python3")
	in := start(t, nil)
	ec := earlyCases[0]
	file := bodyFile(t, t.TempDir(), ec.head, ec.tail, 16<<20)
	method, u, h, want := ec.prepare(t, in)
	py, err := startPython(t)
	require.NoError(t, err)
	for i := range 50 {
		send := goSend
		if i%2 == 1 {
			send = func(_ testing.TB, method, rawURL string, header map[string]string, file string) (reply, error) {
				return py.send(method, rawURL, header, file)
			}
		}
		got, err := send(t, method, u, h, file)
		require.NoError(t, err, "attempt %d", i+1)
		require.Equal(t, want, got, "attempt %d", i+1)
	}
}

// rawRequest writes a request head with a Content-Length on conn.
func rawRequest(t testing.TB, conn net.Conn, method, rawURL string, header map[string]string, contentLength int64) {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", method, u.RequestURI(), u.Host, contentLength)
	for k, v := range header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	_, err = io.WriteString(conn, b.String())
	require.NoError(t, err)
}

// readAnswer reads one response from br: its status and body, and the
// response (its body already read).
func readAnswer(t testing.TB, br *bufio.Reader, method string) (reply, *http.Response) {
	t.Helper()
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return reply{resp.StatusCode, string(b)}, resp
}

// TestEarlyAnswerComesBeforeTheBody: the reply is sent as soon as it is
// decided, before any byte of the announced body arrives, on every path
// (the journal keeps the first bytes of an unread body only after the
// reply is out). POST /api/v1/projects is the exception: it reads up to
// 64 KiB to tell the two interfaces apart (fidelity X4), so it gets its
// reply once those arrive.
func TestEarlyAnswerComesBeforeTheBody(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	for _, ec := range earlyCases {
		t.Run(ec.name, func(t *testing.T) {
			method, u, h, want := ec.prepare(t, in)
			conn, err := net.Dial("tcp", strings.TrimPrefix(in.url, "http://"))
			require.NoError(t, err)
			defer conn.Close()
			rawRequest(t, conn, method, u, h, mb60)
			switch ec.name {
			case "project 401 bad key":
				_, err = conn.Write(append(ec.head, make([]byte, 64<<10)...))
			case "project 413 too large": // read up to the limit, then refused
				_, err = conn.Write(append(ec.head, make([]byte, 10<<20)...))
			}
			require.NoError(t, err)
			// No more of the body is sent: the reply must come without it.
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(20*time.Second)))
			got, resp := readAnswer(t, bufio.NewReader(conn), method)
			assert.Equal(t, want, got)
			assert.Equal(t, int64(len(want.body)), resp.ContentLength, "a complete reply with its length, not chunked")
		})
	}
}

// TestEarlyAnswerKeepsTheConnection: after a refusal whose body was read to
// its end, the connection carries the next request (keep-alive), and an
// accepted upload on it still works.
func TestEarlyAnswerKeepsTheConnection(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(in.url, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	br := bufio.NewReader(conn)
	ec := earlyCases[0]
	method, u, h, want := ec.prepare(t, in)

	// The whole body is written before the reply is read.
	rawRequest(t, conn, method, u, h, mb60)
	_, err = io.Copy(conn, io.MultiReader(bytes.NewReader(ec.head), io.LimitReader(zeros{}, mb60-int64(len(ec.head)+len(ec.tail))), bytes.NewReader(ec.tail)))
	require.NoError(t, err)
	got, resp := readAnswer(t, br, method)
	assert.Equal(t, want, got)
	assert.False(t, resp.Close, "the connection stays open")

	// Then a valid presigned upload of 60 MB on the same connection.
	_, uploadURL := presign(t, in, "dubsim-free", "take.wav")
	rawRequest(t, conn, http.MethodPut, uploadURL, nil, mb60)
	sum := md5.New()
	_, err = io.Copy(io.MultiWriter(conn, sum), io.LimitReader(zeros{}, mb60))
	require.NoError(t, err)
	resp, err = http.ReadResponse(br, &http.Request{Method: http.MethodPut})
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, `"`+hex.EncodeToString(sum.Sum(nil))+`"`, resp.Header.Get("ETag"))
	assert.False(t, resp.Close, "the connection stays open")
}

// TestAcceptedLargeUploadStillWorks: a valid presigned PUT of 60 MB with
// each client is stored (its ETag is the MD5 of the file).
func TestAcceptedLargeUploadStillWorks(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	file := bodyFile(t, t.TempDir(), []byte("RIFF"), []byte("data"), mb60)
	f, err := os.Open(file)
	require.NoError(t, err)
	sum := md5.New()
	_, err = io.Copy(sum, f)
	_ = f.Close()
	require.NoError(t, err)
	for _, c := range earlyClients(t) {
		t.Run(c.name, func(t *testing.T) {
			if c.tool != "" {
				needTool(t, c.tool)
			}
			_, uploadURL := presign(t, in, "dubsim-free", "take.wav")
			got, err := c.send(t, http.MethodPut, uploadURL, map[string]string{"Content-Type": "audio/wav"}, file)
			require.NoError(t, err)
			assert.Equal(t, reply{http.StatusOK, ""}, got)
		})
	}
}

// TestEarlyAnswerDrainBounds: a body longer than the drain's size bound, or
// one that stops arriving for longer than its idle bound, gets the reply
// and then the connection is closed.
func TestEarlyAnswerDrainBounds(t *testing.T) {
	t.Parallel()
	in := start(t, func(c *app.Config) {
		c.DrainMaxBytes = 1 << 20
		c.DrainIdleTimeout = 50 * time.Millisecond
	})
	ec := earlyCases[0]
	tests := []struct {
		name   string
		length int64
		send   int64 // bytes of the body sent after the reply arrived
	}{
		{"announced body over the size bound", 2 << 20, 0},
		{"body stops arriving", 512 << 10, 64 << 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method, u, h, want := ec.prepare(t, in)
			conn, err := net.Dial("tcp", strings.TrimPrefix(in.url, "http://"))
			require.NoError(t, err)
			defer conn.Close()
			rawRequest(t, conn, method, u, h, tc.length)
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(20*time.Second)))
			br := bufio.NewReader(conn)
			got, resp := readAnswer(t, br, method)
			assert.Equal(t, want, got)
			assert.Equal(t, tc.send == 0, resp.Close, "Connection: close when the body will not be read")
			_, err = conn.Write(make([]byte, tc.send))
			require.NoError(t, err)
			// The server gives up and closes: EOF (or a reset), never a hang.
			_, err = br.ReadByte()
			require.Error(t, err)
			var ne net.Error
			assert.False(t, errors.As(err, &ne) && ne.Timeout(), "the server closed the connection: %v", err)
		})
	}
}

// TestEarlyAnswerWithoutDrain: with the reading of refused bodies turned
// off (--drain-max-bytes 0), the answer still comes at once, and says the
// connection closes.
func TestEarlyAnswerWithoutDrain(t *testing.T) {
	t.Parallel()
	in := start(t, func(c *app.Config) { c.DrainMaxBytes = -1 })
	method, u, h, want := earlyCases[0].prepare(t, in)
	conn, err := net.Dial("tcp", strings.TrimPrefix(in.url, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	rawRequest(t, conn, method, u, h, mb60)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(20*time.Second)))
	got, resp := readAnswer(t, bufio.NewReader(conn), method)
	assert.Equal(t, want, got)
	assert.True(t, resp.Close, "Connection: close")
}

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
