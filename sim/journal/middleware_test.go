package journal_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/dubsim/dubsim/sim/journal"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func only(t *testing.T, j *journal.Journal) journal.Entry {
	t.Helper()
	es := j.Entries(journal.Filter{})
	require.Len(t, es, 1)
	return es[0]
}

func TestRequestBody(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("0123456789", 10) // 100 bytes
	tests := []struct {
		name      string
		body      string
		read      int // bytes the handler reads; -1 all
		expect    bool
		wantBody  string
		wantSize  int64
		truncated bool
	}{
		{"read whole, kept up to MaxBody", body, -1, false, body[:16], 100, true},
		{"small body read whole", "hello", -1, false, "hello", 5, false},
		{"exactly MaxBody", body[:16], -1, false, body[:16], 16, false},
		{"unread body is kept after the handler", "short body", 0, false, "short body", 10, false},
		{"unread large body: only MaxBody is read", body, 0, false, body[:16], 16, true},
		{"partly read: the rest is kept", "abcdefghij", 4, false, "abcdefghij", 10, false},
		{"Expect 100-continue: unread body is not pulled", body, 0, true, "", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j := newJournal(newClock(), journal.Config{MaxBody: 16})
			var got []byte
			h := j.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.read < 0 {
					got, _ = io.ReadAll(r.Body)
				} else {
					got = make([]byte, tc.read)
					_, _ = io.ReadFull(r.Body, got)
				}
				w.WriteHeader(204)
			}))
			req := newRequest("POST", "/api/v1/x", tc.body)
			if tc.expect {
				req.Header.Set("Expect", "100-continue")
			}
			serve(h, req)
			if tc.read < 0 {
				assert.Equal(t, tc.body, string(got), "the handler receives the whole body")
			}
			e := only(t, j)
			assert.Equal(t, tc.wantBody, e.RequestBody)
			assert.Equal(t, tc.wantSize, e.RequestBodySize)
			assert.Equal(t, tc.truncated, e.RequestBodyTruncated)
		})
	}
}

func TestResponseBody(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 40)
	tests := []struct {
		name      string
		handler   http.HandlerFunc
		status    int
		body      string
		bytes     int64
		truncBody bool
	}{
		{"success body not captured", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"project_id":"1"}`))
		}, 200, "", 18, false},
		{"binary success not captured", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "audio/wav")
			_, _ = w.Write(bytes.Repeat([]byte{0, 1, 2, 3}, 1000))
		}, 200, "", 4000, false},
		{"error body captured", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"error":"NotFoundError"}`[:16]))
		}, 404, `{"error":"NotFou`, 16, false},
		{"error body capped at MaxBody", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			_, _ = w.Write([]byte(long[:10]))
			_, _ = w.Write([]byte(long[10:]))
		}, 500, long[:16], 40, true},
		{"no write is 200", func(w http.ResponseWriter, r *http.Request) {}, 200, "", 0, false},
		{"status without body", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(400) }, 400, "", 0, false},
		{"second WriteHeader ignored", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(409)
			w.WriteHeader(200)
		}, 409, "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j := newJournal(newClock(), journal.Config{MaxBody: 16})
			rec, _ := serve(j.Middleware(tc.handler), newRequest("GET", "/x", ""))
			e := only(t, j)
			assert.Equal(t, tc.status, e.Status)
			assert.Equal(t, tc.status, rec.Code, "the client sees the handler's status")
			assert.Equal(t, tc.body, e.ResponseBody)
			assert.Equal(t, tc.bytes, e.ResponseBytes)
			assert.Equal(t, tc.bytes, int64(rec.Body.Len()), "the client gets every byte")
			assert.Equal(t, tc.truncBody, e.ResponseBodyTruncated)
			assert.False(t, e.Aborted)
			assert.False(t, e.Truncated)
		})
	}
}

// TestInformationalStatus needs a real server: the recorder of httptest
// takes a 1xx status for the final one.
func TestInformationalStatus(t *testing.T) {
	t.Parallel()
	j := newJournal(newClock(), journal.Config{})
	srv := httptest.NewServer(j.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = w.Write([]byte("no"))
	})))
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL + "/x")
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	assert.Equal(t, "no", string(b))
	e := only(t, j)
	assert.Equal(t, http.StatusUnprocessableEntity, e.Status)
	assert.Equal(t, "no", e.ResponseBody)
}

func TestHeadersAndKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		auth    string
		wantKey string
	}{
		{"bearer", "Bearer dubsim-pro", "dubsim-pro"},
		{"scheme is case-insensitive", "bearer dubsim-pro", "dubsim-pro"},
		{"spaces trimmed", "Bearer   k1  ", "k1"},
		{"other scheme", "Basic dXNlcjpwdw==", ""},
		{"no token", "Bearer", ""},
		{"none", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j := newJournal(newClock(), journal.Config{})
			h := j.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "7")
				w.Header().Set("Idempotent-Replayed", "true")
				w.Header().Set("X-Other", "no")
				w.WriteHeader(429)
			}))
			req := newRequest("POST", "/api/v1/projects?a=1&b=2", `{"a":1}`,
				"Content-Type", "application/json", "Idempotency-Key", "idem-9", "User-Agent", "my-client/1.0", "X-Ignored", "x")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			serve(h, req)
			e := only(t, j)
			assert.Equal(t, tc.wantKey, e.APIKey)
			assert.Equal(t, map[string]string{
				"Content-Type": "application/json", "Idempotency-Key": "idem-9", "User-Agent": "my-client/1.0",
				"Content-Length": "7", "Retry-After": "7", "Idempotent-Replayed": "true",
			}, e.Headers)
			assert.Equal(t, "a=1&b=2", e.RawQuery)
			assert.Equal(t, "/api/v1/projects", e.Path)
			assert.Equal(t, "POST", e.Method)
			assert.Equal(t, "platform", e.Interface)
		})
	}
}

func TestResponseHeadersAsSent(t *testing.T) {
	t.Parallel()
	j := newJournal(newClock(), journal.Config{})
	h := j.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(429)
		w.Header().Set("Retry-After", "9") // too late: not sent
	}))
	serve(h, newRequest("GET", "/x", ""))
	assert.NotContains(t, only(t, j).Headers, "Retry-After")
}

func TestLongValuesAreCapped(t *testing.T) {
	t.Parallel()
	j := newJournal(newClock(), journal.Config{})
	long := strings.Repeat("a", 10_000)
	req := newRequest("GET", "/p/"+long+"?q="+long, "", "User-Agent", long)
	req.Header.Set("Authorization", "Bearer "+long)
	serve(j.Middleware(okHandler()), req)
	e := only(t, j)
	assert.Len(t, e.Path, 4096)
	assert.Len(t, e.RawQuery, 4096)
	assert.Len(t, e.Headers["User-Agent"], 512)
	assert.Len(t, e.APIKey, 512)
}

func TestAborted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		panicWith any
		wrote     bool
		note      string
	}{
		{"abort before writing", http.ErrAbortHandler, false, ""},
		{"abort after a partial answer", http.ErrAbortHandler, true, ""},
		{"other panic", "boom", false, "boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j := newJournal(newClock(), journal.Config{})
			h := j.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				journal.SetFault(r.Context(), "drop-1")
				if tc.wrote {
					w.Header().Set("Content-Length", "100")
					w.WriteHeader(200)
					_, _ = w.Write([]byte("partial"))
				}
				panic(tc.panicWith)
			}))
			_, v := serve(h, newRequest("DELETE", "/api/v1/projects/1", ""))
			assert.Equal(t, tc.panicWith, v, "the panic goes on")
			e := only(t, j)
			assert.Equal(t, 0, e.Status)
			assert.True(t, e.Aborted)
			assert.Equal(t, "drop-1", e.Fault)
			assert.Equal(t, tc.wrote, e.Truncated)
			if tc.note != "" {
				assert.Equal(t, map[string]string{journal.NotePanic: tc.note}, e.Notes)
			} else {
				assert.Nil(t, e.Notes)
			}
		})
	}
}

// TestAbortedOverNetwork checks the whole path through a real server: the
// client sees a dropped connection and the journal an aborted entry.
func TestAbortedOverNetwork(t *testing.T) {
	t.Parallel()
	j := newJournal(newClock(), journal.Config{MaxBody: 32})
	got := make(chan int, 1)
	srv := httptest.NewServer(j.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- len(b)
		panic(http.ErrAbortHandler)
	})))
	t.Cleanup(srv.Close)
	body := strings.Repeat("z", 100_000)
	res, err := http.Post(srv.URL+"/api/v1/projects", "application/json", strings.NewReader(body))
	if err == nil {
		res.Body.Close()
	}
	require.Error(t, err, "the connection is dropped")
	e := only(t, j)
	assert.Equal(t, 100_000, <-got, "the handler read the whole body")
	assert.True(t, e.Aborted)
	assert.Equal(t, 0, e.Status)
	assert.Equal(t, body[:32], e.RequestBody)
	assert.Equal(t, int64(100_000), e.RequestBodySize)
	assert.True(t, e.RequestBodyTruncated)
}

func TestTruncatedAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		method string
		h      http.HandlerFunc
		want   bool
	}{
		{"fewer bytes than Content-Length", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "50")
			_, _ = w.Write([]byte("short"))
		}, true},
		{"exact Content-Length", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "5")
			_, _ = w.Write([]byte("exact"))
		}, false},
		{"no Content-Length", "GET", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("any")) }, false},
		{"204 with Content-Length", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "10")
			w.WriteHeader(204)
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j := newJournal(newClock(), journal.Config{})
			serve(j.Middleware(tc.h), newRequest(tc.method, "/x", ""))
			assert.Equal(t, tc.want, only(t, j).Truncated)
		})
	}
}

func TestAnnotations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		annotate  func(r *http.Request)
		wantFault string
		wantNotes map[string]string
	}{
		{"none", func(r *http.Request) {}, "", nil},
		{"fault", func(r *http.Request) { journal.SetFault(r.Context(), "latency-2") }, "latency-2", nil},
		{"last fault wins", func(r *http.Request) {
			journal.SetFault(r.Context(), "a")
			journal.SetFault(r.Context(), "b")
		}, "b", nil},
		{"notes", func(r *http.Request) {
			journal.SetNote(r.Context(), "delay", "250ms")
			journal.SetNote(r.Context(), "who", "test")
			journal.SetNote(r.Context(), "delay", "300ms")
		}, "", map[string]string{"delay": "300ms", "who": "test"}},
		{"notes bounded to 16", func(r *http.Request) {
			for i := 0; i < 20; i++ {
				journal.SetNote(r.Context(), fmt.Sprintf("k%02d", i), "v")
			}
		}, "", func() map[string]string {
			m := map[string]string{}
			for i := 0; i < 16; i++ {
				m[fmt.Sprintf("k%02d", i)] = "v"
			}
			return m
		}()},
		{"annotations from a goroutine of the handler", func(r *http.Request) {
			var wg sync.WaitGroup
			for i := 0; i < 4; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					journal.SetNote(r.Context(), fmt.Sprint(i), "x")
				}()
			}
			wg.Wait()
		}, "", map[string]string{"0": "x", "1": "x", "2": "x", "3": "x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j := newJournal(newClock(), journal.Config{})
			// The annotating layer sits inside the journal, as a fault
			// middleware would.
			inner := func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					tc.annotate(r)
					next.ServeHTTP(w, r)
				})
			}
			serve(j.Middleware(inner(okHandler())), newRequest("GET", "/x", ""))
			e := only(t, j)
			assert.Equal(t, tc.wantFault, e.Fault)
			assert.Equal(t, tc.wantNotes, e.Notes)
		})
	}
}

func TestAnnotationsOutsideMiddleware(t *testing.T) {
	t.Parallel()
	req := newRequest("GET", "/x", "")
	assert.NotPanics(t, func() {
		journal.SetFault(req.Context(), "x")
		journal.SetNote(req.Context(), "k", "v")
	})
}

func TestOwnEndpointsNotRecorded(t *testing.T) {
	t.Parallel()
	j := newJournal(newClock(), journal.Config{})
	r := chi.NewRouter()
	r.Mount("/_sim", j.Routes())
	r.NotFound(okHandler().ServeHTTP)
	h := j.Middleware(r)
	tests := []struct {
		method, target, body string
		recorded             bool
	}{
		{"GET", "/api/v1/balance", "", true},
		{"GET", "/_sim/requests", "", false},
		{"GET", "/_sim/requests?limit=1", "", false},
		{"GET", "/_sim/report?api_key=k", "", false},
		{"POST", "/_sim/requests/verify", `{"path":"/x"}`, false},
		{"GET", "/_sim/clock", "", false}, // control reads are not recorded
		{"HEAD", "/_sim/state", "", false},
		{"GET", "/_sim/requests/", "", false},
		{"POST", "/_sim/clock/advance", `{"seconds":1}`, true}, // control changes are
		{"POST", "/_sim/requests", "", true},                   // not a journal route (405)
		{"DELETE", "/_sim/faults", "", true},
	}
	for _, tc := range tests {
		before := j.Stats().LastSeq
		serve(h, newRequest(tc.method, tc.target, tc.body, "Content-Type", "application/json"))
		after := j.Stats().LastSeq
		assert.Equal(t, tc.recorded, after == before+1, "%s %s", tc.method, tc.target)
	}
	stored := j.Stats().Stored
	require.Positive(t, stored)
	serve(h, newRequest("DELETE", "/_sim/requests", ""))
	assert.Equal(t, 0, j.Stats().Stored, "the reset is not recorded either: a reset journal is empty")
}

