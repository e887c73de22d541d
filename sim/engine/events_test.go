package engine

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEvents: every lifecycle transition a write commits is reported once,
// with its resource, statuses, simulated time and, for a failure, why.
func TestEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "dubsim.db"), store.NoSync(), store.KeySeed(7))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	var mu sync.Mutex
	var events []Event
	clock := sim.NewSimClock(func() time.Time { return t0 }, 0)
	e := New(Config{Store: st, Clock: clock, IDs: sim.NewIDs(7), Timing: sim.DefaultTiming, Fixtures: fx,
		Prober:  fakeProber{"https://v/fail": {Duration: 60 * time.Second, Origin: sim.OriginRule, Fail: "No speech"}},
		OnEvent: func(ev Event) { mu.Lock(); events = append(events, ev); mu.Unlock() }})
	require.NoError(t, e.Start(ctx))
	a, err := e.Accounts.CreateAccount(ctx, sim.AccountSpec{Plan: sim.PlanPro, BalanceMinutes: 100})
	require.NoError(t, err)

	ok, err := e.Projects.CreateProject(ctx, a.APIKey, newProject("https://v/ok"), nil)
	require.NoError(t, err)
	bad, err := e.Projects.CreateProject(ctx, a.APIKey, newProject("https://v/fail"), nil)
	require.NoError(t, err)
	mu.Lock()
	assert.Empty(t, events, "a creation is no transition")
	mu.Unlock()

	now, err := e.Clock.Advance(ctx, time.Hour)
	require.NoError(t, err)
	_, err = e.Clock.Tick(ctx)
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	assert.ElementsMatch(t, []Event{
		{Resource: "project", ID: ok.ProjectID, From: "in_progress", To: "ready", At: now},
		{Resource: "project", ID: bad.ProjectID, From: "in_progress", To: "error", At: now, Reason: "No speech"},
	}, events, "each once: the second sweep had nothing to do")
}
