package sandbox_test

import (
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/sandbox"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/require"
)

// TestSandboxManagerCost measures what a sandbox costs as the binary makes
// it, through sandbox.Manager.Create: the figures of "After step 2" in
// docs/design/sandboxes.md. A measurement, not a check: it runs only with
// DUBSIM_SANDBOX_COST=1 and prints a table.
//
//	DUBSIM_SANDBOX_COST=1 go test ./sim/sandbox -run TestSandboxManagerCost -v -count=1
//
// Rows: fsync (every commit synced, as the default simulator's store) with
// 1, 50 and 200 frozen sandboxes; nosync (store.NoSync: the binary's
// sandboxes, fidelity SB11, and the tests) with 200; running: 200 nosync
// sandboxes whose clocks run (time_scale 1), which the process's tick
// sweeps.
func TestSandboxManagerCost(t *testing.T) {
	if os.Getenv("DUBSIM_SANDBOX_COST") != "1" {
		t.Skip("a measurement: set DUBSIM_SANDBOX_COST=1 to run it")
	}
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	t.Logf("GOMAXPROCS=%d %s", runtime.GOMAXPROCS(0), runtime.Version())
	t.Logf("%-7s %4s | %8s %8s | %8s %8s %8s | %5s %5s | %7s | %9s %9s %9s | %8s",
		"kind", "N", "create", "p90", "heap/sb", "warm/sb", "rss/sb", "fd/sb", "gor/sb", "file/sb", "tick-all", "tick/sb", "tick-save", "delete")
	for _, row := range []struct {
		kind  string
		n     int
		sync  bool
		scale float64
	}{
		{"fsync", 1, true, 0}, {"fsync", 50, true, 0}, {"fsync", 200, true, 0},
		{"nosync", 200, false, 0}, {"running", 200, false, 1},
	} {
		r := measureManager(t, fx, row.n, row.sync, row.scale)
		t.Logf("%-7s %4d | %8s %8s | %8s %8s %8s | %5.1f %5.1f | %7s | %9s %9s %9s | %8s",
			row.kind, row.n, r.createMean.Round(time.Microsecond*10), r.createP90.Round(time.Microsecond*10),
			kb(r.heap), kb(r.heapWarm), kb(r.rss), r.fds, r.goroutines, kb(r.file),
			r.tickAll.Round(time.Microsecond), (r.tickAll / time.Duration(row.n)).Round(time.Microsecond/10),
			r.tickSave.Round(time.Microsecond), r.deleteMean.Round(time.Microsecond*10))
	}
	t.Log("create: mean Manager.Create (files, store, server.New, clock and record written); p90: its 90th percentile;")
	t.Log("heap/sb: HeapAlloc after GC per idle sandbox; warm/sb: the same after one platform and one studio request each (through Manager.Handler);")
	t.Log("rss/sb: VmRSS growth per sandbox (after debug.FreeOSMemory); fd/sb, gor/sb: descriptors and goroutines per sandbox;")
	t.Log("file/sb: bytes of <id>.db and <id>.blobs/ per sandbox; tick-all: one Manager.Tick over all N (mean of 20, clocks saved already);")
	t.Log("tick/sb: tick-all / N; tick-save: the first Manager.Tick, which also saves the running clocks (at most 20 a tick); delete: mean Manager.Delete.")
}

type managerCost struct {
	createMean, createP90 time.Duration
	heap, heapWarm, rss   float64 // bytes per sandbox
	file                  float64
	fds, goroutines       float64
	tickAll, tickSave     time.Duration
	deleteMean            time.Duration
}

type figures struct {
	heap            uint64
	rss             int64
	fds, goroutines int
}

func settleProcess(t *testing.T) figures {
	t.Helper()
	for range 3 {
		runtime.GC()
	}
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return figures{heap: ms.HeapAlloc, rss: residentBytes(t), fds: len(fds), goroutines: runtime.NumGoroutine()}
}

func residentBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			require.NoError(t, err)
			return n << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

func measureManager(t *testing.T, fx *sim.Fixtures, n int, sync bool, scale float64) managerCost {
	t.Helper()
	ctx := context.Background()
	sh, err := server.NewShared(server.Config{})
	require.NoError(t, err)
	defer func() { require.NoError(t, sh.Close()) }()
	opts := []store.Option{store.KeySeed(0)}
	if !sync {
		opts = append(opts, store.NoSync())
	}
	dir := filepath.Join(t.TempDir(), "sandboxes")
	m, err := sandbox.New(sandbox.Config{
		Base:   server.Config{Fixtures: fx, FixtureFS: fixtures.FS, Timing: sim.DefaultTiming},
		Shared: sh, Dir: dir, Max: -1, StoreOptions: opts,
	})
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close(ctx)) }()

	before := settleProcess(t)
	durations := make([]time.Duration, 0, n)
	ids := make([]string, 0, n)
	for range n {
		began := time.Now()
		sb, err := m.Create(ctx, "", sandbox.Options{TimeScale: scale})
		require.NoError(t, err)
		durations = append(durations, time.Since(began))
		ids = append(ids, sb.ID)
	}
	idle := settleProcess(t)

	var r managerCost
	var sum time.Duration
	for _, d := range durations {
		sum += d
	}
	r.createMean = sum / time.Duration(n)
	slices.Sort(durations)
	r.createP90 = durations[len(durations)*9/10]
	per := func(after, before int64) float64 { return float64(after-before) / float64(n) }
	r.heap = per(int64(idle.heap), int64(before.heap))
	r.rss = per(idle.rss, before.rss)
	r.fds = per(int64(idle.fds), int64(before.fds))
	r.goroutines = per(int64(idle.goroutines), int64(before.goroutines))

	// The process's tick: the first saves every running clock (once a
	// second each), the next ones only sweep.
	began := time.Now()
	require.NoError(t, m.Tick(ctx))
	r.tickSave = time.Since(began)
	const rounds = 20
	began = time.Now()
	for range rounds {
		require.NoError(t, m.Tick(ctx))
	}
	r.tickAll = time.Since(began) / rounds

	// Warm: one platform and one studio request each, by key.
	h := m.Handler(http.NotFoundHandler(), sandbox.PickMain)
	for _, id := range ids {
		for _, path := range []string{"/api/v1/options", "/api/v1/artifacts/create?fileName=a.mp4"} {
			req := httptest.NewRequest("GET", path, nil)
			req.Header.Set("Authorization", "Bearer "+sandbox.KeyPrefix(id)+"dubsim-pro")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, http.StatusOK, rec.Code, "%s: %s", path, rec.Body)
		}
	}
	warm := settleProcess(t)
	r.heapWarm = per(int64(warm.heap), int64(before.heap))

	var bytes int64
	require.NoError(t, filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			bytes += fi.Size()
		}
		return err
	}))
	r.file = float64(bytes) / float64(n)

	began = time.Now()
	for _, id := range ids {
		require.NoError(t, m.Delete(ctx, id))
	}
	r.deleteMean = time.Since(began) / time.Duration(n)
	return r
}

func kb(b float64) string { return strconv.FormatFloat(b/1024, 'f', 1, 64) + "K" }
