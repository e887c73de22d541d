package openapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim/openapi"
	"github.com/dubsim/dubsim/sim/openapi/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const docA = `{"openapi":"3.1.0","info":{"title":"a","version":"1"},"security":[{"bearer":[]}],
 "paths":{"/p/{project_id}":{"get":{"operationId":"getA","summary":"A","parameters":[{"name":"project_id","in":"path","required":true,"schema":{"type":"string","pattern":"^[0-9]+$"}}],
   "responses":{"200":{"description":"a","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Thing"}}}},
                "404":{"description":"a404","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Error"}}}}}}}},
 "components":{"schemas":{"Thing":{"type":"object","required":["a"],"properties":{"a":{"type":"string"}},"additionalProperties":false},
   "Error":{"type":"object","required":["error","message"],"additionalProperties":false,"properties":{"error":{"type":"string"},"message":{"type":"string"}}}},
  "securitySchemes":{"bearer":{"type":"http","scheme":"bearer"}}}}`

const docB = `{"openapi":"3.1.0","info":{"title":"b","version":"1"},
 "paths":{"/p/{projectId}":{"get":{"operationId":"getB","summary":"B","parameters":[{"name":"projectId","in":"path","required":true,"schema":{"type":"string","pattern":"^[0-9a-f]{24}$"}}],
   "responses":{"200":{"description":"b","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Thing"}}}},
                "404":{"description":"b404","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Error"}}}},
                "429":{"description":"b429","headers":{"Retry-After":{"required":true,"schema":{"type":"integer"}}}}}}},
  "/only-b":{"post":{"operationId":"postB","responses":{"201":{"description":"made"}}}}},
 "components":{"schemas":{"Thing":{"type":"object","required":["b"],"properties":{"b":{"type":"integer"}},"additionalProperties":false},
   "Error":{"type":"object","required":["error"],"additionalProperties":false,"properties":{"error":{"type":"string"}}}}}}`

func TestMerge(t *testing.T) {
	t.Parallel()
	out, err := openapi.Merge([]string{"a", "b"}, [][]byte{[]byte(docA), []byte(docB)})
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(out, &m))
	paths := m["paths"].(map[string]any)
	require.Len(t, paths, 2, "the two spellings of /p/{id} are one path")
	get := paths["/p/{project_id}"].(map[string]any)["get"].(map[string]any)
	assert.Equal(t, "getA_or_getB", get["operationId"])
	assert.Equal(t, []any{"a", "b"}, get["x-dubsim-interface"])
	require.Len(t, get["parameters"], 1, "B's projectId is renamed to project_id and deduplicated")
	assert.Equal(t, map[string]any{"anyOf": []any{map[string]any{"type": "string", "pattern": "^[0-9]+$"}, map[string]any{"type": "string", "pattern": "^[0-9a-f]{24}$"}}},
		get["parameters"].([]any)[0].(map[string]any)["schema"], "either interface's id")
	assert.Equal(t, []any{map[string]any{"bearer": []any{}}}, get["security"], "A's global security moves onto its operations")
	schemas := m["components"].(map[string]any)["schemas"].(map[string]any)
	assert.Contains(t, schemas, "a.Thing")
	assert.Contains(t, schemas, "b.Thing")
	post := paths["/only-b"].(map[string]any)["post"].(map[string]any)
	assert.Equal(t, "b", post["x-dubsim-interface"])

	v, err := validate.New("merged", out)
	require.NoError(t, err, "every rewritten $ref resolves")
	js := http.Header{"Content-Type": {"application/json"}}
	cases := []struct {
		status int
		header http.Header
		body   string
		ok     bool
	}{
		{200, js, `{"a":"x"}`, true},
		{200, js, `{"b":1}`, true},
		{200, js, `{"b":"x"}`, false},
		{200, js, `{"a":"x","b":1}`, false},
		{404, js, `{"error":"E","message":"m"}`, true},
		{404, js, `{"error":"m"}`, true},
		{404, js, `{"message":"m"}`, false},
		{429, http.Header{}, ``, false}, // only B answers 429: its header stays required
		{429, http.Header{"Retry-After": {"3"}}, ``, true},
	}
	for _, c := range cases {
		_, err := v.Check("GET", "/p/1", c.status, c.header, []byte(c.body))
		assert.Equal(t, c.ok, err == nil, "%d %s: %v", c.status, c.body, err)
	}
}

func TestCombinedServesEveryInterface(t *testing.T) {
	t.Parallel()
	b, err := openapi.Combined()
	require.NoError(t, err)
	_, err = validate.New("combined", b)
	require.NoError(t, err)
	for _, n := range openapi.Names {
		_, err := openapi.Document(n)
		assert.NoError(t, err, n)
	}
	_, err = openapi.Document("nope")
	assert.Error(t, err)
}

func TestHandler(t *testing.T) {
	t.Parallel()
	h := openapi.Handler(nil)
	cases := []struct {
		method, path string
		status       int
		title        string // of the document served
	}{
		{"GET", "/_sim/openapi.json", 200, "dubsim: platform, studio and control interfaces"},
		{"GET", "/_sim/openapi/platform.json", 200, "platform"},
		{"GET", "/_sim/openapi/studio", 200, "studio"},
		{"HEAD", "/_sim/openapi/control.json", 200, ""},
		{"DELETE", "/_sim/openapi.json", 405, ""},
		{"GET", "/_sim/openapi/openapi.json", 404, ""},
		{"GET", "/_sim/openapi/x/control.json", 404, ""},
		{"GET", "/_sim/openapi/nope.json", 404, ""},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
			require.Equal(t, c.status, rec.Code, rec.Body.String())
			var m map[string]any
			if c.method == "HEAD" {
				assert.Empty(t, rec.Body.String())
				return
			}
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &m))
			if c.status != 200 {
				assert.Contains(t, m, "error")
				assert.Contains(t, m, "message")
				return
			}
			assert.Contains(t, m["info"].(map[string]any)["title"], c.title)
		})
	}
}

// TestServersFollowTheAddress: each served document names the address it
// was fetched from first (base), the real service's entries after it, and
// is otherwise the embedded document.
func TestServersFollowTheAddress(t *testing.T) {
	t.Parallel()
	h := openapi.Handler(func(r *http.Request) string { return "https://" + r.Host })
	for _, path := range []string{"/_sim/openapi.json", "/_sim/openapi/platform.json", "/_sim/openapi/studio.json", "/_sim/openapi/control.json"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest("GET", path, nil)
			req.Host = "sim.test:9999"
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, 200, rec.Code)
			assert.Equal(t, fmt.Sprint(rec.Body.Len()), rec.Header().Get("Content-Length"))
			var served, embedded map[string]any
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &served))
			servers := served["servers"].([]any)
			first := servers[0].(map[string]any)
			assert.Equal(t, "https://sim.test:9999", first["url"])
			assert.NotContains(t, rec.Body.String(), `"url": "`+openapi.DefaultServer, "path-level servers and the interface's own base too")
			// The dubsim entries come first: the address, then the
			// interface's own base under it; the real service's after.
			ours := 1
			for ours < len(servers) && strings.HasPrefix(servers[ours].(map[string]any)["url"].(string), "https://sim.test:9999/") {
				ours++
			}
			switch name := strings.TrimSuffix(strings.TrimPrefix(path, "/_sim/openapi/"), ".json"); name {
			case "platform", "studio":
				require.Equal(t, 2, ours, "%v", servers)
				assert.Equal(t, "https://sim.test:9999/"+name, servers[1].(map[string]any)["url"], "the interface's own base")
			default:
				assert.Equal(t, 1, ours, "%v", servers)
			}
			for _, s := range servers[ours:] {
				assert.NotContains(t, s.(map[string]any)["url"], "sim.test", "the real service's entries")
			}
			name := strings.TrimSuffix(strings.TrimPrefix(path, "/_sim/openapi/"), ".json")
			raw, err := openapi.Combined()
			if name != "/_sim/openapi" {
				raw, err = openapi.Document(name)
			}
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(raw, &embedded))
			assert.Len(t, servers, len(embedded["servers"].([]any)), "the dubsim entry is replaced, not added")
			delete(served, "servers")
			delete(embedded, "servers")
			assert.Equal(t, strings.ReplaceAll(mustJSON(t, embedded), `"url":"`+openapi.DefaultServer+`"`, `"url":"https://sim.test:9999"`), mustJSON(t, served), "only servers change")
		})
	}
}

