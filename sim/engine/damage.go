package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// A damaged data file must not take the process down: bbolt panics on a
// page that is not what it expects, on every tick of a sweep that meets it.
// The sweep settles the records of a failed batch one by one and skips,
// until restart, those that panic or do not decode (fidelity HD5).

// PanicError is a panic recovered in background work, with its stack.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Recovered runs fn and turns a panic into a *PanicError. A memory fault
// (bbolt reads pages through a memory map) panics instead of ending the
// process while fn runs.
func Recovered(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return fn()
}

// damaged reports whether err says a record cannot be read back.
func damaged(err error) bool {
	_, panicked := errors.AsType[*PanicError](err)
	return panicked || errors.Is(err, sim.ErrDamaged)
}

// skip makes the sweep leave resource id alone from now on, and reports it.
func (e *sweeper) skip(resource, id string, err error) {
	e.brokenMu.Lock()
	if e.broken == nil {
		e.broken = map[string]struct{}{}
	}
	key := resource + "/" + id
	_, seen := e.broken[key]
	e.broken[key] = struct{}{}
	e.brokenMu.Unlock()
	if seen {
		return
	}
	attrs := []any{"resource", resource, "id", id, "err", err}
	// The stack once per cause: the records of one damaged page fail alike.
	if pe, ok := errors.AsType[*PanicError](err); ok && e.lastStack.Swap(err.Error()) != err.Error() {
		attrs = append(attrs, "stack", string(pe.Stack))
	}
	e.log.Error("transition sweep: skipping a damaged record until restart (run `dubsim check` on the data file)", attrs...)
}

func (e *sweeper) skippedCount() int {
	e.brokenMu.Lock()
	defer e.brokenMu.Unlock()
	return len(e.broken)
}

// dueIDs lists up to limit ids of kind k due at now that the sweep does
// not skip.
func (e *sweeper) dueIDs(tx sim.Tx, k dueKind, now time.Time, limit int) ([]string, error) {
	extra := e.skippedCount()
	ids, err := k.list(tx, now, limit+extra)
	if err != nil || extra == 0 {
		return ids, err
	}
	e.brokenMu.Lock()
	defer e.brokenMu.Unlock()
	kept := ids[:0]
	for _, id := range ids {
		if _, skip := e.broken[k.resource+"/"+id]; !skip {
			kept = append(kept, id)
		}
	}
	return kept[:min(len(kept), limit)], nil
}

// settleEach settles ids one transaction each: a damaged record is
// skipped; another error ends the sweep.
func (e *sweeper) settleEach(ctx context.Context, resource string, ids []string, settle func(tx sim.Tx, id string) error) error {
	for _, id := range ids {
		err := Recovered(func() error {
			return e.update(ctx, func(tx sim.Tx) error { return settle(tx, id) })
		})
		switch {
		case err == nil:
		case damaged(err) && ctx.Err() == nil:
			e.skip(resource, id, err)
		default:
			return err
		}
	}
	return nil
}
