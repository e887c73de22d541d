package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

func checkRun(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"check"}, args...), func(string) string { return "" }, &out, &errOut)
	return out.String(), err
}

func TestCheckCommand(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "dubsim.db")
	st, err := store.Open(path, store.NoSync())
	require.NoError(t, err)
	require.NoError(t, st.Update(context.Background(), func(tx sim.Tx) error {
		return tx.Accounts().Put(sim.Account{APIKey: "k1", Plan: sim.PlanPro})
	}))
	require.NoError(t, st.Close())

	out, err := checkRun(t, "--data", path)
	require.NoError(t, err)
	assert.Contains(t, out, path+": 32768 bytes, 4096-byte pages\n")
	assert.Regexp(t, `(?m)^  accounts +1$`, out)
	assert.Regexp(t, `ok\n$`, out)

	// A record that does not decode: exit status 1 and the problem.
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("accounts")).Put([]byte("k2"), []byte("garbage")) }))
	require.NoError(t, db.Close())
	out, err = checkRun(t, "--data", path)
	require.ErrorIs(t, err, errCheckFailed)
	assert.Contains(t, out, `problem: accounts "k2": store: corrupt value: not a binary record`)
	assert.Contains(t, out, "1 problem(s) found")
	assert.NotContains(t, out, "ok\n")

	// A damaged page.
	path2 := filepath.Join(t.TempDir(), "dubsim.db")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	for i := 2 * 4096; i < len(b); i += 4096 {
		if b[i+8] == 0x02 { // the flags of a leaf page
			copy(b[i:i+4096], bytes.Repeat([]byte{0xA5}, 4096))
		}
	}
	require.NoError(t, os.WriteFile(path2, b, 0o600))
	out, err = checkRun(t, "--data", path2)
	require.ErrorIs(t, err, errCheckFailed)
	assert.Contains(t, out, "problem: bbolt: ")

	// A file it cannot open at all: the error says why.
	empty := filepath.Join(t.TempDir(), "empty.db")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	_, err = checkRun(t, "--data", empty)
	require.ErrorIs(t, err, store.ErrUnsound)
	assert.Contains(t, err.Error(), "is empty (0 bytes)")
}
