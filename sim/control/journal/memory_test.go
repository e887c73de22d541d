package journal_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/dubsim/dubsim/sim/control/journal"
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
// one answered 400 with a 1 KiB body, which is kept) through a journal of
// 500 entries: once the ring is full, the heap must not grow.
// Not parallel: it reads the process's heap statistics.
func TestMemoryStaysFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 20,000 requests")
	}
	const capacity = 500
	body := bytes.Repeat([]byte("b"), 4<<10)
	errBody := bytes.Repeat([]byte("e"), 1<<10)
	j := journal.New(journal.Config{Capacity: capacity})
	h := j.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/api/v1/projects/err" {
			w.WriteHeader(400)
			_, _ = w.Write(errBody)
			return
		}
		_, _ = w.Write(errBody) // a success body: not kept
	}))
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
	assert.Equal(t, capacity, st.Stored)
	assert.Equal(t, uint64(20000-capacity), st.Dropped)
	// What the ring holds: 500 request bodies and 250 error bodies (plus
	// headers and bookkeeping): bodies are kept without slack.
	held := uint64(capacity*(4<<10) + capacity/2*(1<<10))
	assert.Less(t, alloc5k-baseAlloc, held*5/4, "the journal holds its capacity's worth of bodies, no more")
	// Live bytes must not grow at all once the ring is full (a leak of even
	// 5 bytes per request would show); HeapInuse also counts fragmentation
	// of the allocator's spans, which moves by up to about 1.5 MiB between
	// runs, while keeping the 15,000 extra requests would add about 70 MiB.
	assert.LessOrEqual(t, alloc20k, alloc5k+64<<10, "live heap stays flat once the capacity is reached")
	assert.LessOrEqual(t, at20k, at5k+2<<20, "HeapInuse stays flat once the capacity is reached")
}
