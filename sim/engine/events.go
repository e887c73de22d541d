package engine

import (
	"time"

	"github.com/dubsim/dubsim/sim"
)

// Event is a lifecycle transition a committed write applied: a project
// became ready or failed, an artifact started, completed or failed, a video
// started or completed. Sweeps and reads that apply due transitions both
// report them, once each, after their transaction commits (a transaction
// that fails or is retried reports nothing of that attempt).
type Event struct {
	Resource string // "project", "artifact" or "video"
	ID       string
	From, To string // statuses
	// At is the simulated time the transition was applied.
	At time.Time
	// Company owns a studio resource ("" for a platform project).
	Company string
	// Reason says why a project or artifact failed ("" otherwise).
	Reason string
}

// eventTx is the transaction of a write while Config.OnEvent is set: the
// settle helpers note the transitions they apply on it, and update emits
// them once the transaction commits.
type eventTx struct {
	sim.Tx
	events []Event
}

// noteEvent records ev on tx when events are reported.
func noteEvent(tx sim.Tx, ev Event) {
	if t, ok := tx.(*eventTx); ok {
		t.events = append(t.events, ev)
	}
}

// withEvents runs write (update or batch) so that the transitions fn applies
// are reported after the commit.
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

// failReason is msg when the transition is a failure.
func failReason(failed bool, msg string) string {
	if failed {
		return msg
	}
	return ""
}
