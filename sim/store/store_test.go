package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// openTemp opens a store in a fresh temporary directory; it is closed when
// the test ends.
func openTemp(t *testing.T, opts ...Option) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dubsim.db")
	s, err := Open(path, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, path
}

// opener makes a fresh store of one backend, closed when the test ends.
type opener func(t *testing.T, opts ...Option) *Store

// backends are the backends every contract test runs against.
var backends = []struct {
	name string
	open opener
}{
	{"bbolt", func(t *testing.T, opts ...Option) *Store { s, _ := openTemp(t, opts...); return s }},
	{"memory", func(t *testing.T, opts ...Option) *Store {
		t.Helper()
		s, err := OpenMemory(opts...)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}},
}

// contract runs test once per backend, in parallel: what the store promises
// holds whatever keeps the bytes.
func contract(t *testing.T, test func(t *testing.T, open opener)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			test(t, b.open)
		})
	}
}

// boltDB is the bbolt file under a store Open made.
func boltDB(s *Store) *bolt.DB { return s.kv.(*boltFile).db }

func update(t *testing.T, s sim.Store, fn func(sim.Tx) error) {
	t.Helper()
	require.NoError(t, s.Update(context.Background(), fn))
}

func view(t *testing.T, s sim.Store, fn func(sim.Tx) error) {
	t.Helper()
	require.NoError(t, s.View(context.Background(), fn))
}

// count is how many keys a bucket holds, read from the backend directly.
func count(t *testing.T, s *Store, bucket []byte) int {
	t.Helper()
	n := 0
	require.NoError(t, s.kv.view(func(tx kvTx) error { n = tx.count(bucket); return nil }))
	return n
}

func account(key string, balance int64) sim.Account {
	return sim.Account{APIKey: key, Name: "Account " + key, Plan: sim.PlanPro, BalanceMinutes: balance, CreatedAt: t0}
}

func project(id string, status sim.ProjectStatus, due time.Time) sim.Project {
	return sim.Project{
		ID: id, APIKey: "k", Name: "Project " + id, Status: status, CreatedAt: t0, DueAt: due,
		SourceLang: "en", TargetLang: "fr-FR", DurationMS: 60_000, CostMinutes: 1,
		SourceScript: []sim.Segment{{StartMS: 100, EndMS: 900, Text: "Hello", SpeakerID: 1}},
		Speakers:     []sim.Speaker{{SpeakerID: 1, Style: sim.StyleFeminine, VoiceKey: "v"}},
		History:      []sim.Event{{At: t0, Kind: sim.EventCreated}},
	}
}

func TestGettersReturnErrNotFound(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t)
		update(t, s, func(tx sim.Tx) error {
			// Other records exist, so a lookup cannot succeed by accident.
			require.NoError(t, tx.Accounts().Put(account("present", 1)))
			require.NoError(t, tx.PutProject(project("1", sim.StatusReady, time.Time{})))
			return tx.PutIdempotency("platform", "present", sim.IdemRecord{CreatedAt: t0})
		})
		cases := []struct {
			name string
			get  func(sim.Tx) error
		}{
			{"account", func(tx sim.Tx) error { _, err := tx.Accounts().Get("missing"); return err }},
			{"account with empty key", func(tx sim.Tx) error { _, err := tx.Accounts().Get(""); return err }},
			{"project", func(tx sim.Tx) error { _, err := tx.Project("2"); return err }},
			{"idempotency, other key", func(tx sim.Tx) error { _, err := tx.Idempotency("platform", "missing"); return err }},
			{"idempotency, other scope", func(tx sim.Tx) error { _, err := tx.Idempotency("studio", "present"); return err }},
			{"meta", func(tx sim.Tx) error { _, err := tx.Meta("missing"); return err }},
			{"delete missing project", func(tx sim.Tx) error { return tx.DeleteProject("2") }},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				err := s.Update(context.Background(), tc.get)
				assert.ErrorIs(t, err, sim.ErrNotFound)
			})
		}
	})
}

