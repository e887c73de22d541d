package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// firstIDs opens an engine of content seed 7 on a new store opened with
// opts and returns the first platform project id and the first studio id
// it makes.
func firstIDs(t *testing.T, opts ...store.Option) (project, studio string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "dubsim.db"), append(opts, store.NoSync())...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	prober := fakeProber{"https://v/1min": {Duration: time.Minute, Origin: sim.OriginRule}}
	e := New(Config{Store: st, Clock: sim.NewSimClock(func() time.Time { return t0 }, 0), IDs: sim.NewIDs(7),
		Prober: prober, Timing: sim.DefaultTiming, Fixtures: fx})
	t.Cleanup(e.Close)
	require.NoError(t, e.Start(ctx))
	a, err := e.Accounts.CreateAccount(ctx, sim.AccountSpec{Plan: sim.PlanPro, BalanceMinutes: 10})
	require.NoError(t, err)
	rc, err := e.Projects.CreateProject(ctx, a.APIKey, newProject("https://v/1min"), nil)
	require.NoError(t, err)
	require.NoError(t, st.Update(ctx, func(tx sim.Tx) error {
		studio, err = e.Accounts.ids.studioID(tx, t0)
		return err
	}))
	return rc.ProjectID, studio
}

// TestIDsAreTheStoresOwn: two stores of one content seed make other
// project and studio ids unless an id key is given; the same key gives the
// same ids.
func TestIDsAreTheStoresOwn(t *testing.T) {
	t.Parallel()
	p1, s1 := firstIDs(t)
	p2, s2 := firstIDs(t)
	assert.NotEqual(t, p1, p2, "project ids of two stores without a key")
	assert.NotEqual(t, s1, s2, "studio ids of two stores without a key")

	k1, ks1 := firstIDs(t, store.KeySeed(7))
	k2, ks2 := firstIDs(t, store.KeySeed(7))
	assert.Equal(t, k1, k2, "the same key: the same project id")
	assert.Equal(t, ks1, ks2, "the same key: the same studio id")
	assert.Equal(t, sim.NewIDs(7).PlatformProjectID(0), k1, "the key is the permutation's")
}
