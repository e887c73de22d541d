package engine

import (
	"context"
	"errors"

	"github.com/dubsim/dubsim/sim"
)

// Idempotency keeps the answers of requests sent with an Idempotency-Key.
type Idempotency struct{ *core }

// IdempotencyLookup returns the live record for a key, if any.
func (e *Idempotency) IdempotencyLookup(ctx context.Context, scope, key string) (sim.IdemRecord, bool, error) {
	now := e.clock.Now()
	rec, err := in(ctx, e.store.View, func(tx sim.Tx) (sim.IdemRecord, error) { return tx.Idempotency(scope, key) })
	switch {
	case errors.Is(err, sim.ErrNotFound):
		return sim.IdemRecord{}, false, nil
	case err != nil || now.Sub(rec.CreatedAt) >= sim.IdempotencyWindow:
		return sim.IdemRecord{}, false, err
	}
	return rec, true, nil
}

// IdempotencySave stores the response for a key.
func (e *Idempotency) IdempotencySave(ctx context.Context, scope, key string, rec sim.IdemRecord) error {
	rec.CreatedAt = e.clock.Now()
	return e.batch(ctx, func(tx sim.Tx) error { return tx.PutIdempotency(scope, key, rec) })
}
