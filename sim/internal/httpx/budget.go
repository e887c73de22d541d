package httpx

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/dubsim/dubsim/sim"
	"golang.org/x/sync/semaphore"
)

// BodyBudget is the process-wide bound on request-body bytes held in
// memory (fidelity HY1 and TB1, docs/design/tenancy.md): every read of a
// whole body into memory first takes its bytes from it, through the
// tenant's BodyTenant, and waits while they are not there. A waiting
// request holds no body bytes: the rest of its body stays in the kernel's
// buffers and the client's. A nil *BodyBudget is no budget.
type BodyBudget struct {
	share int64
	total *semaphore.Weighted
	used  atomic.Int64
}

// ShareDivisor is how many tenants' full shares the bound holds: each
// tenant may hold a quarter of it, so that a tenant holding its whole
// share leaves three quarters to the others.
const ShareDivisor = 4

// NewBodyBudget returns a budget of size bytes of which each tenant holds
// at most size/ShareDivisor; nil (no budget) when size <= 0.
func NewBodyBudget(size int64) *BodyBudget {
	if size <= 0 {
		return nil
	}
	return &BodyBudget{share: max(1, size/ShareDivisor), total: semaphore.NewWeighted(size)}
}

// Used is the number of bytes taken by every tenant together.
func (b *BodyBudget) Used() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// Tenant returns a new tenant of b with its own share (nil for no
// budget).
func (b *BodyBudget) Tenant() *BodyTenant {
	if b == nil {
		return nil
	}
	return &BodyTenant{b: b, own: semaphore.NewWeighted(b.share)}
}

// BodyTenant is one tenant's part of a BodyBudget: its requests wait, first
// come first served, for bytes of its own share, then for bytes of the
// process's bound, so that one tenant's slow bodies fill its share, never
// the whole bound. A nil *BodyTenant is no budget.
type BodyTenant struct {
	b    *BodyBudget
	own  *semaphore.Weighted
	used atomic.Int64
}

// Used is the number of bytes the tenant holds.
func (t *BodyTenant) Used() int64 {
	if t == nil {
		return 0
	}
	return t.used.Load()
}

// clamp is n within [0, share]: a request asking for more than the share
// gets the whole share, so it waits but never forever.
func (t *BodyTenant) clamp(n int64) int64 {
	return max(0, min(n, t.b.share))
}

// acquire takes n bytes (already clamped), waiting while ctx lives; on
// error it holds nothing.
func (t *BodyTenant) acquire(ctx context.Context, n int64) error {
	if n == 0 {
		return nil
	}
	if err := t.own.Acquire(ctx, n); err != nil {
		return err
	}
	if err := t.b.total.Acquire(ctx, n); err != nil {
		t.own.Release(n)
		return err
	}
	t.count(n)
	return nil
}

// tryAcquire takes n bytes (already clamped) if they are free now.
func (t *BodyTenant) tryAcquire(n int64) bool {
	if !t.own.TryAcquire(n) {
		return false
	}
	if !t.b.total.TryAcquire(n) {
		t.own.Release(n)
		return false
	}
	t.count(n)
	return true
}

// release gives back n bytes taken by acquire or tryAcquire.
func (t *BodyTenant) release(n int64) {
	if n <= 0 {
		return
	}
	t.count(-n)
	t.b.total.Release(n)
	t.own.Release(n)
}

func (t *BodyTenant) count(n int64) {
	t.used.Add(n)
	t.b.used.Add(n)
}

// shares is what one request holds of its tenant's shares of the process
// (its body bytes, BodyTenant.Middleware; its place among the running
// requests, TurnTenant.Serve) and what the layers it crosses decided of it
// (WithRoute, WithAccount, WithCaller, WithJournal): kept in its context once for all,
// where a context and a copy of the request per layer would cost
// allocations on every request (BenchmarkRequestPath in sim/sandbox).
type shares struct {
	body    bodyLease
	turn    turnLease
	iface   string
	by      string
	account *sim.Account
	caller  *sim.Caller
	journal any
}

type sharesKey struct{}

func sharesOf(ctx context.Context) *shares {
	sh, _ := ctx.Value(sharesKey{}).(*shares)
	return sh
}

