package httpx

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBodyTenantShare(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		size     int64
		take     []int64 // reserved in order by requests that keep them
		want     int64   // the next request's reservation
		wantUsed int64   // the tenant's bytes after it
	}{
		{name: "fits", size: 100, take: []int64{10}, want: 5, wantUsed: 15},
		{name: "clamped to the share", size: 100, want: 500, wantUsed: 25},
		{name: "negative is nothing", size: 100, want: -5, wantUsed: 0},
		{name: "share of a tiny budget", size: 3, want: 10, wantUsed: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := NewBodyBudget(tt.size)
			tn := b.Tenant()
			for _, n := range tt.take {
				require.NoError(t, tn.acquire(context.Background(), tn.clamp(n)))
			}
			require.NoError(t, tn.acquire(context.Background(), tn.clamp(tt.want)))
			assert.Equal(t, tt.wantUsed, tn.Used())
			assert.Equal(t, tt.wantUsed, b.Used())
		})
	}
}

func TestBodyBudgetNilIsUnlimited(t *testing.T) {
	t.Parallel()
	b := NewBodyBudget(0)
	assert.Nil(t, b)
	assert.Nil(t, b.Tenant())
	h := b.Tenant().Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.NoError(t, ReserveBody(r, 1<<40))
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", nil))
}

// TestBodyTenantWaitsAndCancels: within one tenant, a request waits for
// bytes of its share; a waiter whose context ends takes nothing.
func TestBodyTenantWaitsAndCancels(t *testing.T) {
	t.Parallel()
	b := NewBodyBudget(100)
	tn := b.Tenant()
	require.NoError(t, tn.acquire(context.Background(), 20))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, tn.acquire(ctx, 10), context.Canceled)
	assert.Equal(t, int64(20), tn.Used())

	got := make(chan error, 1)
	go func() { got <- tn.acquire(context.Background(), 10) }()
	tn.release(20)
	require.NoError(t, <-got)
	assert.Equal(t, int64(10), tn.Used())
}

// TestBodyTenantsShareTheBound: a tenant that holds its whole share (and
// has more requests waiting) leaves the rest of the bound to the others;
// only when every share the bound holds is taken does another tenant wait.
func TestBodyTenantsShareTheBound(t *testing.T) {
	t.Parallel()
	b := NewBodyBudget(100)
	noisy, victim := b.Tenant(), b.Tenant()
	require.NoError(t, noisy.acquire(context.Background(), 25))
	waiting := make(chan error, 1)
	go func() { waiting <- noisy.acquire(context.Background(), 25) }()

	assert.True(t, victim.tryAcquire(25), "the victim's bytes are free although the noisy tenant waits")
	assert.False(t, noisy.tryAcquire(1), "the noisy tenant is at its share")

	// Two more tenants fill the bound: a fifth waits for the bound.
	for range 2 {
		require.True(t, b.Tenant().tryAcquire(25))
	}
	late := b.Tenant()
	assert.False(t, late.tryAcquire(1), "the bound is full")
	assert.Equal(t, int64(100), b.Used())
	got := make(chan error, 1)
	go func() { got <- late.acquire(context.Background(), 10) }()
	victim.release(25)
	require.NoError(t, <-got)
	noisy.release(25)
	require.NoError(t, <-waiting)
	assert.Equal(t, int64(25+50+10), b.Used())
}

func TestReserveBodyPerRequest(t *testing.T) {
	t.Parallel()
	b := NewBodyBudget(400)
	tn := b.Tenant()
	var during int64
	h := tn.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, ReserveBody(r, 40))
		require.NoError(t, ReserveBody(r, 30)) // within what it holds
		require.NoError(t, ReserveBody(r, 70)) // grows
		require.NoError(t, ReserveBody(r, 1000))
		during = tn.Used()
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", nil))
	assert.Equal(t, int64(100), during, "clamped to the share")
	assert.Zero(t, b.Used(), "released when the handler returns")

	// A request that must grow while another holds the rest gives back
	// what it has and waits for the whole, instead of holding it.
	require.NoError(t, tn.acquire(context.Background(), 50))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	h = tn.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, ReserveBody(r, 40))
		assert.ErrorIs(t, ReserveBody(r, 80), context.DeadlineExceeded)
		assert.Equal(t, int64(50), tn.Used(), "nothing held while it waited")
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", nil).WithContext(ctx))
	assert.Equal(t, int64(50), b.Used())
}

// TestRequestRecord: what the layers decide of a request (its route, its
// account or studio caller, the journal's notes) is kept in the record BodyTenant.Middleware
// puts in its context, with no context of its own; outside the middleware
// each makes a context that carries it.
func TestRequestRecord(t *testing.T) {
	t.Parallel()
	notes := new(int)
	set := []struct {
		name  string
		with  func(context.Context) context.Context
		check func(*testing.T, context.Context)
	}{
		{"route", func(ctx context.Context) context.Context { return WithRoute(ctx, "studio", "body") }, func(t *testing.T, ctx context.Context) {
			iface, by := RouteFrom(ctx)
			assert.Equal(t, []string{"studio", "body"}, []string{iface, by})
		}},
		{"account", func(ctx context.Context) context.Context { return WithAccount(ctx, sim.Account{APIKey: "k1"}) }, func(t *testing.T, ctx context.Context) {
			a, ok := AccountFrom(ctx)
			assert.True(t, ok)
			assert.Equal(t, "k1", a.APIKey)
		}},
		{"caller", func(ctx context.Context) context.Context {
			return WithCaller(ctx, sim.Caller{Account: sim.Account{APIKey: "k2"}, User: sim.User{ID: "u1"}})
		}, func(t *testing.T, ctx context.Context) {
			assert.Equal(t, "u1", CallerFrom(ctx).User.ID)
			a, ok := AccountFrom(ctx)
			assert.True(t, ok)
			assert.Equal(t, "k2", a.APIKey, "the caller's account is the account")
		}},
		{"journal", func(ctx context.Context) context.Context { return WithJournal(ctx, notes) }, func(t *testing.T, ctx context.Context) {
			assert.Same(t, notes, JournalFrom(ctx))
		}},
	}
	for _, tt := range set {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bare := context.Background()
			iface, _ := RouteFrom(bare)
			_, ok := AccountFrom(bare)
			assert.True(t, iface == "" && !ok && JournalFrom(bare) == nil, "nothing recorded")

			ctx := tt.with(bare)
			assert.NotEqual(t, bare, ctx, "outside the middleware: a context of its own")
			tt.check(t, ctx)

			ran := false
			NewBodyBudget(100).Tenant().Middleware(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				ran = true
				ctx := tt.with(r.Context())
				assert.Equal(t, r.Context(), ctx, "inside the middleware: the record, no new context")
				tt.check(t, r.Context())
			})).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
			assert.True(t, ran)
		})
	}
}
