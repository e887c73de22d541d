package journal

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// annotations is what Middleware puts in a request's context, for the
// handlers further in to annotate the entry.
type annotations struct {
	mu      sync.Mutex
	fault   string
	notes   map[string]string
	observe func(Entry) // Observe's
}

func annotationsFrom(ctx context.Context) *annotations {
	a, _ := httpx.JournalFrom(ctx).(*annotations)
	return a
}

// SetFault records on the request's entry the id of the fault rule applied
// to it, if ctx comes from Middleware.
func SetFault(ctx context.Context, ruleID string) {
	if a := annotationsFrom(ctx); a != nil {
		a.mu.Lock()
		a.fault = clip(ruleID, maxNoteValue)
		a.mu.Unlock()
	}
}

// SetNote records an annotation on the request's entry, if ctx comes from
// Middleware: at most maxNotes keys, each clipped.
func SetNote(ctx context.Context, key, value string) {
	a := annotationsFrom(ctx)
	if a == nil {
		return
	}
	key, value = clip(key, maxNoteKey), clip(value, maxNoteValue)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.notes == nil {
		a.notes = map[string]string{}
	}
	if _, ok := a.notes[key]; ok || len(a.notes) < maxNotes {
		a.notes[key] = value
	}
}

// NotePanic is the note of a panic other than http.ErrAbortHandler.
const NotePanic = "panic"

// Middleware records every request that passes through it but those
// isOwnEndpoint and Config.Unrecorded name. A panicking handler is recorded
// as aborted (status 0) and the panic goes on.
func (j *Journal) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		iface, routedBy := InterfaceOther, ""
		if j.cfg.Route != nil {
			iface, routedBy = j.cfg.Route(r)
		}
		if isOwnEndpoint(r.Method, r.URL.Path, iface) || (j.cfg.Unrecorded != nil && j.cfg.Unrecorded(r)) {
			next.ServeHTTP(w, r)
			return
		}
		key, _ := httpx.Bearer(r.Header.Get("Authorization"))
		e := Entry{
			Time:     j.cfg.Now(),
			Method:   method(r.Method),
			Path:     clip(r.URL.Path, maxURLPart),
			RawQuery: clip(r.URL.RawQuery, maxURLPart),
			APIKey:   clip(key, maxHeaderValue),
		}
		e.Interface, e.RoutedBy = iface, routedBy
		if j.cfg.SimNow != nil {
			e.SimTime = j.cfg.SimNow()
		}
		e.Headers = map[string]string{}
		for _, h := range requestHeaders {
			if v := r.Header.Get(h); v != "" {
				e.Headers[h] = clip(v, maxHeaderValue)
			}
		}
		if _, ok := e.Headers[HeaderContentLength]; !ok && r.ContentLength > 0 {
			e.Headers[HeaderContentLength] = strconv.FormatInt(r.ContentLength, 10)
		}

		ann := &annotations{}
		ann.observe, _ = r.Context().Value(observerKey{}).(func(Entry))
		if ctx := httpx.WithJournal(r.Context(), ann); ctx != r.Context() {
			r = r.WithContext(ctx)
		}
		var body *teeBody
		if r.Body != nil && r.Body != http.NoBody {
			body = &teeBody{rc: r.Body, max: j.cfg.MaxBody, hint: r.ContentLength, buf: capture{limit: j.cfg.MaxBody}}
			r.Body = body
		}
		rec := &recorder{ResponseWriter: w, body: capture{limit: j.cfg.MaxBody}, declared: -1}

		done := false
		defer func() {
			if done {
				return
			}
			v := recover()
			if v == nil {
				return // runtime.Goexit: nothing to record or re-raise
			}
			e.Status, e.Aborted = 0, true
			if v != http.ErrAbortHandler {
				SetNote(r.Context(), NotePanic, fmt.Sprint(v))
			}
			j.finish(&e, rec, body, ann)
			panic(v)
		}()
		next.ServeHTTP(rec, r)
		done = true

		if body != nil && !strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
			// Keep what the handler left unread (a request refused before
			// its body was read), so that the report can compare bodies;
			// a client that expects 100-continue may not send it.
			body.fill()
		}
		rec.finalize()
		e.Status = rec.status
		j.finish(&e, rec, body, ann)
	})
}

// finish completes e from the recorders and stores it.
func (j *Journal) finish(e *Entry, rec *recorder, body *teeBody, ann *annotations) {
	e.Duration = j.cfg.Now().Sub(e.Time)
	if body != nil {
		kept := int64(body.buf.len())
		e.RequestBody = body.buf.String()
		e.RequestBodySize = body.n
		e.RequestBodyTruncated = body.n > kept || body.hint > kept || (!body.eof && kept == int64(body.max))
	}
	for _, h := range responseHeaders {
		if v := rec.headers[h]; v != "" { // nil before the status was written
			e.Headers[h] = clip(v, maxHeaderValue)
		}
	}
	e.ResponseBytes = rec.bytes
	e.ResponseBody = rec.body.String()
	e.ResponseBodyTruncated = rec.capture && rec.bytes > int64(rec.body.len())
	e.Truncated = rec.declared >= 0 && rec.bytes < rec.declared
	ann.mu.Lock()
	e.Fault = ann.fault
	if len(ann.notes) > 0 {
		e.Notes = maps.Clone(ann.notes) // a handler's goroutine may still add notes
	}
	ann.mu.Unlock()
	e.Seq = j.add(*e)
	if ann.observe != nil {
		ann.observe(*e)
	}
}

