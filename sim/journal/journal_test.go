package journal_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func okHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := http.StatusOK
		if s := r.URL.Query().Get("status"); s != "" {
			_, _ = fmt.Sscan(s, &status)
		}
		w.WriteHeader(status)
	})
}

func seqs(es []journal.Entry) []uint64 {
	out := []uint64{}
	for _, e := range es {
		out = append(out, e.Seq)
	}
	return out
}

func paths(es []journal.Entry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.Path)
	}
	return out
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	st := journal.New(journal.Config{}).Stats()
	assert.Equal(t, journal.Stats{MaxBytes: 4 << 20, MaxBody: 8192}, st)
}

// entrySize is what one request of the journal's tests (GET /rN) counts.
func entrySize(t *testing.T) int64 {
	t.Helper()
	j := newJournal(newClock(), journal.Config{})
	serve(j.Middleware(okHandler()), newRequest("GET", "/r1", ""))
	return j.Stats().Bytes
}

func TestMaxBytesAndDropOrder(t *testing.T) {
	t.Parallel()
	size := entrySize(t)
	stats := func(stored int, total, dropped uint64) journal.Stats {
		return journal.Stats{MaxBytes: 3 * size, Bytes: int64(stored) * size, MaxBody: 8192, Stored: stored, Total: total, Dropped: dropped, LastSeq: total}
	}
	tests := []struct {
		name    string
		sent    int
		want    []string // newest first
		stats   journal.Stats
		wantSeq []uint64
	}{
		{"below the bound", 2, []string{"/r2", "/r1"}, stats(2, 2, 0), []uint64{2, 1}},
		{"exactly at the bound", 3, []string{"/r3", "/r2", "/r1"}, stats(3, 3, 0), []uint64{3, 2, 1}},
		{"oldest dropped", 5, []string{"/r5", "/r4", "/r3"}, stats(3, 5, 2), []uint64{5, 4, 3}},
		{"dropped many times over", 8, []string{"/r8", "/r7", "/r6"}, stats(3, 8, 5), []uint64{8, 7, 6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j := newJournal(newClock(), journal.Config{MaxBytes: 3 * size})
			h := j.Middleware(okHandler())
			for i := 1; i <= tc.sent; i++ {
				serve(h, newRequest("GET", fmt.Sprintf("/r%d", i), ""))
			}
			got := j.Entries(journal.Filter{})
			assert.Equal(t, tc.want, paths(got))
			assert.Equal(t, tc.wantSeq, seqs(got))
			assert.Equal(t, tc.stats, j.Stats())
		})
	}
}

// An entry larger than the whole bound is kept until the next one comes:
// the newest request is always there to verify.
func TestEntryLargerThanTheBound(t *testing.T) {
	t.Parallel()
	j := newJournal(newClock(), journal.Config{MaxBytes: 1})
	h := j.Middleware(okHandler())
	serve(h, newRequest("GET", "/r1", ""))
	assert.Equal(t, []string{"/r1"}, paths(j.Entries(journal.Filter{})))
	serve(h, newRequest("GET", "/r2", ""))
	assert.Equal(t, []string{"/r2"}, paths(j.Entries(journal.Filter{})))
	assert.Equal(t, uint64(1), j.Stats().Dropped)
}

func TestResetKeepsSequence(t *testing.T) {
	t.Parallel()
	size := entrySize(t)
	j := newJournal(newClock(), journal.Config{MaxBytes: 2 * size})
	h := j.Middleware(okHandler())
	for i := 0; i < 3; i++ {
		serve(h, newRequest("GET", "/a1", ""))
	}
	j.Reset()
	assert.Empty(t, j.Entries(journal.Filter{}))
	assert.Equal(t, journal.Stats{MaxBytes: 2 * size, MaxBody: 8192, LastSeq: 3}, j.Stats())
	serve(h, newRequest("GET", "/b1", ""))
	got := j.Entries(journal.Filter{})
	require.Len(t, got, 1)
	assert.Equal(t, uint64(4), got[0].Seq, "ids are never reused")
	assert.Equal(t, journal.Stats{MaxBytes: 2 * size, Bytes: size, MaxBody: 8192, Stored: 1, Total: 1, LastSeq: 4}, j.Stats())
}

