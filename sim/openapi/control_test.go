package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/control"
	"github.com/dubsim/dubsim/sim/control/ui"
	"github.com/dubsim/dubsim/sim/openapi"
	"github.com/dubsim/dubsim/sim/platform"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/go-chi/chi/v5"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The contract tests of the control interface: every documented response
// of every /_sim operation, produced by a real request. Requests that only
// prepare a case (a platform project, a studio artifact, a journal entry)
// go through plain net/http, so these tests do not depend on the platform
// and studio documents; the request under test goes through e.do, which
// checks it against the control document and the combined one.

// ctlFixtureVideo is a studio video of the fixtures (fixtures/studio.json).
const ctlFixtureVideo = "680179c50a4e53a77de3f4cf"

// ctlUnknownStudioID is a well-formed studio id that names nothing.
const ctlUnknownStudioID = "0123456789abcdef01234567"

// ctlCase is one request to the control API and what it must answer.
type ctlCase struct {
	name string
	// prep prepares the instance; the id it returns replaces {id} in path.
	prep   func(t *testing.T, e *env) string
	method string
	path   string
	json   string
	body   []byte            // a raw body instead of json
	header map[string]string // request headers
	status int
	// field is a dotted path into the JSON answer ("rules.0.id") whose
	// value must equal want; with contains, the value (or the text body
	// when field is "") must contain it.
	field    string
	want     any
	contains string
	// check makes further assertions.
	check func(t *testing.T, r resp)
	// refused: the operation's request body schema refuses json too (a
	// case answered 2xx must have a json the schema accepts).
	refused bool
	// heavy cases (64 MiB bodies) run one at a time.
	heavy bool
	// noRedirect: the client does not follow a redirect answered.
	noRedirect bool
	// stream: the answer is an event stream (req.Stream).
	stream bool
	// mod changes the instance's configuration.
	mod func(*app.Config)
}

func TestControlContract(t *testing.T) {
	t.Parallel()
	for _, group := range [][]ctlCase{ctlClockCases(), ctlAccountCases(), ctlStateCases(), ctlOutcomeCases(),
		ctlJournalCases(), ctlFaultCases(), ctlMetaCases(), ctlDashboardCases()} {
		for _, tc := range group {
			t.Run(tc.name, func(t *testing.T) {
				if !tc.heavy {
					t.Parallel()
				}
				e := newEnv(t, tc.mod)
				path := tc.path
				if tc.prep != nil {
					path = strings.ReplaceAll(path, "{id}", tc.prep(t, e))
				}
				rq := req{Interface: openapi.Control, Method: tc.method, Path: path, JSON: tc.json, Body: tc.body, Header: tc.header, Stream: tc.stream}
				var r resp
				if tc.noRedirect {
					r = ctlDoNoRedirect(t, e, rq)
				} else {
					r = e.do(rq)
				}
				require.Equal(t, tc.status, r.Status, "%s", ctlClip(r.Body))
				ctlAssert(t, tc, r)
			})
		}
	}
}

func ctlAssert(t *testing.T, tc ctlCase, r resp) {
	t.Helper()
	if tc.method == http.MethodHead {
		assert.Empty(t, r.Body, "a HEAD answer has no body")
	} else if tc.status >= 400 {
		require.NotNil(t, r.JSON, "an error answer is a JSON envelope: %s", ctlClip(r.Body))
		assert.Equal(t, ctlErrorName(tc.path, tc.status), r.JSON["error"], "%s", r.Body)
	}
	switch {
	case tc.field == "" && tc.contains != "":
		assert.Contains(t, string(r.Body), tc.contains)
	case tc.field != "" && tc.contains != "":
		v, ok := ctlLookup(r.JSON, tc.field).(string)
		require.True(t, ok, "%s is a string in %s", tc.field, ctlClip(r.Body))
		assert.Contains(t, v, tc.contains)
	case tc.field != "":
		assert.Equal(t, tc.want, ctlLookup(r.JSON, tc.field), "%s in %s", tc.field, ctlClip(r.Body))
	}
	if tc.check != nil {
		tc.check(t, r)
	}
	if tc.json == "" {
		return
	}
	schemas, err := ctlRequestSchemas()
	require.NoError(t, err)
	s := schemas[r.Op]
	require.NotNil(t, s, "%s documents a request body", r.Op)
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.json))
	if err != nil {
		return // not JSON: nothing for the schema to say
	}
	switch {
	case tc.refused:
		assert.Error(t, s.Validate(inst), "the request body schema of %s refuses %s", r.Op, tc.json)
	case tc.status < 300:
		assert.NoError(t, s.Validate(inst), "the request body schema of %s accepts what the handler accepted", r.Op)
	}
}

