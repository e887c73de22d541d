package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/require"
)

// TestSandboxCost measures what one more complete simulator costs in this
// process if a sandbox (issue 21) were built as one more server.New: the
// figures of docs/design/sandboxes.md. Sandboxes as sim/sandbox makes them
// (Manager.Create) are measured by TestSandboxManagerCost there. It is a measurement, not a check, and
// takes about a minute, so it runs only with DUBSIM_SANDBOX_COST=1:
//
//	DUBSIM_SANDBOX_COST=1 go test ./sim/server -run TestSandboxCost -v -count=1
//
// Two layouts of the store:
//   - file: each instance opens a bbolt file of its own (store.Open in a
//     directory of its own), as internal/simtest does;
//   - shared: every instance is assembled over one store.Store. sim/store
//     has no namespaces today, so the instances share their records; what
//     this measures is everything a sandbox costs except its records, the
//     floor of a design with one file and a bucket namespace per sandbox;
//   - shr-j1: shared, with a journal of one entry: the journal preallocates
//     its ring (journal.New), the largest part of an idle instance's heap.
//
// Every instance has its own frozen clock (sim.NewSimClock at scale 0), the
// default fixtures (loaded once and shared, as a sandbox registry would),
// its own blob directory and the default configuration otherwise.
func TestSandboxCost(t *testing.T) {
	if os.Getenv("DUBSIM_SANDBOX_COST") != "1" {
		t.Skip("a measurement: set DUBSIM_SANDBOX_COST=1 to run it")
	}
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	t.Logf("GOMAXPROCS=%d %s", runtime.GOMAXPROCS(0), runtime.Version())
	t.Logf("%-6s %4s | %9s %9s | %9s %9s %9s | %6s %6s | %7s %9s | %9s %9s",
		"store", "N", "create/i", "create%", "heap/i", "heapw/i", "rss/i", "fd/i", "gor/i", "disk/i", "tick/i", "tick-all", "close/i")
	for _, layout := range []string{"file", "shared", "shr-j1"} {
		for _, n := range []int{1, 50, 200} {
			r := measureSandboxes(t, layout, n, fx)
			t.Logf("%-6s %4d | %9s %9s | %9s %9s %9s | %6.1f %6.1f | %7s %9s | %9s %9s",
				layout, n, r.createMean.Round(time.Microsecond), r.createP90.Round(time.Microsecond),
				kib(r.heap), kib(r.heapWarm), kib(r.rss), r.fds, r.goroutines, kib(r.disk),
				r.tickEach.Round(time.Microsecond/10), r.tickAll.Round(time.Microsecond), r.closeMean.Round(time.Microsecond))
		}
	}
	t.Log("create/i: mean creation (store open + server.New); create%: its 90th percentile;")
	t.Log("heap/i: HeapAlloc after GC per idle instance; heapw/i: the same after one platform and one studio request each;")
	t.Log("rss/i: VmRSS growth per instance (after debug.FreeOSMemory); fd/i, gor/i: open descriptors and goroutines per instance;")
	t.Log("disk/i: store file bytes per instance; tick/i: one engine.Clock.Tick of an idle instance; tick-all: one sweep of all N.")
}

type sandboxCost struct {
	createMean, createP90 time.Duration
	heap, heapWarm, rss   float64 // bytes per instance
	disk                  float64
	fds, goroutines       float64
	tickEach, tickAll     time.Duration
	closeMean             time.Duration
}

type processFigures struct {
	heap       uint64
	rss        int64
	fds        int
	goroutines int
}

// settle collects garbage and returns freed pages, then reads the figures.
func settle(t *testing.T) processFigures {
	t.Helper()
	for range 3 {
		runtime.GC()
	}
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return processFigures{heap: ms.HeapAlloc, rss: vmRSS(t), fds: len(fds), goroutines: runtime.NumGoroutine()}
}