func TestPutProjectRequiresID(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t)
		err := s.Update(context.Background(), func(tx sim.Tx) error { return tx.PutProject(project("", sim.StatusInProgress, t0)) })
		require.Error(t, err)
		assert.Zero(t, count(t, s, bProjects))
		assert.Zero(t, count(t, s, bDue))
	})
}

func TestDueProjects(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t)
		update(t, s, func(tx sim.Tx) error {
			for _, p := range []sim.Project{
				project("p3", sim.StatusInProgress, t0.Add(3*time.Minute)),
				project("p1", sim.StatusInProgress, t0.Add(1*time.Minute)),
				project("p2b", sim.StatusInProgress, t0.Add(2*time.Minute)),
				project("p2a", sim.StatusInProgress, t0.Add(2*time.Minute)),
				project("p2ns", sim.StatusInProgress, t0.Add(2*time.Minute+time.Nanosecond)),
				project("future", sim.StatusInProgress, t0.Add(time.Hour)),
				project("ready", sim.StatusReady, t0),
				project("error", sim.StatusError, t0),
				project("nodue", sim.StatusInProgress, time.Time{}),
			} {
				if err := tx.PutProject(p); err != nil {
					return err
				}
			}
			return nil
		})
		assert.Equal(t, 6, count(t, s, bDue), "only in-progress projects with a due time are indexed")
		cases := []struct {
			name  string
			now   time.Time
			limit int
			want  []string
		}{
			{"before everything", t0, 10, nil},
			{"exactly at the first due time", t0.Add(time.Minute), 10, []string{"p1"}},
			{"inclusive, same due time ordered by id", t0.Add(2 * time.Minute), 10, []string{"p1", "p2a", "p2b"}},
			{"one nanosecond later", t0.Add(2*time.Minute + time.Nanosecond), 10, []string{"p1", "p2a", "p2b", "p2ns"}},
			{"all past ones, earliest first", t0.Add(30 * time.Minute), 10, []string{"p1", "p2a", "p2b", "p2ns", "p3"}},
			{"limit", t0.Add(30 * time.Minute), 2, []string{"p1", "p2a"}},
			{"limit one", t0.Add(30 * time.Minute), 1, []string{"p1"}},
			{"limit zero", t0.Add(30 * time.Minute), 0, nil},
			{"everything", t0.Add(24 * time.Hour), 100, []string{"p1", "p2a", "p2b", "p2ns", "p3", "future"}},
			{"local time zone of now is irrelevant", t0.Add(2 * time.Minute).In(time.FixedZone("X", -5*3600)), 10, []string{"p1", "p2a", "p2b"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				view(t, s, func(tx sim.Tx) error {
					got, err := tx.DueProjects(tc.now, tc.limit)
					require.NoError(t, err)
					assert.Equal(t, tc.want, got)
					return nil
				})
			})
		}
	})
}

