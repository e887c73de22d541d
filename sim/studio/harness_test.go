package studio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/simtest"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// t0 is the frozen simulated time every instance starts at.
var t0 = time.Date(2026, 2, 4, 12, 0, 0, 0, time.UTC)

// Fixture keys (fixtures/accounts.json) and the studio records of their
// companies (fixtures/studio.json).
const (
	keyAcme    = "dubsim-free"         // Alice Johnson, Acme Media
	keyAcme2   = "dubsim-subscription" // Bob Martinez, Acme Media
	keyInitech = "dubsim-pro"          // Priya Raman, Initech Learning
	keyGlobex  = "dubsim-enterprise"   // Grace Liu, Globex Studios (multi_language)

	coAcme = "663266da5ec2709f7826386f"

	glAcmeTranslation   = "664dde2bbd76c09876a4bc5b"
	glAcmeTranslation2  = "671e9b98bd76c09876a4bc5c"
	glAcmeVoices        = "673494a9bd76c09876a4bc5d"
	glAcmePronunciation = "676604f4bd76c09876a4bc5e"
	glGlobexTranslation = "679cf375bd76c09876a4bc5f"
	glGlobexVoices      = "679e0cabbd76c09876a4bc60"

	prAcmeSummer    = "6800ed147125e1af62bc928c" // 3 videos
	prAcmeTutorials = "6821e2967125e1af62bc928d" // 2 videos
	prGlobexNight   = "67ed268e7125e1af62bc928f"
	prInitech       = "6814b3a77125e1af62bc9291"

	viSummerHero   = "680179c50a4e53a77de3f4cf" // completed, es-ES fr-FR, guidance
	viSummerSocial = "683b275c0a4e53a77de3f4d1" // new, es-ES fr-FR de-DE
	viTutorials    = "68226f3e0a4e53a77de3f4d2" // in Product Tutorials
	viGlobexEp1    = "67ef593d0a4e53a77de3f4d6"

	unknownID = "000000000000000000000000"

	// publicURL makes projectUrl and videoUrl independent of the test
	// server's port, for golden files.
	publicURL = "https://studio.dubsim.test"
)

// env is an assembled dubsim instance whose studio handler is served by an
// httptest server (or, for fuzzing, called in process).
type env struct {
	t     testing.TB
	srv   *server.Server
	clock *sim.SimClock
	h     http.Handler // the studio handler
	url   string       // base URL of the httptest server; "" in process
}

// newEnv builds an instance (simtest: a temporary store and blob directory,
// a clock frozen at t0, seed 0, the embedded fixtures) and serves its studio
// handler with httptest.
func newEnv(t testing.TB, mod func(*app.Config)) *env {
	t.Helper()
	e := newInProcess(t, mod)
	hs := httptest.NewServer(e.h)
	t.Cleanup(hs.Close)
	e.url = hs.URL
	return e
}

// newInProcess is newEnv without a listener: requests go straight to the
// handler through a recorder (cheaper per request, for fuzz targets).
func newInProcess(t testing.TB, mod func(*app.Config)) *env {
	t.Helper()
	i := simtest.New(t, t0, mod)
	return &env{t: t, srv: i.Server, clock: i.Clock, h: i.Server.StudioHandler}
}

func withPublicURL(c *app.Config) { c.PublicURL = publicURL }

// call is one request. body is sent with Content-Type application/json
// unless header overrides it ("" deletes a header).
type call struct {
	method, path, key, body string
	header                  map[string]string
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) String() string { return http.StatusText(r.status) + ": " + string(r.body) }

// json decodes an object body.
func (r reply) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), "body: %s", r.body)
	return m
}

// list decodes an array body.
func (r reply) list(t testing.TB) []map[string]any {
	t.Helper()
	var l []map[string]any
	require.NoError(t, json.Unmarshal(r.body, &l), "body: %s", r.body)
	return l
}

func (e *env) do(c call) reply {
	e.t.Helper()
	return e.send(e.t, c)
}

