package journal_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim/journal"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// routesFixture is a journal holding two requests, served as the lead
// mounts it: the journal's routes under /_sim, behind its own middleware.
func routesFixture(t *testing.T) (*journal.Journal, http.Handler) {
	t.Helper()
	c := newClock()
	j := newJournal(c, journal.Config{MaxBody: 64})
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.Advance(250 * time.Millisecond)
		if r.Method == http.MethodPost {
			journal.SetFault(r.Context(), "f-1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"error":"ValidationError","message":"bad"}` + "\n"))
			return
		}
		_, _ = w.Write([]byte(`{"balance_minutes":90}`))
	})
	r := chi.NewRouter()
	r.Mount("/_sim", j.Routes())
	r.Mount("/api", api)
	h := j.Middleware(r)
	serve(h, newRequest("POST", "/api/v1/projects?x=1", `{"name":"x"}`, "Authorization", "Bearer k1",
		"Content-Type", "text/plain", "Idempotency-Key", "idem-1", "User-Agent", "cli/1"))
	serve(h, newRequest("GET", "/api/v1/balance", "", "Authorization", "Bearer k2"))
	return j, h
}

func TestListRoute(t *testing.T) {
	t.Parallel()
	j, h := routesFixture(t)
	const first = `{"seq":1,"time":"2026-02-04T12:00:00.000Z","sim_time":"2030-01-01T00:00:00.000Z","duration_ms":250,` +
		`"interface":"platform","method":"POST","path":"/api/v1/projects","query":"x=1","api_key":"k1",` +
		`"headers":{"Content-Length":"12","Content-Type":"text/plain","Idempotency-Key":"idem-1","User-Agent":"cli/1"},` +
		`"request_body":"{\"name\":\"x\"}","request_body_size":12,"status":400,` +
		`"response_body":"{\"error\":\"ValidationError\",\"message\":\"bad\"}\n","response_bytes":44,` +
		`"aborted":false,"truncated":false,"fault":"f-1"}`
	const second = `{"seq":2,"time":"2026-02-04T12:00:00.250Z","sim_time":"2030-01-01T00:00:00.250Z","duration_ms":250,` +
		`"interface":"platform","method":"GET","path":"/api/v1/balance","api_key":"k2","headers":{},` +
		`"request_body_size":0,"status":200,"response_bytes":22,"aborted":false,"truncated":false}`
	stats := fmt.Sprintf(`"stats":{"max_bytes":4194304,"bytes":%d,"max_body":64,"stored":2,"total":2,"dropped":0,"last_seq":2}`, j.Stats().Bytes)
	tests := []struct {
		name, query, want string
	}{
		{"all, newest first", "", `{"requests":[` + second + `,` + first + `],` + stats + `}`},
		{"by key", "?key=k1", `{"requests":[` + first + `],` + stats + `}`},
		{"by status class", "?status=2xx", `{"requests":[` + second + `],` + stats + `}`},
		{"by method, lower case", "?method=post", `{"requests":[` + first + `],` + stats + `}`},
		{"by path glob", "?path=/api/v1/b*", `{"requests":[` + second + `],` + stats + `}`},
		{"since", "?since=1", `{"requests":[` + second + `],` + stats + `}`},
		{"limit", "?limit=1", `{"requests":[` + second + `],` + stats + `}`},
		{"empty values are ignored", "?status=&key=", `{"requests":[` + second + `,` + first + `],` + stats + `}`},
		{"nothing selected", "?status=500", `{"requests":[],` + stats + `}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, _ := serve(h, newRequest("GET", "/_sim/requests"+tc.query, ""))
			assert.Equal(t, 200, rec.Code)
			assert.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))
			assert.Equal(t, tc.want+"\n", rec.Body.String())
		})
	}
}

func TestRouteErrors(t *testing.T) {
	t.Parallel()
	_, h := routesFixture(t)
	envelope := func(msg string) string {
		return `{"error":"ValidationError","message":` + msg + "}\n"
	}
	tests := []struct {
		name, method, target, body, contentType string
		status                                  int
		want                                    string
	}{
		{"bad status", "GET", "/_sim/requests?status=abc", "", "", 400,
			envelope(`"status must be a status code such as 404 (0 for aborted requests) or a class such as 4xx; got \"abc\""`)},
		{"status out of range", "GET", "/_sim/requests?status=600", "", "", 400,
			envelope(`"status must be a status code such as 404 (0 for aborted requests) or a class such as 4xx; got \"600\""`)},
		{"negative since", "GET", "/_sim/requests?since=-1", "", "", 400,
			envelope(`"since must be a sequence id (a whole number, 0 or more); got \"-1\""`)},
		{"limit not a number", "GET", "/_sim/requests?limit=ten", "", "", 400,
			envelope(`"limit must be a whole number from 0 (no limit) to 2147483647; got \"ten\""`)},
		{"limit too large", "GET", "/_sim/requests?limit=99999999999", "", "", 400,
			envelope(`"limit must be a whole number from 0 (no limit) to 2147483647; got \"99999999999\""`)},
		{"bad method", "GET", "/_sim/requests?method=G%20T", "", "", 400,
			envelope(`"method must be an HTTP method such as GET; got \"G T\""`)},
		{"relative path", "GET", "/_sim/requests?path=api/v1", "", "", 400,
			envelope(`"path must start with / (a * matches any run of characters); got \"api/v1\""`)},
		{"unknown parameter", "GET", "/_sim/requests?stauts=4xx", "", "", 400,
			envelope(`"Unknown query parameter \"stauts\"; use method, path, status, key, since, limit"`)},
		{"repeated parameter", "GET", "/_sim/requests?status=4xx&status=5xx", "", "", 400,
			envelope(`"Query parameter \"status\" is given 2 times; give it once"`)},
		{"malformed query", "GET", "/_sim/requests?path=%zz", "", "", 400,
			envelope(`"Malformed query string: invalid URL escape \"%zz\""`)},
		{"reset with a query", "DELETE", "/_sim/requests?key=k1", "", "", 400,
			envelope(`"DELETE /_sim/requests takes no query parameters; got \"key=k1\""`)},
		{"verify without body", "POST", "/_sim/requests/verify", "", "application/json", 400,
			envelope(`"Request body must be a JSON object"`)},
		{"verify without JSON content type", "POST", "/_sim/requests/verify", `{"path":"/x"}`, "text/plain", 400,
			envelope(`"Content-Type must be application/json for a request with a JSON body"`)},
		{"verify without content type", "POST", "/_sim/requests/verify", `{"path":"/x"}`, "", 400,
			envelope(`"Content-Type must be application/json for a request with a JSON body"`)},
		{"verify malformed", "POST", "/_sim/requests/verify", `{"count":`, "application/json", 400,
			envelope(`"Malformed JSON body: the JSON ends early: the body stops before the value is complete (truncated?)"`)},
		{"verify syntax error", "POST", "/_sim/requests/verify", `{"count" 1}`, "application/json", 400,
			envelope(`"Malformed JSON body: invalid character '1' after object key (at byte 10)"`)},
		{"verify wrong type", "POST", "/_sim/requests/verify", `{"count":"2"}`, "application/json", 400,
			envelope(`"count must be an integer; got string"`)},
		{"verify fractional count", "POST", "/_sim/requests/verify", `{"at_least":1.5}`, "application/json", 400,
			envelope(`"at_least must be an integer; got number 1.5"`)},
		{"verify header value not a string", "POST", "/_sim/requests/verify", `{"headers":{"Retry-After":5}}`, "application/json", 400,
			envelope(`"headers must be an object of header names and exact string values; got number"`)},
		{"verify headers not an object", "POST", "/_sim/requests/verify", `{"headers":["Retry-After"]}`, "application/json", 400,
			envelope(`"headers must be an object of header names and exact string values; got array"`)},
		{"verify unknown field", "POST", "/_sim/requests/verify", `{"cnt":1}`, "application/json", 400,
			envelope(`"Unknown field \"cnt\""`)},
		{"verify array", "POST", "/_sim/requests/verify", `[{"count":1}]`, "application/json", 400,
			envelope(`"Request body must be a JSON object"`)},
		{"verify trailing data", "POST", "/_sim/requests/verify", `{"count":1} {}`, "application/json", 400,
			envelope(`"Malformed JSON body: unexpected data after the JSON object"`)},
		{"verify bad status", "POST", "/_sim/requests/verify", `{"status":"4yy"}`, "application/json", 400,
			envelope(`"status must be a status code such as 404 (0 for aborted requests) or a class such as 4xx; got \"4yy\""`)},
		{"verify status of another type", "POST", "/_sim/requests/verify", `{"status":true}`, "application/json", 400,
			envelope(`"status must be a number or a string such as \"4xx\"; got boolean"`)},
		{"verify status as an array", "POST", "/_sim/requests/verify", `{"status":[404]}`, "application/json", 400,
			envelope(`"status must be a number or a string such as \"4xx\"; got array"`)},
		{"verify status as an object", "POST", "/_sim/requests/verify", `{"status":{"code":404}}`, "application/json", 400,
			envelope(`"status must be a number or a string such as \"4xx\"; got object"`)},
		{"verify negative count", "POST", "/_sim/requests/verify", `{"count":-1}`, "application/json", 400,
			envelope(`"count must be 0 or more; got -1"`)},
		{"verify count with a bound", "POST", "/_sim/requests/verify", `{"count":1,"at_most":2}`, "application/json", 400,
			envelope(`"count cannot be combined with at_least or at_most"`)},
		{"verify header not recorded", "POST", "/_sim/requests/verify", `{"headers":{"Authorization":"Bearer x"}}`, "application/json", 400,
			envelope(`"headers: \"Authorization\" is not recorded by the journal; it keeps Content-Type, Idempotency-Key, User-Agent, Content-Length, Idempotent-Replayed, Retry-After"`)},
		{"verify too large", "POST", "/_sim/requests/verify", `{"path":"` + strings.Repeat("a", 70<<10) + `"}`, "application/json", 413,
			envelope(`"Request body exceeds the limit of 65536 bytes"`)},
		{"report without api_key", "GET", "/_sim/report", "", "", 400, envelope(`"api_key is required"`)},
		{"report with empty api_key", "GET", "/_sim/report?api_key=", "", "", 400, envelope(`"api_key is required"`)},
		{"report bad format", "GET", "/_sim/report?api_key=k1&format=xml", "", "", 400, envelope(`"format must be json or text; got \"xml\""`)},
		{"report unknown parameter", "GET", "/_sim/report?key=k1", "", "", 400,
			envelope(`"Unknown query parameter \"key\"; use api_key, format"`)},
		{"method not allowed", "PUT", "/_sim/requests", "", "", 405,
			`{"error":"MethodNotAllowedError","message":"Method PUT is not allowed on /_sim/requests"}` + "\n"},
		{"unknown route", "GET", "/_sim/journal", "", "", 404,
			`{"error":"NotFoundError","message":"No control route GET /_sim/journal"}` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := newRequest(tc.method, tc.target, tc.body)
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			rec, _ := serve(h, req)
			assert.Equal(t, tc.status, rec.Code)
			assert.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))
			assert.Equal(t, tc.want, rec.Body.String())
		})
	}
}

func TestVerifyRoute(t *testing.T) {
	t.Parallel()
	_, h := routesFixture(t)
	tests := []struct {
		name, body, want string
	}{
		{"holds", `{"method":"POST","path":"/api/v1/projects","status":400,"count":1}`,
			`{"matched":1,"ok":true,"expected":"exactly 1 request matching POST /api/v1/projects, status 400","near_misses":[]}`},
		{"fails, still 200, with the near miss", `{"method":"POST","path":"/api/v1/*","headers":{"content-type":"application/json"}}`,
			`{"matched":0,"ok":false,"expected":"at least 1 request matching POST /api/v1/*, Content-Type \"application/json\"","near_misses":[` +
				`{"entry":{"seq":1,"time":"2026-02-04T12:00:00.000Z","sim_time":"2030-01-01T00:00:00.000Z","duration_ms":250,` +
				`"interface":"platform","method":"POST","path":"/api/v1/projects","query":"x=1","api_key":"k1",` +
				`"headers":{"Content-Length":"12","Content-Type":"text/plain","Idempotency-Key":"idem-1","User-Agent":"cli/1"},` +
				`"request_body":"{\"name\":\"x\"}","request_body_size":12,"status":400,` +
				`"response_body":"{\"error\":\"ValidationError\",\"message\":\"bad\"}\n","response_bytes":44,` +
				`"aborted":false,"truncated":false,"fault":"f-1"},` +
				`"reason":"Content-Type is \"text/plain\", expected \"application/json\""}]}`},
		{"+json content type and status as a class", `{"status":"2XX","api_key":"k2","at_most":1}`,
			`{"matched":1,"ok":true,"expected":"at most 1 request matching any method any path, api_key \"k2\", status 2xx","near_misses":[]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, _ := serve(h, newRequest("POST", "/_sim/requests/verify", tc.body, "Content-Type", "application/vnd.dubsim+json"))
			assert.Equal(t, 200, rec.Code)
			assert.Equal(t, tc.want+"\n", rec.Body.String())
		})
	}
}

func TestResetRoute(t *testing.T) {
	t.Parallel()
	j, h := routesFixture(t)
	rec, _ := serve(h, newRequest("DELETE", "/_sim/requests", ""))
	assert.Equal(t, 200, rec.Code)
	assert.Equal(t, `{"reset":true}`+"\n", rec.Body.String())
	assert.Empty(t, j.Entries(journal.Filter{}))
	rec, _ = serve(h, newRequest("GET", "/_sim/requests", ""))
	assert.Equal(t, `{"requests":[],"stats":{"max_bytes":4194304,"bytes":0,"max_body":64,"stored":0,"total":0,"dropped":0,"last_seq":2}}`+"\n", rec.Body.String())
}

func TestReportRouteFormats(t *testing.T) {
	t.Parallel()
	_, h := routesFixture(t)
	tests := []struct {
		name, query, accept string
		text                bool
	}{
		{"default JSON", "", "", false},
		{"format=text", "&format=text", "", true},
		{"format=json wins over Accept", "&format=json", "text/plain", false},
		{"Accept text/plain", "", "text/plain", true},
		{"Accept text/*", "", "text/*", true},
		{"Accept with qualities preferring text", "", "application/json;q=0.5, text/plain", true},
		{"Accept with qualities preferring JSON", "", "text/plain;q=0.5, application/json", false},
		{"Accept anything", "", "*/*", false},
		{"browser Accept", "", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", false},
		{"Accept JSON", "", "application/json", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := newRequest("GET", "/_sim/report?api_key=k1"+tc.query, "")
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			rec, _ := serve(h, req)
			require.Equal(t, 200, rec.Code, rec.Body.String())
			if tc.text {
				assert.Equal(t, "text/plain; charset=utf-8", rec.Header().Get("Content-Type"))
				assert.True(t, strings.HasPrefix(rec.Body.String(), `Conformance report for API key "k1"`), rec.Body.String())
			} else {
				assert.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))
				assert.True(t, strings.HasPrefix(rec.Body.String(), `{"api_key":"k1",`), rec.Body.String())
			}
		})
	}
}

