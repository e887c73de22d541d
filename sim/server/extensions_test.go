package server_test

import (
	"net/http"
	"testing"

	"github.com/dubsim/dubsim/sim/control"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestControlExtensions: a route added through Config.ControlExtensions is
// served under /_sim behind the control guard and recorded in the journal,
// as every control call is.
func TestControlExtensions(t *testing.T) {
	t.Parallel()
	ext := control.Extension{Paths: []string{"/things", "/things/*"}, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"path":"` + r.URL.Path + `"}`))
	})}
	in := start(t, func(c *server.Config) {
		c.ControlExtensions = []control.Extension{ext}
		c.ControlToken = "s3cret"
	})
	status, body := in.call(http.MethodPost, "/_sim/things/one", "", "{}")
	assert.Equal(t, http.StatusUnauthorized, status, "no token: refused by the guard")
	assert.Nil(t, body["path"])
	status, body = in.call(http.MethodPost, "/_sim/things/one", "s3cret", "{}")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "/_sim/things/one", body["path"])
	status, body = in.call(http.MethodGet, "/_sim/requests?path=/_sim/things/*&method=POST", "s3cret", "")
	require.Equal(t, http.StatusOK, status)
	assert.Len(t, body["requests"], 1, "the accepted call is in the journal, the refused one is not: %v", body)

	plain := start(t, nil)
	status, _ = plain.call(http.MethodGet, "/_sim/things/one", "", "")
	assert.Equal(t, http.StatusNotFound, status, "without the extension the path is unknown")
}
