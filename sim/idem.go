package sim

import (
	"context"
	"sync/atomic"
)

// IdemIntent carries a request's Idempotency-Key into the write it causes,
// so the write stores the idempotency record in its own transaction: a
// creation that commits is never without its record, even if the process
// dies before the answer is sent (a retry then replays, not repeats).
type IdemIntent struct {
	Scope, Key, Fingerprint string
	// Render encodes the answer of the write's result, exactly as the
	// handler will send it. Nil when the handler does not support it.
	Render func(result any) (status int, contentType string, body []byte, err error)
	saved  atomic.Bool
}

// MarkSaved records that the write stored the record.
func (i *IdemIntent) MarkSaved() { i.saved.Store(true) }

// Saved reports whether the write stored the record.
func (i *IdemIntent) Saved() bool { return i.saved.Load() }

type idemIntentKey struct{}

// WithIdemIntent attaches an intent to ctx.
func WithIdemIntent(ctx context.Context, i *IdemIntent) context.Context {
	return context.WithValue(ctx, idemIntentKey{}, i)
}

// IdemIntentFrom returns the intent of ctx, or nil.
func IdemIntentFrom(ctx context.Context) *IdemIntent {
	i, _ := ctx.Value(idemIntentKey{}).(*IdemIntent)
	return i
}
