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

// Background work is what the simulator does in real time while simulated
// time may stand still: downloading the URL parts of an artifact, probing a
// source video for a creation in flight. Its results are stamped with the
// simulated times of the events they stand for (an artifact completes at
// start + processing time), and whatever reads a time at which a result is
// needed waits for the work first (a clock advance, a read of the
// artifact), so outcomes never depend on how fast the work ran.

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
	resource string                 // "artifact" for downloads; "" for probes
	id       string                 // the resource id
	url      atomic.Pointer[string] // the URL being fetched
	started  time.Time              // simulated time it started
	// needed is the simulated time from which answers depend on the result
	// (zero: nothing waits for it; a probe belongs to a request in flight).
	needed time.Time
	bytes  atomic.Int64
	state  atomic.Pointer[string]
}

func (w *work) set(state string) { w.state.Store(&state) }

func (w *work) setURL(u string) { w.url.Store(&u) }

// workSet is the registry of background work in flight.
type workSet struct {
	// bound is how long an advance or a read waits for the work its
	// answer depends on (Config.WorkWait).
	bound time.Duration
	mu    sync.Mutex
	items []*work // oldest first
	// done is closed (and replaced) whenever a piece of work ends.
	done chan struct{}
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

// blocking returns the work a time t depends on (of one resource when id is
// not empty), oldest first, and a channel closed when any work ends.
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

// wait blocks until no work that time t depends on (of resource id, or of
// any resource) is left, ctx ends or the bound passes; it returns what is
// still running then.
func (s *workSet) wait(ctx context.Context, t time.Time, id string, bound time.Duration) []*work {
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		ws, done := s.blocking(t, id)
		if len(ws) == 0 {
			return nil
		}
		select {
		case <-done:
		case <-timer.C:
			return ws
		case <-ctx.Done():
			return ws
		}
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

// waitFor waits for the background work time t depends on (of artifact
// id, or all with id ""); see wait. Work still running after the bound is
// returned as a *sim.PendingError for t.
func (s *workSet) waitFor(ctx context.Context, t time.Time, id string) *sim.PendingError {
	ws := s.wait(ctx, t, id, s.bound)
	if len(ws) == 0 {
		return nil
	}
	pe := &sim.PendingError{At: t, Waited: s.bound}
	for _, w := range ws {
		pe.Pending = append(pe.Pending, w.info())
	}
	return pe
}

// countingWriter counts the bytes of a download as they arrive.
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