func vmRSS(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

func measureSandboxes(t *testing.T, layout string, n int, fx *sim.Fixtures) sandboxCost {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	var shared *store.Store
	if layout != "file" {
		var err error
		shared, err = store.Open(filepath.Join(root, "shared.db"), store.NoSync())
		require.NoError(t, err)
	}
	var journalBytes int64 // the default, journal.DefaultMaxBytes
	if layout == "shr-j1" {
		journalBytes = 1 // one entry
	}
	// The process's resources, shared as sandboxes will share them.
	sh, err := server.NewShared(server.Config{})
	require.NoError(t, err)
	defer func() { require.NoError(t, sh.Close()) }()
	before := settle(t)
	type instance struct {
		srv *server.Server
		st  *store.Store
	}
	all := make([]instance, 0, n)
	durations := make([]time.Duration, 0, n)
	for i := range n {
		dir := filepath.Join(root, fmt.Sprint(i))
		require.NoError(t, os.Mkdir(dir, 0o700))
		began := time.Now()
		st := shared
		if st == nil {
			var err error
			st, err = store.Open(filepath.Join(dir, "dubsim.db"), store.NoSync())
			require.NoError(t, err)
		}
		srv, err := server.New(ctx, server.Config{
			Store: st, Clock: sim.NewSimClock(func() time.Time { return time.Unix(1_700_000_000, 0) }, 0),
			Fixtures: fx, FixtureFS: fixtures.FS, Timing: sim.DefaultTiming, BlobDir: filepath.Join(dir, "blobs"),
			JournalBytes: journalBytes, Shared: sh,
		})
		require.NoError(t, err)
		durations = append(durations, time.Since(began))
		inst := instance{srv: srv}
		if shared == nil {
			inst.st = st
		}
		all = append(all, inst)
	}
	idle := settle(t)
	if p := os.Getenv("DUBSIM_SANDBOX_COST_HEAP"); p != "" && n == 200 {
		// The heap of 200 idle instances, to see what their bytes are:
		// go tool pprof -sample_index=inuse_space -top <file>
		f, err := os.Create(p + "." + layout)
		require.NoError(t, err)
		require.NoError(t, pprof.Lookup("heap").WriteTo(f, 0))
		require.NoError(t, f.Close())
	}

	var r sandboxCost
	var sum time.Duration
	for _, d := range durations {
		sum += d
	}
	r.createMean = sum / time.Duration(n)
	sorted := append([]time.Duration(nil), durations...)
	for i := range sorted { // insertion sort: n is small
		for j := i; j > 0 && sorted[j] < sorted[j-1]; j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	r.createP90 = sorted[(len(sorted)*9)/10]
	per := func(after, before int64) float64 { return float64(after-before) / float64(n) }
	r.heap = per(int64(idle.heap), int64(before.heap))
	r.rss = per(idle.rss, before.rss)
	r.fds = per(int64(idle.fds), int64(before.fds))
	r.goroutines = per(int64(idle.goroutines), int64(before.goroutines))

	// One sweep of every idle instance, as one sweeper over all sandboxes
	// would run it at every tick (the binary ticks every 200 ms).
	const rounds = 20
	began := time.Now()
	for range rounds {
		for _, in := range all {
			_, err := in.srv.Engine.Clock.Tick(ctx)
			require.NoError(t, err)
		}
	}
	r.tickAll = time.Since(began) / rounds
	r.tickEach = r.tickAll / time.Duration(n)

	// Warm: one platform and one studio request each, then the heap again
	// (caches built on first use, the journal's first entries).
	for _, in := range all {
		for _, req := range []*http.Request{
			httptest.NewRequest("GET", "/api/v1/options", nil),
			httptest.NewRequest("GET", "/api/v1/artifacts/create?fileName=a.mp4", nil),
		} {
			req.Header.Set("Authorization", "Bearer dubsim-pro")
			rec := httptest.NewRecorder()
			in.srv.Handler.ServeHTTP(rec, req)
			require.Less(t, rec.Code, 500, "%s %s: %s", req.Method, req.URL, rec.Body)
		}
	}
	warm := settle(t)
	r.heapWarm = per(int64(warm.heap), int64(before.heap))

	if shared == nil {
		var disk int64
		for _, in := range all {
			fi, err := os.Stat(in.st.Path())
			require.NoError(t, err)
			disk += fi.Size()
		}
		r.disk = float64(disk) / float64(n)
	} else {
		fi, err := os.Stat(shared.Path())
		require.NoError(t, err)
		r.disk = float64(fi.Size()) / float64(n)
	}

	began = time.Now()
	for _, in := range all {
		require.NoError(t, in.srv.Close())
		if in.st != nil {
			require.NoError(t, in.st.Close())
		}
	}
	r.closeMean = time.Since(began) / time.Duration(n)
	if shared != nil {
		require.NoError(t, shared.Close())
	}
	return r
}

func kib(b float64) string { return fmt.Sprintf("%.1fK", b/1024) }
