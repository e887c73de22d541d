package server_test

// The guard of the black-box runs: it wraps an instance's handler, records
// every 5xx and panic, and collects what is logged at error level.

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dubsim/dubsim/sim/app"
)

// errorLog is a slog.Handler that keeps every record at level Error or
// above: a healthy instance logs none, whatever the client sends.
type errorLog struct {
	mu    *sync.Mutex
	recs  *[]string
	attrs []slog.Attr
}

func newErrorLog() *errorLog { return &errorLog{mu: &sync.Mutex{}, recs: &[]string{}} }

func (h *errorLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }

func (h *errorLog) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q", r.Level, r.Message)
	for _, a := range h.attrs {
		fmt.Fprintf(&b, " %s", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s", a)
		return true
	})
	h.mu.Lock()
	*h.recs = append(*h.recs, b.String())
	h.mu.Unlock()
	return nil
}

func (h *errorLog) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(slices.Clone(h.attrs), as...)
	return &c
}

func (h *errorLog) WithGroup(string) slog.Handler { c := *h; return &c }

func (h *errorLog) records() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(*h.recs)
}

// guard wraps the instance's handler: it turns a panic that escapes the
// handler chain into a test failure (and a 500 rather than a dropped
// connection), fails on any 5xx it sees, also for requests the test did not
// send itself (the media prober fetching a loopback URL of the instance),
// and records the status of each numbered request.
type guard struct {
	t         testing.TB
	mu        sync.Mutex
	seen      map[string]bool
	panics    int
	server5xx []string
}

func newGuard(t testing.TB) *guard { return &guard{t: t, seen: map[string]bool{}} }

// fivexx returns the 5xx answers the handler chain gave.
func (g *guard) fivexx() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.server5xx)
}

// panicCount returns how many panics escaped the handler chain.
func (g *guard) panicCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.panics
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (g *guard) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seq := r.Header.Get(seqHeader)
		if seq != "" {
			g.mu.Lock()
			g.seen[seq] = true
			g.mu.Unlock()
		}
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v != nil {
				g.mu.Lock()
				g.panics++
				g.mu.Unlock()
				if v == http.ErrAbortHandler {
					g.t.Errorf("connection aborted by the handler (a drop or truncate fault fired?) on %s %s", r.Method, r.URL.RequestURI())
				} else {
					g.t.Errorf("PANIC escaped the handler chain on %s %s (seq %s): %v\n%s", r.Method, r.URL.RequestURI(), seq, v, debug.Stack())
				}
				if sw.code == 0 {
					sw.WriteHeader(http.StatusInternalServerError)
				}
			}
			code := sw.code
			if code == 0 {
				code = http.StatusOK
			}
			g.mu.Lock()
			if code >= 500 {
				g.server5xx = append(g.server5xx, fmt.Sprintf("%d on %s %s (seq %q)", code, r.Method, r.URL.RequestURI(), seq))
			}
			g.mu.Unlock()
		}()
		h.ServeHTTP(sw, r)
	})
}

// handled reports whether a numbered request reached the handler chain.
func (g *guard) handled(seq string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen[seq]
}

// guarded starts an instance through the harness, with an error-level log
// recorder, and serves it through a guard on its own httptest server.
func guarded(t *testing.T, mod func(*app.Config)) (*inst, *guard, *errorLog) {
	t.Helper()
	logs := newErrorLog()
	in := start(t, func(c *app.Config) {
		c.Log = slog.New(logs)
		if mod != nil {
			mod(c)
		}
	})
	g := newGuard(t)
	hs := httptest.NewServer(g.wrap(in.srv.Handler))
	t.Cleanup(hs.Close)
	return &inst{t: t, srv: in.srv, url: hs.URL}, g, logs
}
