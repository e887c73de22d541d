package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	berrors "go.etcd.io/bbolt/errors"
)

// Concurrent Batch calls all commit, each exactly once in effect, and
// calls that fail leave nothing behind while the others sharing their
// transaction still commit.
func TestBatchGroupCommit(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t, NoSync())
		ctx := context.Background()
		const n = 400
		errBad := errors.New("refused")
		var wg sync.WaitGroup
		errs := make([]error, n)
		runs := make([]int, n)
		var mu sync.Mutex
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.Batch(ctx, func(tx sim.Tx) error {
					mu.Lock()
					runs[i]++
					mu.Unlock()
					if _, err := tx.NextSequence("all"); err != nil {
						return err
					}
					if err := tx.Accounts().Put(account(fmt.Sprintf("k%03d", i), int64(i))); err != nil {
						return err
					}
					if i%7 == 0 {
						return errBad // after writing: the write must not survive
					}
					return nil
				})
			}()
		}
		wg.Wait()
		committed := 0
		for i, err := range errs {
			if i%7 == 0 {
				require.ErrorIs(t, err, errBad, "call %d", i)
				assert.GreaterOrEqual(t, runs[i], 1)
				continue
			}
			require.NoError(t, err, "call %d", i)
			committed++
		}
		view(t, s, func(tx sim.Tx) error {
			for i := range n {
				_, err := tx.Accounts().Get(fmt.Sprintf("k%03d", i))
				if i%7 == 0 {
					assert.ErrorIs(t, err, sim.ErrNotFound, "failed call %d left its write", i)
				} else {
					assert.NoError(t, err, "call %d", i)
				}
			}
			return nil
		})
		// The sequence counts the successful calls once each: a call rerun after
		// a failure beside it was rolled back before.
		update(t, s, func(tx sim.Tx) error {
			next, err := tx.NextSequence("all")
			require.NoError(t, err)
			assert.Equal(t, uint64(committed+1), next)
			return nil
		})
	})
}

// A panic inside a batched fn does not end the process from the writer
// goroutine: the caller gets it, in its own goroutine, and the store goes on.
func TestBatchPanicReachesTheCaller(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t, NoSync())
		ctx := context.Background()
		assert.PanicsWithValue(t, "boom", func() {
			_ = s.Batch(ctx, func(sim.Tx) error { panic("boom") })
		})
		require.NoError(t, s.Batch(ctx, func(tx sim.Tx) error { return tx.Accounts().Put(account("after", 1)) }))
		view(t, s, func(tx sim.Tx) error { _, err := tx.Accounts().Get("after"); return err })
	})
}

// Close commits what is queued; later calls are refused, not lost in a
// channel nobody reads.
func TestBatchAndClose(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "d.db")
	s, err := Open(path, NoSync())
	require.NoError(t, err)
	ctx := context.Background()
	var wg sync.WaitGroup
	const n = 50
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Batch(ctx, func(tx sim.Tx) error { return tx.Accounts().Put(account(fmt.Sprintf("c%02d", i), 1)) })
		}()
	}
	wg.Wait()
	require.NoError(t, s.Close())
	assert.ErrorIs(t, s.Batch(ctx, func(sim.Tx) error { return nil }), errClosed)

	s, err = Open(path, NoSync())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	view(t, s, func(tx sim.Tx) error {
		for i := range n {
			require.NoError(t, errs[i])
			if _, err := tx.Accounts().Get(fmt.Sprintf("c%02d", i)); err != nil {
				return fmt.Errorf("c%02d: %w", i, err)
			}
		}
		return nil
	})
}

// Calls racing Close either commit or get errClosed; none hangs.
func TestBatchRacingClose(t *testing.T) {
	t.Parallel()
	s, err := Open(filepath.Join(t.TempDir(), "d.db"), NoSync())
	require.NoError(t, err)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Batch(ctx, func(tx sim.Tx) error { return tx.Accounts().Put(account(fmt.Sprint(i), 1)) })
			if err != nil && !errors.Is(err, errClosed) && !errors.Is(err, berrors.ErrDatabaseNotOpen) {
				t.Errorf("call %d: %v", i, err)
			}
		}()
	}
	require.NoError(t, s.Close())
	wg.Wait()
}
