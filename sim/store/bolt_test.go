package store

// Tests of the bbolt file only: what a file keeps across Open and Close,
// and which files Open refuses. The contract of every backend is in
// store_test.go and studio_test.go.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

func TestOpenCreatesBucketsAndSchema(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	assert.Equal(t, path, s.path)
	require.NoError(t, boltDB(s).View(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			assert.NotNil(t, tx.Bucket(name), "bucket %s", name)
		}
		v := tx.Bucket(bMeta).Get(keySchema)
		require.Len(t, v, 8)
		assert.Equal(t, uint64(SchemaVersion), binary.BigEndian.Uint64(v))
		return nil
	}))
	view(t, s, func(tx sim.Tx) error {
		v, err := tx.Meta(string(keySchema))
		require.NoError(t, err)
		assert.Equal(t, be64(SchemaVersion), v)
		return nil
	})
	err := s.Update(context.Background(), func(tx sim.Tx) error { return tx.PutMeta(string(keySchema), be64(99)) })
	require.Error(t, err, "the schema version is read-only")
}

func TestReopenKeepsData(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		opts []Option
	}{
		{"default", nil},
		{"NoSync", []Option{NoSync()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testReopenKeepsData(t, tc.opts...)
		})
	}
}

func testReopenKeepsData(t *testing.T, opts ...Option) {
	s, path := openTemp(t, opts...)
	acct := account("k1", 42)
	proj := project("100000001", sim.StatusInProgress, t0.Add(time.Minute))
	proj.Pending = &sim.Retranslation{MixingMode: sim.MixVoiceoverOnly, TargetScript: []sim.Segment{{StartMS: 1, EndMS: 2, Text: "x", SpeakerID: 1}}}
	rec := sim.IdemRecord{Fingerprint: "fp", Status: 201, ContentType: "application/json", Body: []byte(`{"a":1}`), CreatedAt: t0}
	var seq uint64
	update(t, s, func(tx sim.Tx) error {
		require.NoError(t, tx.Accounts().Put(acct))
		require.NoError(t, tx.PutProject(proj))
		require.NoError(t, tx.PutIdempotency("platform", "key-1", rec))
		require.NoError(t, tx.PutMeta("clock", []byte(`{"last":"x"}`)))
		var err error
		seq, err = tx.NextSequence("projects")
		return err
	})
	require.NoError(t, s.Close())

	s2, err := Open(path, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s2.Close() })
	view(t, s2, func(tx sim.Tx) error {
		got, err := tx.Accounts().Get("k1")
		require.NoError(t, err)
		assert.Equal(t, acct, got)
		p, err := tx.Project(proj.ID)
		require.NoError(t, err)
		assert.Equal(t, proj, p)
		r, err := tx.Idempotency("platform", "key-1")
		require.NoError(t, err)
		assert.Equal(t, rec, r)
		m, err := tx.Meta("clock")
		require.NoError(t, err)
		assert.Equal(t, `{"last":"x"}`, string(m))
		due, err := tx.DueProjects(t0.Add(time.Hour), 10)
		require.NoError(t, err)
		assert.Equal(t, []string{proj.ID}, due, "the due index survives")
		return nil
	})
	update(t, s2, func(tx sim.Tx) error {
		n, err := tx.NextSequence("projects")
		assert.Equal(t, seq+1, n, "sequences survive")
		return err
	})
}

func TestOpenRejectsOtherSchemaVersions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		value   []byte
		wantErr string
	}{
		{"newer version", be64(SchemaVersion + 1), fmt.Sprintf("store schema %d, this one reads %d", SchemaVersion+1, SchemaVersion)},
		{"schema 3", be64(3), "store schema 3, this one reads 4"},
		{"older version", be64(0), "store schema 0"},
		{"malformed version", []byte{1}, "schema version"},
		{"empty version", []byte{}, "schema version"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "old.db")
			db, err := bolt.Open(path, 0o600, nil)
			require.NoError(t, err)
			require.NoError(t, db.Update(func(tx *bolt.Tx) error {
				b, err := tx.CreateBucket(bMeta)
				if err != nil {
					return err
				}
				return b.Put(keySchema, tc.value)
			}))
			require.NoError(t, db.Close())

			s, err := Open(path)
			require.Error(t, err)
			assert.Nil(t, s)
			assert.Contains(t, err.Error(), tc.wantErr)
			if len(tc.value) == 8 { // one line naming the file and what to do
				assert.ErrorIs(t, err, ErrOtherSchema)
				assert.Equal(t, fmt.Sprintf(MsgOtherSchema, path, binary.BigEndian.Uint64(tc.value), SchemaVersion), err.Error())
			}

			// The failed Open released the file and changed nothing.
			db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
			require.NoError(t, err, "the file is still locked after a failed Open")
			defer db.Close()
			require.NoError(t, db.View(func(tx *bolt.Tx) error {
				assert.Equal(t, tc.value, tx.Bucket(bMeta).Get(keySchema))
				assert.Nil(t, tx.Bucket(bAccounts), "no bucket created in a refused file")
				return nil
			}))
		})
	}
}