type observerKey struct{}

// Observe returns a context in which Middleware hands the request's entry
// to fn once it is recorded (the access log reads it instead of working
// it out again). fn must not change the entry's maps.
func Observe(ctx context.Context, fn func(Entry)) context.Context {
	return context.WithValue(ctx, observerKey{}, fn)
}

// Reason says why an answer refused its request (errorMessage, clipped);
// "" for a status below 400.
func (e Entry) Reason() string {
	if e.Status < http.StatusBadRequest {
		return ""
	}
	return excerpt(errorMessage(&e), 200)
}

// method returns r.Method as the journal keeps it: the program's constant
// for a method of HTTP, else a clipped copy (net/http's is a substring of
// the request line, which it would keep alive whole).
func method(m string) string {
	if i := slices.Index(knownMethods, m); i >= 0 {
		return knownMethods[i]
	}
	return clip(m, maxMethod)
}

var knownMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace}

// teeBody passes the request body to the handler and keeps its first max
// bytes.
type teeBody struct {
	rc   io.ReadCloser
	max  int
	hint int64 // Content-Length, or -1
	buf  capture
	n    int64
	eof  bool
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	t.keep(p[:n])
	if err == io.EOF {
		t.eof = true
	}
	return n, err
}

func (t *teeBody) Close() error { return t.rc.Close() }

func (t *teeBody) keep(p []byte) {
	t.n += int64(len(p))
	t.buf.write(p, t.hint)
}

// capture keeps the first limit bytes written to it. It never allocates
// more than limit bytes, and when the size is known up front (a
// Content-Length) the kept bytes become the entry's string without a copy.
type capture struct {
	b     *strings.Builder
	limit int
}

// write keeps what fits of p; hint is the expected total size, or -1.
func (c *capture) write(p []byte, hint int64) {
	have := c.len()
	room := c.limit - have
	if room <= 0 || len(p) == 0 {
		return
	}
	p = p[:min(len(p), room)]
	if c.b == nil || have+len(p) > c.b.Cap() {
		n := have + len(p)
		if c.b != nil {
			n = max(n, 2*c.b.Cap())
		}
		if hint > int64(n) {
			n = int(min(hint, int64(c.limit)))
		}
		nb := &strings.Builder{}
		nb.Grow(min(n, c.limit))
		if c.b != nil {
			nb.WriteString(c.b.String())
		}
		c.b = nb
	}
	c.b.Write(p)
}

func (c *capture) len() int {
	if c.b == nil {
		return 0
	}
	return c.b.Len()
}

// String returns the kept bytes, copied only when the buffer has slack.
func (c *capture) String() string {
	if c.b == nil {
		return ""
	}
	s := c.b.String()
	if c.b.Cap()-len(s) > len(s)/8 {
		return strings.Clone(s)
	}
	return s
}

// fill reads what the handler left of the body until max bytes are kept.
func (t *teeBody) fill() {
	var scratch [512]byte
	for !t.eof && t.buf.len() < t.max {
		n, err := t.rc.Read(scratch[:min(len(scratch), t.max-t.buf.len())])
		t.keep(scratch[:n])
		if err != nil {
			t.eof = err == io.EOF
			return
		}
	}
}

// recorder observes the response: status, size, the headers of interest
// and, for status >= 400, the body.
type recorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	capture     bool // status >= 400: keep the body
	body        capture
	bytes       int64
	declared    int64 // Content-Length of the response, -1 if none
	headers     map[string]string
}

func (w *recorder) WriteHeader(code int) {
	if !w.wroteHeader && (code < 100 || code >= 200 || code == http.StatusSwitchingProtocols) {
		w.snapshot(code) // the final status: informational answers come before it
	}
	w.ResponseWriter.WriteHeader(code)
}

// snapshot takes the status and the headers as they are sent.
func (w *recorder) snapshot(code int) {
	w.wroteHeader, w.status, w.capture = true, code, code >= http.StatusBadRequest
	h := w.Header()
	w.headers = map[string]string{}
	for _, name := range responseHeaders {
		if v := h.Get(name); v != "" {
			w.headers[name] = v
		}
	}
	if cl, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64); err == nil && cl >= 0 &&
		code != http.StatusNoContent && code != http.StatusNotModified {
		w.declared = cl
	}
}

func (w *recorder) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	if w.capture && n > 0 {
		w.body.write(p[:n], w.declared)
	}
	return n, err
}

func (w *recorder) Flush() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finalize sets what net/http does for a handler that wrote nothing: 200.
func (w *recorder) finalize() {
	if !w.wroteHeader {
		w.snapshot(http.StatusOK)
		w.declared = -1
	}
}
