package httpx

import (
	"context"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"time"
)

// Turns is the process-wide bound on requests whose handlers run at once
// (docs/design/tenancy.md, "Running requests"): every client is a closed
// loop, so what bounds one tenant's part of a busy process is how many of
// its requests run. A tenant with no request running never waits: its
// request runs at once, even past the places. Its further requests wait
// while every place is taken, and a place given back goes to the waiting
// tenants in turn, first come first served within each. A tenant alone
// runs as many as it sends: the places bound what tenants take from each
// other, not what one takes from an idle process.
//
// A request keeps its place for at most TurnsHold: one that runs longer
// waits on something other than the processors, and runs on without a
// place, so that none can wait for another that waits for a place. The
// places are taken back lazily, when a request would wait for one, so that
// a request that waits for nothing costs no timer.
//
// A nil *Turns is no bound: every request runs at once.
type Turns struct {
	mu   sync.Mutex
	busy int           // places taken; more than size while a tenant is alone
	ring []*TurnTenant // tenants with waiting requests, in turn order
	size int
	// held is the places taken, oldest first (a list through their leases).
	held turnLease
	// unattributed is the tenant of requests whose key has not
	// authenticated: one for the process.
	unattributed *TurnTenant
	// armed: a call of expire is due (after) while requests wait.
	armed bool
	// now and after are time.Now and time.AfterFunc (tests replace them).
	now   func() time.Time
	after func(d time.Duration, f func())
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
	t := &Turns{size: n, now: time.Now, after: func(d time.Duration, f func()) { time.AfterFunc(d, f) }}
	t.held.prev, t.held.next = &t.held, &t.held
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
	waiting []*turnLease // first come first served
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

// turnLease is one request's claim on a place: waiting for one (ready),
// holding one since start (in Turns.held), or neither. Its fields are
// Turns.mu's.
type turnLease struct {
	tn         *TurnTenant
	ready      chan struct{} // closed when a place is given to it
	held       bool
	start      time.Time
	prev, next *turnLease
}

// take gives l a place (under t.mu).
func (t *Turns) take(l *turnLease) {
	t.busy++
	l.tn.running++
	l.held, l.start = true, t.now()
	l.prev, l.next = t.held.prev, &t.held
	l.prev.next, t.held.prev = l, l
}

// give takes l's place back (under t.mu). Its tenant's first waiter gets
// one if the tenant has none left running; then, while fewer than size are
// taken, a free place goes to the first waiter of the next tenant in turn,
// which goes to the end of the ring if more of its requests wait.
func (t *Turns) give(l *turnLease) {
	l.held = false
	l.prev.next, l.next.prev = l.next, l.prev
	l.prev, l.next = nil, nil
	t.busy--
	tn := l.tn
	tn.running--
	if tn.running == 0 && len(tn.waiting) > 0 {
		t.ring = slices.DeleteFunc(t.ring, func(o *TurnTenant) bool { return o == tn })
		t.grant(tn)
	}
	for t.busy < t.size && len(t.ring) > 0 {
		next := t.ring[0]
		t.ring = t.ring[1:]
		t.grant(next)
	}
}

// grant gives the first waiter of tn, out of the ring, a place; tn goes
// to the end of the ring if more of its requests wait.
func (t *Turns) grant(tn *TurnTenant) {
	w := tn.waiting[0]
	tn.waiting = tn.waiting[1:]
	tn.inRing = len(tn.waiting) > 0
	if tn.inRing {
		t.ring = append(t.ring, tn)
	}
	t.take(w)
	close(w.ready)
}

// expire takes back the places held past TurnsHold (under t.mu) and, while
// requests wait, has itself called again when the oldest place left
// reaches it.
func (t *Turns) expire() {
	now := t.now()
	for l := t.held.next; l != &t.held && now.Sub(l.start) >= TurnsHold; l = t.held.next {
		t.give(l)
	}
	if len(t.ring) == 0 || t.armed || t.held.next == &t.held {
		return
	}
	t.armed = true
	t.after(t.held.next.start.Add(TurnsHold).Sub(now), func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.armed = false
		t.expire()
	})
}

// enter takes a place for l if its tenant has none running (none of its
// requests then waits), or no tenant waits and a place is free or the
// tenant is alone; else it queues l behind the tenant's other waiters and
// returns its ready channel (nil: l holds a place).
func (t *Turns) enter(l *turnLease) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	free := func() bool {
		return l.tn.running == 0 || len(t.ring) == 0 && (t.busy < t.size || l.tn.running == t.busy)
	}
	if !free() {
		t.expire()
	}
	if free() {
		t.take(l)
		return nil
	}
	tn := l.tn
	l.ready = make(chan struct{})
	tn.waiting = append(tn.waiting, l)
	if !tn.inRing {
		tn.inRing = true
		t.ring = append(t.ring, tn)
	}
	t.expire()
	return l.ready
}

// leave gives l's place back, if it still holds one, or takes it out of
// its queue.
func (t *Turns) leave(l *turnLease) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l.held {
		t.give(l)
		return
	}
	tn := l.tn
	if i := slices.Index(tn.waiting, l); i >= 0 {
		tn.waiting = slices.Delete(tn.waiting, i, i+1)
		if len(tn.waiting) == 0 && tn.inRing {
			tn.inRing = false
			t.ring = slices.DeleteFunc(t.ring, func(o *TurnTenant) bool { return o == tn })
		}
	}
}

// wait takes a place for l, waiting for one while ctx lives (its error is
// returned, l holding nothing).
func (t *Turns) wait(ctx context.Context, l *turnLease) error {
	ready := t.enter(l)
	if ready == nil {
		return nil
	}
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		t.leave(l)
		return ctx.Err()
	}
}

// Serve runs next once the request has a place, which it gives back when
// next returns. A request whose client goes away while it waits gets no
// answer.
func (tn *TurnTenant) Serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if tn == nil {
		next.ServeHTTP(w, r)
		return
	}
	sh := sharesOf(r.Context())
	if sh == nil || sh.turn.tn != nil {
		sh = &shares{}
		r = r.WithContext(context.WithValue(r.Context(), sharesKey{}, sh))
	}
	l := &sh.turn
	l.tn = tn
	if tn.t.wait(r.Context(), l) != nil {
		return
	}
	defer tn.t.leave(l)
	next.ServeHTTP(w, r)
}

// StandAside gives back the place the request of ctx holds while it waits
// for another bound (a sandbox creation's turn), so that waiting there
// keeps no other tenant's request from running; back waits for a place
// again, in its tenant's queue, or for ctx to end. Outside Serve it does
// nothing.
func StandAside(ctx context.Context) (back func() error) {
	sh := sharesOf(ctx)
	if sh == nil || sh.turn.tn == nil {
		return func() error { return nil }
	}
	l := &sh.turn
	t := l.tn.t
	t.leave(l)
	return func() error { return t.wait(ctx, l) }
}
