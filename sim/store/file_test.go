package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// soundFile writes a store of 300 accounts (about 40 pages) and returns
// its bytes.
func soundFile(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sound.db")
	s, err := Open(path, NoSync())
	require.NoError(t, err)
	require.NoError(t, s.Update(context.Background(), func(tx sim.Tx) error {
		for i := range 300 {
			if err := tx.Accounts().Put(account(fmt.Sprintf("key-%04d", i), int64(i))); err != nil {
				return err
			}
		}
		return nil
	}))
	require.NoError(t, s.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func writeFile(t *testing.T, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dubsim.db")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

func TestOpenRefusesWhatIsNotASoundStore(t *testing.T) {
	t.Parallel()
	good := soundFile(t)
	const ps = 4096
	// The page count the meta pages give (the high-water mark).
	hwm := 0
	for _, off := range []int{0, ps} {
		m, err := parseMeta(good[off:])
		require.NoError(t, err)
		require.EqualValues(t, ps, m.pageSize)
		hwm = max(hwm, int(m.pgid))
	}
	require.Greater(t, hwm, 6)
	garbage := bytes.Repeat([]byte("not a database\n"), 1000)
	tests := []struct {
		name string
		data []byte
		want string // %[1]s is the path
	}{
		{"empty", []byte{}, "store: %[1]s is empty (0 bytes), not a dubsim data file: dubsim will not overwrite it with a new store. " +
			"To start fresh, move it away (or delete it); to recover the data, restore the file from a backup"},
		{"half", good[:hwm/2*ps], fmt.Sprintf("store: %%[1]s is truncated: %d bytes (%d pages of 4096 bytes), but its header says it holds %d pages. ", hwm/2*ps, hwm/2, hwm) +
			"dubsim will not open it; to recover the data, restore the file from a backup; to start fresh, move it away"},
		{"one page short", good[:(hwm-1)*ps], fmt.Sprintf("store: %%[1]s is truncated: %d bytes (%d pages of 4096 bytes), but its header says it holds %d pages. ", (hwm-1)*ps, hwm-1, hwm) +
			"dubsim will not open it; to recover the data, restore the file from a backup; to start fresh, move it away"},
		{"meta pages only", good[:2*ps], fmt.Sprintf("store: %%[1]s is truncated: 8192 bytes (2 pages of 4096 bytes), but its header says it holds %d pages. ", hwm) +
			"dubsim will not open it; to recover the data, restore the file from a backup; to start fresh, move it away"},
		{"mid-page", good[:hwm/2*ps+100], fmt.Sprintf("store: %%[1]s is truncated: %d bytes is not a whole number of 4096-byte pages. ", hwm/2*ps+100) +
			"dubsim will not open it; to recover the data, restore the file from a backup; to start fresh, move it away"},
		{"first page and a bit", good[:ps+80], "store: %[1]s is truncated: 4176 bytes is not a whole number of 4096-byte pages. " +
			"dubsim will not open it; to recover the data, restore the file from a backup; to start fresh, move it away"},
		{"garbage", garbage, "store: %[1]s is not a dubsim data file (no valid bbolt meta page: no bbolt magic number). " +
			"dubsim will not overwrite it; check --data, or move the file away to start fresh"},
		{"a few bytes", []byte("hi\n"), "store: %[1]s is not a dubsim data file (3 bytes, too short for a header). " +
			"dubsim will not overwrite it; check --data, or move the file away to start fresh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, tt.data)
			_, err := Open(path)
			require.Error(t, err)
			assert.Equal(t, fmt.Sprintf(tt.want, path), err.Error())
			assert.ErrorIs(t, err, ErrUnsound)
			after, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			assert.Equal(t, tt.data, after, "the file is left as it was")
			_, err = Check(path)
			assert.Equal(t, fmt.Sprintf(tt.want, path), err.Error(), "check refuses it alike")
		})
	}
}

func TestOpenTakesASoundFileAndOneWithADamagedMetaPage(t *testing.T) {
	t.Parallel()
	good := soundFile(t)
	for name, data := range map[string][]byte{
		"sound": good,
		// bbolt falls back on the other meta page.
		"meta 0 damaged": append(bytes.Repeat([]byte{0xA5}, 100), good[100:]...),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := Open(writeFile(t, data))
			require.NoError(t, err)
			require.NoError(t, s.View(context.Background(), func(tx sim.Tx) error {
				a, err := tx.Accounts().Get("key-0123")
				assert.Equal(t, int64(123), a.BalanceMinutes)
				return err
			}))
			require.NoError(t, s.Close())
		})
	}
	// A missing file is created.
	s, err := Open(filepath.Join(t.TempDir(), "new.db"))
	require.NoError(t, err)
	require.NoError(t, s.Close())
}

// damagePage overwrites a page of the file at path that bbolt uses (the
// first leaf page, or its freelist page) and returns its number.
func damagePage(t *testing.T, path string, freelist bool) int {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil) // read-only would not load the freelist Page needs
	require.NoError(t, err)
	target := -1
	require.NoError(t, db.View(func(tx *bolt.Tx) error {
		for id := 2; target < 0; id++ {
			info, err := tx.Page(id)
			if err != nil || info == nil {
				return err
			}
			if (freelist && info.Type == "freelist") || (!freelist && info.Type == "leaf") {
				target = id
			}
		}
		return nil
	}))
	ps := db.Info().PageSize
	require.NoError(t, db.Close())
	require.GreaterOrEqual(t, target, 2)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(bytes.Repeat([]byte{0xA5}, ps), int64(target*ps))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return target
}

func TestOpenReportsADamagedFreelist(t *testing.T) {
	t.Parallel()
	path := writeFile(t, soundFile(t))
	damagePage(t, path, true)
	_, err := Open(path)
	require.ErrorIs(t, err, ErrUnsound)
	assert.Regexp(t, `^store: .*dubsim.db is damaged \(.*\)\. Run `+"`"+`dubsim check --data .*dubsim.db`+"`"+` for details; to recover the data, restore the file from a backup; to start fresh, move it away$`, err.Error())
}

func TestCheck(t *testing.T) {
	t.Parallel()
	good := soundFile(t)
	r, err := Check(writeFile(t, good))
	require.NoError(t, err)
	assert.Empty(t, r.Problems)
	assert.Equal(t, 4096, r.PageSize)
	assert.EqualValues(t, len(good), r.Size)
	assert.Contains(t, r.Records, BucketCount{Bucket: "accounts", N: 300})

	path := writeFile(t, good)
	page := damagePage(t, path, false)
	r, err = Check(path)
	require.NoError(t, err)
	require.NotEmpty(t, r.Problems)
	assert.Contains(t, r.Problems[0], fmt.Sprintf("Page expected to be: %d", page), "%q", r.Problems)

	// A record that does not decode.
	path = writeFile(t, good)
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bAccounts).Put([]byte("key-0007"), []byte("{")) }))
	require.NoError(t, db.Close())
	r, err = Check(path)
	require.NoError(t, err)
	require.Len(t, r.Problems, 1)
	assert.Equal(t, `accounts "key-0007": store: corrupt value: not a binary record`, r.Problems[0])
	assert.Contains(t, r.Records, BucketCount{Bucket: "accounts", N: 300})
	assert.True(t, errors.Is(fmt.Errorf("x: %w", errCorrupt), sim.ErrDamaged))
}
