package server

import (
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// Bounds of the reading of a refused request's body (fidelity X2): the
// largest body any route accepts (a presigned upload), so that every
// refused request a client could have meant is read to its end; no byte
// for DefaultDrainIdleTimeout, or DefaultDrainTimeout in all, ends it.
const (
	DefaultDrainMaxBytes    = sim.MaxArtifactBytes
	DefaultDrainIdleTimeout = 30 * time.Second
	DefaultDrainTimeout     = 60 * time.Second
)

// heldAnswerLimit is how much of an early answer is held back until the
// handler returns, to send it with a Content-Length: error bodies are a few
// hundred bytes. A longer answer goes out as it is written (chunked).
const heldAnswerLimit = 16 << 10

// earlyAnswers makes an answer decided before the request body was read (a
// refusal: 401, 403, 413, a bad presigned URL, an injected fault) reach a
// client that writes its whole body before it reads, as Python's urllib
// does (fidelity X1-X3). net/http alone answers such a request, stops
// reading (beyond 256 KiB of unread body) and closes the connection; the
// kernel then resets the connection on the client's next write, and the
// client reports "connection reset by peer" instead of the answer.
//
// Two layers do it. answer, just inside the journal, holds the status and
// the body of an answer written while the request body is unread, sends
// them with a Content-Length as soon as the handler returns and flushes
// them (the journal then keeps the first bytes of the unread body for its
// report without delaying the answer). drain, the outermost layer, then
// reads and discards the rest of the body within the bounds and lets the
// connection serve the next request; beyond the bounds it closes the
// connection. A request with "Expect: 100-continue" whose body was never
// read is not drained: its client has not sent the body and waits for
// "100 Continue", which reading would send after the answer; the
// connection is closed after the answer, as net/http does.
type earlyAnswers struct {
	maxBytes int64 // negative: never drain
	idle     time.Duration
	total    time.Duration
	// now is the wall clock of the network deadlines (not the simulated
	// clock: a frozen simulated clock must not stop them).
	now func() time.Time
}

func newEarlyAnswers(cfg Config) *earlyAnswers {
	e := &earlyAnswers{maxBytes: cfg.DrainMaxBytes, idle: cfg.DrainIdleTimeout, total: cfg.DrainTimeout, now: time.Now}
	if e.maxBytes == 0 {
		e.maxBytes = DefaultDrainMaxBytes
	}
	if e.idle <= 0 {
		e.idle = DefaultDrainIdleTimeout
	}
	if e.total <= 0 {
		e.total = DefaultDrainTimeout
	}
	return e
}

type countedBody struct {
	io.ReadCloser
	length int64 // Content-Length, -1 when unknown (chunked)
	n      int64
	eof    bool
	failed bool // a read error other than EOF: the connection is unusable
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	switch {
	case err == io.EOF:
		b.eof = true
	case err != nil:
		b.failed = true
	}
	return n, err
}

func (b *countedBody) done() bool { return b.eof || (b.length >= 0 && b.n >= b.length) }

// counted returns a shallow copy of r whose body is counted, or r and nil
// when r has no body. r itself is left alone: net/http looks at the type of
// the body of the request it made (an unread "Expect: 100-continue" body).
func counted(r *http.Request) (*http.Request, *countedBody) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return r, nil
	}
	b := &countedBody{ReadCloser: r.Body, length: r.ContentLength}
	r2 := new(http.Request)
	*r2 = *r
	r2.Body = b
	return r2, b
}

// waitsForContinue reports whether the client of r waits for "100
// Continue" before it sends the body: nothing of it was read, so net/http
// has not sent it.
func waitsForContinue(r *http.Request, b *countedBody) bool {
	return b.n == 0 && !b.eof && strings.EqualFold(strings.TrimSpace(r.Header.Get("Expect")), "100-continue")
}

func (e *earlyAnswers) willDrain(r *http.Request, b *countedBody) bool {
	if e.maxBytes < 0 || b.done() || b.failed || waitsForContinue(r, b) {
		return false
	}
	return b.length < 0 || b.length-b.n <= e.maxBytes
}

var drainBuffers = sync.Pool{New: func() any { return new([64 << 10]byte) }}

func (e *earlyAnswers) drain(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, b := counted(r)
		next.ServeHTTP(w, r)
		if b == nil || !e.willDrain(r, b) {
			return
		}
		rc := http.NewResponseController(w)
		_ = rc.Flush() // normally done by answer already
		if !e.discard(rc, b) {
			// Out of bounds: what is left on the connection cannot be
			// told from the next request. Close it (net/http does so
			// quietly for this panic).
			panic(http.ErrAbortHandler)
		}
	})
}

