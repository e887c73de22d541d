package server

import (
	"cmp"
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
// largest body any route accepts, so any body a client could mean is read.
const (
	DefaultDrainMaxBytes    = sim.MaxArtifactBytes
	DefaultDrainIdleTimeout = 30 * time.Second
	DefaultDrainTimeout     = 60 * time.Second
)

// heldAnswerLimit is how much of an early answer is held to send it with a
// Content-Length (error bodies are a few hundred bytes); more goes chunked.
const heldAnswerLimit = 16 << 10

// earlyAnswers makes an answer decided before the request body was read (a
// refusal, an injected fault) reach a client that writes its whole body
// before it reads, as Python's urllib does (fidelity X1-X3). net/http alone
// stops reading and closes the connection, and the client sees "connection
// reset by peer" instead of the answer.
//
// answer, just inside the journal, holds such an answer and sends it with a
// Content-Length as soon as the handler returns; drain, the outermost layer,
// then discards the rest of the body within the bounds so the connection
// serves the next request, or closes it. A body never read whose client
// waits for "100 Continue" is not drained: the connection just closes.
type earlyAnswers struct {
	maxBytes int64 // negative: never drain
	idle     time.Duration
	total    time.Duration
	now      func() time.Time // wall clock: a frozen simulated clock must not stop deadlines
}

func newEarlyAnswers(cfg Config) *earlyAnswers {
	e := &earlyAnswers{maxBytes: cmp.Or(cfg.DrainMaxBytes, DefaultDrainMaxBytes), idle: cfg.DrainIdleTimeout, total: cfg.DrainTimeout, now: time.Now}
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

// counted returns a shallow copy of r whose body is counted (nil: none); r
// is left alone, since net/http looks at its body's type (100-continue).
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

// waitsForContinue reports whether the client of r still waits for "100
// Continue" (nothing read, so net/http has not sent it).
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
			// Out of bounds: the rest cannot be told from the next
			// request. net/http closes quietly on this panic.
			panic(http.ErrAbortHandler)
		}
	})
}

// discard reads b to its end within the bounds.
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
			// net/http has read the rest, or will close the connection.
			return true
		case errors.Is(err, os.ErrDeadlineExceeded):
			return false // a time bound: the client is still sending
		case err != nil:
			// The client went away once answered (Go's client may):
			// net/http drops the connection itself.
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

// release sends what is held: the handler streams a long answer or flushes.
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

// finish sends a held answer once the handler has returned; with the body
// unread, full duplex keeps the connection readable for drain, and the read
// deadline bounds the journal's look at the body until drain takes over.
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
	// From here the drain bounds, not the body idle timeout, apply.
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