func TestWithServers(t *testing.T) {
	t.Parallel()
	doc := []byte("{\n  \"openapi\": \"3.1.0\",\n  \"servers\": [\n    {\n      \"url\": \"https://real.example\"\n    },\n    {\n      \"url\": \"http://localhost:8080\",\n      \"description\": \"dubsim at http://localhost:8080/x\"\n    }\n  ],\n  \"paths\": {}\n}\n")
	got, err := openapi.WithServers(doc, "http://127.0.0.1:5")
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"openapi\": \"3.1.0\",\n  \"servers\": [\n    {\n      \"url\": \"http://127.0.0.1:5\",\n      \"description\": \"dubsim at http://127.0.0.1:5/x\"\n    },\n    {\n      \"url\": \"https://real.example\"\n    }\n  ],\n  \"paths\": {}\n}\n", string(got))
	none := []byte(`{"openapi":"3.1.0","paths":{}}`)
	got, err = openapi.WithServers(none, "http://127.0.0.1:5")
	require.NoError(t, err)
	assert.Equal(t, string(none), string(got), "a document without servers is left alone")
	got, err = openapi.WithServers([]byte(`{"servers":[{"url":"https://real.example"}]}`), "http://h")
	require.NoError(t, err)
	assert.Equal(t, "{\"servers\":[\n    {\n      \"url\": \"http://h\",\n      \"description\": \"dubsim\"\n    },\n    {\n      \"url\": \"https://real.example\"\n    }\n  ]}", string(got), "added first when no entry names dubsim")
	got, err = openapi.WithServers([]byte(`{"servers":[{"url":"https://real.example"},{"url":"http://localhost:8080/platform","description":"alone"},{"url":"http://localhost:8080"},{"url":"http://localhost:80800"}]}`), "http://h")
	require.NoError(t, err)
	var list []map[string]string
	require.NoError(t, json.Unmarshal(got[len(`{"servers":`):len(got)-1], &list))
	assert.Equal(t, []map[string]string{
		{"url": "http://h"}, {"url": "http://h/platform", "description": "alone"},
		{"url": "https://real.example"}, {"url": "http://localhost:80800"},
	}, list, "the address, a path under it, then the others (a longer port is not dubsim's)")
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestMergeRewritesDiscriminatorMappings: a mapping names a schema like a
// $ref does (as a reference or a bare name), so it gains the prefix too.
func TestMergeRewritesDiscriminatorMappings(t *testing.T) {
	t.Parallel()
	doc := `{"openapi":"3.1.0","info":{"title":"a","version":"1"},"paths":{},
 "components":{"schemas":{"P":{"oneOf":[{"$ref":"#/components/schemas/R"},{"$ref":"#/components/schemas/E"}],
   "discriminator":{"propertyName":"status","mapping":{"ready":"#/components/schemas/R","error":"E"}}},
  "R":{"type":"object","properties":{"status":{"const":"ready"}}},"E":{"type":"object","properties":{"status":{"const":"error"}}}}}}`
	out, err := openapi.Merge([]string{"a"}, [][]byte{[]byte(doc)})
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(out, &m))
	p := m["components"].(map[string]any)["schemas"].(map[string]any)["a.P"].(map[string]any)
	assert.Equal(t, map[string]any{"propertyName": "status", "mapping": map[string]any{"ready": "#/components/schemas/a.R", "error": "a.E"}}, p["discriminator"])
}
