package server_test

// Black-box tests of the shared address's routing: which interface serves
// a request (the X-Dubsim-Interface answer header), why (the journal's
// interface and routed_by), the studio interface under the /studio prefix
// and the --shared-create setting.

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// answer is a raw answer of tagged.
type routedAnswer struct {
	status int
	header http.Header
	body   []byte
}

func (a routedAnswer) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(a.body, &m), "%s", a.body)
	return m
}

// tagged sends a request to base+path with User-Agent: tag, so that its
// journal entry can be found (journalEntry; "" sends Go's own); body ""
// sends none, a non-empty body is sent as JSON.
func tagged(t testing.TB, base, tag, method, path, key, body string, header map[string]string) routedAnswer {
	t.Helper()
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	require.NoError(t, err)
	if tag != "" {
		req.Header.Set("User-Agent", tag)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return routedAnswer{resp.StatusCode, resp.Header, raw}
}

// journalEntry returns the journal entry of the request sent with tag.
func journalEntry(t testing.TB, in *inst, tag string) map[string]any {
	t.Helper()
	st, j := in.call("GET", "/_sim/requests", "", "")
	require.Equal(t, http.StatusOK, st, "%v", j)
	for _, e := range j["requests"].([]any) {
		m := e.(map[string]any)
		if h, _ := m["headers"].(map[string]any); h["User-Agent"] == tag {
			return m
		}
	}
	require.Failf(t, "no journal entry", "tag %q", tag)
	return nil
}

const (
	routeKey      = "dubsim-free" // a user of Acme Media
	studioID      = "0123456789abcdef01234567"
	platformBody  = `{"source_lang":"en","target_lang":"de-DE","source_video_url":"https://cdn.test/route.mp4"}`
	docsMinimal   = `{"name": "Marketing"}` // the docs' minimal studio create
	incomplete    = `{"name":"Launch","source_video_url":"https://cdn.test/route.mp4"}`
	withManager   = `{"name":"Launch","managerEmail":"bob.martinez@acme-media.example"}`
	studioNotJSON = `{"name": "Marketing"`
)

// TestDocsMinimalStudioCreateOnTheSharedAddress: the docs' minimal studio
// create, POST /api/v1/projects {"name": "Marketing"}, creates a studio
// project on the address that serves both interfaces; the answer and the
// journal say studio, chosen by default (no platform field).
func TestDocsMinimalStudioCreateOnTheSharedAddress(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	a := tagged(t, in.url, "minimal", "POST", "/api/v1/projects", routeKey, docsMinimal, nil)
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	m := a.json(t)
	id, _ := m["id"].(string)
	assert.True(t, sim.IsStudioID(id), "a studio project: %v", m)
	assert.Equal(t, "Marketing", m["name"])
	assert.Equal(t, "new", m["status"])
	assert.Equal(t, in.url+"/projects/"+id, m["projectUrl"], "links of the shared address stay without the prefix")
	assert.Equal(t, server.Studio, a.header.Get(server.HeaderInterface))
	e := journalEntry(t, in, "minimal")
	assert.Equal(t, "studio", e["interface"])
	assert.Equal(t, "default", e["routed_by"])
}

// TestEveryAnswerNamesItsInterface: every kind of answer of the shared
// address (API success and error, the root router's 404 and 405, control,
// health, presigned upload, injected faults, pages) carries
// X-Dubsim-Interface, and the journal records the same interface and the
// reason.
func TestEveryAnswerNamesItsInterface(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	platformID := in.create(routeKey, "https://cdn.test/route.mp4")
	projectID := studioProject(t, in, routeKey)
	_, uploadURL := presign(t, in, routeKey, "a.wav")
	uploadPath := strings.TrimPrefix(uploadURL, in.url)
	st, m := in.call("POST", "/_sim/faults", "", `{"method":"GET","path":"/api/v1/artifacts/faulted","action":{"type":"error","status":503}}`)
	require.Equal(t, http.StatusCreated, st, "%v", m)
	st, m = in.call("POST", "/_sim/faults", "", `{"method":"GET","path":"/api/v1/voices","action":{"type":"rate_limit","retry_after_seconds":7}}`)
	require.Equal(t, http.StatusCreated, st, "%v", m)

	studioHeader := map[string]string{server.HeaderInterface: "studio"}
	platformHeader := map[string]string{server.HeaderInterface: "platform"}
	tests := []struct {
		name, method, path, body string
		header                   map[string]string
		status                   int
		iface, by                string
		unrecorded               bool // not in the journal (health, control reads)
		check                    func(t *testing.T, a routedAnswer)
	}{
		{name: "docs minimal studio create", method: "POST", path: "/api/v1/projects", body: docsMinimal, status: 200, iface: "studio", by: "default"},
		{name: "studio create with managerEmail", method: "POST", path: "/api/v1/projects", body: withManager, status: 200, iface: "studio", by: "body"},
		{name: "platform create", method: "POST", path: "/api/v1/projects", body: platformBody, status: 200, iface: "platform", by: "body",
			check: func(t *testing.T, a routedAnswer) { assert.Regexp(t, `^\d{9}$`, a.json(t)["project_id"]) }},
		{name: "platform-looking but incomplete create", method: "POST", path: "/api/v1/projects", body: incomplete, status: 400, iface: "platform", by: "body",
			check: func(t *testing.T, a routedAnswer) {
				assert.Equal(t, map[string]any{"error": "ValidationError", "message": "source_lang is required"}, a.json(t))
			}},
		{name: "empty object", method: "POST", path: "/api/v1/projects", body: `{}`, status: 400, iface: "platform", by: "default", check: sourceLangRequired},
		{name: "unknown fields only", method: "POST", path: "/api/v1/projects", body: `{"title":"Launch"}`, status: 400, iface: "platform", by: "default", check: sourceLangRequired},
		{name: "no body", method: "POST", path: "/api/v1/projects", status: 400, iface: "platform", by: "default",
			check: func(t *testing.T, a routedAnswer) { assert.Equal(t, "ValidationError", a.json(t)["error"]) }},
		{name: "not JSON, with a name", method: "POST", path: "/api/v1/projects", body: studioNotJSON, status: 400, iface: "studio", by: "default", check: studioError},
		{name: "a JSON array", method: "POST", path: "/api/v1/projects", body: `[{"name":"x","source_lang":"en"}]`, status: 400, iface: "platform", by: "default",
			check: func(t *testing.T, a routedAnswer) { assert.Equal(t, "ValidationError", a.json(t)["error"]) }},
		{name: "platform header", method: "POST", path: "/api/v1/projects", body: docsMinimal, header: platformHeader, status: 400, iface: "platform", by: "header",
			check: func(t *testing.T, a routedAnswer) { assert.Equal(t, "source_lang is required", a.json(t)["message"]) }},
		{name: "studio header", method: "POST", path: "/api/v1/projects", body: platformBody, header: studioHeader, status: 400, iface: "studio", by: "header", check: studioError},
		{name: "project list", method: "GET", path: "/api/v1/projects", status: 200, iface: "studio", by: "path"},
		{name: "platform id", method: "GET", path: "/api/v1/projects/" + platformID, status: 200, iface: "platform", by: "id"},
		{name: "studio id", method: "GET", path: "/api/v1/projects/" + projectID, status: 200, iface: "studio", by: "id"},
		{name: "unknown studio id", method: "GET", path: "/api/v1/projects/" + studioID, status: 404, iface: "studio", by: "id", check: studioError},
		{name: "delete", method: "DELETE", path: "/api/v1/projects/987654321", status: 404, iface: "platform", by: "path"},
		{name: "balance", method: "GET", path: "/api/v1/balance", status: 200, iface: "platform", by: "path"},
		{name: "artifact", method: "GET", path: "/api/v1/artifacts/" + studioID, status: 404, iface: "studio", by: "path", check: studioError},
		{name: "presigned upload", method: "PUT", path: uploadPath, body: "{}", status: 200, iface: "studio", by: "path",
			check: func(t *testing.T, a routedAnswer) {
				sum := md5.Sum([]byte("{}"))
				assert.Equal(t, `"`+hex.EncodeToString(sum[:])+`"`, a.header.Get("ETag"))
			}},
		{name: "presigned upload refused", method: "PUT", path: "/_uploads/nope/a.wav", body: "{}", status: 404, iface: "studio", by: "path"},
		{name: "unknown path (root router)", method: "GET", path: "/nope", status: 404, iface: "platform", by: "path",
			check: func(t *testing.T, a routedAnswer) { assert.Equal(t, "NotFoundError", a.json(t)["error"]) }},
		{name: "unknown method on a platform path (root router)", method: "PROPFIND", path: "/api/v1/balance", status: 405, iface: "platform", by: "path",
			check: func(t *testing.T, a routedAnswer) { assert.Equal(t, "MethodNotAllowedError", a.json(t)["error"]) }},
		{name: "unknown method on a studio path (root router)", method: "PROPFIND", path: "/api/v1/artifacts/create", status: 405, iface: "studio", by: "path", check: studioError},
		{name: "wrong method on a studio path", method: "DELETE", path: "/api/v1/artifacts/create", status: 405, iface: "studio", by: "path", check: studioError},
		{name: "injected error on a studio path", method: "GET", path: "/api/v1/artifacts/faulted", status: 503, iface: "studio", by: "path",
			check: func(t *testing.T, a routedAnswer) {
				studioError(t, a)
				assert.Contains(t, a.json(t)["error"], "injected by dubsim fault rule")
			}},
		{name: "injected rate limit on a platform path", method: "GET", path: "/api/v1/voices", status: 429, iface: "platform", by: "path",
			check: func(t *testing.T, a routedAnswer) {
				assert.Equal(t, "RateLimitError", a.json(t)["error"])
				assert.Equal(t, "7", a.header.Get("Retry-After"))
			}},
		{name: "control change", method: "POST", path: "/_sim/clock/advance", body: `{"seconds":1}`, status: 200, iface: "control", by: "path"},
		{name: "control error", method: "POST", path: "/_sim/clock/advance", body: `{"seconds":"x"}`, status: 400, iface: "control", by: "path"},
		{name: "control read", method: "GET", path: "/_sim/state", status: 200, iface: "control", unrecorded: true},
		{name: "unknown control path", method: "GET", path: "/_sim/nope", status: 404, iface: "control", unrecorded: true},
		{name: "health", method: "GET", path: "/_sim/health", status: 200, iface: "control", unrecorded: true},
		{name: "health, wrong method", method: "POST", path: "/_sim/health", status: 405, iface: "control", unrecorded: true},
		{name: "project page", method: "GET", path: "/projects/" + projectID, status: 200, iface: "studio", by: "path", unrecorded: true}, // EF3
		{name: "studio prefix", method: "POST", path: "/studio/api/v1/projects", body: platformBody, status: 400, iface: "studio", by: "prefix", check: studioError},
		{name: "studio prefix, platform header ignored", method: "POST", path: "/studio/api/v1/projects", body: docsMinimal, header: platformHeader, status: 200, iface: "studio", by: "prefix"},
		{name: "studio prefix, control path", method: "GET", path: "/studio/_sim/state", status: 404, iface: "studio", by: "prefix", check: studioError},
		{name: "studio prefix, platform path", method: "GET", path: "/studio/api/v1/balance", status: 404, iface: "studio", by: "prefix", check: studioError},
		{name: "not the studio prefix", method: "GET", path: "/studios", status: 404, iface: "platform", by: "path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tag := "route-" + tc.name
			a := tagged(t, in.url, tag, tc.method, tc.path, routeKey, tc.body, tc.header)
			require.Equal(t, tc.status, a.status, "%s", a.body)
			assert.Equal(t, tc.iface, a.header.Get(server.HeaderInterface), "the answer names the interface")
			if tc.check != nil {
				tc.check(t, a)
			}
			if tc.unrecorded {
				return
			}
			e := journalEntry(t, in, tag)
			assert.Equal(t, tc.iface, e["interface"], "the journal's interface")
			assert.Equal(t, tc.by, e["routed_by"], "the journal's reason")
			assert.Equal(t, strings.SplitN(tc.path, "?", 2)[0], e["path"], "the path as sent")
		})
	}
}

