package journal_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/dubsim/dubsim/sim/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr(n int) *int { return &n }

// statusHandler answers the status asked for in X-Want-Status (a test
// control the journal does not record), 200 by default.
func statusHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := 200
		if s := r.Header.Get("X-Want-Status"); s != "" {
			status, _ = strconv.Atoi(s)
		}
		w.WriteHeader(status)
	})
}

type scripted struct {
	method, path, key, body, status string
	header                          []string
}

func record(t *testing.T, j *journal.Journal, reqs []scripted) {
	t.Helper()
	h := j.Middleware(statusHandler())
	for _, s := range reqs {
		req := newRequest(s.method, s.path, s.body, s.header...)
		if s.key != "" {
			req.Header.Set("Authorization", "Bearer "+s.key)
		}
		if s.status != "" {
			req.Header.Set("X-Want-Status", s.status)
		}
		serve(h, req)
	}
}

var verifyScript = []scripted{
	{"POST", "/api/v1/projects", "a", `{"name":"one"}`, "200", []string{"Content-Type", "application/json", "Idempotency-Key", "i1"}},   // 1
	{"POST", "/api/v1/projects", "a", `{"name":"two"}`, "400", []string{"Content-Type", "application/json"}},                            // 2
	{"POST", "/api/v1/projects", "b", `{"name":"three"}`, "200", []string{"Content-Type", "application/json", "Idempotency-Key", "i3"}}, // 3
	{"GET", "/api/v1/projects/1", "a", "", "200", nil},                                                                                  // 4
	{"POST", "/api/v1/projects", "a", "x", "400", []string{"Content-Type", "text/plain"}},                                               // 5
}

func TestVerify(t *testing.T) {
	t.Parallel()
	j := newJournal(newClock(), journal.Config{})
	record(t, j, verifyScript)
	const projects = "/api/v1/projects"
	tests := []struct {
		name     string
		m        journal.Matcher
		matched  int
		ok       bool
		expected string
		near     map[uint64]string // seq -> reason, in order newest first
		nearSeqs []uint64
	}{
		{"count holds", journal.Matcher{Method: "POST", Path: projects, APIKey: "a", Count: ptr(3)}, 3, true,
			`exactly 3 requests matching POST /api/v1/projects, api_key "a"`, nil, nil},
		{"count too low", journal.Matcher{Method: "POST", Path: projects, APIKey: "a", Count: ptr(2)}, 3, false,
			`exactly 2 requests matching POST /api/v1/projects, api_key "a"`,
			map[uint64]string{3: `api_key "b", expected "a"`}, []uint64{3}},
		{"default is at least one", journal.Matcher{Path: projects + "/*"}, 1, true,
			"at least 1 request matching any method /api/v1/projects/*", nil, nil},
		{"default fails on none", journal.Matcher{Method: "DELETE"}, 0, false,
			"at least 1 request matching DELETE any path", nil, nil},
		{"at_least fails", journal.Matcher{Method: "get", Path: projects + "/*", AtLeast: ptr(2)}, 1, false,
			"at least 2 requests matching GET /api/v1/projects/*", nil, nil},
		{"at_most zero holds", journal.Matcher{Method: "DELETE", Path: "*", AtMost: ptr(0)}, 0, true,
			"at most 0 requests matching DELETE *", nil, nil},
		{"at_most fails, near misses newest first", journal.Matcher{Method: "POST", Path: projects, Status: "4xx", AtMost: ptr(1)}, 2, false,
			"at most 1 request matching POST /api/v1/projects, status 4xx",
			map[uint64]string{3: "status 200, expected 4xx", 1: "status 200, expected 4xx"}, []uint64{3, 1}},
		{"between holds", journal.Matcher{Path: projects, AtLeast: ptr(2), AtMost: ptr(4)}, 4, true,
			"between 2 and 4 requests matching any method /api/v1/projects", nil, nil},
		{"header exact value", journal.Matcher{Path: projects, Headers: map[string]string{"idempotency-key": "i1"}, Count: ptr(1)}, 1, true,
			`exactly 1 request matching any method /api/v1/projects, Idempotency-Key "i1"`, nil, nil},
		{"header absent", journal.Matcher{Path: projects, Headers: map[string]string{"Idempotency-Key": ""}, Count: ptr(2)}, 2, true,
			"exactly 2 requests matching any method /api/v1/projects, no Idempotency-Key", nil, nil},
		{"body contains", journal.Matcher{Path: projects, BodyContains: `"three"`, Count: ptr(1)}, 1, true,
			`exactly 1 request matching any method /api/v1/projects, body containing "\"three\""`, nil, nil},
		{"every reason, at most 3 near misses", journal.Matcher{Method: "POST", Path: projects, APIKey: "c", Status: "2xx", BodyContains: "zzz",
			Headers: map[string]string{"Content-Type": "application/json"}, Count: ptr(1)}, 0, false,
			`exactly 1 request matching POST /api/v1/projects, api_key "c", status 2xx, body containing "zzz", Content-Type "application/json"`,
			map[uint64]string{
				5: `api_key "a", expected "c"; status 400, expected 2xx; request body does not contain "zzz"; Content-Type is "text/plain", expected "application/json"`,
				3: `api_key "b", expected "c"; request body does not contain "zzz"`,
				2: `api_key "a", expected "c"; status 400, expected 2xx; request body does not contain "zzz"`,
			}, []uint64{5, 3, 2}},
		{"header present where none expected", journal.Matcher{Path: "/api/v1/projects", APIKey: "b", Headers: map[string]string{"Idempotency-Key": ""}}, 0, false,
			`at least 1 request matching any method /api/v1/projects, api_key "b", no Idempotency-Key`,
			map[uint64]string{5: `api_key "a", expected "b"`, 3: `Idempotency-Key is "i3", expected none`, 2: `api_key "a", expected "b"`}, []uint64{5, 3, 2}},
		{"near misses only on method and path", journal.Matcher{Method: "PATCH", Path: projects}, 0, false,
			"at least 1 request matching PATCH /api/v1/projects", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.NoError(t, tc.m.Validate())
			res := j.Verify(tc.m)
			assert.Equal(t, tc.matched, res.Matched)
			assert.Equal(t, tc.ok, res.OK)
			assert.Equal(t, tc.expected, res.Expected)
			assert.Empty(t, res.Warning)
			require.NotNil(t, res.NearMisses, "near_misses is always an array")
			var gotSeqs []uint64
			for _, nm := range res.NearMisses {
				gotSeqs = append(gotSeqs, nm.Entry.Seq)
				assert.Equal(t, tc.near[nm.Entry.Seq], nm.Reason, "seq %d", nm.Entry.Seq)
			}
			assert.Equal(t, tc.nearSeqs, gotSeqs)
		})
	}
}