// ctlRequestSchemas compiles the request body schema of every control
// operation that has one, by operationId.
var ctlRequestSchemas = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	raw, err := openapi.Document(openapi.Control)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Paths map[string]map[string]struct {
			ID          string `json:"operationId"`
			RequestBody *struct {
				Content map[string]json.RawMessage `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	const base = "mem:///control-requests.json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(base, parsed); err != nil {
		return nil, err
	}
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	out := map[string]*jsonschema.Schema{}
	for p, item := range doc.Paths {
		for m, op := range item {
			if op.RequestBody == nil {
				continue
			}
			if _, ok := op.RequestBody.Content["application/json"]; !ok {
				return nil, fmt.Errorf("%s: the request body is not application/json", op.ID)
			}
			s, err := c.Compile(base + "#/paths/" + esc.Replace(p) + "/" + m + "/requestBody/content/application~1json/schema")
			if err != nil {
				return nil, fmt.Errorf("%s: %w", op.ID, err)
			}
			out[op.ID] = s
		}
	}
	return out, nil
})

// TestControlRequestExamples: the example of every request body is valid
// against its schema.
func TestControlRequestExamples(t *testing.T) {
	t.Parallel()
	schemas, err := ctlRequestSchemas()
	require.NoError(t, err)
	raw, err := openapi.Document(openapi.Control)
	require.NoError(t, err)
	var doc struct {
		Paths map[string]map[string]struct {
			ID          string `json:"operationId"`
			RequestBody *struct {
				Content map[string]struct {
					Example json.RawMessage `json:"example"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	n := 0
	for _, item := range doc.Paths {
		for _, op := range item {
			if op.RequestBody == nil {
				continue
			}
			ex := op.RequestBody.Content["application/json"].Example
			if !assert.NotEmpty(t, ex, "%s has an example request body", op.ID) {
				continue
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(ex))
			require.NoError(t, err)
			assert.NoError(t, schemas[op.ID].Validate(inst), "the example of %s", op.ID)
			n++
		}
	}
	assert.Equal(t, len(schemas), n)
}

func ctlErrorName(path string, status int) string {
	switch {
	case status == http.StatusTooManyRequests && path == "/_sim/events":
		return "TooManyRequestsError"
	}
	switch status {
	case http.StatusNotFound:
		return "NotFoundError"
	case http.StatusConflict:
		return "ConflictError"
	case http.StatusInternalServerError:
		return "InternalServerError"
	case http.StatusGatewayTimeout:
		return control.ErrPendingName
	case http.StatusServiceUnavailable:
		return "ServiceUnavailableError"
	case http.StatusTooManyRequests:
		return "SandboxLimitError"
	}
	return "ValidationError" // 400 and 413
}

// TestControlStoreFailure: every operation that reads or writes the store
// answers 500 InternalServerError with the masked message when the store
// fails.
func TestControlStoreFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, method, path, json string }{
		{"advance", "POST", "/_sim/clock/advance", `{"seconds":1}`},
		{"advance to the next due", "POST", "/_sim/clock/advance", `{"next_due":true}`},
		{"scale", "POST", "/_sim/clock/scale", `{"time_scale":2}`},
		{"freeze", "POST", "/_sim/clock/freeze", ""},
		{"resume", "POST", "/_sim/clock/resume", ""},
		{"create account", "POST", "/_sim/accounts", `{}`},
		{"update account", "PATCH", "/_sim/accounts/dubsim-free", `{"rate_limit":null}`},
		{"reset", "POST", "/_sim/reset", ""},
		{"state", "GET", "/_sim/state", ""},
		{"fixtures", "POST", "/_sim/fixtures", `{"media_rules":[{"pattern":"*/x.mp4","duration_seconds":5}]}`},
		{"project outcome", "POST", "/_sim/projects/123456789/outcome", `{"outcome":"ready"}`},
		{"artifact outcome", "POST", "/_sim/artifacts/" + ctlUnknownStudioID + "/outcome", `{"outcome":"ready"}`},
		{"video status", "POST", "/_sim/videos/" + ctlFixtureVideo + "/status", `{"status":"new"}`},
		{"list outcome rules", "GET", "/_sim/outcomes", ""},
		{"add outcome rule", "POST", "/_sim/outcomes", `{"outcome":"ready"}`},
		{"remove outcome rule", "DELETE", "/_sim/outcomes/out_1", ""},
		{"project", "GET", "/_sim/projects/123456789", ""},
		{"project, HEAD", "HEAD", "/_sim/projects/123456789", ""},
		{"project audio", "GET", "/_sim/projects/123456789/audio.wav", ""},
		{"project audio, HEAD", "HEAD", "/_sim/projects/123456789/audio.wav", ""},
		{"studio", "GET", "/_sim/studio", ""},
		{"studio, HEAD", "HEAD", "/_sim/studio", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := &ctlFailingStore{}
			e := newEnv(t, func(c *app.Config) { fs.Store = c.Store; c.Store = fs })
			fs.failing.Store(true)
			r := e.do(req{Interface: openapi.Control, Method: tc.method, Path: tc.path, JSON: tc.json})
			require.Equal(t, http.StatusInternalServerError, r.Status, "%s", r.Body)
			if tc.method == http.MethodHead {
				assert.Empty(t, r.Body)
				return
			}
			assert.Equal(t, "InternalServerError", r.JSON["error"])
			assert.Equal(t, sim.MsgInternal, r.JSON["message"], "the cause is masked")
		})
	}
}

