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

func TestBodyBudget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		size     int64
		take     []int64 // acquired in order, none waiting
		release  int64
		want     int64 // the next acquisition
		got      int64 // what it takes
		wantUsed int64 // used after it
	}{
		{name: "fits", size: 100, take: []int64{30}, want: 50, got: 50, wantUsed: 80},
		{name: "clamped to the budget", size: 100, want: 500, got: 100, wantUsed: 100},
		{name: "after a release", size: 100, take: []int64{100}, release: 100, want: 60, got: 60, wantUsed: 60},
		{name: "negative is nothing", size: 100, want: -5, got: 0, wantUsed: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := NewBodyBudget(tt.size)
			for _, n := range tt.take {
				_, err := b.Acquire(context.Background(), n)
				require.NoError(t, err)
			}
			b.Release(tt.release)
			got, err := b.Acquire(context.Background(), tt.want)
			require.NoError(t, err)
			assert.Equal(t, tt.got, got)
			assert.Equal(t, tt.wantUsed, b.Used())
		})
	}
}

func TestBodyBudgetNilIsUnlimited(t *testing.T) {
	t.Parallel()
	b := NewBodyBudget(0)
	assert.Nil(t, b)
	got, err := b.Acquire(context.Background(), 1<<40)
	require.NoError(t, err)
	assert.Zero(t, got)
	b.Release(5)
	h := b.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.NoError(t, ReserveBody(r, 1<<40))
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", nil))
}

func TestBodyBudgetWaitsAndCancels(t *testing.T) {
	t.Parallel()
	b := NewBodyBudget(100)
	_, err := b.Acquire(context.Background(), 80)
	require.NoError(t, err)

	// A waiter whose context ends takes nothing.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := b.Acquire(ctx, 50)
		done <- err
	}()
	waitFor(t, b, 1)
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	assert.Equal(t, int64(80), b.Used())

	// A waiter gets its bytes when they are released, first come first
	// served: a small one behind a big one waits too.
	big, small := make(chan int64), make(chan int64)
	go func() { n, _ := b.Acquire(context.Background(), 60); big <- n }()
	waitFor(t, b, 1)
	go func() { n, _ := b.Acquire(context.Background(), 10); small <- n }()
	waitFor(t, b, 2)
	_, ok := b.TryAcquire(10)
	assert.False(t, ok, "TryAcquire with waiters")
	b.Release(80)
	assert.Equal(t, int64(60), <-big)
	assert.Equal(t, int64(10), <-small)
	assert.Equal(t, int64(70), b.Used())
}

// waitFor waits until n requests wait on b.
func waitFor(t *testing.T, b *BodyBudget, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.waiters) == n
	}, 5*time.Second, time.Millisecond)
}

func TestReserveBodyPerRequest(t *testing.T) {
	t.Parallel()
	b := NewBodyBudget(100)
	var during int64
	h := b.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, ReserveBody(r, 40))
		require.NoError(t, ReserveBody(r, 30)) // within what it holds
		require.NoError(t, ReserveBody(r, 70)) // grows
		require.NoError(t, ReserveBody(r, 1000))
		during = b.Used()
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", nil))
	assert.Equal(t, int64(100), during, "clamped to the budget")
	assert.Zero(t, b.Used(), "released when the handler returns")

	// A request that must grow while another holds the rest gives back
	// what it has and waits for the whole, instead of holding it.
	_, err := b.Acquire(context.Background(), 50)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	h = b.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, ReserveBody(r, 40))
		assert.ErrorIs(t, ReserveBody(r, 80), context.DeadlineExceeded)
		assert.Equal(t, int64(50), b.Used(), "nothing held while it waited")
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", nil).WithContext(ctx))
	assert.Equal(t, int64(50), b.Used())
}