func TestDueIndexFollowsProjects(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		later := t0.Add(time.Hour)
		cases := []struct {
			name string
			// change is applied to project "a" (in progress, due t0+1m); "b"
			// (in progress, due t0+2m) is untouched.
			change    func(tx sim.Tx, a sim.Project) error
			wantDue   []string // due at t0+1h
			wantIndex int
		}{
			{
				name:      "unchanged",
				change:    func(tx sim.Tx, a sim.Project) error { return nil },
				wantDue:   []string{"a", "b"},
				wantIndex: 2,
			},
			{
				name:      "put again unchanged",
				change:    func(tx sim.Tx, a sim.Project) error { return tx.PutProject(a) },
				wantDue:   []string{"a", "b"},
				wantIndex: 2,
			},
			{
				name: "status ready",
				change: func(tx sim.Tx, a sim.Project) error {
					a.Status, a.CompletedAt = sim.StatusReady, t0.Add(time.Minute)
					return tx.PutProject(a)
				},
				wantDue: []string{"b"}, wantIndex: 1,
			},
			{
				name: "status error",
				change: func(tx sim.Tx, a sim.Project) error {
					a.Status = sim.StatusError
					return tx.PutProject(a)
				},
				wantDue: []string{"b"}, wantIndex: 1,
			},
			{
				name:    "deleted",
				change:  func(tx sim.Tx, a sim.Project) error { return tx.DeleteProject(a.ID) },
				wantDue: []string{"b"}, wantIndex: 1,
			},
			{
				name: "moved later than now",
				change: func(tx sim.Tx, a sim.Project) error {
					a.DueAt = later.Add(time.Second)
					return tx.PutProject(a)
				},
				wantDue: []string{"b"}, wantIndex: 2,
			},
			{
				name: "moved after b",
				change: func(tx sim.Tx, a sim.Project) error {
					a.DueAt = t0.Add(3 * time.Minute)
					return tx.PutProject(a)
				},
				wantDue: []string{"b", "a"}, wantIndex: 2,
			},
			{
				name: "due time cleared",
				change: func(tx sim.Tx, a sim.Project) error {
					a.DueAt = time.Time{}
					return tx.PutProject(a)
				},
				wantDue: []string{"b"}, wantIndex: 1,
			},
			{
				name: "ready, then back in progress (re-translation)",
				change: func(tx sim.Tx, a sim.Project) error {
					a.Status = sim.StatusReady
					if err := tx.PutProject(a); err != nil {
						return err
					}
					a.Status, a.DueAt = sim.StatusInProgress, t0.Add(30*time.Minute)
					return tx.PutProject(a)
				},
				wantDue: []string{"b", "a"}, wantIndex: 2,
			},
			{
				name: "moved many times",
				change: func(tx sim.Tx, a sim.Project) error {
					for i := range 10 {
						a.DueAt = t0.Add(time.Duration(10+i) * time.Minute)
						if err := tx.PutProject(a); err != nil {
							return err
						}
					}
					return nil
				},
				wantDue: []string{"b", "a"}, wantIndex: 2,
			},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				s := open(t)
				a := project("a", sim.StatusInProgress, t0.Add(time.Minute))
				update(t, s, func(tx sim.Tx) error {
					require.NoError(t, tx.PutProject(a))
					return tx.PutProject(project("b", sim.StatusInProgress, t0.Add(2*time.Minute)))
				})
				update(t, s, func(tx sim.Tx) error { return tc.change(tx, a) })
				view(t, s, func(tx sim.Tx) error {
					got, err := tx.DueProjects(later, 100)
					require.NoError(t, err)
					assert.Equal(t, tc.wantDue, got)
					return nil
				})
				assert.Equal(t, tc.wantIndex, count(t, s, bDue), "index entries (stale ones count too)")
			})
		}
	})
}

func TestNextSequence(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t)
		next := func(name string) uint64 {
			t.Helper()
			var n uint64
			update(t, s, func(tx sim.Tx) error {
				var err error
				n, err = tx.NextSequence(name)
				return err
			})
			return n
		}
		assert.Equal(t, uint64(1), next("a"), "starts at 1")
		assert.Equal(t, uint64(2), next("a"))
		assert.Equal(t, uint64(1), next("b"), "counters are per name")
		assert.Equal(t, uint64(3), next("a"))

		// Several values in one transaction.
		update(t, s, func(tx sim.Tx) error {
			for want := uint64(4); want <= 6; want++ {
				n, err := tx.NextSequence("a")
				require.NoError(t, err)
				assert.Equal(t, want, n)
			}
			return nil
		})

		// A rolled-back transaction consumes nothing.
		errRollback := errors.New("roll back")
		err := s.Update(context.Background(), func(tx sim.Tx) error {
			n, err := tx.NextSequence("a")
			require.NoError(t, err)
			assert.Equal(t, uint64(7), n)
			_, _ = tx.NextSequence("b")
			return errRollback
		})
		require.ErrorIs(t, err, errRollback)
		assert.Equal(t, uint64(7), next("a"), "the rolled-back value is handed out again")
		assert.Equal(t, uint64(2), next("b"))
	})
}

