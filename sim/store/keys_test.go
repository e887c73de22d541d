package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// keysOf lists a bucket's keys in B+tree order.
func keysOf(t *testing.T, s *Store, bucket []byte) [][]byte {
	t.Helper()
	var keys [][]byte
	require.NoError(t, s.kv.view(func(tx kvTx) error {
		return tx.scan(bucket, nil, func(k, _ []byte) (bool, error) { keys = append(keys, bytes.Clone(k)); return true, nil })
	}))
	return keys
}

func metaSeed(t *testing.T, s *Store) uint64 {
	t.Helper()
	var seed uint64
	require.NoError(t, s.kv.view(func(tx kvTx) error {
		v := tx.get(bMeta, keyKeySeed)
		require.Len(t, v, 8)
		seed = binary.BigEndian.Uint64(v)
		return nil
	}))
	return seed
}

// Projects whose ids the key seed made are stored in creation order: each
// creation appends to the B+tree.
func TestProjectKeysFollowTheSequence(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t, KeySeed(42))
		ids := sim.NewIDs(42)
		const n = 300
		for seq := uint64(0); seq < n; seq++ {
			p := project(ids.PlatformProjectID(seq), sim.StatusReady, time.Time{})
			p.SourceScript = []sim.Segment{{EndMS: 1000, Text: "x"}}
			update(t, s, func(tx sim.Tx) error { return tx.PutProject(p) })
		}
		for _, bucket := range [][]byte{bProjects, bBodies} {
			keys := keysOf(t, s, bucket)
			require.Len(t, keys, n)
			for i, k := range keys {
				require.Equal(t, be64(uint64(i)), k, "%s key %d", bucket, i)
			}
		}
		var order []string
		view(t, s, func(tx sim.Tx) error {
			return tx.ForEachProjectHead(func(p sim.Project) error { order = append(order, p.ID); return nil })
		})
		require.Len(t, order, n)
		for i, id := range order {
			require.Equal(t, ids.PlatformProjectID(uint64(i)), id)
		}
	})
}

// While the clock stands still every creation is due at the same time: the
// due index keeps them in creation order too.
func TestDueIndexOfEqualTimesFollowsTheSequence(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t, KeySeed(3))
		ids := sim.NewIDs(3)
		var want []string
		for seq := uint64(0); seq < 200; seq++ {
			p := project(ids.PlatformProjectID(seq), sim.StatusInProgress, t0.Add(time.Minute))
			want = append(want, p.ID)
			update(t, s, func(tx sim.Tx) error { return tx.PutProject(p) })
		}
		keys := keysOf(t, s, bDue)
		require.Len(t, keys, 200)
		for i, k := range keys {
			require.Equal(t, be64(uint64(i)), k[timeKeyLen:])
		}
		view(t, s, func(tx sim.Tx) error {
			due, err := tx.DueProjects(t0.Add(time.Minute), 1000)
			require.NoError(t, err)
			assert.Equal(t, want, due)
			return nil
		})
	})
}

