package engine

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// damagedStore is a store in which reading one project panics, as bbolt
// does on a damaged page.
type damagedStore struct {
	*store.Store
	mu  sync.Mutex
	bad string
}

type damagedTx struct {
	sim.Tx
	s *damagedStore
}

func (t damagedTx) Project(id string) (sim.Project, error) {
	t.s.mu.Lock()
	bad := t.s.bad
	t.s.mu.Unlock()
	if id == bad {
		panic("page 42: invalid type")
	}
	return t.Tx.Project(id)
}

func (s *damagedStore) wrap(fn func(sim.Tx) error) func(sim.Tx) error {
	return func(tx sim.Tx) error { return fn(damagedTx{Tx: tx, s: s}) }
}

func (s *damagedStore) View(ctx context.Context, fn func(sim.Tx) error) error {
	return s.Store.View(ctx, s.wrap(fn))
}

func (s *damagedStore) Update(ctx context.Context, fn func(sim.Tx) error) error {
	return s.Store.Update(ctx, s.wrap(fn))
}

func (s *damagedStore) Batch(ctx context.Context, fn func(sim.Tx) error) error {
	return s.Store.Batch(ctx, s.wrap(fn))
}

// A record that panics when the sweep reads it is skipped and reported
// once; the others still complete, and later sweeps neither panic nor
// report it again (fidelity HD5).
func TestSweepSkipsARecordThatPanics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "dubsim.db"), store.NoSync(), store.KeySeed(7))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	ds := &damagedStore{Store: st}
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	var logs proctest.Buffer
	clock := sim.NewSimClock(func() time.Time { return t0 }, 0)
	e := New(Config{Store: ds, Clock: clock, IDs: sim.NewIDs(7), Prober: fakeProber{}, Timing: sim.DefaultTiming,
		Fixtures: fx, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, e.Start(ctx))
	a, err := e.Accounts.CreateAccount(ctx, sim.AccountSpec{Plan: sim.PlanPro, BalanceMinutes: 100})
	require.NoError(t, err)
	var ids []string
	for range 3 {
		rc, err := e.Projects.CreateProject(ctx, a.APIKey, newProject("https://v/a"), nil)
		require.NoError(t, err)
		ids = append(ids, rc.ProjectID)
	}
	ds.mu.Lock()
	ds.bad = ids[1]
	ds.mu.Unlock()

	_, err = e.Clock.Advance(ctx, time.Hour)
	require.NoError(t, err, "the sweep recovers the panic")
	for range 3 {
		_, err := e.Clock.Tick(ctx)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, e.Clock.sweeper.skippedCount())
	log := logs.String()
	assert.Equal(t, 1, strings.Count(log, "skipping a damaged record"), "reported once:\n%s", log)
	assert.Contains(t, log, "level=ERROR")
	assert.Contains(t, log, "id="+ids[1])
	assert.Contains(t, log, `err="panic: page 42: invalid type"`)
	assert.Contains(t, log, "stack=", "with the stack")
	for _, id := range []string{ids[0], ids[2]} {
		p, err := e.Projects.Project(ctx, a.APIKey, id)
		require.NoError(t, err)
		assert.Equal(t, sim.StatusReady, p.Status, id)
	}
}

func TestRecoveredTurnsAPanicIntoAnError(t *testing.T) {
	t.Parallel()
	err := Recovered(func() error { panic("boom") })
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "panic: boom", err.Error())
	assert.Contains(t, string(pe.Stack), "TestRecoveredTurnsAPanicIntoAnError")
	assert.NoError(t, Recovered(func() error { return nil }))
}
