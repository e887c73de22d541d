package journal_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim/journal"
	"github.com/stretchr/testify/assert"
)

// nopWriter is a ResponseWriter that keeps nothing, so the test measures
// the journal only.
type nopWriter struct{ h http.Header }

func (w nopWriter) Header() http.Header         { return w.h }
func (w nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w nopWriter) WriteHeader(int)             {}

// heap returns HeapInuse (bytes in spans holding live objects, so with the
// allocator's fragmentation) and HeapAlloc (live bytes) after a collection.
func heap() (inuse, alloc uint64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse, m.HeapAlloc
}

// TestMemoryStaysFlat sends 20,000 requests with 4 KiB bodies (every other
// one answered 400 with a 1 KiB body, which is kept) through a journal
// bounded to about 500 of them: once the bound is reached, the heap must
// not grow, and what the journal counts (Stats.Bytes) is what it holds.
// Not parallel: it reads the process's heap statistics.
func TestMemoryStaysFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 20,000 requests")
	}
	const capacity = 500
	body := bytes.Repeat([]byte("b"), 4<<10)
	errBody := bytes.Repeat([]byte("e"), 1<<10)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/api/v1/projects/err" {
			w.WriteHeader(400)
			_, _ = w.Write(errBody)
			return
		}
		_, _ = w.Write(errBody) // a success body: not kept
	})
	var h http.Handler
	send := func(n int) {
		for i := 0; i < n; i++ {
			path := "/api/v1/projects/ok"
			if i%2 == 1 {
				path = "/api/v1/projects/err"
			}
			req := httptest.NewRequest("POST", path, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer k")
			h.ServeHTTP(nopWriter{h: http.Header{}}, req)
		}
	}
	// The size of a pair of requests, one of each kind.
	probe := journal.New(journal.Config{})
	h = probe.Middleware(handler)
	send(2)
	pair := probe.Stats().Bytes
	j := journal.New(journal.Config{MaxBytes: capacity / 2 * pair})
	h = j.Middleware(handler)

	base, baseAlloc := heap()
	send(5000)
	at5k, alloc5k := heap()
	send(15000)
	at20k, alloc20k := heap()
	t.Logf("HeapInuse: start %d KiB, after 5,000 requests %d KiB, after 20,000 %d KiB (growth %+d KiB)",
		base>>10, at5k>>10, at20k>>10, (int64(at20k)-int64(at5k))/1024)
	t.Logf("HeapAlloc: start %d KiB, after 5,000 requests %d KiB, after 20,000 %d KiB (growth %+d KiB)",
		baseAlloc>>10, alloc5k>>10, alloc20k>>10, (int64(alloc20k)-int64(alloc5k))/1024)

	st := j.Stats()
	assert.InDelta(t, capacity, st.Stored, 1, "the bound holds about 500 entries")
	assert.Equal(t, uint64(20000-st.Stored), st.Dropped)
	assert.LessOrEqual(t, st.Bytes, capacity/2*pair)
	// What the journal counts is what it holds: 500 request bodies and
	// 250 error bodies plus headers and bookkeeping, kept without slack.
	t.Logf("counted %d KiB, live heap grew by %d KiB", st.Bytes>>10, (alloc5k-baseAlloc)>>10)
	assert.InEpsilon(t, float64(st.Bytes), float64(alloc5k-baseAlloc), 0.2, "Stats.Bytes is within 20%% of the heap the entries take")
	// Live bytes must not grow at all once the ring is full (a leak of even
	// 5 bytes per request would show); HeapInuse also counts fragmentation
	// of the allocator's spans, which moves by up to about 1.5 MiB between
	// runs, while keeping the 15,000 extra requests would add about 70 MiB.
	assert.LessOrEqual(t, alloc20k, alloc5k+64<<10, "live heap stays flat once the capacity is reached")
	assert.LessOrEqual(t, at20k, at5k+2<<20, "HeapInuse stays flat once the capacity is reached")
}