// discard reads b to its end; it gives up past the size bound, when no
// byte arrives for the idle bound, or past the total bound.
func (e *earlyAnswers) discard(rc *http.ResponseController, b *countedBody) bool {
	buf := drainBuffers.Get().(*[64 << 10]byte)
	defer drainBuffers.Put(buf)
	end := e.now().Add(e.total)
	start := b.n
	for {
		deadline := e.now().Add(e.idle)
		if deadline.After(end) {
			deadline = end
		}
		if err := rc.SetReadDeadline(deadline); err != nil {
			return false
		}
		_, err := b.Read(buf[:])
		if b.n-start > e.maxBytes {
			return false
		}
		switch {
		case err == io.EOF:
			return true
		case errors.Is(err, http.ErrBodyReadAfterClose):
			// The handler closed the body: net/http has read what is
			// left, or will close the connection.
			return true
		case errors.Is(err, os.ErrDeadlineExceeded):
			return false // a time bound: the client is still sending
		case err != nil:
			// The client went away (it closed the connection once the
			// answer arrived, as Go's client may): nothing is left to
			// read, and net/http drops the broken connection itself.
			return true
		}
	}
}

func (e *earlyAnswers) answer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, b := counted(r)
		if b == nil {
			next.ServeHTTP(w, r)
			return
		}
		ew := &earlyWriter{ResponseWriter: w, e: e, r: r, body: b}
		next.ServeHTTP(ew, r)
		ew.finish()
	})
}

// earlyWriter holds an answer written while the request body is unread.
type earlyWriter struct {
	http.ResponseWriter
	e           *earlyAnswers
	r           *http.Request
	body        *countedBody
	status      int
	wroteHeader bool
	holding     bool // the status and buf wait for the handler to return
	buf         []byte
}

func (w *earlyWriter) WriteHeader(code int) {
	if w.wroteHeader {
		if !w.holding {
			w.ResponseWriter.WriteHeader(code) // net/http logs the superfluous call
		}
		return
	}
	if code < http.StatusOK { // informational answers pass through
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.wroteHeader, w.status = true, code
	if w.body.done() || w.r.Method == http.MethodHead || code == http.StatusNoContent || code == http.StatusNotModified {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.holding = true
}

func (w *earlyWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.holding {
		if len(w.buf)+len(p) <= heldAnswerLimit {
			w.buf = append(w.buf, p...)
			return len(p), nil
		}
		if err := w.release(); err != nil {
			return 0, err
		}
	}
	return w.ResponseWriter.Write(p)
}

// release sends what is held as it is: the handler streams a long answer
// or flushes.
func (w *earlyWriter) release() error {
	w.holding = false
	w.ResponseWriter.WriteHeader(w.status)
	buf := w.buf
	w.buf = nil
	if len(buf) == 0 {
		return nil
	}
	_, err := w.ResponseWriter.Write(buf)
	return err
}

// FlushError lets a handler's Flush through, held bytes first.
func (w *earlyWriter) FlushError() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.holding {
		if err := w.release(); err != nil {
			return err
		}
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *earlyWriter) Flush() { _ = w.FlushError() }

func (w *earlyWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish sends a held answer once the handler has returned. When the body
// is still unread, the answer goes out at once, with its length, and the
// connection stays readable for drain (full duplex); the read deadline
// bounds the journal's look at the body until drain takes over.
func (w *earlyWriter) finish() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK) // what net/http does for a handler that wrote nothing
	}
	if !w.holding {
		return
	}
	h := w.Header()
	if h.Get("Content-Length") == "" {
		h.Set("Content-Length", strconv.Itoa(len(w.buf)))
	}
	if w.body.done() {
		_ = w.release()
		return
	}
	rc := http.NewResponseController(w.ResponseWriter)
	// From here the early answers bound the reading of the rest of the
	// body (the journal's look, then drain), not the body idle timeout.
	httpx.ReleaseBodyDeadline(w.r)
	waits := waitsForContinue(w.r, w.body)
	if !waits && !w.body.failed {
		if rc.EnableFullDuplex() == nil && !w.e.willDrain(w.r, w.body) {
			// Too much left to read: the connection ends with the answer.
			h.Set("Connection", "close")
		}
	}
	if w.release() != nil {
		return
	}
	_ = rc.Flush()
	if !waits && !w.body.failed {
		_ = rc.SetReadDeadline(w.e.now().Add(w.e.idle))
	}
}
