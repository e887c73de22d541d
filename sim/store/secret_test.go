package store

import (
	"path/filepath"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecret: a new store makes a random secret of SecretBytes and keeps
// it in _meta; a reopen reads the same one; another new store, of the same
// key seed, has another; a reset keeps it.
func TestSecret(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t, KeySeed(7))
	sec := s.Secret()
	require.Len(t, sec, SecretBytes)
	assert.NotEqual(t, make([]byte, SecretBytes), sec, "not zero")
	view(t, s, func(tx sim.Tx) error {
		v, err := tx.Meta(string(keySecret))
		require.NoError(t, err)
		assert.Equal(t, sec, v, "kept in _meta")
		return nil
	})

	sec[0] ^= 0xFF
	assert.NotEqual(t, sec, s.Secret(), "callers get a copy")
	sec[0] ^= 0xFF

	other, _ := openTemp(t, KeySeed(7))
	assert.NotEqual(t, sec, other.Secret(), "two new stores of one seed have different secrets")

	update(t, s, func(tx sim.Tx) error { return tx.ResetData() })
	assert.Equal(t, sec, s.Secret(), "a reset keeps the secret")

	require.NoError(t, s.Close())
	again, err := Open(path, KeySeed(99))
	require.NoError(t, err)
	t.Cleanup(func() { _ = again.Close() })
	assert.Equal(t, sec, again.Secret(), "a reopen reads the same secret")
}

// TestOpenRefusesABadSecret: a file without its secret, or with one of
// another length, is damage, not something to replace silently (keys and
// signatures handed out depend on it).
func TestOpenRefusesABadSecret(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		secret []byte
		want   string
	}{
		"missing":   {nil, "without secret"},
		"malformed": {[]byte("short"), "malformed secret: 5 bytes, want 32"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, path := openTemp(t)
			require.NoError(t, s.kv.update(func(tx kvTx) error {
				if tc.secret == nil {
					return tx.del(bMeta, keySecret)
				}
				return tx.put(bMeta, keySecret, tc.secret)
			}))
			require.NoError(t, s.Close())

			s, err := Open(path)
			require.Error(t, err)
			assert.Nil(t, s)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), filepath.Base(path))
		})
	}
}
