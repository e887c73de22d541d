package httpx

import (
	"context"
	"io"
	"net/http"
	"sync"
)

// BodyBudget is the process-wide budget of request-body bytes held in
// memory (fidelity HY1): every read of a whole body into memory (JSON
// bodies, the shared address's create sniff, the idempotency read-ahead)
// first takes its bytes from it, and waits while they are not there. A
// waiting request holds no body bytes: the rest of its body stays in the
// kernel's buffers and the client's.
//
// It is a weighted semaphore (a mutex and a first-come queue of waiters;
// golang.org/x/sync/semaphore would do, this keeps the module's
// dependencies as they are). A request asking for more than the whole
// budget gets the whole budget, so it waits but never forever. A nil
// *BodyBudget is no budget: every reservation succeeds at once.
type BodyBudget struct {
	size int64

	mu      sync.Mutex
	used    int64
	waiters []*budgetWaiter
}

type budgetWaiter struct {
	n     int64
	ready chan struct{} // closed when the bytes are granted
}

// NewBodyBudget returns a budget of size bytes; nil (no budget) when size
// <= 0.
func NewBodyBudget(size int64) *BodyBudget {
	if size <= 0 {
		return nil
	}
	return &BodyBudget{size: size}
}

// Size is the budget in bytes (0 for no budget).
func (b *BodyBudget) Size() int64 {
	if b == nil {
		return 0
	}
	return b.size
}

// clamp is n within [0, size].
func (b *BodyBudget) clamp(n int64) int64 {
	return max(0, min(n, b.size))
}

// Acquire takes n bytes (clamped to the budget's size) and returns how many
// it took; it waits, first come first served, while they are not free, and
// gives up with ctx's error (having taken nothing) when ctx ends.
func (b *BodyBudget) Acquire(ctx context.Context, n int64) (int64, error) {
	if b == nil {
		return 0, nil
	}
	n = b.clamp(n)
	b.mu.Lock()
	if len(b.waiters) == 0 && b.used+n <= b.size {
		b.used += n
		b.mu.Unlock()
		return n, nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return n, nil
	case <-ctx.Done():
		b.mu.Lock()
		select {
		case <-w.ready:
			// Granted as ctx ended: give the bytes back.
			b.used -= n
		default:
			for i, x := range b.waiters {
				if x == w {
					b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
					break
				}
			}
		}
		b.grant()
		b.mu.Unlock()
		return 0, ctx.Err()
	}
}

// TryAcquire takes n bytes (clamped) if they are free and nobody waits.
func (b *BodyBudget) TryAcquire(n int64) (int64, bool) {
	if b == nil {
		return 0, true
	}
	n = b.clamp(n)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.waiters) > 0 || b.used+n > b.size {
		return 0, false
	}
	b.used += n
	return n, true
}

// Release gives back n bytes taken by Acquire or TryAcquire.
func (b *BodyBudget) Release(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	if b.used < 0 {
		panic("httpx: BodyBudget released more than was acquired")
	}
	b.grant()
	b.mu.Unlock()
}

// grant wakes the waiters at the head of the queue whose bytes are free.
// Called with b.mu held.
func (b *BodyBudget) grant() {
	for len(b.waiters) > 0 {
		w := b.waiters[0]
		if b.used+w.n > b.size {
			return
		}
		b.used += w.n
		b.waiters = b.waiters[1:]
		close(w.ready)
	}
}

// Used is the number of bytes taken (for tests).
func (b *BodyBudget) Used() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// bodyLease is what one request holds of the budget.
type bodyLease struct {
	b    *BodyBudget
	mu   sync.Mutex
	held int64
}

type bodyLeaseKey struct{}

// Middleware gives each request a lease on b, released when the handler
// returns (the request's bytes are then garbage): ReserveBody grows it.
// With no budget it returns next.
func (b *BodyBudget) Middleware(next http.Handler) http.Handler {
	if b == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l := &bodyLease{b: b}
		defer func() {
			l.mu.Lock()
			b.Release(l.held)
			l.held = 0
			l.mu.Unlock()
		}()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), bodyLeaseKey{}, l)))
	})
}

// ReserveBody makes r's request hold at least n bytes of the body budget
// (clamped to the budget) before it reads that much of its body into
// memory, waiting while r's context lives. Every in-memory reader of one
// request shares its reservation: a reader that needs no more than the
// request holds (the handler decoding the bytes the sniff read) takes
// nothing more. A request that must grow its reservation takes the rest at
// once if it is free; else it gives back what it holds and waits for the
// whole amount, so that no two requests wait for each other's bytes.
//
// It is called before the first byte is read: a request waiting here has
// not started its body, and the body idle timeout (IdleBody), which starts
// at its first read, does not run while it waits. Without a budget, or
// outside BodyBudget.Middleware, it does nothing.
func ReserveBody(r *http.Request, n int64) error {
	l, ok := r.Context().Value(bodyLeaseKey{}).(*bodyLease)
	if !ok {
		return nil
	}
	n = l.b.clamp(n)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held >= n {
		return nil
	}
	if l.held > 0 {
		if got, ok := l.b.TryAcquire(n - l.held); ok {
			l.held += got
			return nil
		}
		l.b.Release(l.held)
		l.held = 0
	}
	got, err := l.b.Acquire(r.Context(), n)
	l.held = got
	return err
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

// ReserveBodyFor is ReserveBody for a reader of r's body up to limit bytes
// (the route's limit); it returns the size reserved, for the buffer.
func ReserveBodyFor(r *http.Request, limit int64) (int64, error) {
	n := ReserveSize(r, limit)
	return n, ReserveBody(r, n)
}

// readAllSized reads r to its end into a buffer of capacity size+1 to
// start with (the +1 sees the end without growing it).
func readAllSized(r io.Reader, size int64) ([]byte, error) {
	const maxPrealloc = 64 << 20
	b := make([]byte, 0, min(size, maxPrealloc)+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
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