func TestFlushAndUnwrap(t *testing.T) {
	t.Parallel()
	j := newJournal(newClock(), journal.Config{})
	h := j.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := w.(http.Flusher)
		require.True(t, ok, "the recorder is a Flusher")
		_, _ = w.Write([]byte("a"))
		f.Flush()
		require.NoError(t, http.NewResponseController(w).Flush())
	}))
	rec, _ := serve(h, newRequest("GET", "/x", ""))
	assert.True(t, rec.Flushed)
	assert.Equal(t, 200, only(t, j).Status)
}

// TestConcurrentUse runs writers and every reader at once (meaningful
// under -race), then checks that no request was lost or duplicated.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	c := newClock()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		journal.SetNote(r.Context(), "n", "1")
		w.WriteHeader(400)
		_, _ = w.Write([]byte(`{"error":"ValidationError"}`))
	})
	request := func(w int) *http.Request {
		req := newRequest("POST", fmt.Sprintf("/api/v1/projects/%d/translations", w), `{"target_speakers":[]}`)
		req.Header.Set("Authorization", fmt.Sprintf("Bearer k%d", w))
		return req
	}
	// Every request has the same size: room for 100 of them.
	probe := newJournal(c, journal.Config{MaxBody: 64})
	serve(probe.Middleware(handler), request(0))
	size := probe.Stats().Bytes
	j := newJournal(c, journal.Config{MaxBytes: 100 * size, MaxBody: 64})
	h := j.Middleware(handler)
	api := chi.NewRouter()
	api.Mount("/_sim", j.Routes())
	const writers, each = 8, 200
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				serve(h, request(w))
			}
		}()
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for _, read := range []func(){
		func() { j.Entries(journal.Filter{Status: "4xx", Limit: 10}) },
		func() { j.Stats() },
		func() { j.Verify(journal.Matcher{Path: "/api/*", BodyContains: "target"}) },
		func() { j.Report("k1").Text() },
		func() { serve(api, newRequest("GET", "/_sim/requests?limit=5", "")) },
	} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for i := 0; i < 200; i++ { // bounded: spinning readers would starve the writers
				select {
				case <-stop:
					return
				default:
					read()
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()

	st := j.Stats()
	assert.Equal(t, journal.Stats{MaxBytes: 100 * size, Bytes: 100 * size, MaxBody: 64, Stored: 100, Total: writers * each, Dropped: writers*each - 100, LastSeq: writers * each}, st)
	got := seqs(j.Entries(journal.Filter{}))
	require.Len(t, got, 100)
	for i, s := range got {
		assert.Equal(t, uint64(writers*each-i), s, "sequence ids are unique and dense")
	}
}

// TestRouteHook: with Config.Route the entry's interface and routed_by are
// what the hook says (the server's routing decision), also in JSON; without
// it the interface is "other" (the journal does not decide) and routed_by is
// absent.
func TestRouteHook(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		route     func(*http.Request) (string, string)
		iface, by string
		jsonBy    bool
	}{
		{"hook", func(r *http.Request) (string, string) { return "studio", "default" }, "studio", "default", true},
		{"no hook: the journal does not decide", nil, journal.InterfaceOther, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newClock()
			j := journal.New(journal.Config{Route: tc.route, Now: c.Now, SimNow: c.SimNow})
			h := j.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
			serve(h, newRequest("POST", "/api/v1/projects", `{"name":"Marketing"}`, "Content-Type", "application/json"))
			e := only(t, j)
			assert.Equal(t, tc.iface, e.Interface)
			assert.Equal(t, tc.by, e.RoutedBy)
			b, err := json.Marshal(e)
			require.NoError(t, err)
			var m map[string]any
			require.NoError(t, json.Unmarshal(b, &m))
			assert.Equal(t, tc.iface, m["interface"])
			v, ok := m["routed_by"]
			assert.Equal(t, tc.jsonBy, ok, "routed_by present")
			if ok {
				assert.Equal(t, tc.by, v)
			}
		})
	}
}
