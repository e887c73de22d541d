package httpx

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// manualClock replaces Turns.now and Turns.after: the time moves by
// advance, and the functions due by then are run by fire.
type manualClock struct {
	now time.Time
	due []func()
}

func (m *manualClock) after(_ time.Duration, f func()) { m.due = append(m.due, f) }

func (m *manualClock) fire() {
	due := m.due
	m.due = nil
	for _, f := range due {
		f()
	}
}

func newTestTurns(n int) (*Turns, *manualClock) {
	t := NewTurns(n)
	m := &manualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	t.now = func() time.Time { return m.now }
	t.after = m.after
	return t, m
}

// enter queues a new request of tn (a nil ready: it holds a place).
func enter(tn *TurnTenant) (*turnLease, <-chan struct{}) {
	l := &turnLease{tn: tn}
	return l, tn.t.enter(l)
}

// granted is which of the waiters have a place now.
func granted(ws map[string]<-chan struct{}) []string {
	var out []string
	for name, ready := range ws {
		select {
		case <-ready:
			out = append(out, name)
		default:
		}
	}
	return out
}

// holding returns n requests of tn that hold a place.
func holding(t *testing.T, tn *TurnTenant, n int) []*turnLease {
	t.Helper()
	var ls []*turnLease
	for range n {
		l, ready := enter(tn)
		require.Nil(t, ready, "a place at once")
		ls = append(ls, l)
	}
	return ls
}

// TestTurnsGoRoundTheTenants: with every place taken, places given back
// go to the waiting tenants in turn, first come first served within
// each, so b's one request does not wait behind all of a's.
func TestTurnsGoRoundTheTenants(t *testing.T) {
	t.Parallel()
	turns, _ := newTestTurns(4)
	x, a, b, c := turns.Tenant(), turns.Tenant(), turns.Tenant(), turns.Tenant()
	xs := holding(t, x, 4) // alone, x takes every place
	holding(t, a, 1)       // the first request of each other tenant runs at once
	holding(t, b, 1)
	holding(t, c, 1)
	order := []struct {
		name string
		tn   *TurnTenant
	}{{"a1", a}, {"a2", a}, {"a3", a}, {"b1", b}, {"c1", c}, {"b2", b}}
	ws := map[string]<-chan struct{}{}
	lease := map[string]*turnLease{}
	for _, o := range order {
		lease[o.name], ws[o.name] = enter(o.tn)
		require.NotNil(t, ws[o.name], o.name)
	}
	for _, l := range xs[:3] {
		turns.leave(l)
	}
	assert.Empty(t, granted(ws), "still four places taken")
	var got []string
	done := xs[3]
	for range order {
		turns.leave(done)
		now := granted(ws)
		require.Len(t, now, 1, "one place, one waiter served: %v", now)
		got = append(got, now[0])
		delete(ws, now[0])
		done = lease[now[0]]
	}
	assert.Equal(t, []string{"a1", "b1", "c1", "a2", "b2", "a3"}, got)
	turns.leave(done)
	assert.Equal(t, 3, turns.busy, "the first requests of a, b and c hold theirs")
}

// TestTurnsFirstRequestNeverWaits: a tenant with none running takes a place
// at once, past the size; when its last running request ends, its first
// waiter goes at once, ahead of the other tenants'.
func TestTurnsFirstRequestNeverWaits(t *testing.T) {
	t.Parallel()
	turns, _ := newTestTurns(2)
	a, b := turns.Tenant(), turns.Tenant()
	as := holding(t, a, 4) // alone, a runs as many as it sends
	b0 := holding(t, b, 1)[0]
	assert.Equal(t, 5, turns.busy)
	_, wb := enter(b)
	require.NotNil(t, wb, "b's second waits while every place is taken")
	_, wa := enter(a)
	require.NotNil(t, wa, "a's next waits behind b")
	turns.leave(as[0])
	turns.leave(as[1])
	turns.leave(as[2])
	assert.Empty(t, granted(map[string]<-chan struct{}{"b": wb, "a": wa}), "b0 and a's last still take both places")
	turns.leave(b0)
	assert.Equal(t, []string{"b"}, granted(map[string]<-chan struct{}{"b": wb, "a": wa}), "b had none running: its waiter goes")
	turns.leave(as[3])
	assert.Equal(t, []string{"a"}, granted(map[string]<-chan struct{}{"a": wa}))
	assert.Equal(t, 2, turns.busy)
}

// TestTurnsCancel: a waiter whose context ends holds nothing and leaves
// the queue; its tenant leaves the ring when it has no other waiter.
func TestTurnsCancel(t *testing.T) {
	t.Parallel()
	turns, _ := newTestTurns(1)
	a, b := turns.Tenant(), turns.Tenant()
	la := holding(t, a, 1)[0]
	lb := holding(t, b, 1)[0]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, turns.wait(ctx, &turnLease{tn: b}), context.Canceled)
	assert.Empty(t, turns.ring)
	assert.Empty(t, b.waiting)
	turns.leave(la)
	turns.leave(lb)
	assert.Equal(t, 0, turns.busy)

	// Given a place and cancelled at once: the place goes back.
	la = holding(t, a, 1)[0]
	lb = holding(t, b, 1)[0]
	lw, ready := enter(b)
	require.NotNil(t, ready)
	turns.leave(lb)
	turns.leave(lw)
	turns.leave(la)
	assert.Equal(t, 0, turns.busy)
	assert.Zero(t, b.running)
}