// sourceLangRequired checks the platform's answer to a create without its
// required fields.
func sourceLangRequired(t *testing.T, a routedAnswer) {
	t.Helper()
	assert.Equal(t, map[string]any{"error": "ValidationError", "message": "source_lang is required"}, a.json(t))
}

// studioError checks the studio's error envelope: {"error": <text>} only.
func studioError(t *testing.T, a routedAnswer) {
	t.Helper()
	m := a.json(t)
	assert.Len(t, m, 1, "the studio envelope: %v", m)
	assert.NotEmpty(t, m["error"], "%v", m)
}

// TestStudioPrefixServesEveryStudioRoute: {studio_url} = <addr>/studio is
// the studio interface alone, every route of it, and the links its answers
// hold (presignedUploadUrl, projectUrl, videoUrl) lead back under the
// prefix; a presigned upload round trip works through them.
func TestStudioPrefixServesEveryStudioRoute(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	base := in.url + server.StudioPrefix
	send := func(tag, method, path, body string) routedAnswer {
		t.Helper()
		a := tagged(t, base, tag, method, path, routeKey, body, nil)
		assert.Equal(t, server.Studio, a.header.Get(server.HeaderInterface), "%s %s", method, path)
		if method == "GET" && strings.HasPrefix(path, "/projects/") {
			return a // a page view: not journalled (fidelity EF3)
		}
		e := journalEntry(t, in, tag)
		assert.Equal(t, "studio", e["interface"], "%s %s", method, path)
		assert.Equal(t, "prefix", e["routed_by"], "%s %s", method, path)
		assert.Equal(t, server.StudioPrefix+strings.SplitN(path, "?", 2)[0], e["path"], "the journal keeps the path as sent")
		return a
	}

	// The round trip: presign, upload, artifact, project, video.
	a := send("presign", "GET", "/api/v1/artifacts/create?fileName=clip.wav", "")
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	p := a.json(t)
	uploadURL := p["presignedUploadUrl"].(string)
	require.True(t, strings.HasPrefix(uploadURL, base+"/_uploads/"), "the upload URL is under the prefix: %s", uploadURL)
	wav := refWAVBytes(t, 200, 2*time.Second)
	req, err := http.NewRequest(http.MethodPut, uploadURL, bytes.NewReader(wav))
	require.NoError(t, err)
	req.Header.Set("User-Agent", "upload")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sum := md5.Sum(wav)
	assert.Equal(t, `"`+hex.EncodeToString(sum[:])+`"`, resp.Header.Get("ETag"))
	assert.Equal(t, server.Studio, resp.Header.Get(server.HeaderInterface))
	assert.Equal(t, "prefix", journalEntry(t, in, "upload")["routed_by"])

	a = send("artifact", "POST", "/api/v1/artifacts/create", mustJSON(t, map[string]any{"name": "Clip", "type": "audio", "s3Path": p["s3Path"]}))
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	artifactID := a.json(t)["id"].(string)
	studioAdvance(t, in, time.Hour)

	a = send("create project", "POST", "/api/v1/projects", docsMinimal)
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	project := a.json(t)
	projectID := project["id"].(string)
	assert.Equal(t, base+"/projects/"+projectID, project["projectUrl"], "projectUrl is under the prefix")

	a = send("create video", "POST", "/api/v1/projects/"+projectID+"/videos/create", mustJSON(t, map[string]any{
		"name": "Teaser", "workflowType": "dubbing", "sourceArtifactId": artifactID, "sourceLanguage": "en", "targetLanguages": []string{"es-ES"}}))
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	video := a.json(t)
	videoID := video["id"].(string)
	assert.Equal(t, base+"/api/v1/projects/"+projectID+"/videos/"+videoID, video["videoUrl"], "videoUrl is under the prefix")

	// Every route of the studio interface, under the prefix.
	tests := []struct {
		name, method, path, body string
		status                   int
		check                    func(t *testing.T, a routedAnswer)
	}{
		{"presign", "GET", "/api/v1/artifacts/create?fileName=b.mp4", "", 200, func(t *testing.T, a routedAnswer) {
			assert.True(t, strings.HasPrefix(a.json(t)["presignedUploadUrl"].(string), base+"/_uploads/"))
		}},
		{"create artifact", "POST", "/api/v1/artifacts/create", `{"name":"Remote","type":"video","url":"https://cdn.test/remote.mp4"}`, 200, nil},
		{"get artifact", "GET", "/api/v1/artifacts/" + artifactID, "", 200, func(t *testing.T, a routedAnswer) {
			assert.Equal(t, sim.ArtifactCompleted, a.json(t)["status"])
		}},
		{"list projects", "GET", "/api/v1/projects", "", 200, func(t *testing.T, a routedAnswer) {
			assert.Contains(t, string(a.body), base+"/projects/"+projectID)
		}},
		{"create project with a platform field", "POST", "/api/v1/projects", `{"name":"X","source_lang":"en"}`, 200, func(t *testing.T, a routedAnswer) {
			assert.True(t, sim.IsStudioID(a.json(t)["id"].(string)))
		}},
		{"get project", "GET", "/api/v1/projects/" + projectID, "", 200, func(t *testing.T, a routedAnswer) {
			assert.Equal(t, base+"/projects/"+projectID, a.json(t)["projectUrl"])
		}},
		{"update project", "PATCH", "/api/v1/projects/" + projectID, `{"name":"Marketing 2"}`, 200, func(t *testing.T, a routedAnswer) {
			assert.Equal(t, "Marketing 2", a.json(t)["name"])
		}},
		{"create video", "POST", "/api/v1/projects/" + projectID + "/videos/create", mustJSON(t, map[string]any{
			"name": "Second", "workflowType": "dubbing", "sourceArtifactId": artifactID, "sourceLanguage": "en", "targetLanguages": []string{"de-DE"}}), 200, nil},
		{"list videos", "GET", "/api/v1/projects/" + projectID + "/videos", "", 200, func(t *testing.T, a routedAnswer) {
			assert.Contains(t, string(a.body), base+"/api/v1/projects/"+projectID+"/videos/"+videoID)
		}},
		{"get video", "GET", "/api/v1/projects/" + projectID + "/videos/" + videoID, "", 200, func(t *testing.T, a routedAnswer) {
			assert.Equal(t, video["videoUrl"], a.json(t)["videoUrl"])
		}},
		{"update video", "PATCH", "/api/projects/" + projectID + "/videos/" + videoID, `{"status":"in_progress"}`, 200, nil},
		{"project page", "GET", "/projects/" + projectID, "", 200, func(t *testing.T, a routedAnswer) {
			assert.True(t, strings.HasPrefix(a.header.Get("Content-Type"), "text/html"))
		}},
		{"unknown studio path", "GET", "/api/v1/nope", "", 404, studioError},
		{"unknown project", "GET", "/api/v1/projects/" + studioID, "", 404, studioError},
		{"the prefix alone", "GET", "", "", 404, studioError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := send("table "+tc.name, tc.method, tc.path, tc.body)
			require.Equal(t, tc.status, a.status, "%s", a.body)
			if tc.check != nil {
				tc.check(t, a)
			}
		})
	}

	// The links lead back: GET videoUrl as given.
	req, err = http.NewRequest(http.MethodGet, video["videoUrl"].(string), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+routeKey)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	u, err := url.Parse(project["projectUrl"].(string))
	require.NoError(t, err)
	resp, err = http.Get(u.String())
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "projectUrl opens the project page")
}

