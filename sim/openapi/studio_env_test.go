package openapi_test

// The instance and the requests of the studio contract tests
// (studio_test.go).

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/openapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stEnv is an instance whose store can be made to fail or to hold a write.
type stEnv struct {
	*env
	store *stStore
}

// newStudioEnv is newEnv with the store wrapped (and mod applied).
func newStudioEnv(t *testing.T, mod func(*app.Config)) *stEnv {
	t.Helper()
	s := &stStore{}
	e := newEnv(t, func(c *app.Config) {
		s.Store, c.Store = c.Store, s
		if mod != nil {
			mod(c)
		}
	})
	return &stEnv{env: e, store: s}
}

// stStore wraps an instance's store: it can fail every read or every write
// (an I/O failure: dubsim answers 500) and hold the next write until
// released (a request in flight).
type stStore struct {
	sim.Store
	failReads, failWrites atomic.Bool
	hold                  atomic.Pointer[stHold]
}

type stHold struct{ entered, release chan struct{} }

var errStStore = errors.New("injected store failure")

func (s *stStore) View(ctx context.Context, fn func(sim.Tx) error) error {
	if s.failReads.Load() {
		return errStStore
	}
	return s.Store.View(ctx, fn)
}

func (s *stStore) Update(ctx context.Context, fn func(sim.Tx) error) error {
	if err := s.write(); err != nil {
		return err
	}
	return s.Store.Update(ctx, fn)
}

func (s *stStore) Batch(ctx context.Context, fn func(sim.Tx) error) error {
	if err := s.write(); err != nil {
		return err
	}
	return s.Store.Batch(ctx, fn)
}

func (s *stStore) write() error {
	if s.failWrites.Load() {
		return errStStore
	}
	if h := s.hold.Swap(nil); h != nil {
		close(h.entered)
		<-h.release
	}
	return nil
}

// holdNextWrite makes the next write wait; entered is closed when it
// starts waiting, and closing release lets it go on.
func (s *stStore) holdNextWrite() *stHold {
	h := &stHold{entered: make(chan struct{}), release: make(chan struct{})}
	s.hold.Store(h)
	return h
}

// stReq is a studio request with an optional JSON body.
func stReq(method, path, key, body string) req {
	return req{Interface: openapi.Studio, Method: method, Path: path, Key: key, JSON: body}
}

// stWithHeader adds a header to a request.
func stWithHeader(r req, k, v string) req {
	h := map[string]string{k: v}
	for k2, v2 := range r.Header {
		h[k2] = v2
	}
	r.Header = h
	return r
}

// ok sends r and requires a success (200, or 201 for a creation with
// --create-status 201).
func (e *stEnv) ok(r req) resp {
	e.t.Helper()
	res := e.do(r)
	require.Contains(e.t, []int{http.StatusOK, http.StatusCreated}, res.Status, "%s %s: %s", r.Method, r.Path, res.Body)
	return res
}

// artifact creates an artifact and returns its id.
func (e *stEnv) artifact(key, body string) string {
	e.t.Helper()
	return e.ok(stReq("POST", stArtifacts, key, body)).JSON["id"].(string)
}

// readyArtifact creates a 12 s artifact of typ from a fixture media URL and
// lets simulated time run until it is upload_completed.
func (e *stEnv) readyArtifact(key, typ string) string {
	e.t.Helper()
	id := e.artifact(key, `{"name":"Source","type":"`+typ+`","url":"`+stMediaURL+`"}`)
	e.advance(10 * time.Second)
	require.Equal(e.t, sim.ArtifactCompleted, e.ok(stReq("GET", "/api/v1/artifacts/"+id, key, "")).JSON["status"])
	return id
}

// video creates a video in project pid and returns its id.
func (e *stEnv) video(key, pid string) string {
	e.t.Helper()
	return e.ok(stReq("POST", stCreateVideoPath(pid), key, stVideoBody(e.readyArtifact(key, "video")))).JSON["id"].(string)
}

// presign opens an upload slot: its s3Path and the path (with query) of
// its presigned URL on this instance.
func (e *stEnv) presign(key, fileName string) (s3Path, uploadPath string) {
	e.t.Helper()
	r := e.ok(stReq("GET", stArtifacts+"?fileName="+url.QueryEscape(fileName), key, ""))
	u := r.JSON["presignedUploadUrl"].(string)
	require.True(e.t, strings.HasPrefix(u, e.url+"/_uploads/"), u)
	return r.JSON["s3Path"].(string), strings.TrimPrefix(u, e.url)
}

// put PUTs body to a presigned upload path, without a key.
func (e *stEnv) put(uploadPath string, body []byte) resp {
	e.t.Helper()
	return e.do(req{Interface: openapi.Studio, Method: "PUT", Path: uploadPath, Body: body,
		Header: map[string]string{"Content-Type": "application/octet-stream"}})
}