// TestTurnsHold: a request that runs past TurnsHold gives its place back
// to a request that waits for it, and its own leave does nothing more.
func TestTurnsHold(t *testing.T) {
	t.Parallel()
	turns, clock := newTestTurns(1)
	a, b := turns.Tenant(), turns.Tenant()
	b0 := holding(t, b, 1)[0]
	a0 := holding(t, a, 1)[0]
	a1, wa := enter(a)
	require.NotNil(t, wa, "a's second waits while b0 and a0 hold places")
	clock.now = clock.now.Add(TurnsHold / 2)
	clock.fire() // early: they have held their places for half the hold
	assert.Empty(t, granted(map[string]<-chan struct{}{"a1": wa}))
	clock.now = clock.now.Add(TurnsHold / 2)
	clock.fire()
	assert.Equal(t, []string{"a1"}, granted(map[string]<-chan struct{}{"a1": wa}), "their places went back past the hold")
	turns.leave(a0)
	turns.leave(b0)
	assert.Equal(t, 1, turns.busy, "a1 holds the place; a0 and b0 gave theirs back once only")

	// A request that would wait takes at once a place held past the hold.
	b1 := holding(t, b, 1)[0]
	clock.now = clock.now.Add(TurnsHold)
	a2, wa2 := enter(a)
	assert.Nil(t, wa2, "a1's and b1's places, held past the hold, are free")
	turns.leave(a1)
	turns.leave(b1)
	turns.leave(a2)
	assert.Equal(t, 0, turns.busy)
}

func TestTurnsServe(t *testing.T) {
	t.Parallel()
	turns, _ := newTestTurns(1)
	a := turns.Tenant()
	ran := false
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		ran = true
		assert.Equal(t, 1, turns.busy, "the handler holds the place")
	})
	a.Serve(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil), h)
	assert.True(t, ran)
	assert.Equal(t, 0, turns.busy)

	// A client gone while it waits: no answer, nothing held.
	holding(t, a, 1)
	holding(t, a.Unattributed(), 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	ran = false
	a.Unattributed().Serve(rec, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx), h)
	assert.False(t, ran)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Empty(t, rec.Body.String())
}

func TestTurnsNilIsUnbounded(t *testing.T) {
	t.Parallel()
	turns := NewTurns(0)
	assert.Nil(t, turns)
	tn := turns.Tenant()
	assert.Nil(t, tn.Unattributed())
	ran := false
	tn.Serve(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil), http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran = true }))
	assert.True(t, ran)
}

// TestTurnsStandAside: a request standing aside holds no place; back
// queues it again behind the others that wait.
func TestTurnsStandAside(t *testing.T) {
	t.Parallel()
	turns, _ := newTestTurns(1)
	a, b := turns.Tenant(), turns.Tenant()
	a.Serve(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil), http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		back := StandAside(r.Context())
		assert.Equal(t, 0, turns.busy, "standing aside, it holds nothing")
		lb := holding(t, b, 1)[0] // b takes the free place
		lw := holding(t, a, 1)[0] // another of a's, the first a runs now, too
		lb2, w := enter(b)        // b's second waits
		require.NotNil(t, w)
		done := make(chan error)
		go func() { done <- back() }()
		turns.leave(lb) // b had none left: the place goes to b's waiter
		assert.Equal(t, []string{"w"}, granted(map[string]<-chan struct{}{"w": w}))
		turns.leave(lw) // a has none left: the place goes to the request back
		require.NoError(t, <-done)
		turns.leave(lb2)
		assert.Equal(t, 1, turns.busy)
	}))
	assert.Equal(t, 0, turns.busy, "the place taken back is given back at the end")

	// Outside Serve: nothing to give back.
	require.NoError(t, StandAside(context.Background())())
	assert.Equal(t, 0, turns.busy)
}

// TestTurnsInsideBodyTenant: behind BodyTenant.Middleware a request's place
// and its body bytes live in one record of its context; each is given
// back when its own layer ends.
func TestTurnsInsideBodyTenant(t *testing.T) {
	t.Parallel()
	turns, _ := newTestTurns(1)
	bodies := NewBodyBudget(100).Tenant()
	a := turns.Tenant()
	h := bodies.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.Serve(w, r, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			require.NoError(t, ReserveBody(r, 10))
			assert.Equal(t, int64(10), bodies.Used())
			assert.Equal(t, 1, turns.busy)
			back := StandAside(r.Context())
			assert.Equal(t, 0, turns.busy, "standing aside, it holds no place")
			require.NoError(t, back())
			assert.Equal(t, 1, turns.busy)
		}))
		assert.Equal(t, 0, turns.busy, "the place is given back as the turns' layer ends")
		assert.Equal(t, int64(10), bodies.Used(), "the bytes are the body layer's")
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", nil))
	assert.Zero(t, bodies.Used())
}
