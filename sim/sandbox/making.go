package sandbox

import (
	"context"
	"runtime"
	"time"

	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// Making a sandbox takes milliseconds of processor time, many times any
// request it then serves: a client creating sandboxes without pause would
// take the processors from every other tenant (docs/design/tenancy.md).
// So at most half the processors' worth of creations run at once, and each
// keeps its place after it answered for as long again as it took: back to
// back, creations use at most half of the processors they have places for.

// makingGate is a Manager's gate of creations; after gives a place back
// (time.AfterFunc; tests replace it).
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

func (m *Manager) openNew(ctx context.Context, id string, rec record) (*Sandbox, error) {
	if err := m.making.Enter(ctx); err != nil {
		return nil, err
	}
	began := m.cfg.Now()
	defer func() { m.making.after(m.cfg.Now().Sub(began), m.making.Leave) }()
	return m.open(ctx, id, rec, true)
}
