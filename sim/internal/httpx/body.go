package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// BodyError is a request body that did not arrive, the client's doing: no
// byte came for the idle timeout (Timeout), it came slower than the minimum
// rate (Slow too), or it ended before its declared length or last chunk.
// Error is for the log (it names network addresses), Message for the client.
type BodyError struct {
	Err     error
	Timeout bool
	Slow    bool
	Idle    time.Duration // the idle timeout, and the rate's grace
	MinRate int64         // bytes per second
	Elapsed time.Duration // since the first read of the body, when Slow
	Read    int64
	Length  int64 // the declared Content-Length, -1 when chunked
}

func (e *BodyError) Error() string {
	return fmt.Sprintf("request body not received (%d bytes read): %v", e.Read, e.Err)
}

func (e *BodyError) Unwrap() error { return e.Err }

// Message words e for the client.
func (e *BodyError) Message() string {
	switch {
	case e.Slow:
		return fmt.Sprintf(MsgBodySlow, e.Read, e.Elapsed.Round(time.Second), e.MinRate, e.Idle)
	case e.Timeout:
		return fmt.Sprintf(MsgBodyStalled, e.Idle, e.Read)
	case e.Length >= 0:
		return fmt.Sprintf(MsgBodyIncomplete, e.Read, e.Length)
	default:
		return fmt.Sprintf(MsgBodyIncompleteChunked, e.Read)
	}
}

// IsNoSpace reports whether err is the disk being full.
func IsNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC)
}

// BodyFailure words a failure to read or keep a request body, blaming the
// right side: a *BodyError (the client's) is a validation error (400), a
// full disk (the simulator's) an internal error (500) saying so; nil for
// other errors. Neither names a network address or a file path.
func BodyFailure(err error) error {
	var be *BodyError
	switch {
	case errors.As(err, &be):
		return sim.Errorf(sim.CodeValidation, "%s", be.Message())
	case IsNoSpace(err):
		return sim.Errorf(sim.CodeInternal, MsgNoSpace)
	}
	return nil
}

// IdleBody makes the reading of request bodies end when no byte arrives
// for idle (fidelity HW1), instead of a whole-request timeout that cuts a
// long upload at any rate: each read moves the connection's read deadline
// to now+idle, and the end of the body clears it (a deadline left would
// turn the client closing the connection into a cancelled request).
// minRate > 0 also bounds a body that keeps arriving too slowly (HW5, as
// Apache's mod_reqtimeout MinRate): after a grace of idle, every byte buys
// 1/minRate seconds. A body that does not arrive fails with a *BodyError,
// logged at INFO; idle <= 0 sets no deadline but still words the failures.
func IdleBody(idle time.Duration, minRate int64, log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		b := &idleBody{ReadCloser: r.Body, w: w, rc: http.NewResponseController(w), idle: idle, minRate: minRate, length: r.ContentLength, log: log, r: r}
		// net/http cancels the request's context when a read of the
		// connection fails, so the handler could not answer a body that
		// stopped arriving: its context ends with the request's unless a
		// body read is what failed.
		ctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(r.Context()), idleBodyKey{}, b))
		b.cancel = cancel
		stop := context.AfterFunc(r.Context(), b.parentDone)
		defer stop()
		defer cancel()
		r2 := r.WithContext(ctx)
		r2.Body = b
		next.ServeHTTP(w, r2)
	})
}

type idleBodyKey struct{}

// ReleaseBodyDeadline stops IdleBody from moving the read deadline of r's
// connection: the caller bounds the rest of the reading itself.
func ReleaseBodyDeadline(r *http.Request) {
	if b, ok := r.Context().Value(idleBodyKey{}).(*idleBody); ok {
		b.mu.Lock()
		b.released = true
		b.mu.Unlock()
	}
}

func (b *idleBody) parentDone() {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.reading:
		b.cancelled = true // the read decides
	case b.failed == nil:
		b.cancel()
	}
}

type idleBody struct {
	io.ReadCloser
	w      http.ResponseWriter
	rc     *http.ResponseController
	cancel context.CancelFunc

	mu        sync.Mutex
	reading   bool // a Read of the body is in progress
	cancelled bool // the request's context was cancelled during it
	released  bool // ReleaseBodyDeadline: the deadline is not ours to move

	idle    time.Duration
	minRate int64
	start   time.Time // the first read, when minRate > 0
	slow    bool      // the deadline set is the rate's
	length  int64
	n       int64
	ended   bool
	failed  *BodyError
	log     *slog.Logger
	r       *http.Request
}

func (b *idleBody) Read(p []byte) (int, error) {
	if b.failed != nil {
		return 0, b.failed
	}
	b.mu.Lock()
	b.reading = true
	if b.idle > 0 && !b.ended && !b.released {
		_ = b.rc.SetReadDeadline(b.deadline(time.Now()))
	}
	b.mu.Unlock()
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reading = false
	b.n += int64(n)
	switch {
	case err == nil:
	case err == io.EOF:
		if !b.ended {
			b.ended = true
			if b.idle > 0 && !b.released {
				_ = b.rc.SetReadDeadline(time.Time{})
			}
		}
	case errors.Is(err, http.ErrBodyReadAfterClose):
	default:
		var ne interface{ Timeout() bool }
		be := &BodyError{Err: err, Read: b.n, Length: b.length, Idle: b.idle}
		be.Timeout = errors.As(err, &ne) && ne.Timeout()
		if be.Timeout && b.slow {
			be.Slow, be.MinRate, be.Elapsed = true, b.minRate, time.Since(b.start)
		}
		b.failed = be
		// The rest of the body cannot be told from a next request.
		b.w.Header().Set("Connection", "close")
		if b.log != nil {
			b.log.Info("request body not received", "method", b.r.Method, "path", b.r.URL.Path,
				"read", b.n, "declared", b.length, "timeout", be.Timeout, "slow", be.Slow, "err", err)
		}
		return n, be
	}
	if b.cancelled {
		b.cancel()
	}
	return n, err
}

// deadline is the read deadline of a read starting at now: now+idle, or
// the earlier start+idle+n/minRate (b.slow then says so). b.mu is held.
func (b *idleBody) deadline(now time.Time) time.Time {
	d := now.Add(b.idle)
	b.slow = false
	if b.minRate <= 0 {
		return d
	}
	if b.start.IsZero() {
		b.start = now
	}
	owed := time.Duration(float64(b.n) / float64(b.minRate) * float64(time.Second))
	if r := b.start.Add(b.idle + owed); r.Before(d) {
		d, b.slow = r, true
	}
	return d
}