func TestIdempotencyRecords(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		rec := func(fp string, at time.Time) sim.IdemRecord {
			return sim.IdemRecord{Fingerprint: fp, Status: 200, ContentType: "application/json", Body: []byte(`{"fp":"` + fp + `"}`), CreatedAt: at}
		}
		get := func(t *testing.T, s *Store, scope, key string) (sim.IdemRecord, error) {
			var r sim.IdemRecord
			err := s.View(context.Background(), func(tx sim.Tx) error {
				var err error
				r, err = tx.Idempotency(scope, key)
				return err
			})
			return r, err
		}
		purge := func(t *testing.T, s *Store, cutoff time.Time) int {
			var n int
			update(t, s, func(tx sim.Tx) error {
				var err error
				n, err = tx.PurgeIdempotency(cutoff)
				return err
			})
			return n
		}

		t.Run("put, get, overwrite", func(t *testing.T) {
			t.Parallel()
			s := open(t)
			r1 := rec("one", t0)
			update(t, s, func(tx sim.Tx) error { return tx.PutIdempotency("platform", "k", r1) })
			got, err := get(t, s, "platform", "k")
			require.NoError(t, err)
			assert.Equal(t, r1, got)

			r2 := rec("two", t0.Add(time.Minute))
			update(t, s, func(tx sim.Tx) error { return tx.PutIdempotency("platform", "k", r2) })
			got, err = get(t, s, "platform", "k")
			require.NoError(t, err)
			assert.Equal(t, r2, got, "overwritten")
			assert.Equal(t, 1, count(t, s, bIdem))
			assert.Equal(t, 1, count(t, s, bIdemExp), "the old time index entry is gone")

			// Scopes are separate name spaces, also for keys that could be
			// confused by a naive concatenation.
			update(t, s, func(tx sim.Tx) error {
				require.NoError(t, tx.PutIdempotency("studio", "k", rec("studio", t0)))
				return tx.PutIdempotency("plat", "formk", rec("plat", t0))
			})
			got, err = get(t, s, "platform", "k")
			require.NoError(t, err)
			assert.Equal(t, "two", got.Fingerprint)
			got, err = get(t, s, "studio", "k")
			require.NoError(t, err)
			assert.Equal(t, "studio", got.Fingerprint)
		})

		t.Run("purge removes exactly the records created before the cutoff", func(t *testing.T) {
			t.Parallel()
			s := open(t)
			records := map[string]time.Time{
				"old":        t0.Add(-2 * time.Hour),
				"older":      t0.Add(-48 * time.Hour),
				"just-old":   t0.Add(-time.Nanosecond),
				"at-cutoff":  t0,
				"new":        t0.Add(time.Hour),
				"refreshed":  t0.Add(-3 * time.Hour), // overwritten below with a new time
				"backdated":  t0.Add(time.Hour),      // overwritten below with an old time
				"other-zone": t0.Add(-time.Minute).In(time.FixedZone("X", 7200)),
			}
			update(t, s, func(tx sim.Tx) error {
				for key, at := range records {
					if err := tx.PutIdempotency("platform", key, rec(key, at)); err != nil {
						return err
					}
				}
				require.NoError(t, tx.PutIdempotency("platform", "refreshed", rec("refreshed", t0.Add(time.Minute))))
				return tx.PutIdempotency("platform", "backdated", rec("backdated", t0.Add(-time.Minute)))
			})
			require.Equal(t, len(records), count(t, s, bIdemExp), "one index entry per record")

			assert.Equal(t, 5, purge(t, s, t0), "old, older, just-old, backdated, other-zone")
			for key, gone := range map[string]bool{
				"old": true, "older": true, "just-old": true, "backdated": true, "other-zone": true,
				"at-cutoff": false, "new": false, "refreshed": false,
			} {
				_, err := get(t, s, "platform", key)
				if gone {
					assert.ErrorIs(t, err, sim.ErrNotFound, key)
				} else {
					assert.NoError(t, err, key)
				}
			}
			assert.Equal(t, 3, count(t, s, bIdem))
			assert.Equal(t, 3, count(t, s, bIdemExp), "index entries of purged records are gone")
			assert.Zero(t, purge(t, s, t0), "a second purge finds nothing")
			assert.Equal(t, 2, purge(t, s, t0.Add(time.Hour)), "at-cutoff and refreshed")
			assert.Equal(t, 1, count(t, s, bIdemExp))
		})

		t.Run("purge of an empty store", func(t *testing.T) {
			t.Parallel()
			s := open(t)
			assert.Zero(t, purge(t, s, t0))
		})

		t.Run("a rolled-back purge removes nothing", func(t *testing.T) {
			t.Parallel()
			s := open(t)
			update(t, s, func(tx sim.Tx) error { return tx.PutIdempotency("p", "k", rec("x", t0.Add(-time.Hour))) })
			errRollback := errors.New("roll back")
			err := s.Update(context.Background(), func(tx sim.Tx) error {
				n, err := tx.PurgeIdempotency(t0)
				require.NoError(t, err)
				assert.Equal(t, 1, n)
				return errRollback
			})
			require.ErrorIs(t, err, errRollback)
			_, err = get(t, s, "p", "k")
			assert.NoError(t, err)
			assert.Equal(t, 1, purge(t, s, t0))
		})
	})
}