// TestOpenRefusesSchema3: a file of the layout before schema 4, where
// accounts and projects could be JSON records and a project's history could
// sit in its body record, is refused (by Open and by Check) with the one
// line that names the file and the way out (a new file), and left byte for
// byte as it was: its records are never read.
func TestOpenRefusesSchema3(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	jsonRecord := func(v any) []byte {
		b, err := json.Marshal(envelope{V: valueVersion, D: v})
		require.NoError(t, err)
		return b
	}
	records := []struct{ bucket, key, value []byte }{
		{bMeta, keySchema, be64(3)},
		{bMeta, keyKeySeed, be64(0)},
		{bMeta, keySecret, make([]byte, SecretBytes)},
		{bAccounts, []byte("k1"), jsonRecord(account("k1", 5))},
		{bProjects, be64(1), jsonRecord(project("100000001", sim.StatusReady, time.Time{}))},
		{bBodies, be64(1), jsonRecord(map[string]any{"history": []sim.Event{{At: t0, Kind: sim.EventCompleted}}})},
	}
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		for _, r := range records {
			b, err := tx.CreateBucketIfNotExists(r.bucket)
			if err != nil {
				return err
			}
			if err := b.Put(r.key, r.value); err != nil {
				return err
			}
		}
		return nil
	}))
	require.NoError(t, db.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	s, err := Open(path)
	require.Error(t, err)
	assert.Nil(t, s)
	assert.ErrorIs(t, err, ErrOtherSchema)
	assert.Equal(t, "store: "+path+" was written by another dubsim version (store schema 3, this one reads 4): "+
		"move it away (or give another --data file) to start fresh, or open it with the dubsim that wrote it", err.Error())
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(before, after), "the refused file is left as it was")

	// dubsim check says the same, not that its records are damaged.
	_, err = Check(path)
	assert.ErrorIs(t, err, ErrOtherSchema)
	assert.Equal(t, fmt.Sprintf(MsgOtherSchema, path, 3, SchemaVersion), err.Error())
}

// TestOpenLockedFile: a second Open of a file another store holds fails
// within LockWait with a message that says so (not after bbolt's default of
// waiting forever).
func TestOpenLockedFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "dubsim.db")
	first, err := Open(path, NoSync())
	require.NoError(t, err)
	defer first.Close()

	start := time.Now()
	second, err := Open(path, NoSync())
	took := time.Since(start)
	require.ErrorIs(t, err, ErrLocked)
	assert.Nil(t, second)
	assert.Equal(t, fmt.Sprintf(MsgLocked, path), err.Error())
	assert.Contains(t, err.Error(), "another dubsim holds it")
	assert.Less(t, took, 10*LockWait, "it gives up after LockWait")

	require.NoError(t, first.Close())
	again, err := Open(path, NoSync())
	require.NoError(t, err, "the lock goes with the first store")
	require.NoError(t, again.Close())
}

// checkStudio asserts that the records of putStudio and their indexes are
// in s.
func checkStudio(t *testing.T, s *Store) {
	t.Helper()
	view(t, s, func(tx sim.Tx) error {
		c, err := tx.Companies().Get("c1")
		require.NoError(t, err)
		assert.Equal(t, company("c1"), c)
		u, err := tx.UserByEmail("ann@example.com")
		require.NoError(t, err)
		assert.Equal(t, user("u1", "c1", "Ann@Example.com"), u)
		_, err = tx.Glossaries().Get("g1")
		require.NoError(t, err)
		_, err = tx.Folders().Get("f1")
		require.NoError(t, err)
		v, err := tx.Videos().Get("v1")
		require.NoError(t, err)
		assert.Equal(t, video("v1", "sp1", t0.Add(time.Minute)), v)
		a, err := tx.Artifacts().Get("a1")
		require.NoError(t, err)
		assert.Equal(t, artifact("a1", t0.Add(time.Second)), a)
		up, err := tx.Uploads().Get("up1")
		require.NoError(t, err)
		assert.Equal(t, upload("up1"), up)
		videos, err := tx.DueVideos(t0.Add(time.Hour), 10)
		require.NoError(t, err)
		assert.Equal(t, []string{"v1"}, videos)
		artifacts, err := tx.DueArtifacts(t0.Add(time.Hour), 10)
		require.NoError(t, err)
		assert.Equal(t, []string{"a1"}, artifacts)
		return nil
	})
	assert.Equal(t, []string{"sp1"}, studioProjectIDs(t, s, "c1"))
	assert.Equal(t, []string{"v1"}, videoIDs(t, s, "sp1"))
}

func TestReopenKeepsStudioData(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	update(t, s, putStudio)
	require.NoError(t, s.Close())

	s2, err := Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s2.Close() })
	checkStudio(t, s2)
}
