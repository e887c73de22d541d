package faults

import (
	"bytes"
	"cmp"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"unicode"
)

// MaxTruncateBuffer bounds how much of a response the truncate action
// buffers to learn its length when the handler did not set Content-Length;
// a longer one is sent chunked and cut all the same.
const MaxTruncateBuffer = 64 << 20

// errTruncated is what the truncate action's writer returns once the
// handler has written past the cut, so a streaming handler stops early.
var errTruncated = errors.New("faults: response truncated by a fault rule")

// Middleware applies the rules to every request that is not exempt (drop
// and truncate: see the package doc).
func (f *Faults) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.cfg.Exempt != nil && f.cfg.Exempt(r) {
			next.ServeHTTP(w, r)
			return
		}
		id, a, delay, ok := f.pick(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if f.cfg.OnFire != nil {
			f.cfg.OnFire(r, id)
		}
		switch a.Type {
		case ActionLatency:
			if err := f.cfg.Sleep(r.Context(), delay); err != nil {
				return // the client gave up (or the server is shutting down)
			}
			next.ServeHTTP(w, r)
		case ActionError, ActionRateLimit:
			status := a.Status
			if a.Type == ActionRateLimit {
				status = http.StatusTooManyRequests
				w.Header().Set("Retry-After", strconv.FormatInt(a.RetryAfterSeconds, 10))
			}
			name := a.Error
			if name == "" {
				name = DefaultErrorName(status)
			}
			f.writeEnvelope(w, r, status, name, a.message(id))
		case ActionDrop:
			panic(http.ErrAbortHandler)
		case ActionTruncate:
			tw := &truncWriter{w: w, limit: a.Bytes, bufLimit: f.truncBuffer}
			next.ServeHTTP(tw, r)
			tw.finish()
			panic(http.ErrAbortHandler)
		}
	})
}

func (f *Faults) writeEnvelope(w http.ResponseWriter, r *http.Request, status int, name, msg string) {
	ct, body := f.cfg.Envelope(r, status, name, msg)
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// message is the action's message, or a default naming the rule.
func (a Action) message(id string) string {
	if a.Message != "" {
		return a.Message
	}
	if a.Type == ActionRateLimit {
		return "Rate limit exceeded; retry after " + strconv.FormatInt(a.RetryAfterSeconds, 10) + " seconds (injected by dubsim fault rule " + id + ")"
	}
	text := cmp.Or(http.StatusText(a.Status), "Error "+strconv.Itoa(a.Status))
	return text + " (injected by dubsim fault rule " + id + ")"
}

// DefaultErrorName is the error name of an error action without one: the
// platform's name where it differs from the status text (400, 401, 402,
// 429), else the status text in CamelCase ending in "Error" (503
// ServiceUnavailableError), else ClientError or ServerError.
func DefaultErrorName(status int) string {
	if name, ok := platformErrorNames[status]; ok {
		return name
	}
	text := http.StatusText(status)
	if text == "" {
		if status >= 500 {
			return "ServerError"
		}
		return "ClientError"
	}
	var b strings.Builder
	for _, word := range strings.Fields(text) {
		for i, c := range word {
			if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
				continue
			}
			if i == 0 {
				c = unicode.ToUpper(c)
			}
			b.WriteRune(c)
		}
	}
	name := b.String()
	if !strings.HasSuffix(name, "Error") {
		name += "Error"
	}
	return name
}

var platformErrorNames = map[int]string{
	http.StatusBadRequest:      "ValidationError",
	http.StatusUnauthorized:    "UnauthorizedError",
	http.StatusPaymentRequired: "PaymentRequiredError",
	http.StatusTooManyRequests: "RateLimitError",
}

// truncWriter lets the first limit bytes of the body through, under a
// Content-Length that announces the whole body: the handler's own, while
// streaming (writes past the cut fail with errTruncated), or else that of
// the body buffered up to bufLimit.
type truncWriter struct {
	w           http.ResponseWriter
	limit       int64
	bufLimit    int
	status      int
	wroteHeader bool
	streaming   bool // headers sent: bytes go through passThrough
	buf         bytes.Buffer
	sent        int64
}

func (t *truncWriter) Header() http.Header { return t.w.Header() }

func (t *truncWriter) WriteHeader(code int) {
	if t.wroteHeader {
		return
	}
	if code < 200 { // informational answers pass through
		t.w.WriteHeader(code)
		return
	}
	t.wroteHeader, t.status = true, code
	if _, err := strconv.ParseInt(t.w.Header().Get("Content-Length"), 10, 64); err == nil {
		t.streaming = true
		t.w.WriteHeader(code)
	}
}

func (t *truncWriter) Write(p []byte) (int, error) {
	if !t.wroteHeader {
		t.WriteHeader(http.StatusOK)
	}
	if t.streaming {
		return t.passThrough(p)
	}
	if t.buf.Len()+len(p) <= t.bufLimit {
		return t.buf.Write(p)
	}
	// Too long to buffer: send what we have without a length, cut all the same.
	t.streaming = true
	t.w.WriteHeader(t.status)
	if _, err := t.passThrough(t.buf.Bytes()); err != nil {
		return 0, err
	}
	t.buf = bytes.Buffer{}
	return t.passThrough(p)
}

// passThrough writes what is left of the first limit bytes.
func (t *truncWriter) passThrough(p []byte) (int, error) {
	room := t.limit - t.sent
	if room <= 0 {
		return 0, errTruncated
	}
	n, err := t.w.Write(p[:min(int64(len(p)), room)])
	t.sent += int64(n)
	if err == nil && int64(len(p)) > room {
		err = errTruncated
	}
	return n, err
}

// Flush flushes what went through; a buffered body is not flushed early.
func (t *truncWriter) Flush() {
	if t.streaming {
		_ = http.NewResponseController(t.w).Flush()
	}
}

// finish sends a buffered response and flushes, so the bytes before the
// cut reach the client before the connection is aborted.
func (t *truncWriter) finish() {
	if !t.wroteHeader {
		t.WriteHeader(http.StatusOK)
	}
	if !t.streaming {
		t.streaming = true
		t.w.Header().Set("Content-Length", strconv.Itoa(t.buf.Len()))
		t.w.WriteHeader(t.status)
		_, _ = t.passThrough(t.buf.Bytes())
	}
	_ = http.NewResponseController(t.w).Flush()
}