func TestResetData(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t)
		update(t, s, func(tx sim.Tx) error {
			require.NoError(t, tx.Accounts().Put(account("k1", 1)))
			require.NoError(t, tx.Accounts().Put(account("k2", 2)))
			require.NoError(t, tx.PutProject(project("p1", sim.StatusInProgress, t0)))
			require.NoError(t, tx.PutProject(project("p2", sim.StatusReady, time.Time{})))
			require.NoError(t, tx.PutIdempotency("platform", "k", sim.IdemRecord{CreatedAt: t0}))
			require.NoError(t, tx.PutMeta("clock", []byte("state")))
			for range 3 {
				if _, err := tx.NextSequence("projects"); err != nil {
					return err
				}
			}
			return nil
		})
		update(t, s, func(tx sim.Tx) error { return tx.ResetData() })

		view(t, s, func(tx sim.Tx) error {
			n := 0
			require.NoError(t, tx.Accounts().ForEach(func(sim.Account) error { n++; return nil }))
			require.NoError(t, tx.ForEachProjectHead(func(sim.Project) error { n++; return nil }))
			assert.Zero(t, n, "no accounts or projects left")
			_, err := tx.Accounts().Get("k1")
			assert.ErrorIs(t, err, sim.ErrNotFound)
			_, err = tx.Project("p1")
			assert.ErrorIs(t, err, sim.ErrNotFound)
			_, err = tx.Idempotency("platform", "k")
			assert.ErrorIs(t, err, sim.ErrNotFound)
			due, err := tx.DueProjects(t0.Add(time.Hour), 10)
			require.NoError(t, err)
			assert.Empty(t, due)
			m, err := tx.Meta("clock")
			require.NoError(t, err, "meta survives")
			assert.Equal(t, "state", string(m))
			return nil
		})
		for _, b := range allData {
			assert.Zero(t, count(t, s, b), "bucket %s", b)
		}
		update(t, s, func(tx sim.Tx) error {
			n, err := tx.NextSequence("projects")
			assert.Equal(t, uint64(4), n, "sequences survive: ids are never reused")
			return err
		})
		// The store is usable after a reset.
		update(t, s, func(tx sim.Tx) error { return tx.PutProject(project("p3", sim.StatusInProgress, t0)) })
		view(t, s, func(tx sim.Tx) error {
			due, err := tx.DueProjects(t0, 10)
			require.NoError(t, err)
			assert.Equal(t, []string{"p3"}, due)
			return nil
		})
	})
}

