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

// TestTurnsGoRoundTheTenants: with every place taken, places given back
// go to the waiting tenants in turn, first come first served within
// each, so b's one request does not wait behind all of a's.
func TestTurnsGoRoundTheTenants(t *testing.T) {
	t.Parallel()
	turns, _ := newTestTurns(1)
	x, a, b, c := turns.Tenant(), turns.Tenant(), turns.Tenant(), turns.Tenant()
	first, ready := enter(x)
	require.Nil(t, ready, "a free place is taken at once")
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
	var got []string
	done := first
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
	assert.Equal(t, 0, turns.busy, "the last place given back is free")
}

// TestTurnsTenantAlone: a tenant alone runs past the size; another's
// request then waits until fewer than size run, and the lone tenant's
// next request waits its turn behind it.
func TestTurnsTenantAlone(t *testing.T) {
	t.Parallel()
	turns, _ := newTestTurns(2)
	a, b := turns.Tenant(), turns.Tenant()
	var as []*turnLease
	for range 4 {
		l, ready := enter(a)
		require.Nil(t, ready, "alone, a runs at once")
		as = append(as, l)
	}
	_, wb := enter(b)
	require.NotNil(t, wb, "b waits while a holds more than the places")
	_, wa := enter(a)
	require.NotNil(t, wa, "a's next waits behind b")
	turns.leave(as[0])
	turns.leave(as[1])
	assert.Empty(t, granted(map[string]<-chan struct{}{"b": wb, "a": wa}), "two of a's still run: every place is taken")
	turns.leave(as[2])
	assert.Equal(t, []string{"b"}, granted(map[string]<-chan struct{}{"b": wb, "a": wa}))
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
	la := &turnLease{tn: a}
	require.NoError(t, turns.wait(context.Background(), la))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	lb := &turnLease{tn: b}
	require.ErrorIs(t, turns.wait(ctx, lb), context.Canceled)
	assert.Empty(t, turns.ring)
	assert.Empty(t, b.waiting)
	turns.leave(la)
	assert.Equal(t, 0, turns.busy)

	// Given a place and cancelled at once: the place goes back.
	la, ready := enter(a)
	require.Nil(t, ready)
	lb, ready = enter(b)
	require.NotNil(t, ready)
	turns.leave(la)
	turns.leave(lb)
	assert.Equal(t, 0, turns.busy)
	assert.Zero(t, b.running)
}

// TestTurnsHold: a request that runs past TurnsHold gives its place back
// to a request that waits for it, and its own leave does nothing more.
func TestTurnsHold(t *testing.T) {
	t.Parallel()
	turns, clock := newTestTurns(1)
	a, b, c := turns.Tenant(), turns.Tenant(), turns.Tenant()
	la, _ := enter(a)
	clock.now = clock.now.Add(TurnsHold / 2)
	lb, wb := enter(b)
	require.NotNil(t, wb)
	clock.fire() // early: a has held its place for half the hold
	assert.Empty(t, granted(map[string]<-chan struct{}{"b": wb}))
	clock.now = clock.now.Add(TurnsHold / 2)
	clock.fire()
	assert.Equal(t, []string{"b"}, granted(map[string]<-chan struct{}{"b": wb}), "the place went to b past the hold")
	turns.leave(la)
	assert.Equal(t, 1, turns.busy, "b holds the place; a gave it back once only")

	// A request that would wait takes a place held past the hold at once.
	clock.now = clock.now.Add(TurnsHold)
	lc, wc := enter(c)
	assert.Nil(t, wc, "b's place, held past the hold, goes to c")
	turns.leave(lb)
	turns.leave(lc)
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
	_, ready := enter(a)
	require.Nil(t, ready)
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
		lb, ready := enter(b)
		require.Nil(t, ready, "b takes the free place")
		lw, w := enter(a) // another of a's waits too
		require.NotNil(t, w)
		done := make(chan error)
		go func() { done <- back() }()
		turns.leave(lb) // b is done: the place goes to the first waiter, w
		assert.Equal(t, []string{"w"}, granted(map[string]<-chan struct{}{"w": w}))
		turns.leave(lw) // w is done: the place goes to the request back
		require.NoError(t, <-done)
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
