package engine

import (
	"time"

	"github.com/dubsim/dubsim/sim"
)

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