func TestUnreadableValues(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		cases := []struct {
			name    string
			raw     string
			wantErr string
		}{
			{"unknown envelope version", `{"v":2,"d":{"api_key":"x"}}`, "value version 2"},
			{"missing envelope version", `{"d":{"api_key":"x"}}`, "value version 0"},
			{"not JSON", `garbage`, "corrupt value"},
			{"empty value", ``, "corrupt value"},
			{"payload of the wrong shape", `{"v":1,"d":[1,2]}`, "cannot unmarshal"},
		}
		type reader struct {
			bucket []byte
			key    string
			read   func(sim.Tx) error
		}
		readers := map[string]reader{
			"account": {bAccounts, "bad", func(tx sim.Tx) error { _, err := tx.Accounts().Get("bad"); return err }},
			"accounts": {bAccounts, "bad", func(tx sim.Tx) error {
				return tx.Accounts().ForEach(func(sim.Account) error { return nil })
			}},
			"project": {bProjects, "bad", func(tx sim.Tx) error { _, err := tx.Project("bad"); return err }},
			"projects": {bProjects, "bad", func(tx sim.Tx) error {
				return tx.ForEachProjectHead(func(sim.Project) error { return nil })
			}},
			"project overwrite": {bProjects, "bad", func(tx sim.Tx) error { return tx.PutProject(project("bad", sim.StatusReady, time.Time{})) }},
			"project delete":    {bProjects, "bad", func(tx sim.Tx) error { return tx.DeleteProject("bad") }},
			"idempotency": {bIdem, idemKey("s", "bad"), func(tx sim.Tx) error {
				_, err := tx.Idempotency("s", "bad")
				return err
			}},
		}
		for _, tc := range cases {
			for rname, r := range readers {
				t.Run(tc.name+"/"+rname, func(t *testing.T) {
					t.Parallel()
					s := open(t)
					key := []byte(r.key)
					if bytes.Equal(r.bucket, bProjects) {
						key = s.projectKey(r.key)
					}
					require.NoError(t, s.kv.update(func(tx kvTx) error {
						return tx.put(r.bucket, key, []byte(tc.raw))
					}))
					want := tc.wantErr
					if !bytes.Equal(r.bucket, bIdem) { // accounts and projects: binary records only
						want = "corrupt value: not a binary record"
					}
					var err error
					require.NotPanics(t, func() { err = s.Update(context.Background(), r.read) })
					require.Error(t, err)
					assert.NotErrorIs(t, err, sim.ErrNotFound)
					assert.Contains(t, err.Error(), want)
				})
			}
		}
	})
}

func TestContextCancelled(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		called := false
		fn := func(sim.Tx) error { called = true; return nil }
		assert.ErrorIs(t, s.View(ctx, fn), context.Canceled)
		assert.ErrorIs(t, s.Update(ctx, fn), context.Canceled)
		assert.False(t, called, "no transaction runs for a cancelled context")
	})
}

// A reader never sees a write transaction before it commits, nor after it
// fails, and sees it once it has committed.
func TestViewSeesOnlyCommittedWrites(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t)
		errRefused := errors.New("refused")
		for _, fail := range []bool{true, false} {
			written, release := make(chan struct{}), make(chan struct{})
			done := make(chan error, 1)
			go func() {
				done <- s.Update(context.Background(), func(tx sim.Tx) error {
					if err := tx.Accounts().Put(account("k", 1)); err != nil {
						return err
					}
					close(written)
					<-release
					if fail {
						return errRefused
					}
					return nil
				})
			}()
			<-written
			view(t, s, func(tx sim.Tx) error {
				_, err := tx.Accounts().Get("k")
				assert.ErrorIs(t, err, sim.ErrNotFound, "a write in flight is seen")
				return nil
			})
			close(release)
			err := <-done
			view(t, s, func(tx sim.Tx) error {
				_, got := tx.Accounts().Get("k")
				if fail {
					require.ErrorIs(t, err, errRefused)
					assert.ErrorIs(t, got, sim.ErrNotFound, "a failed write is seen")
				} else {
					require.NoError(t, err)
					assert.NoError(t, got, "a committed write is not seen")
				}
				return nil
			})
		}
	})
}