// ctlFailingStore fails every transaction once failing is set.
type ctlFailingStore struct {
	sim.Store
	failing atomic.Bool
}

var errCtlDisk = errors.New("injected disk failure")

func (s *ctlFailingStore) View(ctx context.Context, fn func(sim.Tx) error) error {
	if s.failing.Load() {
		return errCtlDisk
	}
	return s.Store.View(ctx, fn)
}

func (s *ctlFailingStore) Update(ctx context.Context, fn func(sim.Tx) error) error {
	if s.failing.Load() {
		return errCtlDisk
	}
	return s.Store.Update(ctx, fn)
}

func (s *ctlFailingStore) Batch(ctx context.Context, fn func(sim.Tx) error) error {
	if s.failing.Load() {
		return errCtlDisk
	}
	return s.Store.Batch(ctx, fn)
}

// TestControlDocumentCoversTheRoutes: the operations of the control document
// are exactly the routes of the control API, the journal, the fault rules,
// the dashboard and the sandbox resource (their route tables, walked; the
// dashboard's /ui/* is /ui/{file}), the health check and the documents; operationIds are unique
// and start with sim.
func TestControlDocumentCoversTheRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	want := []string{"GET /_sim/health", "HEAD /_sim/health", "GET /_sim/openapi.json", "GET /_sim/openapi/{name}"}
	web := ui.New(ui.Config{Source: server.UISource(e.srv.Engine), Track: platform.Track}).ControlRoutes()
	for _, routes := range []chi.Routes{control.New(server.Controller(e.srv.Engine), nil).Routes(), e.srv.Journal.Routes(), e.srv.Faults.Routes(), web} {
		require.NoError(t, chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
			if route == "/ui/*" {
				route = "/ui/{file}"
			}
			want = append(want, method+" /_sim"+route)
			return nil
		}))
	}
	want = append(want, sandboxRoutes(t)...)
	var got []string
	ids := map[string]bool{}
	for _, op := range validators[openapi.Control].Operations() {
		got = append(got, op.Method+" "+op.Path)
		assert.True(t, strings.HasPrefix(op.ID, "sim"), "%s: operationIds of the control interface start with sim", op.ID)
		assert.False(t, ids[op.ID], "operationId %s is unique", op.ID)
		ids[op.ID] = true
	}
	assert.ElementsMatch(t, want, got)
}

