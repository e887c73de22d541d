package httpx

import (
	"context"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Turns is the process-wide bound on requests whose handlers run at once
// (docs/design/tenancy.md, "Running requests"): every client is a closed
// loop, so what bounds one tenant's part of a busy process is how many of
// its requests run. When every place is taken, a place given back goes to
// the waiting tenants in turn, first come first served within each. A
// tenant alone runs as many as it sends: the places bound what tenants
// take from each other, not what one takes from an idle process.
//
// A request keeps its place for at most TurnsHold: one that runs longer
// waits on something other than the processors, and runs on without a
// place, so that none can wait for another that waits for a place.
//
// A nil *Turns is no bound: every request runs at once.
type Turns struct {
	mu   sync.Mutex
	busy int           // places taken; more than size while a tenant is alone
	ring []*TurnTenant // tenants with waiting requests, in turn order
	size int
	// unattributed is the tenant of requests whose key has not
	// authenticated: one for the process.
	unattributed *TurnTenant
	// after calls f once d has passed, unless the returned stop is
	// called first and reports true (time.AfterFunc; tests replace it).
	after func(d time.Duration, f func()) (stop func() bool)
}

// TurnsHold is how long a request keeps its place at most: many times
// what a request of the interfaces takes on a processor (a few
// milliseconds at most, a sandbox creation about ten).
const TurnsHold = 100 * time.Millisecond

// DefaultTurns is the places of a process: one per processor. More would
// let a tenant that sends many share the processors with the others'
// requests (docs/design/tenancy.md, "Where the victims' time goes").
func DefaultTurns() int { return runtime.GOMAXPROCS(0) }

// NewTurns returns n places (nil, no bound, when n <= 0).
func NewTurns(n int) *Turns {
	if n <= 0 {
		return nil
	}
	t := &Turns{size: n, after: func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }}
	t.unattributed = t.Tenant()
	return t
}

// Tenant returns a new tenant of t (nil for no bound).
func (t *Turns) Tenant() *TurnTenant {
	if t == nil {
		return nil
	}
	return &TurnTenant{t: t}
}

// TurnTenant is one tenant's queue for the places of a Turns: the default
// simulator, a sandbox, or the process's requests not yet attributed. A
// nil *TurnTenant runs every request at once.
type TurnTenant struct {
	t       *Turns
	waiting []*turnWaiter // first come first served
	inRing  bool
	running int // places it holds
}

// Unattributed is the tenant, shared by the whole process, of requests
// whose key does not authenticate (nil for no bound).
func (tn *TurnTenant) Unattributed() *TurnTenant {
	if tn == nil {
		return nil
	}
	return tn.t.unattributed
}

type turnWaiter struct {
	ready   chan struct{}
	granted bool
}

// enter takes a place if no tenant waits and one is free or the tenant
// is alone (nil), else queues a waiter behind the tenant's others.
func (tn *TurnTenant) enter() *turnWaiter {
	t := tn.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.ring) == 0 && (t.busy < t.size || tn.running == t.busy) {
		t.busy++
		tn.running++
		return nil
	}
	w := &turnWaiter{ready: make(chan struct{})}
	tn.waiting = append(tn.waiting, w)
	if !tn.inRing {
		tn.inRing = true
		t.ring = append(t.ring, tn)
	}
	return w
}

// cancel takes w out of its queue; if it was given a place meanwhile, the
// place goes back.
func (tn *TurnTenant) cancel(w *turnWaiter) {
	t := tn.t
	t.mu.Lock()
	if w.granted {
		t.mu.Unlock()
		tn.leave()
		return
	}
	defer t.mu.Unlock()
	tn.waiting = slices.DeleteFunc(tn.waiting, func(o *turnWaiter) bool { return o == w })
	if len(tn.waiting) == 0 && tn.inRing {
		tn.inRing = false
		t.ring = slices.DeleteFunc(t.ring, func(o *TurnTenant) bool { return o == tn })
	}
}

// leave gives one of tn's places back. While fewer than size are taken,
// a free place goes to the first waiter of the next tenant in turn, which
// goes to the end of the ring if more of its requests wait.
func (tn *TurnTenant) leave() {
	t := tn.t
	t.mu.Lock()
	defer t.mu.Unlock()
	t.busy--
	tn.running--
	for t.busy < t.size && len(t.ring) > 0 {
		next := t.ring[0]
		t.ring = t.ring[1:]
		w := next.waiting[0]
		next.waiting = next.waiting[1:]
		if len(next.waiting) > 0 {
			t.ring = append(t.ring, next)
		} else {
			next.inRing = false
		}
		t.busy++
		next.running++
		w.granted = true
		close(w.ready)
	}
}

// Enter waits for a place, or for ctx to end (its error is returned,
// holding nothing). leave gives the place back; past Hold the place is
// given back by itself, and leave then does nothing.
func (tn *TurnTenant) Enter(ctx context.Context) (leave func(), err error) {
	if tn == nil {
		return func() {}, nil
	}
	if w := tn.enter(); w != nil {
		select {
		case <-w.ready:
		case <-ctx.Done():
			tn.cancel(w)
			return nil, ctx.Err()
		}
	}
	var held atomic.Bool
	held.Store(true)
	give := func() {
		if held.CompareAndSwap(true, false) {
			tn.leave()
		}
	}
	stop := tn.t.after(TurnsHold, give)
	return func() {
		stop()
		give()
	}, nil
}

// turnLease is the place a request served by Serve holds (none while it
// stands aside).
type turnLease struct {
	tn    *TurnTenant
	mu    sync.Mutex
	leave func()
}

type turnLeaseKey struct{}

// Serve runs next once the request has a place. A request whose client
// goes away while it waits gets no answer.
func (tn *TurnTenant) Serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	leave, err := tn.Enter(r.Context())
	if err != nil {
		return
	}
	l := &turnLease{tn: tn, leave: leave}
	defer func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.leave()
	}()
	next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), turnLeaseKey{}, l)))
}

// StandAside gives back the place the request of ctx holds while it waits
// for another bound (a sandbox creation's turn), so that waiting there
// keeps no other tenant's request from running; back waits for a place
// again, in its tenant's queue, or for ctx to end. Outside Serve it does
// nothing.
func StandAside(ctx context.Context) (back func() error) {
	l, ok := ctx.Value(turnLeaseKey{}).(*turnLease)
	if !ok {
		return func() error { return nil }
	}
	l.mu.Lock()
	l.leave()
	l.leave = func() {}
	l.mu.Unlock()
	return func() error {
		leave, err := l.tn.Enter(ctx)
		if err != nil {
			return err
		}
		l.mu.Lock()
		l.leave = leave
		l.mu.Unlock()
		return nil
	}
}
