package faults

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
)

// TestRoutes drives the fault control API mounted under /_sim, as the lead
// wires it; the steps share one rule set and run in order.
func TestRoutes(t *testing.T) {
	t.Parallel()
	clk := &clock{t: t0}
	f := New(Config{Now: clk.Now})
	root := chi.NewRouter()
	root.Mount("/_sim", f.Routes())
	const ct = "application/json"
	steps := []struct {
		name, method, path, contentType, body string
		status                                int
		want                                  string
	}{
		{"empty list", "GET", "/_sim/faults", "", "", 200, `{"rules":[]}`},
		{"add with a generated id", "POST", "/_sim/faults", ct, `{"action":{"type":"drop"}}`, 201,
			`{"id":"flt_1","action":{"type":"drop"},"remaining":null,"hits":0,"expires_at":null,"state":"active"}`},
		{"add with every field", "POST", "/_sim/faults", "application/json; charset=utf-8",
			`{"id":"slow","method":"POST","path":"/api/v1/*","api_key":"k","count":2,"probability":0.5,"ttl_seconds":90.5,"action":{"type":"latency","distribution":"uniform","min_ms":10,"max_ms":20}}`, 201,
			`{"id":"slow","method":"POST","path":"/api/v1/*","api_key":"k","count":2,"probability":0.5,"ttl_seconds":90.5,"action":{"type":"latency","distribution":"uniform","min_ms":10,"max_ms":20},"remaining":2,"hits":0,"expires_at":"2026-02-04T12:01:30.500Z","state":"active"}`},
		{"invalid rule", "POST", "/_sim/faults", ct, `{"action":{"type":"error","status":200}}`, 400,
			`{"error":"ValidationError","message":"action.status must be between 400 and 599; got 200"}`},
		{"unknown action type", "POST", "/_sim/faults", ct, `{"action":{"type":"teapot"}}`, 400,
			`{"error":"ValidationError","message":"action.type must be one of latency, error, rate_limit, drop, truncate; got \"teapot\""}`},
		{"unknown field", "POST", "/_sim/faults", ct, `{"action":{"type":"drop","status":500,"colour":1}}`, 400,
			`{"error":"ValidationError","message":"Unknown field \"action.colour\""}`},
		{"duplicate id", "POST", "/_sim/faults", ct, `{"id":"slow","action":{"type":"drop"}}`, 400,
			`{"error":"ValidationError","message":"id slow is already used by another fault rule"}`},
		{"no content type", "POST", "/_sim/faults", "", `{"action":{"type":"drop"}}`, 400,
			`{"error":"ValidationError","message":"Content-Type must be application/json for a request with a JSON body"}`},
		{"form content type", "POST", "/_sim/faults", "application/x-www-form-urlencoded", `{"action":{"type":"drop"}}`, 400,
			`{"error":"ValidationError","message":"Content-Type must be application/json for a request with a JSON body"}`},
		{"empty body", "POST", "/_sim/faults", ct, ``, 400,
			`{"error":"ValidationError","message":"Request body must be a JSON object"}`},
		{"malformed body", "POST", "/_sim/faults", ct, `{"action":`, 400,
			`{"error":"ValidationError","message":"Malformed JSON body: the JSON ends early: the body stops before the value is complete (truncated?)"}`},
		{"body too large", "POST", "/_sim/faults", ct, `{"action":{"type":"error","status":500,"message":"` + strings.Repeat("a", MaxBodyBytes) + `"}}`, 413,
			`{"error":"ValidationError","message":"Request body exceeds the limit of 65536 bytes"}`},
		{"list in order", "GET", "/_sim/faults", "", "", 200,
			`{"rules":[{"id":"flt_1","action":{"type":"drop"},"remaining":null,"hits":0,"expires_at":null,"state":"active"},` +
				`{"id":"slow","method":"POST","path":"/api/v1/*","api_key":"k","count":2,"probability":0.5,"ttl_seconds":90.5,"action":{"type":"latency","distribution":"uniform","min_ms":10,"max_ms":20},"remaining":2,"hits":0,"expires_at":"2026-02-04T12:01:30.500Z","state":"active"}]}`},
		{"remove one", "DELETE", "/_sim/faults/flt_1", "", "", 200, `{"removed":"flt_1"}`},
		{"remove it again", "DELETE", "/_sim/faults/flt_1", "", "", 404,
			`{"error":"NotFoundError","message":"Fault rule flt_1 not found"}`},
		{"remove an unknown id", "DELETE", "/_sim/faults/nope", "", "", 404,
			`{"error":"NotFoundError","message":"Fault rule nope not found"}`},
		{"add another", "POST", "/_sim/faults", ct, `{"action":{"type":"rate_limit","retry_after_seconds":3}}`, 201,
			`{"id":"flt_2","action":{"type":"rate_limit","retry_after_seconds":3},"remaining":null,"hits":0,"expires_at":null,"state":"active"}`},
		{"clear", "DELETE", "/_sim/faults", "", "", 200, `{"removed":2}`},
		{"clear again", "DELETE", "/_sim/faults", "", "", 200, `{"removed":0}`},
		{"list after clear", "GET", "/_sim/faults", "", "", 200, `{"rules":[]}`},
		{"method not allowed", "PUT", "/_sim/faults", ct, `{}`, 405,
			`{"error":"MethodNotAllowedError","message":"Method PUT is not allowed on /_sim/faults"}`},
		{"no such route", "GET", "/_sim/faults/x/y", "", "", 404,
			`{"error":"NotFoundError","message":"No control route GET /_sim/faults/x/y"}`},
	}
	for _, s := range steps {
		ok := t.Run(s.name, func(t *testing.T) {
			req := httptest.NewRequest(s.method, s.path, strings.NewReader(s.body))
			if s.contentType != "" {
				req.Header.Set("Content-Type", s.contentType)
			}
			rec := httptest.NewRecorder()
			root.ServeHTTP(rec, req)
			assert.Equal(t, s.status, rec.Code)
			assert.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))
			assert.Equal(t, s.want+"\n", rec.Body.String())
		})
		if !ok {
			return // later steps depend on this one
		}
	}
}

