package openapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/simtest"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/control/ui"
	"github.com/dubsim/dubsim/sim/openapi"
	"github.com/dubsim/dubsim/sim/sandbox"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sbEnv is an instance with sandboxes, as cmd/dubsim assembles it: the
// /_sim/sandboxes resource on the default control API and the dispatcher
// in front of the default handler.
type sbEnv struct {
	*env
	m   *sandbox.Manager
	dir string // the sandboxes' directory
}

// newSandboxEnv is newEnv with sandboxes; smod changes the manager's
// configuration.
func newSandboxEnv(t *testing.T, mod func(*app.Config), smod func(*sandbox.Config)) *sbEnv {
	t.Helper()
	s := simtest.NewSandboxed(t, simtest.Options{Start: t0, Config: func(c *app.Config) {
		c.Version = "test"
		if mod != nil {
			mod(c)
		}
	}}, smod)
	hs := httptest.NewServer(s.Handler)
	t.Cleanup(hs.Close)
	return &sbEnv{env: &env{t: t, srv: s.Server, url: hs.URL, clock: s.Clock}, m: s.Manager, dir: s.Sandbox.Dir}
}

// sbID is a well-formed sandbox id.
const sbID = "k7q2m9x4w3p8r5t6"

// sbCase is a ctlCase on an instance with sandboxes.
type sbCase struct {
	ctlCase
	smod func(*sandbox.Config)
	// sbPrep prepares the instance; the id it returns replaces {id}.
	sbPrep func(t *testing.T, e *sbEnv) string
}

// sbMake creates a sandbox through the manager and returns its id.
func sbMake(t *testing.T, e *sbEnv) string {
	t.Helper()
	sb, err := e.m.Create(t.Context(), "", sandbox.Options{})
	require.NoError(t, err)
	return sb.ID
}

// sbBreakDir replaces the sandboxes' directory with a file: a creation
// cannot make its files.
func sbBreakDir(t *testing.T, e *sbEnv) string {
	t.Helper()
	require.NoError(t, os.RemoveAll(e.dir))
	require.NoError(t, os.WriteFile(e.dir, nil, 0o644))
	return sbID
}

func sbCheckView(id string, start time.Time) func(t *testing.T, r resp) {
	return func(t *testing.T, r resp) {
		got := r.JSON["id"].(string)
		if id != "" {
			assert.Equal(t, id, got)
		}
		assert.Equal(t, "/_sim/sandboxes/"+got, r.Header.Get("Location"))
		assert.Equal(t, "sbx_"+got+"_dubsim-pro", ctlLookup(r.JSON, "api_keys.dubsim-pro"))
		assert.True(t, strings.HasSuffix(r.JSON["base_url"].(string), "/sbx/"+got), "%v", r.JSON["base_url"])
		assert.Equal(t, start.Format("2006-01-02T15:04:05.000Z"), ctlLookup(r.JSON, "clock.now"))
	}
}

// sbStreamsFull fills the process's event streams: every place of
// ui.MaxProcessEventStreams, as the whole share of as many sandboxes as
// that takes, held until the test ends.
func sbStreamsFull(t *testing.T, e *sbEnv) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for range ui.MaxProcessEventStreams / ui.MaxEventStreams {
		id := sbMake(t, e)
		for range ui.MaxEventStreams {
			hr, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url+"/sbx/"+id+"/_sim/events", nil)
			require.NoError(t, err)
			res, err := http.DefaultClient.Do(hr) // returns with the headers: the stream holds its place
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, res.StatusCode)
			t.Cleanup(func() { _ = res.Body.Close() })
		}
	}
	return ""
}