// TestStudioPrefixLinksWithPublicURL: with --public-url, links of a request
// under the prefix are the public URL followed by the prefix.
func TestStudioPrefixLinksWithPublicURL(t *testing.T) {
	t.Parallel()
	in := start(t, func(c *app.Config) { c.PublicURL = "https://sim.example.test" })
	a := tagged(t, in.url+server.StudioPrefix, "public", "POST", "/api/v1/projects", routeKey, docsMinimal, nil)
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	m := a.json(t)
	assert.Equal(t, "https://sim.example.test/studio/projects/"+m["id"].(string), m["projectUrl"])
	a = tagged(t, in.url, "public shared", "POST", "/api/v1/projects", routeKey, docsMinimal, nil)
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	m = a.json(t)
	assert.Equal(t, "https://sim.example.test/projects/"+m["id"].(string), m["projectUrl"])
}

// TestSharedCreatePlatformRestoresTheOldAnswer: with --shared-create
// platform, a create body without a field of either interface is the
// platform's (400 source_lang is required), recorded as the default; a
// studio field and the prefix still reach the studio.
func TestSharedCreatePlatformRestoresTheOldAnswer(t *testing.T) {
	t.Parallel()
	in := start(t, func(c *app.Config) { c.SharedCreate = server.Platform })
	tests := []struct {
		name, path, body string
		status           int
		iface, by        string
	}{
		{"docs minimal", "/api/v1/projects", docsMinimal, 400, "platform", "default"},
		{"empty object", "/api/v1/projects", `{}`, 400, "platform", "default"},
		{"not JSON", "/api/v1/projects", studioNotJSON, 400, "platform", "default"},
		{"managerEmail", "/api/v1/projects", withManager, 200, "studio", "body"},
		{"platform create", "/api/v1/projects", platformBody, 200, "platform", "body"},
		{"prefix", "/studio/api/v1/projects", docsMinimal, 200, "studio", "prefix"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tag := "shared-create " + tc.name
			a := tagged(t, in.url, tag, "POST", tc.path, routeKey, tc.body, nil)
			require.Equal(t, tc.status, a.status, "%s", a.body)
			assert.Equal(t, tc.iface, a.header.Get(server.HeaderInterface))
			if tc.name == "docs minimal" {
				assert.Equal(t, map[string]any{"error": "ValidationError", "message": "source_lang is required"}, a.json(t))
			}
			e := journalEntry(t, in, tag)
			assert.Equal(t, tc.iface, e["interface"])
			assert.Equal(t, tc.by, e["routed_by"])
		})
	}
}

