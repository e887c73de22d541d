package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMethodNotAllowedCarriesAllow: every interface's 405 names the
// methods the path serves in Allow (RFC 9110), its envelope unchanged.
func TestMethodNotAllowedCarriesAllow(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	ctl := map[string]string{server.HeaderControl: "1", "Authorization": "Bearer dubsim-pro"}
	tests := []struct {
		method, path, allow string
		envelope            string // the error field: name (platform, control) or message (studio)
	}{
		{"DELETE", "/api/v1/balance", "GET", "MethodNotAllowedError"},
		{"PUT", "/api/v1/projects/123", "GET, PATCH, DELETE", "MethodNotAllowedError"}, // the studio PATCHes it
		{"PROPFIND", "/api/v1/voices", "GET", "MethodNotAllowedError"},
		{"GET", "/api/v1/projects/123/translations", "POST", "MethodNotAllowedError"},
		{"DELETE", "/api/v1/projects", "GET, POST", ""}, // shared address: the studio's GET, either's POST
		{"DELETE", "/studio/api/v1/artifacts/create", "GET, POST", "Method DELETE is not allowed on /api/v1/artifacts/create"},
		{"PROPFIND", "/studio/api/v1/artifacts/create", "GET, POST", "Method PROPFIND is not allowed on /api/v1/artifacts/create"},
		{"PUT", "/_sim/clock", "GET", "MethodNotAllowedError"},
		{"GET", "/_sim/clock/advance", "POST", "MethodNotAllowedError"},
		{"PUT", "/_sim/outcomes", "GET, POST", "MethodNotAllowedError"},
		{"PATCH", "/_sim/faults", "GET, POST, DELETE", "MethodNotAllowedError"},
		{"PUT", "/_sim/requests", "GET, DELETE", "MethodNotAllowedError"},
		{"POST", "/_sim/health", "GET, HEAD", "MethodNotAllowedError"},
	}
	for _, tc := range tests {
		resp, body := in.raw(tc.method, tc.path, ctl)
		require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "%s %s: %s", tc.method, tc.path, body)
		assert.Equal(t, tc.allow, resp.Header.Get("Allow"), "%s %s", tc.method, tc.path)
		var env map[string]any
		require.NoError(t, json.Unmarshal([]byte(body), &env), "%s %s: %s", tc.method, tc.path, body)
		if tc.envelope != "" {
			assert.Equal(t, tc.envelope, env["error"], "%s %s: %s", tc.method, tc.path, body)
		}
	}
}

// TestMethodNotAllowedOnTheSeparateAddresses: the studio-only and the
// control-only listeners name their own routes' methods.
func TestMethodNotAllowedOnTheSeparateAddresses(t *testing.T) {
	t.Parallel()
	s := start(t, func(c *app.Config) { c.SeparateControl = true }).srv
	for _, tc := range []struct {
		h                   http.Handler
		method, path, allow string
	}{
		{s.StudioHandler, "DELETE", "/api/v1/projects", "GET, POST"},
		{s.StudioHandler, "PUT", "/api/v1/artifacts/create", "GET, POST"},
		{s.ControlHandler, "PUT", "/_sim/clock", "GET"},
		{s.ControlHandler, "PROPFIND", "/_sim/clock", "GET"},
	} {
		in := serve(t, tc.h)
		resp, body := in.raw(tc.method, tc.path, map[string]string{server.HeaderControl: "1"})
		require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "%s %s: %s", tc.method, tc.path, body)
		assert.Equal(t, tc.allow, resp.Header.Get("Allow"), "%s %s", tc.method, tc.path)
		assert.Contains(t, body, "is not allowed on")
	}
}

// serve serves h on a test listener.
func serve(t *testing.T, h http.Handler) *inst {
	t.Helper()
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return &inst{t: t, url: hs.URL}
}
