package server_test

// Black-box tests of the platform interface under the /platform prefix:
// every route of the platform's route table answers there as on the shared
// address, links lead back under the prefix, and every other path under it
// is the platform's 404.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/platform"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// platformRouteTable lists the routes of the platform interface as
// "METHOD pattern", read from its router (platform.API.Routes).
func platformRouteTable(t *testing.T, in *inst) []string {
	t.Helper()
	api := platform.New(platform.Config{Service: server.PlatformService(in.srv.Engine)})
	t.Cleanup(func() { _ = api.Close() })
	var routes []string
	require.NoError(t, chi.Walk(api.Routes(), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		routes = append(routes, method+" "+route)
		return nil
	}))
	slices.Sort(routes)
	return routes
}

// prefixStep is one request of the walk over the route table: route names
// the route it exercises ("" for a control call), req builds it from the
// answers so far (path relative to the base, or an absolute link taken
// from an answer).
type prefixStep struct {
	name, route string
	req         func(seen map[string]routedAnswer) (method, path, contentType string, body []byte)
	status      int
}

// TestPlatformPrefixServesEveryPlatformRoute: {base_url} = <addr>/platform
// serves every route of the platform's route table with the answers the
// shared address gives (two instances with the same seed and clock run the
// same requests, one at the root with X-Dubsim-Interface: platform, one
// under the prefix); the links of its answers (output files) lead back
// under the prefix, and the journal records the path as sent, routed by
// the prefix.
func TestPlatformPrefixServesEveryPlatformRoute(t *testing.T) {
	t.Parallel()
	root := start(t, nil)
	pre, preServed := startServed(t, nil)
	rootBase, preBase := root.url, pre.url+server.PlatformPrefix
	const key = "dubsim-enterprise" // re-translation and cloning enabled
	source := "https://media.dubsim.test/short-prefix.mp4"

	project := func(seen map[string]routedAnswer) string {
		return seen["create"].json(t)["project_id"].(string)
	}
	ready := func(seen map[string]routedAnswer) map[string]any { return seen["get ready"].json(t) }
	retranslation := func(seen map[string]routedAnswer) []byte {
		p := ready(seen)
		return []byte(mustJSON(t, map[string]any{"target_script": p["output_target_script"], "target_speakers": p["output_target_speakers"]}))
	}
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	require.NoError(t, mw.WriteField("text", "Hello from under the prefix."))
	require.NoError(t, mw.WriteField("language", "en-US"))
	fw, err := mw.CreateFormFile("reference_audio_files", "reference.wav")
	require.NoError(t, err)
	_, err = fw.Write(refWAVBytes(t, 180, 3*time.Second))
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	get := func(path string) func(map[string]routedAnswer) (string, string, string, []byte) {
		return func(map[string]routedAnswer) (string, string, string, []byte) { return "GET", path, "", nil }
	}
	advance := prefixStep{name: "advance", req: func(map[string]routedAnswer) (string, string, string, []byte) {
		return "POST", "/_sim/clock/advance", "application/json", []byte(`{"seconds":86400}`)
	}, status: 200}

	steps := []prefixStep{
		{"balance", "GET /api/v1/balance", get("/api/v1/balance"), 200},
		{"options", "GET /api/v1/options", get("/api/v1/options"), 200},
		{"voices", "GET /api/v1/voices", get("/api/v1/voices"), 200},
		{"create", "POST /api/v1/projects", func(map[string]routedAnswer) (string, string, string, []byte) {
			return "POST", "/api/v1/projects", "application/json",
				[]byte(`{"name":"Prefix","source_lang":"en","target_lang":"de-DE","source_video_url":"` + source + `"}`)
		}, 200},
		{"get in progress", "GET /api/v1/projects/{project_id}", func(seen map[string]routedAnswer) (string, string, string, []byte) {
			return "GET", "/api/v1/projects/" + project(seen), "", nil
		}, 200},
		advance,
		{"get ready", "GET /api/v1/projects/{project_id}", func(seen map[string]routedAnswer) (string, string, string, []byte) {
			return "GET", "/api/v1/projects/" + project(seen), "", nil
		}, 200},
		{"download audio", "GET /files/projects/{project_id}/{gen}/{file}", func(seen map[string]routedAnswer) (string, string, string, []byte) {
			return "GET", ready(seen)["output_tts_audio_url"].(string), "", nil
		}, 200},
		{"head video", "HEAD /files/projects/{project_id}/{gen}/{file}", func(seen map[string]routedAnswer) (string, string, string, []byte) {
			return "HEAD", ready(seen)["output_video_url"].(string), "", nil
		}, 200},
		{"validate", "POST /api/v1/projects/{project_id}/validate-translation-request", func(seen map[string]routedAnswer) (string, string, string, []byte) {
			return "POST", "/api/v1/projects/" + project(seen) + "/validate-translation-request", "application/json", retranslation(seen)
		}, 200},
		{"retranslate", "POST /api/v1/projects/{project_id}/translations", func(seen map[string]routedAnswer) (string, string, string, []byte) {
			return "POST", "/api/v1/projects/" + project(seen) + "/translations", "application/json", retranslation(seen)
		}, 200},
		{"clone", "POST /api/v1/cloning/synthesize", func(map[string]routedAnswer) (string, string, string, []byte) {
			return "POST", "/api/v1/cloning/synthesize", mw.FormDataContentType(), form.Bytes()
		}, 200},
		advance,
		{"delete", "DELETE /api/v1/projects/{project_id}", func(seen map[string]routedAnswer) (string, string, string, []byte) {
			return "DELETE", "/api/v1/projects/" + project(seen), "", nil
		}, 200},
		{"get deleted", "GET /api/v1/projects/{project_id}", func(seen map[string]routedAnswer) (string, string, string, []byte) {
			return "GET", "/api/v1/projects/" + project(seen), "", nil
		}, 404},
	}

	// The walk covers the route table, whatever routes it gains.
	var covered []string
	for _, s := range steps {
		if s.route != "" && !slices.Contains(covered, s.route) {
			covered = append(covered, s.route)
		}
	}
	slices.Sort(covered)
	require.Equal(t, platformRouteTable(t, root), covered, "every platform route has a step")

	seenRoot, seenPre := map[string]routedAnswer{}, map[string]routedAnswer{}
	for _, s := range steps {
		if s.route == "" {
			for _, in := range []*inst{root, pre} {
				method, path, _, body := s.req(nil)
				st, m := in.call(method, path, "", string(body))
				require.Equal(t, s.status, st, "%s: %v", s.name, m)
			}
			continue
		}
		send := func(base string, seen map[string]routedAnswer, header map[string]string) routedAnswer {
			t.Helper()
			method, path, ct, body := s.req(seen)
			if !strings.Contains(path, "://") {
				path = base + path
			}
			h := map[string]string{"Content-Type": ct}
			for k, v := range header {
				h[k] = v
			}
			a := sendRaw(t, "prefix-"+s.name, method, path, key, body, h)
			require.Equal(t, s.status, a.status, "%s %s: %s", method, path, a.body)
			assert.Equal(t, server.Platform, a.header.Get(server.HeaderInterface), "%s", s.name)
			seen[s.name] = a
			return a
		}
		a := send(rootBase, seenRoot, map[string]string{server.HeaderInterface: server.Platform})
		b := send(preBase, seenPre, map[string]string{server.HeaderInterface: server.Studio}) // not consulted under the prefix
		assert.Equal(t, a.header.Get("Content-Type"), b.header.Get("Content-Type"), "%s", s.name)
		if !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
			assert.Equal(t, a.header.Get("Content-Length"), b.header.Get("Content-Length"), "%s", s.name)
		}
		// The same answer, its links under the base; download signatures
		// are keyed by each store's own secret.
		norm := func(body []byte, base string) string {
			return signature.ReplaceAllString(strings.ReplaceAll(string(body), base, "<base>"), "signed=<signature>")
		}
		assert.Equal(t, norm(a.body, rootBase), norm(b.body, preBase), "%s: the same answer, links under the base", s.name)

		preServed.wait(t, "prefix-"+s.name)
		e := journalEntry(t, pre, "prefix-"+s.name)
		assert.Equal(t, "platform", e["interface"], "%s", s.name)
		assert.Equal(t, "prefix", e["routed_by"], "%s", s.name)
		assert.True(t, strings.HasPrefix(e["path"].(string), server.PlatformPrefix+"/"), "%s: the journal keeps the path as sent: %v", s.name, e["path"])
	}

	// The output links of the prefix's answers lead back under it.
	p := seenPre["get ready"].json(t)
	for _, k := range []string{"output_video_url", "output_tts_audio_url"} {
		u, ok := p[k].(string)
		require.True(t, ok, "%s in %v", k, p)
		assert.True(t, strings.HasPrefix(u, preBase+"/files/projects/"), "%s is under the prefix: %s", k, u)
	}
	assert.True(t, bytes.HasPrefix(seenPre["download audio"].body, []byte("RIFF")), "the output file itself")
}

