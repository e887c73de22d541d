package engine

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// core is the transaction runner every service shares.
type core struct {
	store   sim.Store
	clock   *sim.SimClock
	log     *slog.Logger
	onEvent func(Event)
	// The clock's freeze, persisted with it by every write.
	clockMu     sync.Mutex
	frozenScale float64 // the scale to resume with; meaningful while frozen
	frozen      bool

	// writes is the generation of the services' caches (gencache): a
	// cached record is never older than the last committed write.
	writes atomic.Uint64
	// changes is writes without the periodic clock saves (Data.Changes).
	changes atomic.Uint64
}

// saveIdem stores the idempotency record in the write's own transaction
// (idem nil: no Idempotency-Key).
func saveIdem[T any](tx sim.Tx, idem *sim.IdemWrite[T], result T, now time.Time) error {
	if idem == nil {
		return nil
	}
	rec, err := idem.Record(result, now)
	if err != nil {
		return err
	}
	return tx.PutIdempotency(idem.Scope, idem.Key, rec)
}

// in runs fn in the transaction run opens and returns fn's result.
func in[T any](ctx context.Context, run func(context.Context, func(sim.Tx) error) error, fn func(sim.Tx) (T, error)) (T, error) {
	var v T
	err := run(ctx, func(tx sim.Tx) (err error) {
		v, err = fn(tx)
		return err
	})
	return v, err
}

// update runs fn in a write transaction that also persists the simulated
// clock: whatever a write stamped is never after the time a restart resumes
// from.
func (e *core) update(ctx context.Context, fn func(sim.Tx) error) error {
	defer e.changes.Add(1)
	return e.write(ctx, fn)
}

// write is update without counting a change a reader sees (Clock.SaveClock).
func (e *core) write(ctx context.Context, fn func(sim.Tx) error) error {
	defer e.writes.Add(1)
	return e.withEvents(func(fn func(sim.Tx) error) error { return e.store.Update(ctx, e.savingClock(fn)) }, fn)
}

// batch is update for creations: concurrent ones share a transaction. fn may
// run more than once.
func (e *core) batch(ctx context.Context, fn func(sim.Tx) error) error {
	defer e.changes.Add(1)
	defer e.writes.Add(1)
	return e.withEvents(func(fn func(sim.Tx) error) error { return e.store.Batch(ctx, e.savingClock(fn)) }, fn)
}

func (e *core) savingClock(fn func(sim.Tx) error) func(sim.Tx) error {
	return func(tx sim.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return e.saveClock(tx)
	}
}

// storedClock is the clock's record (metaClock), with Freeze's state.
type storedClock struct {
	sim.ClockState
	Frozen      bool    `json:"frozen,omitempty"`
	ResumeScale float64 `json:"resume_scale,omitempty"`
}

const metaClock = "clock"

func (e *core) saveClock(tx sim.Tx) error {
	st := storedClock{ClockState: e.clock.State()}
	e.clockMu.Lock()
	if e.frozen {
		st.Frozen, st.ResumeScale = true, e.frozenScale
	}
	e.clockMu.Unlock()
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return tx.PutMeta(metaClock, b)
}

// get reads record id, refusing with missing() one that is not stored or
// that ok rejects (ok nil: none).
func get[T any](read func(string) (T, error), id string, ok func(T) bool, missing func() error) (T, error) {
	v, err := read(id)
	if errors.Is(err, sim.ErrNotFound) || (err == nil && ok != nil && !ok(v)) {
		return v, missing()
	}
	return v, err
}

// settleIn reads record id with read and applies its due transitions at now.
func settleIn[T any](tx sim.Tx, now time.Time, read func(string) (T, error), id string, settle func(sim.Tx, T, time.Time) (T, error)) (T, error) {
	v, err := read(id)
	if err != nil {
		return v, err
	}
	return settle(tx, v, now)
}

// absent refuses with taken() a record id that read finds.
func absent[T any](read func(string) (T, error), id string, taken func() error) error {
	_, err := read(id)
	switch {
	case err == nil:
		return taken()
	case errors.Is(err, sim.ErrNotFound):
		return nil
	}
	return err
}

func unauthorized() error { return sim.Errorf(sim.CodeUnauthorized, sim.MsgInvalidAPIKey) }

func notFound() error { return sim.Errorf(sim.CodeNotFound, sim.MsgProjectNotFound) }

func ceilSecond(t time.Time) time.Time {
	if u := t.Truncate(time.Second); !u.Equal(t) {
		return u.Add(time.Second)
	}
	return t
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func studioMissing() error { return sim.Errorf(sim.CodeNotFound, sim.MsgStudioNotFound) }

func secs(d time.Duration) *float64 { return new(d.Seconds()) }

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

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

// Event is a lifecycle transition a committed write applied, reported once
// after its transaction commits (an attempt that fails or is retried
// reports nothing).
type Event struct {
	Resource string // "project", "artifact" or "video"
	ID       string
	From, To string    // statuses
	At       time.Time // simulated time it was applied
	Company  string    // of a studio resource
	Reason   string    // why a project or artifact failed (its error message: set only on failure)
}

// eventTx is a write's transaction while Config.OnEvent is set: the settle
// helpers note their transitions on it.
type eventTx struct {
	sim.Tx
	events []Event
}

func noteEvent(tx sim.Tx, ev Event) {
	if t, ok := tx.(*eventTx); ok {
		t.events = append(t.events, ev)
	}
}

// withEvents runs write so that the transitions fn applies are reported
// after the commit.
func (e *core) withEvents(write func(func(sim.Tx) error) error, fn func(sim.Tx) error) error {
	if e.onEvent == nil {
		return write(fn)
	}
	var events []Event
	err := write(func(tx sim.Tx) error {
		et := &eventTx{Tx: tx}
		err := fn(et)
		events = et.events // the last attempt's: Batch may run fn again
		return err
	})
	if err == nil {
		for _, ev := range events {
			e.onEvent(ev)
		}
	}
	return err
}
