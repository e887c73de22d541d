package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/internal/simtest"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// guardCall is one request of the control guard's table.
type guardCall struct {
	name   string
	method string
	path   string
	host   string // "" keeps the listener's 127.0.0.1:port
	header map[string]string
	body   string
	status int
	error  string // the envelope's error name, when refused
	msg    string // a part of its message
}

func runGuard(t *testing.T, h http.Handler, calls []guardCall) {
	t.Helper()
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, hs.URL+c.path, strings.NewReader(c.body))
			require.NoError(t, err)
			if c.host != "" {
				req.Host = c.host
			}
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, c.status, resp.StatusCode, "%s", raw)
			if c.error == "" {
				return
			}
			var env struct{ Error, Message string }
			require.NoError(t, json.Unmarshal(raw, &env), "%s", raw)
			assert.Equal(t, c.error, env.Error)
			assert.Contains(t, env.Message, c.msg)
			assert.Equal(t, server.Control, resp.Header.Get(server.HeaderInterface))
			if c.status == http.StatusUnauthorized {
				assert.Equal(t, `Bearer realm="dubsim control"`, resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
}

var (
	ctl      = map[string]string{server.HeaderControl: "1"}
	jsonType = map[string]string{"Content-Type": "application/json"}
)

func with(m map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// Without a token (the default): the Host and Origin decide, and a
// state-changing call must be one no HTML form can send (fidelity HC1-HC3).
func TestControlGuardWithoutToken(t *testing.T) {
	t.Parallel()
	in := simtest.New(t, t0, func(c *app.Config) { c.ControlHosts = []string{"dubsim", "CI.Internal."} })
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example"}
	runGuard(t, in.Server.Handler, []guardCall{
		{name: "read by IP literal", method: "GET", path: "/_sim/clock", status: 200},
		{name: "read by localhost", method: "GET", path: "/_sim/clock", host: "localhost:8080", status: 200},
		{name: "read by a *.localhost name", method: "GET", path: "/_sim/clock", host: "app.localhost", status: 200},
		{name: "read by IPv6 literal", method: "GET", path: "/_sim/clock", host: "[::1]:8080", status: 200},
		{name: "read by a configured name", method: "GET", path: "/_sim/clock", host: "dubsim:8080", status: 200},
		{name: "configured names ignore case and a final dot", method: "GET", path: "/_sim/clock", host: "ci.internal", status: 200},
		{name: "DNS rebinding: a foreign Host reads no state", method: "GET", path: "/_sim/state", host: "evil.example",
			status: 403, error: "ForbiddenError", msg: `Host "evil.example" is none of them`},
		{name: "a look-alike of localhost is foreign", method: "GET", path: "/_sim/state", host: "localhost.evil.example",
			status: 403, error: "ForbiddenError", msg: "--control-hosts"},
		{name: "the health endpoint stays open", method: "GET", path: "/_sim/health", host: "evil.example", status: 200},
		{name: "the dashboard's files load (and show why calls fail)", method: "GET", path: "/_sim/ui/app.js", host: "evil.example", status: 200},
		{name: "the platform interface is untouched", method: "GET", path: "/api/v1/balance", host: "evil.example",
			header: map[string]string{"Authorization": "Bearer dubsim-pro", "Origin": "https://evil.example"}, status: 200},
		{name: "the studio interface is untouched", method: "POST", path: "/studio/api/v1/projects", host: "evil.example",
			header: map[string]string{"Authorization": "Bearer dubsim-pro", "Content-Type": "application/x-www-form-urlencoded"}, body: "name=x", status: 400},
		{name: "cross-site form POST to reset", method: "POST", path: "/_sim/reset", header: form,
			status: 403, error: "ForbiddenError", msg: `Origin "https://evil.example"`},
		{name: "an Origin of null is foreign", method: "POST", path: "/_sim/clock/freeze", header: with(ctl, "Origin", "null"),
			status: 403, error: "ForbiddenError", msg: `Origin "null"`},
		{name: "a page on another IP is foreign", method: "POST", path: "/_sim/clock/freeze", header: with(ctl, "Origin", "http://203.0.113.9"),
			status: 403, error: "ForbiddenError", msg: "203.0.113.9"},
		{name: "the dashboard's own Origin", method: "POST", path: "/_sim/clock/freeze", host: "dubsim:8080",
			header: with(ctl, "Origin", "http://dubsim:8080"), status: 200},
		{name: "a loopback Origin", method: "POST", path: "/_sim/clock/resume", header: with(ctl, "Origin", "http://localhost:3000"), status: 200},
		{name: "same-site form POST without Origin: no JSON, no header", method: "POST", path: "/_sim/reset",
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, body: "a=b",
			status: 415, error: "UnsupportedMediaTypeError", msg: `got Content-Type "application/x-www-form-urlencoded"`},
		{name: "text/plain, as a form can send", method: "POST", path: "/_sim/clock/freeze",
			header: map[string]string{"Content-Type": "text/plain"}, status: 415, error: "UnsupportedMediaTypeError", msg: server.HeaderControl},
		{name: "empty POST without the header", method: "POST", path: "/_sim/clock/freeze",
			status: 400, error: "ValidationError", msg: "even with an empty body"},
		{name: "DELETE as plain curl sends it (a page needs a preflight for it)", method: "DELETE", path: "/_sim/faults", status: 200},
		{name: "PATCH with curl's -d (a form's Content-Type)", method: "PATCH", path: "/_sim/accounts/dubsim-free",
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, body: `{"rate_limit":null}`, status: 200},
		{name: "a cross-site DELETE is still foreign", method: "DELETE", path: "/_sim/faults", header: map[string]string{"Origin": "https://evil.example"},
			status: 403, error: "ForbiddenError", msg: `Origin "https://evil.example"`},
		{name: "the header with curl's -d: the body is read as JSON", method: "POST", path: "/_sim/clock/advance",
			header: with(ctl, "Content-Type", "application/x-www-form-urlencoded"), body: `{"seconds":1}`, status: 200},
		{name: "empty POST with the header", method: "POST", path: "/_sim/clock/freeze", header: ctl, status: 200},
		{name: "JSON body", method: "POST", path: "/_sim/clock/advance", header: jsonType, body: `{"seconds":1}`, status: 200},
		{name: "JSON with parameters", method: "POST", path: "/_sim/clock/advance",
			header: map[string]string{"Content-Type": "application/json; charset=utf-8"}, body: `{"seconds":1}`, status: 200},
		{name: "reads need no header", method: "GET", path: "/_sim/faults", status: 200},
	})
}

// With a token: every control call carries it, whatever the Host
// (fidelity HC4).
func TestControlGuardWithToken(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token"
	in := simtest.New(t, t0, func(c *app.Config) { c.ControlToken = token })
	bearer := map[string]string{"Authorization": "Bearer " + token}
	runGuard(t, in.Server.Handler, []guardCall{
		{name: "no token", method: "GET", path: "/_sim/state", status: 401, error: "UnauthorizedError", msg: "Authorization: Bearer TOKEN"},
		{name: "wrong token", method: "GET", path: "/_sim/state", header: map[string]string{"Authorization": "Bearer s3cret-tokeN"},
			status: 401, error: "UnauthorizedError", msg: server.HeaderControlToken},
		{name: "a prefix of the token", method: "GET", path: "/_sim/state", header: map[string]string{server.HeaderControlToken: "s3cret"},
			status: 401, error: "UnauthorizedError", msg: "--control-token"},
		{name: "an API key is not the token", method: "GET", path: "/_sim/state", header: map[string]string{"Authorization": "Bearer dubsim-pro"},
			status: 401, error: "UnauthorizedError"},
		{name: "bearer token", method: "GET", path: "/_sim/state", header: bearer, status: 200},
		{name: "token header", method: "GET", path: "/_sim/state", header: map[string]string{server.HeaderControlToken: token}, status: 200},
		{name: "bearer scheme in any case", method: "GET", path: "/_sim/clock", header: map[string]string{"Authorization": "bearer " + token}, status: 200},
		{name: "a token makes any Host fine", method: "GET", path: "/_sim/clock", host: "dubsim-ci.internal:8080", header: bearer, status: 200},
		{name: "a form cannot send it", method: "POST", path: "/_sim/reset", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			status: 401, error: "UnauthorizedError"},
		{name: "state changes still need JSON or the header", method: "POST", path: "/_sim/reset", header: bearer,
			status: 400, error: "ValidationError", msg: server.HeaderControl},
		{name: "token and header", method: "POST", path: "/_sim/clock/freeze", header: with(bearer, server.HeaderControl, "1"), status: 200},
		{name: "health stays open", method: "GET", path: "/_sim/health", status: 200},
		{name: "the dashboard's files load", method: "GET", path: "/_sim/ui/", status: 200},
		{name: "a browser's GET / goes to the dashboard", method: "GET", path: "/", header: map[string]string{"Accept": "text/html"}, status: 200},
		{name: "the platform interface is untouched", method: "GET", path: "/api/v1/balance",
			header: map[string]string{"Authorization": "Bearer dubsim-pro"}, status: 200},
		// A page's refusal is in the envelope of its interface (studio).
		{name: "a project page needs the token", method: "GET", path: "/projects/6800ed147125e1af62bc928c", status: 401},
		{name: "a project page under the studio prefix too", method: "GET", path: "/studio/projects/6800ed147125e1af62bc928c", status: 401},
		{name: "a project page with the token", method: "GET", path: "/projects/6800ed147125e1af62bc928c", header: bearer, status: 200},
		{name: "DELETE with the token alone", method: "DELETE", path: "/_sim/faults", header: bearer, status: 200},
	})
}

// An accepted control call reaches the journal without its token.
func TestControlTokenIsNotJournaled(t *testing.T) {
	t.Parallel()
	const token = "journal-secret"
	in := simtest.New(t, t0, func(c *app.Config) { c.ControlToken = token })
	hs := httptest.NewServer(in.Server.Handler)
	t.Cleanup(hs.Close)
	req, err := http.NewRequest("POST", hs.URL+"/_sim/clock/advance", strings.NewReader(`{"seconds":1}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	req, err = http.NewRequest("GET", hs.URL+"/_sim/requests", nil)
	require.NoError(t, err)
	req.Header.Set(server.HeaderControlToken, token)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	assert.Contains(t, string(raw), "/_sim/clock/advance")
	assert.NotContains(t, string(raw), token)
}

// --control-addr: the control API on its own handler, none of it on the
// main one but the health endpoint (fidelity HC5).
func TestSeparateControlAddress(t *testing.T) {
	t.Parallel()
	in := simtest.New(t, t0, func(c *app.Config) { c.SeparateControl = true })
	require.NotNil(t, in.Server.ControlHandler)
	runGuard(t, in.Server.Handler, []guardCall{
		{name: "main: no state", method: "GET", path: "/_sim/state", status: 404, error: "NotFoundError", msg: "No route"},
		{name: "main: no reset", method: "POST", path: "/_sim/reset", header: ctl, status: 404},
		{name: "main: no dashboard", method: "GET", path: "/_sim/ui/", status: 404},
		{name: "main: health", method: "GET", path: "/_sim/health", status: 200},
		{name: "main: platform", method: "GET", path: "/api/v1/balance", header: map[string]string{"Authorization": "Bearer dubsim-pro"}, status: 200},
	})
	runGuard(t, in.Server.ControlHandler, []guardCall{
		{name: "control: state", method: "GET", path: "/_sim/state", status: 200},
		{name: "control: guarded", method: "GET", path: "/_sim/state", host: "evil.example", status: 403, error: "ForbiddenError"},
		{name: "control: health", method: "GET", path: "/_sim/health", status: 200},
		{name: "control: dashboard", method: "GET", path: "/_sim/ui/", status: 200},
		{name: "control: no platform API", method: "GET", path: "/api/v1/balance", header: map[string]string{"Authorization": "Bearer dubsim-pro"},
			status: 404, error: "NotFoundError"},
	})
}

func ExampleHeaderControl() {
	fmt.Println(server.HeaderControl, server.HeaderControlToken)
	// Output: X-Dubsim-Control X-Dubsim-Control-Token
}
