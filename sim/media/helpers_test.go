package media

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/audio"
)

// Durations of the small media served in tests.
const (
	smallWAVDuration = 3250 * time.Millisecond
	smallMOVDuration = 7500 * time.Millisecond
)

func wavTrack(d time.Duration) audio.Track {
	return audio.Track{SampleRate: 22050, Duration: d}
}

// wavBytes is the complete WAV file of a track of duration d.
func wavBytes(t *testing.T, d time.Duration) []byte {
	t.Helper()
	b, err := io.ReadAll(audio.NewWAVReader(wavTrack(d)))
	require.NoError(t, err)
	return b
}

// movBytes is the complete QuickTime movie of a track of duration d.
func movBytes(t *testing.T, d time.Duration) []byte {
	t.Helper()
	b, err := io.ReadAll(audio.NewMOVReader(wavTrack(d)))
	require.NoError(t, err)
	return b
}

// serveReader serves a fresh ReadSeeker per request with http.ServeContent,
// so Range requests are honoured.
func serveReader(newReader func() io.ReadSeeker) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "", time.Time{}, newReader())
	})
}

// serveBytes serves b with Range support.
func serveBytes(b []byte) http.Handler {
	return serveReader(func() io.ReadSeeker { return bytes.NewReader(b) })
}

// serveIgnoringRange answers every GET with 200 and the whole body, as a
// server without Range support does. withLength controls whether a
// Content-Length is sent (without it, large bodies are chunked).
func serveIgnoringRange(b []byte, withLength bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		if withLength {
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		}
		w.WriteHeader(http.StatusOK)
		_, _ = io.Copy(w, bytes.NewReader(b))
	})
}

// counter wraps a handler and counts the requests it receives and the body
// bytes it sends.
type counter struct {
	h        http.Handler
	requests atomic.Int64
	bytes    atomic.Int64
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.requests.Add(1)
	c.h.ServeHTTP(&countingWriter{ResponseWriter: w, n: &c.bytes}, r)
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n.Add(int64(n))
	return n, err
}

func (w *countingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// newServer starts an httptest server running h behind a counter.
func newServer(t *testing.T, h http.Handler) (*httptest.Server, *counter) {
	t.Helper()
	c := &counter{h: h}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return srv, c
}

// routeTransport is an http.RoundTripper that never touches the network for
// remote hosts: requests to a host listed in mem are answered in memory by
// its handler, requests to loopback hosts go to loopback (the httptest
// servers), and any other request fails the test.
type routeTransport struct {
	t        *testing.T
	mem      map[string]http.Handler // by URL host (with port when given)
	loopback http.RoundTripper       // nil: loopback is not expected either

	mu   sync.Mutex
	seen []string // URL hosts, in request order
}

func (rt *routeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rt.mu.Lock()
	rt.seen = append(rt.seen, req.URL.Host)
	rt.mu.Unlock()
	if h, ok := rt.mem[req.URL.Host]; ok {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		resp := rec.Result()
		resp.Request = req
		return resp, nil
	}
	if rt.loopback != nil && IsLoopback(req.URL.Hostname()) {
		return rt.loopback.RoundTrip(req)
	}
	rt.t.Errorf("the transport was asked for %s, a host that must never be contacted", req.URL)
	return nil, errors.New("test transport: host must not be contacted")
}

func (rt *routeTransport) hosts() []string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return append([]string(nil), rt.seen...)
}

// noContactClient is a client whose transport fails the test when called.
func noContactClient(t *testing.T) (*http.Client, *routeTransport) {
	rt := &routeTransport{t: t}
	return &http.Client{Transport: rt}, rt
}

// requireVideoInfo asserts err is a *sim.Error of code CodeVideoInfo and
// returns its message.
func requireVideoInfo(t *testing.T, err error) string {
	t.Helper()
	require.Error(t, err)
	var se *sim.Error
	require.ErrorAs(t, err, &se, "want a *sim.Error, got %T: %v", err, err)
	assert.Equal(t, sim.CodeVideoInfo, se.Code, "error %q", se.Message)
	return se.Message
}

// assertDuration checks got is want within 1 ms.
func assertDuration(t *testing.T, want, got time.Duration) {
	t.Helper()
	assert.InDelta(t, float64(want), float64(got), float64(time.Millisecond), "duration %v, want %v", got, want)
}