func TestReportRouteJSON(t *testing.T) {
	t.Parallel()
	_, h := routesFixture(t)
	rec, _ := serve(h, newRequest("GET", "/_sim/report?api_key=k1", ""))
	require.Equal(t, 200, rec.Code)
	var got journal.Report
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	require.Len(t, got.Findings, 1, rec.Body.String())
	assert.NotEmpty(t, got.Findings[0].Detail)
	got.Findings[0].Detail = ""
	assert.Equal(t, journal.Report{
		APIKey: "k1", GeneratedAt: "2026-02-04T12:00:00.500Z",
		Summary: journal.Summary{Requests: 1, FirstSeq: 1, LastSeq: 1, ByEndpoint: map[string]int{"POST /api/v1/projects": 1},
			ByStatusClass: map[string]int{"4xx": 1}, Findings: 1, Errors: 1},
		Findings: []journal.Finding{{Rule: "json-without-content-type", Severity: "error", Title: "JSON body sent without Content-Type: application/json",
			Observed: "1 of 1 POST/PATCH request with a body", Count: 1,
			Examples: []journal.Example{{Seq: 1, Time: "2026-02-04T12:00:00.000Z", SimTime: "2030-01-01T00:00:00.000Z", Method: "POST",
				Path: "/api/v1/projects", Status: 400, Excerpt: `Content-Type "text/plain"; body {"name":"x"}`}}}},
	}, got)
}