// served tells when the instance has finished each request, named by its
// User-Agent: the journal records a request once its handler returns,
// which may be after its client has read the whole answer.
type served struct {
	mu   sync.Mutex
	done map[string]chan struct{}
}

func (s *served) ch(tag string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.done[tag]
	if !ok {
		c = make(chan struct{})
		s.done[tag] = c
	}
	return c
}

// wait returns once the request tagged tag has been served.
func (s *served) wait(t testing.TB, tag string) {
	t.Helper()
	select {
	case <-s.ch(tag):
	case <-time.After(30 * time.Second):
		t.Fatalf("the request %q was never served", tag)
	}
}

// startServed is start, with a served of the instance's requests (one
// request per tag).
func startServed(t *testing.T, mod func(*app.Config)) (*inst, *served) {
	t.Helper()
	in := start(t, mod)
	sv := &served{done: map[string]chan struct{}{}}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in.srv.Handler.ServeHTTP(w, r)
		if tag := r.Header.Get("User-Agent"); strings.HasPrefix(tag, "prefix") {
			close(sv.ch(tag))
		}
	}))
	t.Cleanup(hs.Close)
	in.url = hs.URL
	return in, sv
}

// signature is the signature of a download URL.
var signature = regexp.MustCompile(`signed=[0-9a-f]+`)

