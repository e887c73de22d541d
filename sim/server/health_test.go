package server_test

import (
	"net/http"
	"testing"

	"github.com/dubsim/dubsim/sim/journal"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHealth(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		noControl bool
		method    string
		status    int
		want      map[string]any // fields checked exactly
	}{
		{"get", false, "GET", 200, map[string]any{"status": "ok", "version": "v9.9.9", "now": "2026-02-04T12:00:00.000Z"}},
		{"get without the control API", true, "GET", 200, map[string]any{"status": "ok"}},
		{"head", false, "HEAD", 200, nil},
		{"post", false, "POST", 405, map[string]any{"error": "MethodNotAllowedError", "message": "Method POST is not allowed on /_sim/health; use GET or HEAD"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := start(t, func(cfg *server.Config) { cfg.NoControl = c.noControl; cfg.Version = "v9.9.9" })
			st, m := in.call(c.method, server.HealthPath, "", "")
			require.Equal(t, c.status, st, "%v", m)
			for k, v := range c.want {
				assert.Equal(t, v, m[k], k)
			}
			if c.status == 200 && c.method == "GET" {
				assert.Contains(t, m, "uptime_seconds")
			}
		})
	}
}

// A health probe is not client traffic: no journal entry, and a fault rule
// on every path does not make the instance unhealthy.
func TestHealthBypassesJournalAndFaults(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	st, rule := in.call("POST", "/_sim/faults", "", `{"path":"/*","action":{"type":"error","status":503,"error":"ServiceUnavailableError","message":"down"}}`)
	require.Equal(t, http.StatusCreated, st, "%v", rule)
	st, _ = in.call("GET", "/api/v1/balance", "dubsim-pro", "")
	require.Equal(t, http.StatusServiceUnavailable, st, "the rule fires on client paths")
	st, m := in.call("GET", server.HealthPath, "", "")
	assert.Equal(t, http.StatusOK, st, "%v", m)
	assert.Empty(t, in.srv.Journal.Entries(journal.Filter{Path: server.HealthPath}), "health probes are not journaled")
	assert.NotEmpty(t, in.srv.Journal.Entries(journal.Filter{Path: "/api/v1/balance"}))
}