func TestEntriesAreCopies(t *testing.T) {
	t.Parallel()
	j := newJournal(newClock(), journal.Config{})
	serve(j.Middleware(okHandler()), newRequest("POST", "/api/v1/projects", "{}", "Content-Type", "application/json"))
	got := j.Entries(journal.Filter{})
	require.Len(t, got, 1)
	got[0].Headers["Content-Type"] = "changed"
	assert.Equal(t, "application/json", j.Entries(journal.Filter{})[0].Headers["Content-Type"])
}

func TestFilters(t *testing.T) {
	t.Parallel()
	c := newClock()
	j := newJournal(c, journal.Config{})
	h := j.Middleware(okHandler())
	reqs := []struct{ method, target, key string }{
		{"GET", "/api/v1/balance", "a"},                               // 1
		{"POST", "/api/v1/projects?status=400", "a"},                  // 2
		{"GET", "/api/v1/projects/123", "b"},                          // 3
		{"DELETE", "/api/v1/projects/123?status=404", "b"},            // 4
		{"POST", "/api/v1/projects/123/translations?status=500", "a"}, // 5
		{"GET", "/files/projects/123/1/audio.wav", ""},                // 6
		{"GET", "/api/v1/projects/456?status=201", "a"},               // 7
	}
	for _, r := range reqs {
		req := newRequest(r.method, r.target, "")
		if r.key != "" {
			req.Header.Set("Authorization", "Bearer "+r.key)
		}
		serve(h, req)
	}
	tests := []struct {
		name string
		f    journal.Filter
		want []uint64
	}{
		{"all, newest first", journal.Filter{}, []uint64{7, 6, 5, 4, 3, 2, 1}},
		{"method", journal.Filter{Method: "GET"}, []uint64{7, 6, 3, 1}},
		{"method case-insensitive", journal.Filter{Method: "delete"}, []uint64{4}},
		{"exact path", journal.Filter{Path: "/api/v1/projects"}, []uint64{2}},
		{"exact path does not match longer paths", journal.Filter{Path: "/api/v1/projects/123"}, []uint64{4, 3}},
		{"glob", journal.Filter{Path: "/api/v1/projects/*"}, []uint64{7, 5, 4, 3}},
		{"glob in the middle", journal.Filter{Path: "/api/*/123"}, []uint64{4, 3}},
		{"glob prefix", journal.Filter{Path: "*/translations"}, []uint64{5}},
		{"status exact", journal.Filter{Status: "404"}, []uint64{4}},
		{"status 2xx", journal.Filter{Status: "2xx"}, []uint64{7, 6, 3, 1}},
		{"status 4xx", journal.Filter{Status: "4xx"}, []uint64{4, 2}},
		{"status 5xx", journal.Filter{Status: "5xx"}, []uint64{5}},
		{"api key", journal.Filter{APIKey: "b"}, []uint64{4, 3}},
		{"since", journal.Filter{Since: 5}, []uint64{7, 6}},
		{"since the last", journal.Filter{Since: 7}, []uint64{}},
		{"limit keeps the newest", journal.Filter{Limit: 2}, []uint64{7, 6}},
		{"combined", journal.Filter{Method: "GET", APIKey: "a", Path: "/api/v1/*", Limit: 1}, []uint64{7}},
		{"no match", journal.Filter{APIKey: "zzz"}, []uint64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, seqs(j.Entries(tc.f)))
		})
	}
}

func TestParseStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		err      bool
	}{
		{"", "", false}, {"404", "404", false}, {"0", "0", false}, {"4xx", "4xx", false}, {"5XX", "5xx", false},
		{" 200 ", "200", false}, {"6xx", "", true}, {"0xx", "", true}, {"99", "", true}, {"600", "", true},
		{"0404", "", true}, {"4x", "", true}, {"abc", "", true}, {"-1", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := journal.ParseStatus(tc.in)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, journal.Status(tc.want), got)
		})
	}
}

