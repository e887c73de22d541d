package sandbox

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"time"

	"github.com/dubsim/dubsim/sim/server"
)

// The fence ends the requests a removal finds still in flight after
// Config.DrainWait: their contexts are cancelled, their body reads fail
// (the connection's read deadline is set) and what they answer is dropped.
// The dispatcher answers instead: a 404 saying the sandbox was deleted, or
// a cut connection when the answer had begun (never a complete-looking
// truncated body), so no 500 of a closed store reaches the client.

const eventsPath = "/_sim/events"

var errFenced = errors.New("sandbox: deleted while the request was in flight")

const msgFenced = "sandbox %s was deleted while this request was in flight"

// fenced wraps a request to sb and its writer; done, called once the
// handler has returned, reports whether the fence ended the request before
// its answer began (the caller answers, in iface's envelope when known),
// and cuts the connection when it ended it after.
func (sb *Sandbox) fenced(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request, func() (iface string, ended bool)) {
	ctx, cancel := context.WithCancel(r.Context())
	fw := &fencedWriter{w: w, h: w.Header().Clone(), fence: sb.fence.Done()}
	stop := context.AfterFunc(sb.fence, func() {
		cancel()
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	})
	stopStream := func() bool { return false }
	if r.URL.Path == eventsPath {
		// A stream is no work to wait for: it ends as the sandbox begins to
		// close (fidelity SB7).
		stopStream = context.AfterFunc(sb.closed, cancel)
	}
	r = r.WithContext(ctx)
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = fencedBody{ReadCloser: r.Body, fence: fw.fence}
	}
	return fw, r, func() (string, bool) {
		stop()
		stopStream()
		cancel()
		if !fw.ended() {
			return "", false
		}
		if fw.wrote {
			panic(http.ErrAbortHandler)
		}
		return fw.h.Get(server.HeaderInterface), true
	}
}

// fencedWriter passes an answer through until the fence; its headers are
// its own until the answer begins, so that a dropped answer leaves none.
type fencedWriter struct {
	w     http.ResponseWriter
	h     http.Header
	fence <-chan struct{}
	wrote bool // the status went through
}

func (f *fencedWriter) ended() bool {
	select {
	case <-f.fence:
		return true
	default:
		return false
	}
}

func (f *fencedWriter) Header() http.Header {
	if f.wrote {
		return f.w.Header()
	}
	return f.h
}

func (f *fencedWriter) WriteHeader(code int) {
	if f.wrote || f.ended() {
		return
	}
	dst := f.w.Header()
	clear(dst)
	maps.Copy(dst, f.h)
	f.w.WriteHeader(code)
	if code >= 200 {
		f.wrote = true
	} else {
		f.h = dst.Clone()
	}
}

func (f *fencedWriter) Write(b []byte) (int, error) {
	if !f.wrote {
		f.WriteHeader(http.StatusOK)
	}
	if f.ended() {
		return 0, errFenced
	}
	return f.w.Write(b)
}

func (f *fencedWriter) Flush() {
	if f.wrote && !f.ended() {
		_ = http.NewResponseController(f.w).Flush()
	}
}

func (f *fencedWriter) Unwrap() http.ResponseWriter { return f.w }

type fencedBody struct {
	io.ReadCloser
	fence <-chan struct{}
}

func (b fencedBody) Read(p []byte) (int, error) {
	select {
	case <-b.fence:
		return 0, errFenced
	default:
	}
	return b.ReadCloser.Read(p)
}
