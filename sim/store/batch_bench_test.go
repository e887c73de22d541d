package store_test

import (
	"context"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/require"
)

// BenchmarkBatchCreates is concurrent creations through Batch (a sequence
// and a project each, as Create Project writes) with fsync on, from 1, 16,
// 64 and 256 goroutines: a lone write's latency, and the throughput of
// shared commits under load. It decided the group commit of batch.go
// against bbolt's DB.Batch (Batch calling db.Batch instead of commit.do):
// figures in docs/fidelity.md, section Store.
//
//	go test -run XXX -bench BatchCreates -benchtime 2s ./sim/store
func BenchmarkBatchCreates(b *testing.B) {
	for _, clients := range []int{1, 16, 64, 256} {
		b.Run(strconv.Itoa(clients), func(b *testing.B) {
			s, err := store.Open(filepath.Join(b.TempDir(), "bench.db"))
			require.NoError(b, err)
			b.Cleanup(func() { _ = s.Close() })
			ctx := context.Background()
			var n atomic.Int64
			b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
			if clients == 1 {
				for b.Loop() {
					create(b, s, ctx, int(n.Add(1)))
				}
				return
			}
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					create(b, s, ctx, int(n.Add(1)))
				}
			})
		})
	}
}

func create(b *testing.B, s *store.Store, ctx context.Context, i int) {
	if err := s.Batch(ctx, func(tx sim.Tx) error {
		if _, err := tx.NextSequence("platform_projects"); err != nil {
			return err
		}
		return tx.PutProject(smallProject(i))
	}); err != nil {
		b.Fatal(err)
	}
}