func ctlSandboxCases() []sbCase {
	big := `{"start":"` + strings.Repeat("x", 70<<10) + `"}`
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	full := func(c *sandbox.Config) { c.Max = 1 }
	return []sbCase{
		{ctlCase: ctlCase{name: "create", method: "POST", path: "/_sim/sandboxes", status: 201, field: "clock.frozen", want: true, check: sbCheckView("", t0)}},
		{ctlCase: ctlCase{name: "create with options", method: "POST", path: "/_sim/sandboxes", json: `{"start":"2030-01-02T03:04:05Z","time_scale":0,"seed":7}`, status: 201, check: sbCheckView("", start)}},
		{ctlCase: ctlCase{name: "create running", method: "POST", path: "/_sim/sandboxes", json: `{"time_scale":60}`, status: 201, field: "clock.frozen", want: false}},
		{ctlCase: ctlCase{name: "create, start not RFC 3339", method: "POST", path: "/_sim/sandboxes", json: `{"start":"yesterday"}`, status: 400, field: "message", contains: "RFC 3339", refused: true}},
		{ctlCase: ctlCase{name: "create, unknown field", method: "POST", path: "/_sim/sandboxes", json: `{"colour":"red"}`, status: 400, refused: true}},
		{ctlCase: ctlCase{name: "create, time scale out of range", method: "POST", path: "/_sim/sandboxes", json: `{"time_scale":-1}`, status: 400, field: "message", contains: "time_scale", refused: true}},
		{ctlCase: ctlCase{name: "create, body too large", method: "POST", path: "/_sim/sandboxes", json: big, status: 413, refused: true}},
		{ctlCase: ctlCase{name: "create past the cap", method: "POST", path: "/_sim/sandboxes", json: `{}`, status: 429, field: "message", contains: "--sandbox-max"}, smod: full, sbPrep: sbMake},
		{ctlCase: ctlCase{name: "create, disk error", method: "POST", path: "/_sim/sandboxes", json: `{}`, status: 500}, sbPrep: sbBreakDir},
		{ctlCase: ctlCase{name: "put", method: "PUT", path: "/_sim/sandboxes/" + sbID, status: 201, check: sbCheckView(sbID, t0)}},
		{ctlCase: ctlCase{name: "put with options", method: "PUT", path: "/_sim/sandboxes/" + sbID, json: `{"start":"2030-01-02T03:04:05Z","seed":7}`, status: 201, check: sbCheckView(sbID, start)}},
		{ctlCase: ctlCase{name: "put, bad id", method: "PUT", path: "/_sim/sandboxes/K7Q2M9X4W3P8R5T6", status: 400, field: "message", contains: "Crockford"}},
		{ctlCase: ctlCase{name: "put, id taken", method: "PUT", path: "/_sim/sandboxes/{id}", status: 409}, sbPrep: sbMake},
		{ctlCase: ctlCase{name: "put, body too large", method: "PUT", path: "/_sim/sandboxes/" + sbID, json: big, status: 413, refused: true}},
		{ctlCase: ctlCase{name: "put past the cap", method: "PUT", path: "/_sim/sandboxes/" + sbID, status: 429}, smod: full, sbPrep: func(t *testing.T, e *sbEnv) string { sbMake(t, e); return sbID }},
		{ctlCase: ctlCase{name: "put, disk error", method: "PUT", path: "/_sim/sandboxes/{id}", status: 500}, sbPrep: sbBreakDir},
		{ctlCase: ctlCase{name: "list", method: "GET", path: "/_sim/sandboxes", status: 200, field: "total", want: float64(1), check: func(t *testing.T, r resp) {
			assert.Equal(t, float64(200), r.JSON["max"])
			assert.Equal(t, "0s", r.JSON["idle_expiry"])
		}}, sbPrep: sbMake},
		{ctlCase: ctlCase{name: "list, expiry", method: "GET", path: "/_sim/sandboxes", status: 200, field: "idle_expiry", want: "30m0s", check: func(t *testing.T, r resp) {
			assert.NotEmpty(t, ctlLookup(r.JSON, "sandboxes.0.expires_at"))
		}}, smod: func(c *sandbox.Config) { c.Idle = 30 * time.Minute }, sbPrep: sbMake},
		{ctlCase: ctlCase{name: "get", method: "GET", path: "/_sim/sandboxes/{id}", status: 200, field: "clock.time_scale", want: float64(0)}, sbPrep: sbMake},
		{ctlCase: ctlCase{name: "get, unknown", method: "GET", path: "/_sim/sandboxes/" + sbID, status: 404, field: "message", contains: "does not exist"}},
		{ctlCase: ctlCase{name: "delete", method: "DELETE", path: "/_sim/sandboxes/{id}", status: 204}, sbPrep: sbMake},
		{ctlCase: ctlCase{name: "delete, unknown", method: "DELETE", path: "/_sim/sandboxes/" + sbID, status: 404}},
		{ctlCase: ctlCase{name: "events past the process's bound", method: "GET", path: "/_sim/events", status: 503, field: "message",
			want:  "Too many event streams open in this process (at most 64 across its simulators); retry when one closes",
			check: func(t *testing.T, r resp) { assert.Equal(t, "2", r.Header.Get("Retry-After")) }}, sbPrep: sbStreamsFull},
		{ctlCase: ctlCase{name: "events past the process's bound, HEAD", method: "HEAD", path: "/_sim/events", status: 503,
			check: func(t *testing.T, r resp) { assert.Equal(t, "2", r.Header.Get("Retry-After")) }}, sbPrep: sbStreamsFull},
	}
}