// TestLongRequestLinesAreNotKept sends 200 requests whose request line is
// 256 KiB long. net/http's method, path and query are substrings of that
// line; the journal keeps clipped copies, so the lines are not kept alive
// (they would be 50 MiB). Not parallel: it reads the process's heap
// statistics.
func TestLongRequestLinesAreNotKept(t *testing.T) {
	long := strings.Repeat("a", 128<<10)
	j := journal.New(journal.Config{})
	h := j.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	_, base := heap()
	for i := range 200 {
		method := http.MethodGet
		if i%2 == 1 {
			method = "PROPFIND"
		}
		h.ServeHTTP(nopWriter{h: http.Header{}}, httptest.NewRequest(method, "/"+long+"?q="+long, nil))
	}
	_, after := heap()
	st := j.Stats()
	t.Logf("the journal counts %d KiB; the live heap grew by %d KiB", st.Bytes>>10, (int64(after)-int64(base))>>10)
	assert.Equal(t, 200, st.Stored)
	assert.Less(t, int64(after)-int64(base), st.Bytes*5/4, "the heap holds the clipped entries, not the request lines")
}

// TestMemoryDropsFromTheLargestJournal: journals that share a Memory stay
// within its bound together; the one that holds the most loses its oldest
// entries, a quiet one keeps its own; a closed journal gives its bytes
// back.
func TestMemoryDropsFromTheLargestJournal(t *testing.T) {
	t.Parallel()
	size := sendSize()
	mem := journal.NewMemory(10 * size)
	a, b, c := journal.New(journal.Config{Memory: mem}), journal.New(journal.Config{Memory: mem}), journal.New(journal.Config{Memory: mem})
	send(a, "/a", 8)
	send(b, "/b", 3)
	send(c, "/c", 1)
	assert.Equal(t, []int{6, 3, 1}, []int{a.Stats().Stored, b.Stats().Stored, c.Stats().Stored})
	assert.Equal(t, 10*size, mem.Used())
	assert.Equal(t, "/a2", a.Entries(journal.Filter{})[5].Path, "the oldest of the largest went first")

	a.Close()
	assert.Equal(t, 4*size, mem.Used(), "a closed journal holds nothing")
	send(b, "/d", 10)
	assert.Equal(t, []int{9, 1}, []int{b.Stats().Stored, c.Stats().Stored}, "the quiet journal keeps its entry")
	assert.Equal(t, 10*size, mem.Used())
	assert.Equal(t, uint64(4), b.Stats().Dropped)
}

// sendSize is the bytes a journal counts for one request of send.
func sendSize() int64 {
	j := journal.New(journal.Config{})
	send(j, "/r", 1)
	return j.Stats().Bytes
}

// send records n requests GET prefix1...prefixN (one digit: equal sizes).
func send(j *journal.Journal, prefix string, n int) {
	h := j.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for i := range n {
		h.ServeHTTP(nopWriter{h: http.Header{}}, httptest.NewRequest(http.MethodGet, prefix+strconv.Itoa(i%10), nil))
	}
}

// TestClosedJournalKeepsNothing: a request that ends after its journal was
// closed (a sandbox deleted under it) is not kept, so the shared Memory
// counts nothing for a journal it no longer knows.
func TestClosedJournalKeepsNothing(t *testing.T) {
	t.Parallel()
	mem := journal.NewMemory(1 << 20)
	j := journal.New(journal.Config{Memory: mem})
	send(j, "/a", 2)
	j.Close()
	send(j, "/b", 3)
	assert.Zero(t, mem.Used())
	assert.Equal(t, journal.Stats{MaxBytes: journal.DefaultMaxBytes, MaxBody: journal.DefaultMaxBody, Total: 5, LastSeq: 5}, j.Stats())
}

// TestMemoryDropsASixteenthAtATime: past the bound, the journals shrink
// to a sixteenth under it at once, so that the next entries are added
// without another reclaim.
func TestMemoryDropsASixteenthAtATime(t *testing.T) {
	t.Parallel()
	size := sendSize()
	mem := journal.NewMemory(100 * size)
	j := journal.New(journal.Config{Memory: mem, MaxBytes: 1000 * size})
	send(j, "/a", 101)
	assert.Equal(t, 93, j.Stats().Stored, "101 entries: down to 93, under 100 less a sixteenth")
	send(j, "/b", 7)
	assert.Equal(t, uint64(8), j.Stats().Dropped, "the room made takes seven more without a drop")
	send(j, "/c", 1)
	assert.Equal(t, uint64(16), j.Stats().Dropped)
	assert.Equal(t, 93, j.Stats().Stored)
}
