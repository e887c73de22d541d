package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGeneratedKeysAreTheStoresOwn: a generated API key is keyed by the
// store's secret, not by the seed (a seed's first key would be known
// to anyone): two stores of the same seed give different
// keys, neither the seed's, while the ids an explicit seed keys stay the
// same in both.
func TestGeneratedKeysAreTheStoresOwn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	prober := fakeProber{"https://v/1min": {Duration: time.Minute, Origin: sim.OriginRule}}
	a, b := newHarness(t, prober), newHarness(t, prober)
	seedKey := "dsk_" + sim.NewIDs(7).Token(16, "account", "1") // what the seed alone made before

	ka, kb := a.account(t, sim.PlanPro, 10, false), b.account(t, sim.PlanPro, 10, false)
	for _, k := range []string{ka, kb} {
		assert.Regexp(t, `^dsk_[0-9a-f]{32}$`, k, "the documented shape")
		assert.NotEqual(t, seedKey, k, "not derived from the seed")
	}
	assert.NotEqual(t, ka, kb, "two stores of one seed generate different keys")

	pa, err := a.e.Projects.CreateProject(ctx, ka, newProject("https://v/1min"), nil)
	require.NoError(t, err)
	pb, err := b.e.Projects.CreateProject(ctx, kb, newProject("https://v/1min"), nil)
	require.NoError(t, err)
	assert.Equal(t, pa.ProjectID, pb.ProjectID, "an explicit seed keys ids: the same project id")
}

// noSecret is a store that has no secret.
type noSecret struct{ sim.Store }

func (noSecret) Secret() []byte { return nil }

// TestStartRefusesAStoreWithoutSecret: keys and signatures made with no
// key could be guessed, so the engine does not start on such a store.
func TestStartRefusesAStoreWithoutSecret(t *testing.T) {
	t.Parallel()
	st, err := store.Open(filepath.Join(t.TempDir(), "dubsim.db"), store.NoSync())
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	e := New(Config{Store: noSecret{st}, Clock: sim.NewSimClock(func() time.Time { return t0 }, 0), IDs: sim.NewIDs(7),
		Prober: fakeProber{}, Timing: sim.DefaultTiming, Fixtures: fx})
	t.Cleanup(e.Close)
	err = e.Start(context.Background())
	require.Error(t, err)
	assert.Equal(t, fmt.Sprintf("engine: the store's secret has 0 bytes, at least %d are needed", minSecret), err.Error())
}

// TestOutputSignature: the signature of a project's download URLs is keyed
// by the store's secret over the project id and its output generation (the
// id alone follows the seed, so anyone could compute it): the same after
// the store is reopened, another for another project, another generation
// or another store of the same seed.
func TestOutputSignature(t *testing.T) {
	t.Parallel()
	h := newArtHarness(t, artOptions{})
	p := sim.Project{ID: "960265782", OutputGen: 1}
	sig := h.e.Projects.OutputSignature(p)
	assert.Regexp(t, `^[0-9a-f]{32}$`, sig)
	assert.Equal(t, sig, h.e.Projects.OutputSignature(p), "deterministic")
	assert.NotEqual(t, sig, h.e.Projects.OutputSignature(sim.Project{ID: "960265783", OutputGen: 1}), "another project")
	assert.NotEqual(t, sig, h.e.Projects.OutputSignature(sim.Project{ID: p.ID, OutputGen: 2}), "another generation")
	assert.NotEqual(t, sig, newArtHarness(t, artOptions{}).e.Projects.OutputSignature(p), "another store of the same seed")

	h.closeEng()
	require.NoError(t, h.st.Close())
	again := openArtHarness(t, h.path, filepath.Join(filepath.Dir(h.path), "blobs"), newArtMedia(), artOptions{}, h.clock)
	assert.Equal(t, sig, again.e.Projects.OutputSignature(p), "the reopened store signs alike: URLs handed out stay valid")
}