// withShares returns ctx's record, or a new one in a context of its own.
func withShares(ctx context.Context) (*shares, context.Context) {
	if sh := sharesOf(ctx); sh != nil {
		return sh, ctx
	}
	sh := &shares{}
	return sh, context.WithValue(ctx, sharesKey{}, sh)
}

// WithRoute records the interface that serves ctx's request and why
// (sim/server's rule); the context it returns is ctx itself inside
// BodyTenant.Middleware.
func WithRoute(ctx context.Context, iface, by string) context.Context {
	sh, ctx := withShares(ctx)
	sh.iface, sh.by = iface, by
	return ctx
}

// RouteFrom returns what WithRoute recorded ("" without a route).
func RouteFrom(ctx context.Context) (iface, by string) {
	if sh := sharesOf(ctx); sh != nil {
		return sh.iface, sh.by
	}
	return "", ""
}

// WithJournal records the request journal's notes of ctx's request (any
// pointer), as WithRoute does.
func WithJournal(ctx context.Context, notes any) context.Context {
	sh, ctx := withShares(ctx)
	sh.journal = notes
	return ctx
}

// JournalFrom returns what WithJournal recorded, or nil.
func JournalFrom(ctx context.Context) any {
	if sh := sharesOf(ctx); sh != nil {
		return sh.journal
	}
	return nil
}

// bodyLease is what one request holds of its tenant's share.
type bodyLease struct {
	t    *BodyTenant
	mu   sync.Mutex
	held int64
}

// Middleware gives each request a lease on t, released when the handler
// returns (the request's bytes are then garbage): ReserveBody grows it.
// With no budget it returns next.
func (t *BodyTenant) Middleware(next http.Handler) http.Handler {
	if t == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sh := &shares{body: bodyLease{t: t}}
		l := &sh.body
		defer func() {
			l.mu.Lock()
			t.release(l.held)
			l.held = 0
			l.mu.Unlock()
		}()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sharesKey{}, sh)))
	})
}

// ReserveBody makes r's request hold at least n bytes of its tenant's
// share (clamped to the share) before it reads that much of its body into
// memory, waiting while r's context lives; every in-memory reader of one
// request shares its reservation. A request that must grow it takes the
// rest at once if it is free, else gives back what it holds and waits for
// the whole amount, so that no two requests wait for each other's bytes.
// Called before the first byte is read, it runs before the body idle
// timeout (IdleBody) starts. Outside BodyTenant.Middleware it does nothing.
func ReserveBody(r *http.Request, n int64) error {
	sh := sharesOf(r.Context())
	if sh == nil || sh.body.t == nil {
		return nil
	}
	l := &sh.body
	n = l.t.clamp(n)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held >= n {
		return nil
	}
	if l.held > 0 {
		if l.t.tryAcquire(n - l.held) {
			l.held = n
			return nil
		}
		l.t.release(l.held)
		l.held = 0
	}
	if err := l.t.acquire(r.Context(), n); err != nil {
		return err
	}
	l.held = n
	return nil
}

// ReserveSize is how much of r's body a reader with the given limit may hold:
// its Content-Length when declared, at most limit+1 (what shows the body
// is too large), else limit+1.
func ReserveSize(r *http.Request, limit int64) int64 {
	if r.ContentLength >= 0 && r.ContentLength <= limit {
		return r.ContentLength
	}
	return satAdd1(limit)
}

// readAllSized reads r to its end into a buffer of capacity size+1 to
// start with (the +1 sees the end without growing it). Of unknown size
// (-1), the buffer starts small and doubles, so that a small body takes
// little and the copies of a large one add up to less than its size.
func readAllSized(r io.Reader, size int64) ([]byte, error) {
	const maxPrealloc = 64 << 20
	b := make([]byte, 0, min(max(size, 511), maxPrealloc)+1)
	for {
		if len(b) == cap(b) {
			b = append(make([]byte, 0, 2*cap(b)), b...)
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// satAdd1 returns v+1, or v when v+1 would overflow.
func satAdd1(v int64) int64 {
	if v+1 < v {
		return v
	}
	return v + 1
}
