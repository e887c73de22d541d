package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The control API is never faulted, whatever the rules match: the fault
// middleware asks the routing decision (RouteOf), which also counts an
// escaped /%5Fsim path as control; a path that only starts like /_sim is not.
func TestControlRequestsAreNeverFaulted(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	st, m := in.call("POST", "/_sim/faults", "", `{"path":"/_sim*","action":{"type":"error","status":502}}`)
	require.Equal(t, http.StatusCreated, st, "%v", m)
	st, m = in.call("POST", "/_sim/faults", "", `{"action":{"type":"error","status":503}}`)
	require.Equal(t, http.StatusCreated, st, "%v", m)
	tests := []struct {
		name, path string
		status     int
	}{
		{"control route", "/_sim/faults", http.StatusOK},
		{"deep control route", "/_sim/clock", http.StatusOK},
		{"escaped control route: not found by the router, not faulted", "/%5Fsim/clock", http.StatusNotFound},
		{"a path that only starts like the prefix: the first rule", "/_simulate", http.StatusBadGateway},
		{"the API: the second rule", "/api/v1/voices", http.StatusServiceUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, m := in.call("GET", tc.path, "", "")
			assert.Equal(t, tc.status, st, "%v", m)
		})
	}
	st, m = in.call("GET", "/_sim/faults", "", "")
	require.Equal(t, http.StatusOK, st)
	rules := m["rules"].([]any)
	require.Len(t, rules, 2)
	assert.EqualValues(t, 1, rules[0].(map[string]any)["hits"], "only /_simulate")
	assert.EqualValues(t, 1, rules[1].(map[string]any)["hits"], "only the API request")
}