// putAnnounced PUTs to a presigned upload path a request whose
// Content-Length announces contentLength bytes but sends only send (which
// net/http's client cannot do), then checks and records the answer as the
// harness's do does.
func (e *stEnv) putAnnounced(uploadPath string, contentLength int64, send []byte) resp {
	e.t.Helper()
	return e.putRaw(uploadPath, contentLength, send, false)
}

// putRaw is putAnnounced; halfClose closes the connection's sending side
// after send (a client that gave up: the body ends early).
func (e *stEnv) putRaw(uploadPath string, contentLength int64, send []byte, halfClose bool) resp {
	e.t.Helper()
	u, err := url.Parse(e.url + uploadPath)
	require.NoError(e.t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(e.t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nX-Dubsim-Interface: studio\r\nContent-Length: %d\r\n\r\n",
		u.RequestURI(), u.Host, contentLength)
	require.NoError(e.t, err)
	_, err = conn.Write(send)
	require.NoError(e.t, err)
	if halfClose {
		require.NoError(e.t, conn.(*net.TCPConn).CloseWrite())
	}
	hres, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodPut})
	require.NoError(e.t, err)
	raw, err := io.ReadAll(hres.Body)
	hres.Body.Close()
	require.NoError(e.t, err)
	res, err := validators[openapi.Studio].Check("PUT", u.EscapedPath(), hres.StatusCode, hres.Header, raw)
	require.NoError(e.t, err, "PUT %s against the studio document", u.Path)
	_, err = combinedV.Check("PUT", u.EscapedPath(), hres.StatusCode, hres.Header, raw)
	require.NoError(e.t, err, "PUT %s against the combined document", u.Path)
	coverage.Lock()
	if coverage.seen[openapi.Studio] == nil {
		coverage.seen[openapi.Studio] = map[string]bool{}
	}
	coverage.seen[openapi.Studio][res.Method+" "+res.Path+" "+res.Response] = true
	coverage.Unlock()
	return resp{Status: hres.StatusCode, Header: hres.Header, Body: raw, Op: res.Operation}
}

// stList decodes an array answer.
func stList(t *testing.T, r resp) []map[string]any {
	t.Helper()
	var l []map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &l), "%s", r.Body)
	return l
}

// stS3Code returns the Code of an XML error answer.
func stS3Code(t *testing.T, r resp) string {
	t.Helper()
	var e struct {
		XMLName xml.Name `xml:"Error"`
		Code    string   `xml:"Code"`
	}
	require.NoError(t, xml.Unmarshal(r.Body, &e), "%s", r.Body)
	return e.Code
}

// stCase is one scenario on a fresh instance: run sends the requests and
// returns the answer under test.
type stCase struct {
	name   string
	run    func(e *stEnv) resp
	status int
	op     string // the operationId the answer must have matched
	// err is the message of a JSON error answer; check looks at a key field
	// of any other answer.
	err   string
	check func(t *testing.T, r resp)
}

// stRun runs each case as a parallel subtest on its own instance.
func stRun(t *testing.T, cases []stCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := tc.run(newStudioEnv(t, nil))
			require.Equal(t, tc.status, r.Status, "%s", r.Body)
			if tc.op != "" {
				assert.Equal(t, tc.op, r.Op)
			}
			if tc.err != "" {
				assert.Equal(t, map[string]any{"error": tc.err}, r.JSON)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

// stSend returns a run that sends one request.
func stSend(r req) func(*stEnv) resp {
	return func(e *stEnv) resp { return e.do(r) }
}

// stField returns a check of one top-level field of an object answer.
func stField(name string, want any) func(*testing.T, resp) {
	return func(t *testing.T, r resp) {
		t.Helper()
		assert.Equal(t, want, r.JSON[name], "%s", r.Body)
	}
}

// stAuthHint checks the X-Dubsim-Auth-Error header of a key refusal.
func stAuthHint(want string) func(*testing.T, resp) {
	return func(t *testing.T, r resp) {
		t.Helper()
		assert.Equal(t, want, r.Header.Get("X-Dubsim-Auth-Error"))
	}
}

// stReplayed checks that an answer is an idempotent replay.
func stReplayed(t *testing.T, r resp) {
	t.Helper()
	assert.Equal(t, "true", r.Header.Get("Idempotent-Replayed"))
}

// stIdem sends r twice with an Idempotency-Key and returns the replay.
func stIdem(r req) func(*stEnv) resp {
	return func(e *stEnv) resp {
		r := stWithHeader(r, "Idempotency-Key", "retry-1")
		first := e.do(r)
		again := e.do(r)
		assert.Equal(e.t, string(first.Body), string(again.Body), "the replay is the first answer")
		return again
	}
}