// send is do for a subtest: failures are reported on t.
func (e *env) send(t testing.TB, c call) reply {
	t.Helper()
	var req *http.Request
	if e.url == "" {
		req = httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
	} else {
		var err error
		req, err = http.NewRequest(c.method, e.url+c.path, strings.NewReader(c.body))
		require.NoError(t, err)
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	for k, v := range c.header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	if e.url == "" {
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		return reply{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return reply{status: resp.StatusCode, header: resp.Header, body: body}
}

// ok sends c and requires a 200 with a JSON object.
func (e *env) ok(c call) map[string]any {
	e.t.Helper()
	r := e.do(c)
	require.Equal(e.t, http.StatusOK, r.status, "%s %s: %s", c.method, c.path, r.body)
	return r.json(e.t)
}

// advance moves simulated time (and applies due transitions).
func (e *env) advance(d time.Duration) {
	e.t.Helper()
	_, err := e.srv.Engine.Clock.Advance(context.Background(), d)
	require.NoError(e.t, err)
}

// advanceClockOnly moves simulated time without the sweep that applies due
// transitions (as between two ticks of the ticker).
func (e *env) advanceClockOnly(d time.Duration) { e.clock.Advance(d) }

// artifact creates an artifact and returns its id.
func (e *env) artifact(key, body string) string {
	e.t.Helper()
	return e.ok(call{method: "POST", path: "/api/v1/artifacts/create", key: key, body: body})["id"].(string)
}

// readyArtifact creates an artifact of typ from a media rule URL (12 s) and
// forces its processing to end at once, without moving the clock.
func (e *env) readyArtifact(key, typ string) string {
	e.t.Helper()
	id := e.artifact(key, `{"name":"src","type":"`+typ+`","url":"https://media.dubsim.test/short.mp4"}`)
	_, err := e.srv.Engine.Outcomes.ForceArtifact(context.Background(), id, sim.ForceReady, "", nil, nil, true)
	require.NoError(e.t, err)
	return id
}

// project creates a studio project and returns its id.
func (e *env) project(key, body string) string {
	e.t.Helper()
	return e.ok(call{method: "POST", path: "/api/v1/projects", key: key, body: body})["id"].(string)
}

// video creates a video in project pid from artifact src.
func (e *env) video(key, pid, src string) string {
	e.t.Helper()
	body := `{"name":"Clip","workflowType":"dubbing","sourceArtifactId":"` + src + `","sourceLanguage":"en","targetLanguages":["es-ES","fr-FR"]}`
	return e.ok(call{method: "POST", path: "/api/v1/projects/" + pid + "/videos/create", key: key, body: body})["id"].(string)
}

// account creates an account through the engine (the control API's
// operation) and returns its key.
func (e *env) account(spec sim.AccountSpec) string {
	e.t.Helper()
	if spec.Plan == "" {
		spec.Plan = sim.PlanNone
	}
	a, err := e.srv.Engine.Accounts.CreateAccount(context.Background(), spec)
	require.NoError(e.t, err)
	return a.APIKey
}

// assertError checks a studio error answer: the status and exactly the
// body {"error": msg}.
func assertError(t testing.TB, r reply, status int, msg string) {
	t.Helper()
	assert.Equal(t, status, r.status, "body: %s", r.body)
	assert.Equal(t, "application/json; charset=utf-8", r.header.Get("Content-Type"))
	var m map[string]any
	if assert.NoError(t, json.Unmarshal(r.body, &m), "body: %s", r.body) {
		assert.Equal(t, map[string]any{"error": msg}, m)
	}
}

// isError reports whether r is the studio error status {"error": msg}.
func isError(r reply, status int, msg string) bool {
	var m map[string]any
	return r.status == status && json.Unmarshal(r.body, &m) == nil && len(m) == 1 && m["error"] == msg
}

// golden compares got (indented JSON) with testdata/name.golden.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, json.Indent(&buf, bytes.TrimSpace(got), "", "  "), "body: %s", got)
	buf.WriteByte('\n')
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./sim/studio -update to create %s", path)
	assert.Equal(t, string(want), buf.String(), "golden %s (go test ./sim/studio -update to accept)", path)
}

// errCase is a request that must be refused with status and message.
type errCase struct {
	name   string
	call   call
	status int
	msg    string
	// bug, when set, describes a known defect of the code under test: the
	// case states the expected behaviour and is skipped until it is fixed.
	bug string
}

// runErrors runs cases as parallel subtests against one instance (error
// answers change no state).
func runErrors(t *testing.T, e *env, cases []errCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.send(t, tc.call)
			if tc.bug != "" {
				if isError(r, tc.status, tc.msg) {
					t.Errorf("known bug appears fixed (%s): remove the bug note", tc.bug)
				}
				t.Skipf("BUG: %s (got %s)", tc.bug, r)
			}
			assertError(t, r, tc.status, tc.msg)
		})
	}
}

func repeat(s string, n int) string { return strings.Repeat(s, n) }

// httptestServer starts a server for t and returns its URL.
func httptestServer(t testing.TB, h http.Handler) string {
	t.Helper()
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL
}
