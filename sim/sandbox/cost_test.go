package sandbox_test

import (
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/sandbox"
	"github.com/dubsim/dubsim/sim/store"
)

// BenchmarkSandboxCreate measures what an idle sandbox costs as the binary
// makes it (Manager.Create, its store without fsync, one app.Shared):
// ns/op is one creation; the metrics are per sandbox, over all those the
// benchmark made and kept: heap-B (live heap after a collection),
// heap-warm-B (the same once each has answered a platform and a studio
// request), fds and goroutines, and file-B (its bbolt file and blob
// directory on disk). docs/design/tenancy.md quotes them:
//
//	go test -run XXX -bench BenchmarkSandbox -benchtime 200x ./sim/sandbox/
func BenchmarkSandboxCreate(b *testing.B) {
	fx, err := fixtures.Load(fixtures.FS)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	sh, err := app.NewShared(app.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := sh.Close(); err != nil {
			b.Error(err)
		}
	})
	dir := filepath.Join(b.TempDir(), "sandboxes")
	m, err := app.NewSandboxes(app.Config{Fixtures: fx, FixtureFS: fixtures.FS, Timing: sim.DefaultTiming, Shared: sh},
		sandbox.Config{Dir: dir, Max: -1, StoreOptions: []store.Option{store.KeySeed(0), store.NoSync()}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := m.Close(ctx); err != nil {
			b.Error(err)
		}
	})

	before := settle(b)
	var ids []string
	for b.Loop() {
		sb, err := m.Create(ctx, "", sandbox.Options{})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, sb.ID)
	}
	idle := settle(b)

	h := m.Handler(http.NotFoundHandler(), sandbox.PickMain)
	for _, id := range ids {
		for _, path := range []string{"/api/v1/options", "/api/v1/artifacts/create?fileName=a.mp4"} {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.Header.Set("Authorization", "Bearer "+sandbox.KeyPrefix(id)+"dubsim-pro")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
			}
		}
	}
	warm := settle(b)

	var files int64
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			files += fi.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}

	n := float64(len(ids))
	b.ReportMetric(float64(idle.heap-before.heap)/n, "heap-B/sandbox")
	b.ReportMetric(float64(warm.heap-before.heap)/n, "heap-warm-B/sandbox")
	b.ReportMetric(float64(idle.fds-before.fds)/n, "fds/sandbox")
	b.ReportMetric(float64(idle.goroutines-before.goroutines)/n, "goroutines/sandbox")
	b.ReportMetric(float64(files)/n, "file-B/sandbox")
}

// processFigures is what the process holds at one moment.
type processFigures struct {
	heap            int64
	fds, goroutines int
}

// settle collects the garbage and reads the live heap, the open
// descriptors and the goroutines.
func settle(b *testing.B) processFigures {
	b.Helper()
	for range 3 {
		runtime.GC()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		b.Fatal(err)
	}
	return processFigures{heap: int64(ms.HeapAlloc), fds: len(fds), goroutines: runtime.NumGoroutine()}
}
