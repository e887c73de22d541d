package engine

import (
	"context"
	"errors"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// Idempotency keeps the answers of requests sent with an Idempotency-Key.
type Idempotency struct {
	*core
	ttl time.Duration // Config.IdempotencyWindow
}

// IdempotencyLookup returns the live record for a key, if any.
func (e *Idempotency) IdempotencyLookup(ctx context.Context, scope, key string) (sim.IdemRecord, bool, error) {
	var rec sim.IdemRecord
	found := false
	now := e.clock.Now()
	err := e.store.View(ctx, func(tx sim.Tx) error {
		r, err := tx.Idempotency(scope, key)
		if errors.Is(err, sim.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if now.Sub(r.CreatedAt) < e.ttl {
			rec, found = r, true
		}
		return nil
	})
	return rec, found, err
}

// IdempotencySave stores the response for a key.
func (e *Idempotency) IdempotencySave(ctx context.Context, scope, key string, rec sim.IdemRecord) error {
	rec.CreatedAt = e.clock.Now()
	return e.batch(ctx, func(tx sim.Tx) error { return tx.PutIdempotency(scope, key, rec) })
}
