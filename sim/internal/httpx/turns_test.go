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

// manualAfter replaces Turns.after: the functions due are run by fire.
type manualAfter struct{ due []func() }

func (m *manualAfter) after(_ time.Duration, f func()) func() bool {
	i := len(m.due)
	m.due = append(m.due, f)
	return func() bool {
		stopped := m.due[i] != nil
		m.due[i] = nil
		return stopped
	}
}

func (m *manualAfter) fire() {
	for i, f := range m.due {
		if f != nil {
			m.due[i] = nil
			f()
		}
	}
}

func newTestTurns(n int) (*Turns, *manualAfter) {
	t := NewTurns(n)
	m := &manualAfter{}
	t.after = m.after
	return t, m
}

// granted is which of the waiters have a place now.
func granted(ws map[string]*turnWaiter) []string {
	var out []string
	for name, w := range ws {
		select {
		case <-w.ready:
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
	require.Nil(t, x.enter(), "a free place is taken at once")
	order := []struct {
		name string
		tn   *TurnTenant
	}{{"a1", a}, {"a2", a}, {"a3", a}, {"b1", b}, {"c1", c}, {"b2", b}}
	ws := map[string]*turnWaiter{}
	tenant := map[string]*TurnTenant{}
	for _, o := range order {
		ws[o.name], tenant[o.name] = o.tn.enter(), o.tn
		require.NotNil(t, ws[o.name], o.name)
	}
	var got []string
	done := x
	for range order {
		done.leave()
		now := granted(ws)
		require.Len(t, now, 1, "one place, one waiter served: %v", now)
		got = append(got, now[0])
		delete(ws, now[0])
		done = tenant[now[0]]
	}
	assert.Equal(t, []string{"a1", "b1", "c1", "a2", "b2", "a3"}, got)
	done.leave()
	assert.Equal(t, 0, turns.busy, "the last place given back is free")
}

// TestTurnsTenantAlone: a tenant alone runs past the size; another's
// request then waits until fewer than size run, and the lone tenant's
// next request waits its turn behind it.
func TestTurnsTenantAlone(t *testing.T) {
	t.Parallel()
	turns, _ := newTestTurns(2)
	a, b := turns.Tenant(), turns.Tenant()
	for range 4 {
		require.Nil(t, a.enter(), "alone, a runs at once")
	}
	wb := b.enter()
	require.NotNil(t, wb, "b waits while a holds more than the places")
	wa := a.enter()
	require.NotNil(t, wa, "a's next waits behind b")
	a.leave()
	a.leave()
	assert.Empty(t, granted(map[string]*turnWaiter{"b": wb, "a": wa}), "two of a's still run: every place is taken")
	a.leave()
	assert.Equal(t, []string{"b"}, granted(map[string]*turnWaiter{"b": wb, "a": wa}))
	a.leave()
	assert.Equal(t, []string{"a"}, granted(map[string]*turnWaiter{"a": wa}))
	assert.Equal(t, 2, turns.busy)
}

// TestTurnsCancel: a waiter whose context ends holds nothing and leaves
// the queue; its tenant leaves the ring when it has no other waiter.
func TestTurnsCancel(t *testing.T) {
	t.Parallel()
	turns, _ := newTestTurns(1)
	a, b := turns.Tenant(), turns.Tenant()
	leave, err := a.Enter(context.Background())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = b.Enter(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, turns.ring)
	assert.Empty(t, b.waiting)
	leave()
	assert.Equal(t, 0, turns.busy)

	// Given a place and cancelled at once: the place goes back.
	require.Nil(t, a.enter())
	w := b.enter()
	a.leave()
	b.cancel(w)
	assert.Equal(t, 0, turns.busy)
	assert.Zero(t, b.running)
}

// TestTurnsHold: a request that runs past TurnsHold gives its place back
// then, and its own leave does nothing more.
func TestTurnsHold(t *testing.T) {
	t.Parallel()
	turns, clock := newTestTurns(1)
	a, b := turns.Tenant(), turns.Tenant()
	leave, err := a.Enter(context.Background())
	require.NoError(t, err)
	w := b.enter()
	require.NotNil(t, w)
	clock.fire()
	assert.Equal(t, []string{"b"}, granted(map[string]*turnWaiter{"b": w}), "the place went to b past the hold")
	leave()
	assert.Equal(t, 1, turns.busy, "b holds the place; a gave it back once only")
	b.leave()
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
	require.Nil(t, a.enter())
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
	leave, err := tn.Enter(context.Background())
	require.NoError(t, err)
	leave()
}

// TestTurnsStandAside: a request standing aside holds no place; back
// queues it again behind the others that wait.
func TestTurnsStandAside(t *testing.T) {
	t.Parallel()
	turns, _ := newTestTurns(1)
	a, b := turns.Tenant(), turns.Tenant()
	var w *turnWaiter
	a.Serve(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil), http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		back := StandAside(r.Context())
		assert.Equal(t, 0, turns.busy, "standing aside, it holds nothing")
		require.Nil(t, b.enter(), "b takes the free place")
		w = a.enter() // another of a's waits too
		require.NotNil(t, w)
		done := make(chan error)
		go func() { done <- back() }()
		b.leave() // b is done: the place goes to the first waiter, w
		assert.Equal(t, []string{"w"}, granted(map[string]*turnWaiter{"w": w}))
		a.leave() // w is done: the place goes to the request back
		require.NoError(t, <-done)
		assert.Equal(t, 1, turns.busy)
	}))
	assert.Equal(t, 0, turns.busy, "the place taken back is given back at the end")

	// Outside Serve: nothing to give back.
	require.NoError(t, StandAside(context.Background())())
	assert.Equal(t, 0, turns.busy)
}