// TestStudioAddressNamesItsInterface: the studio-only listener answers
// studio (its health endpoint control) and records "address".
func TestStudioAddressNamesItsInterface(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	hs := httptestServer(t, in.srv.StudioHandler)
	a := tagged(t, hs, "studio addr", "POST", "/api/v1/projects", routeKey, docsMinimal, nil)
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	assert.Equal(t, server.Studio, a.header.Get(server.HeaderInterface))
	assert.Equal(t, hs+"/projects/"+a.json(t)["id"].(string), a.json(t)["projectUrl"])
	a = tagged(t, hs, "studio addr platform", "GET", "/api/v1/balance", routeKey, "", nil)
	assert.Equal(t, http.StatusNotFound, a.status)
	assert.Equal(t, server.Studio, a.header.Get(server.HeaderInterface))
	a = tagged(t, hs, "studio addr health", "GET", "/_sim/health", "", "", nil)
	assert.Equal(t, http.StatusOK, a.status)
	assert.Equal(t, server.Control, a.header.Get(server.HeaderInterface))
	e := journalEntry(t, in, "studio addr")
	assert.Equal(t, "studio", e["interface"])
	assert.Equal(t, "address", e["routed_by"])
}

// TestNoControlNamesItsInterface: without the control API, /_sim/ paths
// answer the 404 of the control envelope and say control; /projects/{id}
// is the platform's 404.
func TestNoControlNamesItsInterface(t *testing.T) {
	t.Parallel()
	in := start(t, func(c *app.Config) { c.NoControl = true })
	a := tagged(t, in.url, "nc", "GET", "/_sim/state", "", "", nil)
	assert.Equal(t, http.StatusNotFound, a.status)
	assert.Equal(t, server.Control, a.header.Get(server.HeaderInterface))
	assert.Equal(t, "NotFoundError", a.json(t)["error"])
	a = tagged(t, in.url, "nc page", "GET", "/projects/"+studioID, "", "", nil)
	assert.Equal(t, http.StatusNotFound, a.status)
	assert.Equal(t, server.Platform, a.header.Get(server.HeaderInterface))
	assert.Equal(t, "NotFoundError", a.json(t)["error"])
	a = tagged(t, in.url, "nc minimal", "POST", "/api/v1/projects", routeKey, docsMinimal, nil)
	assert.Equal(t, http.StatusOK, a.status, "%s", a.body)
	assert.Equal(t, server.Studio, a.header.Get(server.HeaderInterface))
}

// httptestServer serves h on a loopback listener until the test ends and
// returns its URL.
func httptestServer(t testing.TB, h http.Handler) string {
	t.Helper()
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestStudioPrefixReplayKeepsTheFirstLinks: an Idempotency-Key replay
// repeats the first answer, links included, whichever base the retry used
// (the prefix is not part of the request's identity).
func TestStudioPrefixReplayKeepsTheFirstLinks(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	idem := map[string]string{"Idempotency-Key": "prefix-replay"}
	first := tagged(t, in.url+server.StudioPrefix, "first", "POST", "/api/v1/projects", routeKey, docsMinimal, idem)
	require.Equal(t, http.StatusOK, first.status, "%s", first.body)
	again := tagged(t, in.url, "again", "POST", "/api/v1/projects", routeKey, docsMinimal, idem)
	require.Equal(t, http.StatusOK, again.status, "%s", again.body)
	assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	assert.Equal(t, string(first.body), string(again.body))
	assert.Contains(t, again.json(t)["projectUrl"], in.url+"/studio/projects/")
}