func TestConcurrentUpdates(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t)
		const (
			workers    = 16
			increments = 25
			initial    = 1000
		)
		update(t, s, func(tx sim.Tx) error { return tx.Accounts().Put(account("shared", initial)) })
		var wg sync.WaitGroup
		errs := make(chan error, 2*workers*increments) // one per Update and per View
		for w := range workers {
			wg.Go(func() {
				for range increments {
					errs <- s.Update(context.Background(), func(tx sim.Tx) error {
						a, err := tx.Accounts().Get("shared")
						if err != nil {
							return err
						}
						a.BalanceMinutes++
						if err := tx.Accounts().Put(a); err != nil {
							return err
						}
						// Interleave readers and other writes.
						_, err = tx.NextSequence(fmt.Sprint("w", w))
						return err
					})
				}
			})
			wg.Go(func() {
				for range increments {
					errs <- s.View(context.Background(), func(tx sim.Tx) error {
						a, err := tx.Accounts().Get("shared")
						if err == nil && (a.BalanceMinutes < initial || a.BalanceMinutes > initial+workers*increments) {
							err = fmt.Errorf("balance %d out of range", a.BalanceMinutes)
						}
						return err
					})
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		view(t, s, func(tx sim.Tx) error {
			a, err := tx.Accounts().Get("shared")
			require.NoError(t, err)
			assert.Equal(t, int64(initial+workers*increments), a.BalanceMinutes, "no lost update")
			return nil
		})
		update(t, s, func(tx sim.Tx) error {
			for w := range workers {
				n, err := tx.NextSequence(fmt.Sprint("w", w))
				require.NoError(t, err)
				assert.Equal(t, uint64(increments+1), n)
			}
			return nil
		})
	})
}

func TestForEachVisitsEveryRecord(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t)
		update(t, s, func(tx sim.Tx) error {
			for i := range 20 {
				require.NoError(t, tx.Accounts().Put(account(fmt.Sprint("k", i), int64(i))))
				require.NoError(t, tx.PutProject(project(fmt.Sprint("p", i), sim.StatusReady, time.Time{})))
			}
			return nil
		})
		var keys, ids []string
		stop := errors.New("stop")
		view(t, s, func(tx sim.Tx) error {
			require.NoError(t, tx.Accounts().ForEach(func(a sim.Account) error { keys = append(keys, a.APIKey); return nil }))
			require.NoError(t, tx.ForEachProjectHead(func(p sim.Project) error { ids = append(ids, p.ID); return nil }))
			n := 0
			err := tx.Accounts().ForEach(func(sim.Account) error { n++; return stop })
			assert.ErrorIs(t, err, stop, "the callback's error ends the walk")
			assert.Equal(t, 1, n)
			return nil
		})
		assert.Len(t, keys, 20)
		assert.Len(t, ids, 20)
		assert.True(t, slices.Contains(keys, "k7"))
		assert.True(t, slices.Contains(ids, "p19"))
	})
}

// A project with no script, speakers, input or pending re-translation has
// no body record; one that gets them has, and loses it when they go. The
// history lives in the head.
func TestProjectBodyRecordOnlyWhenNeeded(t *testing.T) {
	contract(t, func(t *testing.T, open opener) {
		s := open(t)
		hasBody := func(id string) bool {
			var ok bool
			require.NoError(t, s.kv.view(func(tx kvTx) error { ok = tx.get(bBodies, s.projectKey(id)) != nil; return nil }))
			return ok
		}
		p := sim.Project{ID: "800000001", APIKey: "k", Status: sim.StatusInProgress, CreatedAt: t0, DueAt: t0.Add(time.Minute),
			History: []sim.Event{{At: t0, Kind: sim.EventCreated}}}
		update(t, s, func(tx sim.Tx) error { return tx.PutProject(p) })
		assert.False(t, hasBody(p.ID), "created from a URL: head only")
		var got sim.Project
		view(t, s, func(tx sim.Tx) (err error) { got, err = tx.Project(p.ID); return })
		assert.Equal(t, p.History, got.History)

		p.Status, p.DueAt = sim.StatusReady, time.Time{}
		p.SourceScript = []sim.Segment{{StartMS: 0, EndMS: 1000, Text: "a"}}
		p.TargetScript, p.Speakers = p.SourceScript, []sim.Speaker{{SpeakerID: 0, Style: "masculine", VoiceKey: "v"}}
		update(t, s, func(tx sim.Tx) error { return tx.PutProject(p) })
		assert.True(t, hasBody(p.ID))
		view(t, s, func(tx sim.Tx) (err error) { got, err = tx.Project(p.ID); return })
		assert.Equal(t, p, got)

		p.SourceScript, p.TargetScript, p.Speakers = nil, nil, nil
		update(t, s, func(tx sim.Tx) error { return tx.PutProject(p) })
		assert.False(t, hasBody(p.ID), "emptied: the body record goes")
	})
}
