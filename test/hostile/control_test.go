package hostile

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// controlCall sends one request to p and returns the status and body.
func controlCall(t *testing.T, p *proctest.Proc, method, path, host string, header map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, p.Base+path, strings.NewReader(body))
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(raw)
}

// controlState reads /_sim/state as the owner does (127.0.0.1, no Origin).
func controlState(t *testing.T, p *proctest.Proc, header map[string]string) string {
	t.Helper()
	st, body := controlCall(t, p, "GET", "/_sim/state", "", header, "")
	require.Equal(t, http.StatusOK, st, "%s", body)
	return body
}

// No web page may wipe a local dubsim: an HTML form posting to
// /_sim/reset (empty body, form content type, the page's Origin), or to
// freeze and resume, gets 403 (foreign Origin), 415 without an Origin, and
// the state is intact.
func TestCrossSiteFormCannotResetTheControlPlane(t *testing.T) {
	t.Parallel()
	p := start(t)
	st, body := controlCall(t, p, "POST", "/_sim/accounts", "", map[string]string{"Content-Type": "application/json"}, `{"plan":"pro","balance_minutes":7}`)
	require.Equal(t, http.StatusCreated, st, "%s", body)
	key := strings.Split(strings.Split(body, `"api_key":"`)[1], `"`)[0]
	require.Contains(t, controlState(t, p, nil), key)

	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example"}
	// A form without fields sends an empty body.
	for _, path := range []string{"/_sim/reset", "/_sim/clock/freeze", "/_sim/clock/resume"} {
		st, body := controlCall(t, p, "POST", path, "", form, "")
		t.Logf("cross-site form POST %s: %d %s", path, st, strings.TrimSpace(body))
		assert.Equal(t, http.StatusForbidden, st, "%s: %s", path, body)
		assert.Contains(t, body, `"error":"ForbiddenError"`, path)
		assert.Contains(t, body, "evil.example", path)
	}
	// Without an Origin (a same-site form, or an old browser) the form's
	// content type alone is refused.
	st, body = controlCall(t, p, "POST", "/_sim/clock/freeze", "", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, url.Values{"x": {"1"}}.Encode())
	assert.Equal(t, http.StatusUnsupportedMediaType, st, "%s", body)

	state := controlState(t, p, nil)
	assert.Contains(t, state, key, "the account survives: no reset happened")
	assert.Contains(t, state, `"frozen":false`, "the clock was not frozen")
	assert.True(t, p.Alive())
}

// DNS rebinding: a page whose name resolves to 127.0.0.1 reads
// /_sim/state, which lists every API key, with Host: evil.example; it
// gets 403, and no key in the answer.
func TestForeignHostCannotReadTheControlState(t *testing.T) {
	t.Parallel()
	p := start(t)
	st, body := controlCall(t, p, "GET", "/_sim/state", "evil.example", nil, "")
	t.Logf("GET /_sim/state with Host: evil.example: %d %s", st, strings.TrimSpace(body))
	assert.Equal(t, http.StatusForbidden, st)
	assert.Contains(t, body, `"error":"ForbiddenError"`)
	assert.NotContains(t, body, "dubsim-pro", "no API key leaks")
	st, _ = controlCall(t, p, "GET", "/api/v1/balance", "evil.example", map[string]string{"Authorization": "Bearer dubsim-pro"}, "")
	assert.Equal(t, http.StatusOK, st, "the platform interface answers any Host")
	st, _ = controlCall(t, p, "GET", "/_sim/health", "evil.example", nil, "")
	assert.Equal(t, http.StatusOK, st, "health checks stay open")
	assert.True(t, p.Alive())
}

// With --control-token every control call needs it, whatever the Host.
func TestControlTokenIsRequired(t *testing.T) {
	t.Parallel()
	const token = "hostile-test-token"
	p := start(t, "--control-token", token)
	st, body := controlCall(t, p, "GET", "/_sim/state", "", nil, "")
	t.Logf("GET /_sim/state without the token: %d %s", st, strings.TrimSpace(body))
	assert.Equal(t, http.StatusUnauthorized, st)
	assert.Contains(t, body, `"error":"UnauthorizedError"`)
	assert.NotContains(t, body, "dubsim-pro")

	st, _ = controlCall(t, p, "POST", "/_sim/reset", "", map[string]string{"Authorization": "Bearer wrong", "X-Dubsim-Control": "1"}, "")
	assert.Equal(t, http.StatusUnauthorized, st, "a wrong token resets nothing")

	state := controlState(t, p, map[string]string{"Authorization": "Bearer " + token})
	assert.Contains(t, state, "dubsim-pro")
	st, body = controlCall(t, p, "GET", "/_sim/clock", "dubsim.ci.internal", map[string]string{"X-Dubsim-Control-Token": token}, "")
	assert.Equal(t, http.StatusOK, st, "with the token any Host is fine: %s", body)
	assert.True(t, p.Alive())
}