// TestControlDocumentIsCanonical: the document is indented with two spaces
// and its error responses use the one envelope (HEAD answers have no body).
func TestControlDocumentIsCanonical(t *testing.T) {
	t.Parallel()
	raw, err := openapi.Document(openapi.Control)
	require.NoError(t, err)
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]struct {
					Schema struct {
						AllOf []struct {
							Ref string `json:"$ref"`
						} `json:"allOf"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	var buf bytes.Buffer
	require.NoError(t, json.Indent(&buf, raw, "", "  "))
	assert.Equal(t, string(raw), buf.String(), "2-space indented JSON")
	for p, item := range doc.Paths {
		for m, op := range item {
			for code, r := range op.Responses {
				if n, _ := strconv.Atoi(code); n < 400 {
					continue
				}
				if m == "head" {
					assert.Empty(t, r.Content, "%s %s %s: a HEAD answer has no body", m, p, code)
					continue
				}
				c, ok := r.Content["application/json"]
				require.True(t, ok, "%s %s %s is JSON", m, p, code)
				require.Len(t, c.Schema.AllOf, 1, "%s %s %s", m, p, code)
				assert.Equal(t, "#/components/schemas/Error", c.Schema.AllOf[0].Ref, "%s %s %s", m, p, code)
			}
		}
	}
}

// TestControlDashboardFiles: every file of the dashboard is served, with
// GET and HEAD, in a documented media type; /_sim/ui/ is index.html. (The
// validator does not tell /_sim/ui/ from /_sim/ui, so the page itself is
// fetched without a check.)
func TestControlDashboardFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	entries, err := os.ReadDir(filepath.Join("..", "control", "ui", "static"))
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	for _, f := range entries {
		if f.IsDir() {
			continue
		}
		for _, m := range []string{"GET", "HEAD"} {
			r := e.do(req{Interface: openapi.Control, Method: m, Path: "/_sim/ui/" + f.Name()})
			require.Equal(t, http.StatusOK, r.Status, "%s %s: %s", m, f.Name(), ctlClip(r.Body))
			assert.NotEqual(t, "application/octet-stream", r.Header.Get("Content-Type"), "%s has a media type", f.Name())
		}
		if f.Name() != "index.html" {
			continue
		}
		want, err := os.ReadFile(filepath.Join("..", "control", "ui", "static", "index.html"))
		require.NoError(t, err)
		hr, err := http.Get(e.url + "/_sim/ui/")
		require.NoError(t, err)
		got, err := io.ReadAll(hr.Body)
		hr.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, hr.StatusCode)
		assert.Equal(t, "text/html; charset=utf-8", hr.Header.Get("Content-Type"))
		assert.Equal(t, string(want), string(got), "/_sim/ui/ is index.html")
	}
}

// ctlDoNoRedirect sends a request without a body as e.do does, but does not
// follow a redirect answered; the answer is checked and recorded as e.do
// does.
func ctlDoNoRedirect(t *testing.T, e *env, r req) resp {
	t.Helper()
	require.True(t, r.JSON == "" && r.Body == nil, "no body")
	hr, err := http.NewRequest(r.Method, e.url+r.Path, nil)
	require.NoError(t, err)
	for k, v := range r.Header {
		hr.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	hres, err := c.Do(hr)
	require.NoError(t, err)
	raw, err := io.ReadAll(hres.Body)
	hres.Body.Close()
	require.NoError(t, err)
	path := hr.URL.EscapedPath()
	res, err := validators[r.Interface].Check(r.Method, path, hres.StatusCode, hres.Header, raw)
	require.NoError(t, err, "%s %s against the %s document", r.Method, r.Path, r.Interface)
	_, err = combinedV.Check(r.Method, path, hres.StatusCode, hres.Header, raw)
	require.NoError(t, err, "%s %s against the combined document", r.Method, r.Path)
	coverage.Lock()
	if coverage.seen[r.Interface] == nil {
		coverage.seen[r.Interface] = map[string]bool{}
	}
	coverage.seen[r.Interface][res.Method+" "+res.Path+" "+res.Response] = true
	coverage.Unlock()
	return resp{Status: hres.StatusCode, Header: hres.Header, Body: raw, Op: res.Operation}
}