// sendRaw sends a request with a raw body to an absolute URL, with
// User-Agent: tag (see journalEntry) and the headers of header that are not
// empty.
func sendRaw(t testing.TB, tag, method, rawURL, key string, body []byte, header map[string]string) routedAnswer {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("User-Agent", tag)
	req.Header.Set("Authorization", "Bearer "+key)
	for k, v := range header {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return routedAnswer{resp.StatusCode, resp.Header, raw}
}

// TestPlatformPrefixIsThePlatformAlone: under /platform every path is the
// platform's, whatever the body or X-Dubsim-Interface says: a body the
// shared address would give the studio is the platform's create, and
// studio, control and page paths, an unknown path and an unknown method
// get the platform's 404 and 405 envelopes.
func TestPlatformPrefixIsThePlatformAlone(t *testing.T) {
	t.Parallel()
	in, sv := startServed(t, nil)
	projectID := studioProject(t, in, routeKey)
	studioHeader := map[string]string{server.HeaderInterface: server.Studio}
	// Fault rules match the path without the prefix, as the platform sees it.
	st, m := in.call("POST", "/_sim/faults", "", `{"method":"GET","path":"/api/v1/voices","action":{"type":"rate_limit","retry_after_seconds":7}}`)
	require.Equal(t, http.StatusCreated, st, "%v", m)
	notFound := func(path string) map[string]any {
		return map[string]any{"error": "NotFoundError", "message": "No route GET " + path + "; see the endpoint list in the dubsim README"}
	}
	tests := []struct {
		name, method, path, body string
		header                   map[string]string
		status                   int
		want                     map[string]any
	}{
		{name: "docs minimal studio create", method: "POST", path: "/api/v1/projects", body: docsMinimal, status: 400,
			want: map[string]any{"error": "ValidationError", "message": "source_lang is required"}},
		{name: "studio fields and the studio header", method: "POST", path: "/api/v1/projects", body: withManager, header: studioHeader, status: 400,
			want: map[string]any{"error": "ValidationError", "message": "source_lang is required"}},
		{name: "empty object", method: "POST", path: "/api/v1/projects", body: `{}`, status: 400,
			want: map[string]any{"error": "ValidationError", "message": "source_lang is required"}},
		{name: "studio project id", method: "GET", path: "/api/v1/projects/" + projectID, status: 404},
		{name: "project list (studio only)", method: "GET", path: "/api/v1/projects", status: 405},
		{name: "studio artifact path", method: "GET", path: "/api/v1/artifacts/" + studioID, status: 404, want: notFound("/api/v1/artifacts/" + studioID)},
		{name: "studio video update path", method: "GET", path: "/api/projects/" + projectID + "/videos/x", status: 404, want: notFound("/api/projects/" + projectID + "/videos/x")},
		{name: "project page", method: "GET", path: "/projects/" + projectID, status: 404, want: notFound("/projects/" + projectID)},
		{name: "control path", method: "GET", path: "/_sim/state", status: 404, want: notFound("/_sim/state")},
		{name: "health", method: "GET", path: "/_sim/health", status: 404, want: notFound("/_sim/health")},
		{name: "unknown path", method: "GET", path: "/api/v1/nope", status: 404, want: notFound("/api/v1/nope")},
		{name: "the prefix alone", method: "GET", path: "", status: 404, want: notFound("/")},
		{name: "unknown method", method: "PROPFIND", path: "/api/v1/balance", status: 405,
			want: map[string]any{"error": "MethodNotAllowedError", "message": "Method PROPFIND is not allowed on /api/v1/balance"}},
		{name: "injected rate limit", method: "GET", path: "/api/v1/voices", status: 429,
			want: map[string]any{"error": "RateLimitError", "message": "Rate limit exceeded; retry after 7 seconds (injected by dubsim fault rule flt_1)"}},
		{name: "wrong method", method: "PUT", path: "/api/v1/balance", status: 405,
			want: map[string]any{"error": "MethodNotAllowedError", "message": "Method PUT is not allowed on /api/v1/balance"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tag := "prefix, platform alone: " + tc.name
			a := tagged(t, in.url+server.PlatformPrefix, tag, tc.method, tc.path, routeKey, tc.body, tc.header)
			require.Equal(t, tc.status, a.status, "%s", a.body)
			assert.Equal(t, server.Platform, a.header.Get(server.HeaderInterface))
			m := a.json(t)
			if tc.want != nil {
				assert.Equal(t, tc.want, m)
			} else {
				assert.Len(t, m, 2, "the platform envelope: %v", m)
				assert.NotEmpty(t, m["error"])
				assert.NotEmpty(t, m["message"])
			}
			sv.wait(t, tag)
			e := journalEntry(t, in, tag)
			assert.Equal(t, "platform", e["interface"])
			assert.Equal(t, "prefix", e["routed_by"])
			assert.Equal(t, server.PlatformPrefix+tc.path, e["path"], "the path as sent")
		})
	}
}

// TestPlatformPrefixLinksWithPublicURL: with --public-url, the output links
// of a request under the prefix are the public URL followed by the prefix.
func TestPlatformPrefixLinksWithPublicURL(t *testing.T) {
	t.Parallel()
	in := start(t, func(c *app.Config) { c.PublicURL = "https://sim.example.test" })
	a := tagged(t, in.url+server.PlatformPrefix, "public platform", "POST", "/api/v1/projects", routeKey, platformBody, nil)
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	id := a.json(t)["project_id"].(string)
	studioAdvance(t, in, 24*time.Hour)
	for base, want := range map[string]string{
		in.url + server.PlatformPrefix: "https://sim.example.test/platform/files/projects/" + id + "/",
		in.url:                         "https://sim.example.test/files/projects/" + id + "/",
	} {
		a = tagged(t, base, "public platform get", "GET", "/api/v1/projects/"+id, routeKey, "", nil)
		require.Equal(t, http.StatusOK, a.status, "%s", a.body)
		var p map[string]any
		require.NoError(t, json.Unmarshal(a.body, &p))
		assert.True(t, strings.HasPrefix(p["output_video_url"].(string), want), "%s: %v", base, p["output_video_url"])
	}
}

// TestPlatformPrefixAnswersBeforeTheBody: under /platform a create is the
// platform's by its path, so a refusal comes before any byte of its body,
// where the shared address reads the body first to route it (fidelity X4).
func TestPlatformPrefixAnswersBeforeTheBody(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(in.url, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	rawRequest(t, conn, http.MethodPost, in.url+server.PlatformPrefix+"/api/v1/projects",
		map[string]string{"Authorization": "Bearer not-a-key", "Content-Type": "application/json"}, mb60)
	// No byte of the body is sent: the reply must come without it.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(20*time.Second)))
	got, resp := readAnswer(t, bufio.NewReader(conn), http.MethodPost)
	assert.Equal(t, reply{http.StatusUnauthorized, `{"error":"UnauthorizedError","message":"` + sim.MsgInvalidAPIKey + `"}` + "\n"}, got)
	assert.Equal(t, server.Platform, resp.Header.Get(server.HeaderInterface))
}