// TestRoutesShowHitsAndExpiry checks that the listing reflects firing and
// the clock: hits and remaining move, expired rules show as expired.
func TestRoutesShowHitsAndExpiry(t *testing.T) {
	t.Parallel()
	hs := newHarness(t, 1)
	hs.add(t, `{"count":3,"ttl_seconds":60,"action":{"type":"error","status":500}}`)
	hs.serve("GET", "/x", "")
	list := func() string {
		rec := httptest.NewRecorder()
		hs.f.Routes().ServeHTTP(rec, httptest.NewRequest("GET", "/faults", nil))
		return rec.Body.String()
	}
	assert.Equal(t, `{"rules":[{"id":"flt_1","count":3,"ttl_seconds":60,"action":{"type":"error","status":500},"remaining":2,"hits":1,"expires_at":"2026-02-04T12:01:00.000Z","state":"active"}]}`+"\n", list())
	hs.clock.Set(t0.Add(time.Minute))
	assert.Equal(t, `{"rules":[{"id":"flt_1","count":3,"ttl_seconds":60,"action":{"type":"error","status":500},"remaining":2,"hits":1,"expires_at":"2026-02-04T12:01:00.000Z","state":"expired"}]}`+"\n", list(),
		"an expired rule stays listed, with its hits, until removed or cleared")
}

func TestWriteErrorMasksInternalErrors(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	api.WriteError(rec, httptest.NewRequest("GET", "/faults", nil), http.ErrBodyNotAllowed)
	assert.Equal(t, 500, rec.Code)
	assert.Equal(t, `{"error":"InternalServerError","message":"Internal error; see the dubsim log"}`+"\n", rec.Body.String())
}