// Ids the key seed did not make (another seed's, or strings that are not
// nine-digit numbers) are stored, read, listed and deleted like any other.
func TestProjectKeysOfOtherIDs(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t, KeySeed(1))
		other := sim.NewIDs(2)
		idsIn := []string{other.PlatformProjectID(0), other.PlatformProjectID(1), "bad", "", "012345678", "1234567890", "p19", "\xff\x00"}
		for _, id := range idsIn {
			if id == "" {
				continue // PutProject refuses an empty id
			}
			p := project(id, sim.StatusInProgress, t0.Add(time.Hour))
			p.TargetScript = []sim.Segment{{EndMS: 10, Text: id}}
			update(t, s, func(tx sim.Tx) error { return tx.PutProject(p) })
		}
		seen := map[string]bool{}
		view(t, s, func(tx sim.Tx) error {
			return tx.ForEachProjectHead(func(h sim.Project) error {
				p, err := tx.Project(h.ID)
				require.NoError(t, err)
				assert.Equal(t, p.ID, p.TargetScript[0].Text, "the body is found under the key the head's id gives")
				seen[p.ID] = true
				return nil
			})
		})
		assert.Len(t, seen, len(idsIn)-1)
		view(t, s, func(tx sim.Tx) error {
			due, err := tx.DueProjects(t0.Add(2*time.Hour), 100)
			require.NoError(t, err)
			assert.ElementsMatch(t, idsIn, append(due, ""), "the due index gives the ids back")
			return nil
		})
		for _, id := range idsIn[1:] {
			if id == "" {
				view(t, s, func(tx sim.Tx) error {
					_, err := tx.Project(id)
					assert.ErrorIs(t, err, sim.ErrNotFound)
					return nil
				})
				continue
			}
			view(t, s, func(tx sim.Tx) error {
				got, err := tx.Project(id)
				require.NoError(t, err, "%q", id)
				assert.Equal(t, id, got.ID)
				return nil
			})
			update(t, s, func(tx sim.Tx) error { return tx.DeleteProject(id) })
			view(t, s, func(tx sim.Tx) error {
				_, err := tx.Project(id)
				assert.ErrorIs(t, err, sim.ErrNotFound, "%q", id)
				return nil
			})
		}
		view(t, s, func(tx sim.Tx) error {
			_, err := tx.Project(idsIn[0])
			return err
		})
	})
}

func TestOpenRefusesABadKeySeed(t *testing.T) {
	t.Parallel()
	for name, seed := range map[string][]byte{"missing": nil, "malformed": {1, 2}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, path := openTemp(t)
			require.NoError(t, s.kv.update(func(tx kvTx) error {
				if seed == nil {
					return tx.del(bMeta, keyKeySeed)
				}
				return tx.put(bMeta, keyKeySeed, seed)
			}))
			require.NoError(t, s.Close())
			_, err := Open(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), string(keyKeySeed))
		})
	}
}

// Creations one transaction each (as the engine commits them) fill the
// projects' and due index's pages: at bbolt's default split they stayed
// half empty.
func TestAppendedPagesAreFull(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t, NoSync(), KeySeed(9))
	ids := sim.NewIDs(9)
	for seq := uint64(0); seq < 3000; seq++ {
		p := project(ids.PlatformProjectID(seq), sim.StatusInProgress, t0.Add(time.Hour))
		require.NoError(t, s.Batch(context.Background(), func(tx sim.Tx) error { return tx.PutProject(p) }))
	}
	require.NoError(t, boltDB(s).View(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bProjects, bDue} {
			st := tx.Bucket(name).Stats()
			fill := float64(st.LeafInuse) / float64(st.LeafAlloc)
			assert.Greater(t, fill, 0.8, "%s: leaves %.0f%% full (%d pages)", name, 100*fill, st.LeafPageN)
		}
		return nil
	}))
}

// TestIDKey: a new file without KeySeed draws its id key from crypto/rand
// (two files, two keys), KeySeed sets it, and a file keeps its key when
// reopened with or without another.
func TestIDKey(t *testing.T) {
	t.Parallel()
	a, pathA := openTemp(t, NoSync())
	b, _ := openTemp(t, NoSync())
	assert.NotEqual(t, a.IDKey(), b.IDKey(), "two new files without a seed")
	assert.Equal(t, metaSeed(t, a), a.IDKey(), "kept in the file")
	key := a.IDKey()
	require.NoError(t, a.Close())
	for _, opts := range [][]Option{{NoSync()}, {NoSync(), KeySeed(5)}} {
		again, err := Open(pathA, opts...)
		require.NoError(t, err)
		assert.Equal(t, key, again.IDKey(), "reopened: the file's own key")
		require.NoError(t, again.Close())
	}
	seeded, _ := openTemp(t, NoSync(), KeySeed(5))
	assert.Equal(t, uint64(5), seeded.IDKey())
}