func TestEntryTimes(t *testing.T) {
	t.Parallel()
	c := newClock()
	j := newJournal(c, journal.Config{})
	h := j.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.Advance(1500 * time.Microsecond) }))
	serve(h, newRequest("GET", "/x", ""))
	e := j.Entries(journal.Filter{})[0]
	assert.Equal(t, t0, e.Time)
	assert.Equal(t, simT0, e.SimTime)
	assert.Equal(t, 1500*time.Microsecond, e.Duration)

	noSim := journal.New(journal.Config{Now: c.Now})
	serve(noSim.Middleware(okHandler()), newRequest("GET", "/x", ""))
	assert.True(t, noSim.Entries(journal.Filter{})[0].SimTime.IsZero(), "no SimNow, no simulated time")
}

// TestKeepsTheNewestInOrder: the journal's memory grows as entries come
// (from nothing) and its slice is compacted as the oldest go; across the
// growths, the drops and a reset it keeps the newest entries in order.
func TestKeepsTheNewestInOrder(t *testing.T) {
	t.Parallel()
	const capacity = 40 // entries the bound holds: past several growths of the slice
	newest := func(sent, kept int) []string {
		out := []string{}
		for i := sent; i > sent-kept; i-- {
			out = append(out, fmt.Sprintf("/r%03d", i))
		}
		return out
	}
	size := entrySize(t) + 2 // "/r001" is two bytes longer than "/r1"
	tests := []struct {
		name    string
		sent    int
		reset   bool // reset after sending, then send sent again
		stored  int
		dropped uint64
	}{
		{name: "empty", sent: 0},
		{name: "one", sent: 1, stored: 1},
		{name: "a few", sent: 17, stored: 17},
		{name: "capacity-1", sent: capacity - 1, stored: capacity - 1},
		{name: "capacity", sent: capacity, stored: capacity},
		{name: "capacity+1", sent: capacity + 1, stored: capacity, dropped: 1},
		{name: "three times round", sent: 3*capacity + 7, stored: capacity, dropped: 2*capacity + 7},
		{name: "after reset, below capacity", sent: 5, reset: true, stored: 5},
		{name: "after reset, past capacity", sent: capacity + 3, reset: true, stored: capacity, dropped: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j := newJournal(newClock(), journal.Config{MaxBytes: capacity * size})
			h := j.Middleware(okHandler())
			sent := 0
			send := func(n int) {
				for range n {
					sent++
					serve(h, newRequest("GET", fmt.Sprintf("/r%03d", sent), ""))
				}
			}
			send(tc.sent)
			if tc.reset {
				j.Reset()
				send(tc.sent)
			}
			got := j.Entries(journal.Filter{})
			assert.Equal(t, newest(sent, tc.stored), paths(got))
			for i, e := range got {
				assert.Equal(t, uint64(sent-i), e.Seq)
			}
			assert.Equal(t, journal.Stats{MaxBytes: capacity * size, Bytes: int64(tc.stored) * size, MaxBody: 8192, Stored: tc.stored, Total: uint64(tc.sent),
				Dropped: tc.dropped, LastSeq: uint64(sent)}, j.Stats())
		})
	}
}

// TestEntriesKeepTheOrderOfArrival: a request stored after a later one
// (its answer went out before the journal had read its body, so the
// client's next request was stored first) is listed in the order the two
// arrived, and keeps the later sequence id, so that ?since= finds it.
func TestEntriesKeepTheOrderOfArrival(t *testing.T) {
	c := newClock()
	j := newJournal(c, journal.Config{})
	release := make(chan struct{})
	arrived := make(chan struct{})
	h := j.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/first" {
			close(arrived)
			<-release
		}
		w.WriteHeader(http.StatusOK)
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(h, newRequest("GET", "/api/v1/first", ""))
	}()
	<-arrived
	c.Advance(time.Millisecond)
	serve(h, newRequest("GET", "/api/v1/second", ""))
	close(release)
	<-done

	var paths []string
	var seqs []uint64
	for _, e := range j.Entries(journal.Filter{}) {
		paths, seqs = append(paths, e.Path), append(seqs, e.Seq)
	}
	assert.Equal(t, []string{"/api/v1/second", "/api/v1/first"}, paths, "newest arrival first")
	assert.Equal(t, []uint64{1, 2}, seqs, "sequence ids in the order stored")
	since := j.Entries(journal.Filter{Since: 1})
	require.Len(t, since, 1)
	assert.Equal(t, "/api/v1/first", since[0].Path)
}
