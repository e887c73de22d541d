package engine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// prefixRule is an APIKeys rule that starts every key with a prefix (as a
// sandbox's does).
type prefixRule string

func (p prefixRule) Hold(k string) string { return string(p) + strings.TrimPrefix(k, string(p)) }

func (p prefixRule) Given(k string) (string, error) {
	if strings.HasPrefix(k, string(p)) {
		return k, nil
	}
	if strings.HasPrefix(k, sim.SandboxKeyPrefix) {
		return "", sim.Errorf(sim.CodeValidation, sim.MsgSandboxKey, k)
	}
	return string(p) + k, nil
}

// prefixedEngine is an engine whose keys start with prefix (none when ""),
// over the default fixtures, which it must not change.
func prefixedEngine(t *testing.T, prefix string, fx *sim.Fixtures) *Engine {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "dubsim.db"), store.NoSync(), store.KeySeed(7))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	var keys APIKeys
	if prefix != "" {
		keys = prefixRule(prefix)
	}
	e := New(Config{Store: st, Clock: sim.NewSimClock(func() time.Time { return t0 }, 0), IDs: sim.NewIDs(7),
		Prober: fakeProber{}, Timing: sim.DefaultTiming, Fixtures: fx, FixtureFS: fixtures.FS, APIKeys: keys})
	require.NoError(t, e.Start(context.Background()))
	return e
}

// TestKeyPrefix: an engine with an APIKeys rule holds only keys of its
// form: the fixture accounts', generated ones and given ones; the default
// refuses keys that look like a sandbox's.
func TestKeyPrefix(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const prefix = "sbx_k7q2m9x4w3p8r5t6_"
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	firstKey := fx.Accounts[0].APIKey
	e := prefixedEngine(t, prefix, fx)
	def := prefixedEngine(t, "", fx)

	assert.Equal(t, firstKey, fx.Accounts[0].APIKey, "the shared fixture set is not changed")
	for _, a := range e.Data.Fixtures().Accounts {
		assert.True(t, strings.HasPrefix(a.APIKey, prefix), "fixture key %q", a.APIKey)
	}
	_, err = e.Accounts.Account(ctx, prefix+firstKey)
	require.NoError(t, err, "the fixture account under the sandbox's key")
	_, err = e.Accounts.Account(ctx, firstKey)
	require.Error(t, err, "not under the bare key")
	_, err = def.Accounts.Account(ctx, firstKey)
	require.NoError(t, err, "the default engine keeps the bare key")

	for _, tc := range []struct {
		name, key string
		want      string // "" : an error
		wantDef   string
	}{
		{name: "generated", key: "", want: "^" + prefix + "dsk_[0-9a-f]{32}$", wantDef: "^dsk_[0-9a-f]{32}$"},
		{name: "given bare", key: "mine", want: "^" + prefix + "mine$", wantDef: "^mine$"},
		{name: "given with the own prefix", key: prefix + "mine2", want: "^" + prefix + "mine2$"},
		{name: "another sandbox's", key: "sbx_aaaaaaaaaaaaaaaa_x"},
		{name: "too long with the prefix", key: strings.Repeat("k", 190)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := e.Accounts.CreateAccount(ctx, sim.AccountSpec{APIKey: tc.key, Plan: sim.PlanPro, BalanceMinutes: 5})
			if tc.want == "" {
				require.Error(t, err)
				assert.Equal(t, sim.CodeValidation, sim.ErrorCode(err), "%v", err)
			} else {
				require.NoError(t, err)
				assert.Regexp(t, tc.want, a.APIKey)
			}
			d, err := def.Accounts.CreateAccount(ctx, sim.AccountSpec{APIKey: tc.key, Plan: sim.PlanPro, BalanceMinutes: 5})
			if tc.wantDef == "" {
				if strings.HasPrefix(tc.key, sim.SandboxKeyPrefix) {
					require.Error(t, err, "the default refuses sandbox-looking keys")
					assert.Contains(t, err.Error(), "sbx_")
				}
				return
			}
			require.NoError(t, err)
			assert.Regexp(t, tc.wantDef, d.APIKey)
		})
	}

	// Fixture files loaded at run time: their accounts get the prefix too.
	set, err := e.Data.LoadFixtureFiles(ctx, map[string][]byte{sim.FixtureAccounts: []byte(`{"accounts":[{"api_key":"late","plan":"pro","balance_minutes":3}]}`)}, false)
	require.NoError(t, err)
	_, err = e.Accounts.Account(ctx, prefix+"late")
	require.NoError(t, err)
	for _, a := range set.Accounts {
		assert.False(t, strings.HasPrefix(a.APIKey, prefix), "the merged set returned stays bare: %q", a.APIKey)
	}
}
