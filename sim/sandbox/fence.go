package sandbox

import (
	"context"
	"errors"
	"io"
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

// fencedWriter is a request in flight to a sandbox (in Sandbox.requests)
// and its writer, which passes the answer through until the fence.
type fencedWriter struct {
	w      http.ResponseWriter
	fence  <-chan struct{}
	cancel context.CancelFunc // ends the request's context
	stream bool               // an event stream: it ends as the sandbox begins to close (fidelity SB7)
	wrote  bool               // the status went through
}

// end ends the request at the fence (under Sandbox.mu).
func (f *fencedWriter) end() {
	f.cancel()
	_ = http.NewResponseController(f.w).SetReadDeadline(time.Now())
}

// done, called once the handler has returned, reports whether the fence
// ended the request before its answer began (the caller answers, in
// iface's envelope when known, on a writer with no header left), and cuts
// the connection when it ended it after.
func (f *fencedWriter) done() (iface string, ended bool) {
	if !f.ended() {
		return "", false
	}
	if f.wrote {
		panic(http.ErrAbortHandler)
	}
	h := f.w.Header()
	iface = h.Get(server.HeaderInterface)
	clear(h)
	return iface, true
}

func (f *fencedWriter) ended() bool {
	select {
	case <-f.fence:
		return true
	default:
		return false
	}
}

func (f *fencedWriter) Header() http.Header { return f.w.Header() }

func (f *fencedWriter) WriteHeader(code int) {
	if f.wrote || f.ended() {
		return
	}
	f.w.WriteHeader(code)
	f.wrote = code >= 200
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