func TestVerifyNoNearMissesWhenOK(t *testing.T) {
	t.Parallel()
	j := newJournal(newClock(), journal.Config{})
	record(t, j, verifyScript)
	res := j.Verify(journal.Matcher{Path: "/api/v1/projects", APIKey: "a", AtLeast: ptr(1)})
	assert.True(t, res.OK)
	assert.Empty(t, res.NearMisses, "entries of other keys are not reported when the verification holds")
}

func TestVerifyWarnsAfterOverflow(t *testing.T) {
	t.Parallel()
	// Room for the last two requests of the script.
	probe := newJournal(newClock(), journal.Config{})
	record(t, probe, verifyScript)
	var last2 int64
	for _, e := range probe.Entries(journal.Filter{Limit: 2}) {
		last2 += journal.Size(e)
	}
	j := newJournal(newClock(), journal.Config{MaxBytes: last2})
	record(t, j, verifyScript)
	res := j.Verify(journal.Matcher{Path: "/api/v1/projects", Count: ptr(4)})
	assert.Equal(t, 1, res.Matched, "only the last two requests are held")
	assert.False(t, res.OK)
	assert.Equal(t, fmt.Sprintf("the journal has dropped 3 older requests (it keeps at most %d bytes, less when the journals of the process together reach their bound); the count covers the 2 it holds", last2), res.Warning)
}

func TestVerifyTruncatedBody(t *testing.T) {
	t.Parallel()
	j := newJournal(newClock(), journal.Config{MaxBody: 8})
	record(t, j, []scripted{{"POST", "/x", "k", `{"name":"long name"}`, "200", nil}})
	res := j.Verify(journal.Matcher{Path: "/x", BodyContains: "long"})
	assert.False(t, res.OK)
	require.Len(t, res.NearMisses, 1)
	assert.Equal(t, `request body does not contain "long" (only its first 8 bytes are kept)`, res.NearMisses[0].Reason)
}

func TestMatcherValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		m    journal.Matcher
		err  string
	}{
		{"empty is valid", journal.Matcher{}, ""},
		{"full", journal.Matcher{Method: "post", Path: "*", Status: "4xx", Headers: map[string]string{"retry-after": "5"}, AtLeast: ptr(1), AtMost: ptr(2)}, ""},
		{"bad method", journal.Matcher{Method: "PO ST"}, `method must be an HTTP method such as POST; got "PO ST"`},
		{"bad path", journal.Matcher{Path: "api"}, `path must start with / (a * matches any run of characters); got "api"`},
		{"bad status", journal.Matcher{Status: "4yy"}, `status must be a status code such as 404 (0 for aborted requests) or a class such as 4xx; got "4yy"`},
		{"header not recorded", journal.Matcher{Headers: map[string]string{"X-Trace": "1"}},
			`headers: "X-Trace" is not recorded by the journal; it keeps Content-Type, Idempotency-Key, User-Agent, Content-Length, Idempotent-Replayed, Retry-After`},
		{"header twice", journal.Matcher{Headers: map[string]string{"content-type": "a", "Content-Type": "b"}},
			"headers: Content-Type is given twice (header names are case-insensitive)"},
		{"negative count", journal.Matcher{Count: ptr(-1)}, "count must be 0 or more; got -1"},
		{"negative at_most", journal.Matcher{AtMost: ptr(-2)}, "at_most must be 0 or more; got -2"},
		{"count with at_least", journal.Matcher{Count: ptr(1), AtLeast: ptr(1)}, "count cannot be combined with at_least or at_most"},
		{"inverted range", journal.Matcher{AtLeast: ptr(3), AtMost: ptr(1)}, "at_least (3) is greater than at_most (1)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.m.Validate()
			if tc.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tc.err, err.Error())
		})
	}
}
