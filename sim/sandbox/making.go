package sandbox

import (
	"context"
	"runtime"

	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// Making a sandbox (its store, its server, the fixtures written into it)
// takes milliseconds of processor time, more than any request a sandbox
// then serves. A client that creates and deletes sandboxes without pause
// would otherwise run as many creations at once as it has connections and
// take the processors from every other tenant (docs/design/tenancy.md).
// The creations of a process therefore take turns: at most half the
// processors' worth run at once, the others wait for a place while their
// request lasts.

// newMakingGate is the gate of a Manager's creations.
func newMakingGate() *httpx.Gate { return httpx.NewGate(max(1, runtime.GOMAXPROCS(0)/2)) }

// openNew opens the files of a new sandbox once a creation's place is free.
func (m *Manager) openNew(ctx context.Context, id string, rec record) (*Sandbox, error) {
	if err := m.making.Enter(ctx); err != nil {
		return nil, err
	}
	defer m.making.Leave()
	return m.open(ctx, id, rec, true)
}