// TestControlSandboxesContract: every documented answer of
// /_sim/sandboxes, on an instance with sandboxes.
func TestControlSandboxesContract(t *testing.T) {
	t.Parallel()
	for _, tc := range ctlSandboxCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newSandboxEnv(t, tc.mod, tc.smod)
			path := tc.path
			if tc.sbPrep != nil {
				path = strings.ReplaceAll(path, "{id}", tc.sbPrep(t, e))
			}
			r := e.do(req{Interface: openapi.Control, Method: tc.method, Path: path, JSON: tc.json, Header: tc.header})
			require.Equal(t, tc.status, r.Status, "%s", ctlClip(r.Body))
			ctlAssert(t, tc.ctlCase, r)
		})
	}
}

// TestControlSandboxesDelete: a deleted sandbox is gone from the list and
// its keys no longer reach it.
func TestControlSandboxesDelete(t *testing.T) {
	t.Parallel()
	e := newSandboxEnv(t, nil, nil)
	r := e.do(req{Interface: openapi.Control, Method: "PUT", Path: "/_sim/sandboxes/" + sbID})
	require.Equal(t, 201, r.Status, "%s", r.Body)
	r = e.do(req{Interface: openapi.Control, Method: "GET", Path: "/_sim/sandboxes"})
	assert.Equal(t, sbID, ctlLookup(r.JSON, "sandboxes.0.id"))
	r = e.do(req{Interface: openapi.Control, Method: "DELETE", Path: "/_sim/sandboxes/" + sbID})
	require.Equal(t, 204, r.Status, "%s", r.Body)
	r = e.do(req{Interface: openapi.Control, Method: "GET", Path: "/_sim/sandboxes"})
	assert.Equal(t, float64(0), r.JSON["total"])
	r = e.do(req{Interface: openapi.Platform, Method: "GET", Path: "/api/v1/balance", Key: "sbx_" + sbID + "_dubsim-pro"})
	assert.Equal(t, http.StatusUnauthorized, r.Status)
}

// sandboxRoutes are the routes of the sandbox resource, as
// TestControlDocumentCoversTheRoutes lists them: /sandboxes/{id}/* (a
// sandbox's own control API, the whole control document under its
// prefix) is left out.
func sandboxRoutes(t *testing.T) []string {
	t.Helper()
	e := newSandboxEnv(t, nil, nil)
	routes, ok := e.m.ControlExtension("").Handler.(chi.Routes)
	require.True(t, ok, "the sandbox resource is a chi router")
	var out []string
	require.NoError(t, chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if !strings.HasSuffix(route, "/*") {
			out = append(out, method+" /_sim"+route)
		}
		return nil
	}))
	require.Len(t, out, 5)
	return out
}
