package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// raw sends a request with headers and returns the answer, body read.
func (in *inst) raw(method, path string, h map[string]string) (*http.Response, string) {
	in.t.Helper()
	req, err := http.NewRequest(method, in.url+path, nil)
	require.NoError(in.t, err)
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(in.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(in.t, err)
	return resp, string(b)
}

func preflight(origin, method, headers string) map[string]string {
	return map[string]string{"Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers}
}

// TestCORSAnyOrigin: with "*" (dubsim's default), a page of any site may
// call the platform and studio interfaces: the preflight is answered
// before the journal, and actual answers carry the CORS headers.
func TestCORSAnyOrigin(t *testing.T) {
	t.Parallel()
	in := start(t, func(c *app.Config) { c.CORSOrigins = []string{"*"} })
	for _, path := range []string{"/api/v1/projects", "/studio/api/v1/projects", "/api/v1/projects/123", "/api/v1/artifacts/create"} {
		resp, body := in.raw("OPTIONS", path, preflight("https://app.example.com", "POST", "authorization, content-type, idempotency-key"))
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Empty(t, body, path)
		assert.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"), path)
		assert.Equal(t, "POST", resp.Header.Get("Access-Control-Allow-Methods"), path)
		assert.Equal(t, "authorization, content-type, idempotency-key", strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers")), path)
		assert.Equal(t, "600", resp.Header.Get("Access-Control-Max-Age"), path)
		assert.Empty(t, resp.Header.Get("Access-Control-Allow-Credentials"), "bearer keys, no cookies")
	}
	resp, body := in.raw("GET", "/api/v1/balance", map[string]string{"Origin": "https://app.example.com", "Authorization": "Bearer dubsim-pro"})
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, resp.Header.Get("Access-Control-Expose-Headers"), "Retry-After")
	assert.Contains(t, resp.Header.Get("Access-Control-Expose-Headers"), "Idempotent-Replayed")
	// An error answer carries them too: the page can read why.
	resp, _ = in.raw("GET", "/studio/api/v1/projects", map[string]string{"Origin": "https://app.example.com"})
	assert.GreaterOrEqual(t, resp.StatusCode, 400)
	assert.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
	// Without Origin (not a browser), nothing changes.
	resp, _ = in.raw("GET", "/api/v1/balance", map[string]string{"Authorization": "Bearer dubsim-pro"})
	assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))

	// Preflights are not journaled; the actual requests are.
	st, j := in.call("GET", "/_sim/requests?method=OPTIONS", "", "")
	require.Equal(t, http.StatusOK, st, "%v", j)
	assert.Empty(t, j["requests"], "%v", j)
	_, j = in.call("GET", "/_sim/requests?method=GET", "", "")
	assert.NotEmpty(t, j["requests"], "the filter sees the GETs: %v", j)
}

// TestCORSNeverOnTheControlAPI: the control API stays under its guard
// (HC1-HC5): a foreign page's preflight and calls are refused without any
// CORS header, whatever --cors-origins says.
func TestCORSNeverOnTheControlAPI(t *testing.T) {
	t.Parallel()
	for _, origins := range [][]string{{"*"}, {"https://app.example.com"}} {
		in := start(t, func(c *app.Config) { c.CORSOrigins = origins })
		for _, r := range []struct {
			method string
			h      map[string]string
		}{
			{"OPTIONS", preflight("https://app.example.com", "POST", "content-type")},
			{"GET", map[string]string{"Origin": "https://app.example.com"}},
			{"POST", map[string]string{"Origin": "https://app.example.com", server.HeaderControl: "1"}},
		} {
			path := "/_sim/state"
			if r.method == "POST" {
				path = "/_sim/reset"
			}
			resp, body := in.raw(r.method, path, r.h)
			assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%v %s %s", origins, r.method, body)
			assert.Contains(t, body, "ForbiddenError")
			assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"), "%v %s", origins, r.method)
		}
		// A page of this dubsim (loopback origin) is answered, without CORS.
		resp, _ := in.raw("GET", "/_sim/clock", map[string]string{"Origin": "http://localhost:8080"})
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
	}
}

// TestCORSListedOrigins: with a list, only its origins are granted, each
// echoed, and answers vary by Origin.
func TestCORSListedOrigins(t *testing.T) {
	t.Parallel()
	in := start(t, func(c *app.Config) { c.CORSOrigins = []string{"https://app.example.com", "http://localhost:3000"} })
	for origin, granted := range map[string]bool{"https://app.example.com": true, "http://localhost:3000": true, "https://evil.example": false, "null": false} {
		resp, _ := in.raw("OPTIONS", "/api/v1/projects", preflight(origin, "POST", "authorization"))
		want := ""
		if granted {
			want = origin
		}
		assert.Equal(t, want, resp.Header.Get("Access-Control-Allow-Origin"), origin)
		assert.Contains(t, resp.Header.Values("Vary"), "Origin")
		resp, _ = in.raw("GET", "/api/v1/balance", map[string]string{"Origin": origin, "Authorization": "Bearer dubsim-pro"})
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, want, resp.Header.Get("Access-Control-Allow-Origin"), origin)
	}
}

// TestCORSOff: without origins, no CORS header, and a preflight is an
// OPTIONS request like any other: the router's 405, with Allow.
func TestCORSOff(t *testing.T) {
	t.Parallel()
	in := start(t, func(c *app.Config) { c.CORSOrigins = nil })
	resp, body := in.raw("OPTIONS", "/api/v1/projects", preflight("https://app.example.com", "POST", "authorization"))
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, body)
	assert.Contains(t, body, "MethodNotAllowedError")
	assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "GET, POST", resp.Header.Get("Allow"))
}
