package journal

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fuzzJournal holds a few varied entries for the fuzz targets to select from.
func fuzzJournal(t testing.TB) *Journal {
	now := time.Date(2026, 2, 4, 12, 0, 0, 0, time.UTC)
	j := New(Config{MaxBytes: 64 << 10, Now: func() time.Time { return now }})
	h := j.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"error":"ValidationError","message":"x"}`))
		case http.MethodDelete:
			panic(http.ErrAbortHandler)
		}
	}))
	for _, r := range []struct{ method, target, body, key string }{
		{"GET", "/api/v1/balance", "", "a"},
		{"POST", "/api/v1/projects", `{"name":"n"}`, "a"},
		{"GET", "/api/v1/projects/1", "", "b"},
		{"DELETE", "/api/v1/projects/1", "", "b"},
		{"GET", "/files/projects/1/1/audio.wav", "", ""},
	} {
		req := httptest.NewRequest(r.method, r.target, strings.NewReader(r.body))
		req.Header.Set("Content-Type", "application/json")
		if r.key != "" {
			req.Header.Set("Authorization", "Bearer "+r.key)
		}
		func() {
			defer func() { _ = recover() }()
			h.ServeHTTP(httptest.NewRecorder(), req)
		}()
	}
	require.Equal(t, 5, j.Stats().Stored)
	return j
}

func requireValidationError(t *testing.T, err error) {
	t.Helper()
	var se *sim.Error
	require.True(t, errors.As(err, &se), "a domain error: %v", err)
	assert.Equal(t, sim.CodeValidation, se.Code)
	assert.NotEmpty(t, se.Message)
}

// FuzzFilterQuery checks the query parsing of GET /requests: it never
// panics, refuses with a validation error, and what it accepts round-trips
// and selects what it says.
func FuzzFilterQuery(f *testing.F) {
	for _, s := range []string{
		"", "method=get&path=/api/*&status=4xx&key=k&since=3&limit=2", "status=404", "status=0", "status=5XX",
		"path=*", "path=api", "since=-1", "limit=99999999999", "method=G%20T", "x=1", "status=1&status=2",
		"%zz", "a;b", "key=", "path=/a*b*c", "limit=0&since=0",
	} {
		f.Add(s)
	}
	j := fuzzJournal(f)
	f.Fuzz(func(t *testing.T, raw string) {
		flt, err := parseFilterQuery(raw)
		if err != nil {
			requireValidationError(t, err)
			return
		}
		again, err := parseFilterQuery(flt.query())
		require.NoError(t, err, "re-encoded filter %q", flt.query())
		assert.Equal(t, flt, again)
		got := j.Entries(flt)
		if flt.Limit > 0 {
			assert.LessOrEqual(t, len(got), flt.Limit)
		}
		for i := range got {
			assert.True(t, flt.match(&got[i]), "entry %d is selected", got[i].Seq)
			if i > 0 {
				assert.Less(t, got[i].Seq, got[i-1].Seq, "newest first")
			}
		}
	})
}

// FuzzMatcherJSON checks the body decoding of POST /requests/verify: it
// never panics, refuses with a validation error, and what it accepts is
// valid, round-trips through JSON and verifies consistently.
func FuzzMatcherJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"method":"POST","path":"/api/v1/projects","count":1}`, `{"status":404}`, `{"status":"4xx","at_least":1,"at_most":3}`,
		`{"headers":{"idempotency-key":""}}`, `{"headers":{"X-A":"1"}}`, `{"count":-1}`, `{"count":1,"at_most":1}`,
		`{"body_contains":"name","api_key":"a"}`, `[]`, `{"count":`, `{"status":true}`, `{"status":4.5}`, `{} {}`, `null`,
		`{"headers":{"a":"1","A":"2"}}`, `{"at_least":5,"at_most":1}`, `{"path":"x"}`, `{"status":null}`,
		`{"count":1.0}`, `{"at_least":1e2,"status":4.04e2}`, `{"at_most":1.5}`, `{"count":1e400}`,
	} {
		f.Add([]byte(s))
	}
	j := fuzzJournal(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := decodeMatcher(body)
		if err != nil {
			requireValidationError(t, err)
			return
		}
		require.NoError(t, m.Validate())
		b, err := json.Marshal(m)
		require.NoError(t, err)
		again, err := decodeMatcher(b)
		require.NoError(t, err, "re-encoded matcher %s", b)
		assert.Equal(t, m, again)

		res := j.Verify(m)
		lo, hi := m.bounds()
		assert.Equal(t, res.Matched >= lo && (hi < 0 || res.Matched <= hi), res.OK)
		assert.LessOrEqual(t, len(res.NearMisses), maxNearMisses)
		assert.LessOrEqual(t, res.Matched, j.Stats().Stored)
		if res.OK {
			assert.Empty(t, res.NearMisses)
		}
		for _, nm := range res.NearMisses {
			assert.NotEmpty(t, nm.Reason)
		}
		assert.NotEmpty(t, res.Expected)
	})
}

