package sandbox

import (
	"context"
	"runtime"
	"time"

	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// Making a sandbox (its store, its server, the fixtures written into it)
// takes milliseconds of processor time, many times any request a sandbox
// then serves. A client that creates and deletes sandboxes without pause
// would otherwise run as many creations at once as it has connections and
// take the processors from every other tenant (docs/design/tenancy.md).
// The creations of a process therefore take turns: at most half the
// processors' worth have a place at once, the others wait for one while
// their request lasts. A creation keeps its place, after it has answered,
// for as long again as it took: back to back, creations use at most half
// of the processors they have places for.

// makingGate is a Manager's gate of creations, and how it gives a place
// back some time after a creation (time.AfterFunc; tests replace it).
type makingGate struct {
	*httpx.Gate
	after func(time.Duration, func())
}

func newMakingGate() makingGate {
	return makingGate{
		Gate:  httpx.NewGate(max(1, runtime.GOMAXPROCS(0)/2)),
		after: func(d time.Duration, f func()) { time.AfterFunc(d, f) },
	}
}

// openNew opens the files of a new sandbox once a creation's place is free.
func (m *Manager) openNew(ctx context.Context, id string, rec record) (*Sandbox, error) {
	// Waiting for that place, its request holds none of the process's
	// running requests' (httpx.StandAside).
	back := httpx.StandAside(ctx)
	if err := m.making.Enter(ctx); err != nil {
		return nil, err
	}
	if err := back(); err != nil {
		m.making.Leave()
		return nil, err
	}
	began := m.cfg.Now()
	defer func() { m.making.after(m.cfg.Now().Sub(began), m.making.Leave) }()
	return m.open(ctx, id, rec, true)
}
