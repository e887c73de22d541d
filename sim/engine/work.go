package engine

import (
	"context"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// Background work (downloading an artifact's URL parts, probing a source
// video) runs in real time while simulated time may stand still. Its results
// are stamped with the simulated times of the events they stand for, and
// whatever reads a time at which a result is needed waits for the work
// first, so outcomes never depend on how fast the work ran.

// DefaultWorkWait bounds how long a clock advance or a read waits for
// background work that its answer depends on.
const DefaultWorkWait = 30 * time.Second

// Kinds of background work.
const (
	WorkDownload = "download"
	WorkProbe    = "probe"
)

// What a piece of work waits for.
const (
	waitSlot   = "a download slot (%d run at once)"
	waitShared = "a download slot of the process (%d run at once across its simulators)"
	waitHost   = "the host's answer"
	waitBody   = "the rest of the body"
	waitRecord = "the result being recorded"
)

// work is one piece of background work in flight.
type work struct {
	kind     string
	resource string // "artifact" for downloads; "" for probes
	id       string
	url      atomic.Pointer[string]
	started  time.Time // simulated
	// needed is the simulated time from which answers depend on the result
	// (zero: only the request in flight that started it waits).
	needed time.Time
	bytes  atomic.Int64
	state  atomic.Pointer[string]
}

func (w *work) set(state string) { w.state.Store(&state) }

func (w *work) setURL(u string) { w.url.Store(&u) }

// workSet is the registry of background work in flight.
type workSet struct {
	bound time.Duration // Config.WorkWait
	mu    sync.Mutex
	items []*work       // oldest first
	done  chan struct{} // closed (and replaced) whenever a piece of work ends
}

func (s *workSet) add(w *work) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = append(s.items, w)
}

func (s *workSet) remove(w *work) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = slices.DeleteFunc(s.items, func(x *work) bool { return x == w })
	if s.done != nil {
		close(s.done)
		s.done = nil
	}
}

// blocking returns the work a time t depends on (of resource id, if not
// empty) and a channel closed when any work ends.
func (s *workSet) blocking(t time.Time, id string) ([]*work, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ws []*work
	for _, w := range s.items {
		if w.needed.IsZero() || t.Before(w.needed) || (id != "" && w.id != id) {
			continue
		}
		ws = append(ws, w)
	}
	if s.done == nil {
		s.done = make(chan struct{})
	}
	return ws, s.done
}

func (s *workSet) all() []*work {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.items)
}

// waitFor blocks until no work that time t depends on (of resource id, if
// not empty) is left, ctx ends or the bound passes; what still runs then is
// returned as a *sim.PendingError for t.
func (s *workSet) waitFor(ctx context.Context, t time.Time, id string) *sim.PendingError {
	timer := time.NewTimer(s.bound)
	defer timer.Stop()
	for {
		ws, done := s.blocking(t, id)
		if len(ws) == 0 {
			return nil
		}
		select {
		case <-done:
			continue
		case <-timer.C:
		case <-ctx.Done():
		}
		pe := &sim.PendingError{At: t, Waited: s.bound}
		for _, w := range ws {
			pe.Pending = append(pe.Pending, w.info())
		}
		return pe
	}
}

func (w *work) info() sim.Work {
	in := sim.Work{Kind: w.kind, Resource: w.resource, ID: w.id, StartedAt: w.started, NeededAt: w.needed, Bytes: w.bytes.Load()}
	if u := w.url.Load(); u != nil {
		in.URL = *u
	}
	if s := w.state.Load(); s != nil {
		in.WaitingFor = *s
	}
	return in
}

// Work lists the background work in flight, oldest first.
func (e *Clock) Work() []sim.Work {
	ws := e.work.all()
	out := make([]sim.Work, len(ws))
	for i, w := range ws {
		out[i] = w.info()
	}
	return out
}

// countingWriter counts a download's bytes as they arrive.
type countingWriter struct {
	w  *work
	wr io.Writer
}

func (c countingWriter) Write(p []byte) (int, error) {
	if c.w.bytes.Load() == 0 {
		c.w.set(waitBody)
	}
	n, err := c.wr.Write(p)
	c.w.bytes.Add(int64(n))
	return n, err
}