// TestCaptureBound checks that a capture never asks for more than its
// limit, whatever the hint and the sizes of the writes.
func TestCaptureBound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		limit  int
		hint   int64
		writes []int
		kept   int
	}{
		{"exact hint", 100, 100, []int{30, 30, 40}, 100},
		{"hint larger than the limit", 64, 1 << 20, []int{512, 512}, 64},
		{"unknown size grows in steps", 1000, -1, []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}, 1000},
		{"hint too small", 50, 10, []int{10, 10, 10, 10, 10, 10}, 50},
		{"nothing written", 10, 5, nil, 0},
		{"empty writes", 10, -1, []int{0, 0}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := capture{limit: tc.limit}
			var all []byte
			for i, n := range tc.writes {
				p := []byte(strings.Repeat(string(rune('a'+i%26)), n))
				all = append(all, p...)
				c.write(p, tc.hint)
				if c.b != nil {
					// Cap reports the allocator's size class: at most
					// 12.5% (and 16 bytes for tiny sizes) over the request.
					assert.LessOrEqual(t, c.b.Cap(), tc.limit+tc.limit/8+16, "after write %d", i)
				}
			}
			assert.Equal(t, tc.kept, c.len())
			assert.Equal(t, string(all[:tc.kept]), c.String())
		})
	}
}

func TestVoiceKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       []string
	}{
		{"speakers", `{"target_speakers":[{"speaker_id":1,"voice_key":"a"},{"voice_key":"b","style":"x"}]}`, []string{"a", "b"}},
		{"a value named voice_key is not a key", `{"text":"voice_key","x":{"voice_key":"c"}}`, []string{"c"}},
		{"nested objects before the key", `{"s":[{"o":{"voice_key":"in"},"voice_key":"out"}]}`, []string{"in", "out"}},
		{"cut-off body", `{"target_speakers":[{"voice_key":"a"},{"voice_key":"b`, []string{"a"}},
		{"not a string", `{"voice_key":5}`, nil},
		{"not JSON", `voice_key=a`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, voiceKeys(tc.body))
		})
	}
}

func TestEndpointOf(t *testing.T) {
	t.Parallel()
	tests := []struct{ path, want string }{
		{"/api/v1/projects", "/api/v1/projects"},
		{"/api/v1/projects/123", "/api/v1/projects/{project_id}"},
		{"/api/v1/projects/123/translations", "/api/v1/projects/{project_id}/translations"},
		{"/api/v1/projects//translations", "/api/v1/projects//translations"},
		{"/api/v1/artifacts/create", "/api/v1/artifacts/create"},
		{"/api/v1/artifacts/a1", "/api/v1/artifacts/{artifact_id}"},
		{"/api/v1/projects/p1/videos/create", "/api/v1/projects/{project_id}/videos/create"},
		{"/api/v1/projects/p1/videos/v1", "/api/v1/projects/{project_id}/videos/{video_id}"},
		{"/files/projects/1/2/dubbed_audio.wav", "/files/projects/{project_id}/{generation}/{file}"},
		{"/_sim/clock", "/_sim/clock"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, endpointOf(tc.path))
		})
	}
}

// query encodes f as parseFilterQuery reads it, for the round trip.
func (f Filter) query() string {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("method", f.Method)
	set("path", f.Path)
	set("status", string(f.Status))
	set("key", f.APIKey)
	if f.Since > 0 {
		set("since", strconv.FormatUint(f.Since, 10))
	}
	if f.Limit > 0 {
		set("limit", strconv.Itoa(f.Limit))
	}
	return q.Encode()
}
