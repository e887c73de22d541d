package openapi_test

// The studio document's request schemas, checked against what the studio
// interface accepts and refuses.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim/openapi"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stSchema compiles a component schema of the studio document.
func stSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	b, err := openapi.Document(openapi.Studio)
	require.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.DefaultDraft(jsonschema.Draft2020)
	require.NoError(t, c.AddResource("mem:///studio.json", doc))
	s, err := c.Compile("mem:///studio.json#/components/schemas/" + name)
	require.NoError(t, err)
	return s
}

// TestStudioRequestSchemas: the documented request bodies accept what the
// handlers accept and refuse what they refuse (with 400), for the rules a
// schema can state. Each body is sent to dubsim and checked against its
// schema; "{src}" stands for an upload_completed video artifact.
func TestStudioRequestSchemas(t *testing.T) {
	t.Parallel()
	const (
		createArtifact = "CreateArtifactRequest"
		createProject  = "CreateProjectRequest"
		updateProject  = "UpdateProjectRequest"
		createVideo    = "CreateVideoRequest"
		updateVideo    = "UpdateVideoRequest"
	)
	paths := map[string]struct{ method, path string }{
		createArtifact: {"POST", stArtifacts},
		createProject:  {"POST", stProjects},
		updateProject:  {"PATCH", stProjectPath(stProject)},
		createVideo:    {"POST", stCreateVideoPath(stProject)},
		updateVideo:    {"PATCH", stUpdateVideoPath(stProject, stVideo)},
	}
	long := strings.Repeat("n", 501)
	video := func(fields string) string {
		return `{"name":"V","workflowType":"dubbing","sourceArtifactId":"{src}","sourceLanguage":"en","targetLanguages":["es-ES"]` + fields + `}`
	}
	for _, tc := range []struct {
		schema, body string
		valid        bool
	}{
		{createArtifact, `{"name":"A","type":"video","url":"` + stMediaURL + `"}`, true},
		{createArtifact, `{"name":"A","type":"audio","s3Path":"s3://dubsim-artifacts/temp/x/a.wav"}`, true},
		{createArtifact, `{"name":"A","type":"script","url":"https://cdn.example.com/a.srt"}`, true},
		{createArtifact, `{"name":"A","type":"video","fragments":[{"url":"` + stMediaURL + `","startTime":0},{"s3Path":"s3://b/k.mp4","startTime":1.5}]}`, true},
		{createArtifact, `{"name":"A","url":"` + stMediaURL + `"}`, false},
		{createArtifact, `{"name":"A","type":"subtitles","url":"` + stMediaURL + `"}`, false},
		{createArtifact, `{"name":"   ","type":"video","url":"` + stMediaURL + `"}`, false},
		{createArtifact, `{"name":"` + long + `","type":"video","url":"` + stMediaURL + `"}`, false},
		{createArtifact, `{"name":"A","type":"video"}`, false},
		{createArtifact, `{"name":"A","type":"video","url":"` + stMediaURL + `","s3Path":"s3://b/k.mp4"}`, false},
		{createArtifact, `{"name":"A","type":"video","url":"ftp://cdn.example.com/a.mp4"}`, false},
		{createArtifact, `{"name":"A","type":"video","s3Path":"s3://bucket"}`, false},
		{createArtifact, `{"name":"A","type":"video","fragments":[]}`, false},
		{createArtifact, `{"name":"A","type":"script","fragments":[{"url":"` + stMediaURL + `","startTime":0}]}`, false},
		{createArtifact, `{"name":"A","type":"video","fragments":[{"url":"` + stMediaURL + `","startTime":-1}]}`, false},
		{createArtifact, `{"name":"A","type":"video","fragments":[{"url":"` + stMediaURL + `"}]}`, false},
		{createArtifact, `{"name":"A","type":"video","fragments":[{"url":"` + stMediaURL + `","s3Path":"s3://b/k.mp4","startTime":0}]}`, false},

		{createProject, `{"name":"P"}`, true},
		{createProject, `{"name":"P","managerEmail":"` + stManager + `","translationsGlossaryId":"` + stGlossary + `","voicesGlossaryId":""}`, true},
		{createProject, `{}`, false},
		{createProject, `{"name":""}`, false},
		{createProject, `{"name":42}`, false},
		{createProject, `{"name":"P","managerEmail":"nobody"}`, false},
		{createProject, `{"name":"P","voicesGlossaryId":"voices_7c92e3a1f56d8"}`, false},

		{updateProject, `{"voicesGlossaryId":""}`, true},
		{updateProject, `{"name":"P","pronunciationGlossaryId":"676604f4bd76c09876a4bc5e"}`, true},
		{updateProject, `{}`, false},
		{updateProject, `{"remark":"not a request field"}`, false},
		{updateProject, `{"name":null}`, false},

		{createVideo, video(``), true},
		{createVideo, video(`,"remark":"r","stringVariables":[{"key":"k","value":""}],"pipelineOptions":{"shouldAutomateTranslation":false}`), true},
		{createVideo, `{"name":"V","workflowType":"dubbing","sourceArtifactId":"{src}","sourceLanguage":"en"}`, false},
		{createVideo, video(`,"targetLanguages":["es"]`), false},
		{createVideo, video(`,"targetLanguages":[]`), false},
		{createVideo, video(`,"targetLanguages":["es-ES","es-ES"]`), false},
		{createVideo, `{"name":"V","workflowType":"standard","sourceArtifactId":"{src}","sourceLanguage":"en","targetLanguages":["es-ES"]}`, false},
		{createVideo, `{"name":"V","workflowType":"dubbing","sourceArtifactId":"{src}","sourceLanguage":"eng","targetLanguages":["es-ES"]}`, false},
		{createVideo, video(`,"pipelineOptions":{"shouldAutomateTranscription":"yes"}`), false},
		{createVideo, video(`,"stringVariables":[{"key":"","value":"v"}]`), false},

		{updateVideo, `{"status":"completed"}`, true},
		{updateVideo, `{"dstLangs":["en","fr-FR"],"processingType":"standard"}`, true},
		{updateVideo, `{"remark":null}`, true},
		{updateVideo, `{"translationGuidance":null,"stringVariables":[]}`, true},
		{updateVideo, `{"translationGuidance":{"common":"Formal"}}`, true},
		{updateVideo, `{}`, false},
		{updateVideo, `{"status":"archived"}`, false},
		{updateVideo, `{"processingType":""}`, false},
		{updateVideo, `{"dstLangs":[]}`, false},
		{updateVideo, `{"dstLangs":["EN"]}`, false},
		{updateVideo, `{"translationGuidance":{}}`, false},
		{updateVideo, `{"translationGuidance":{"byLang":{}}}`, false},
		{updateVideo, `{"translationGuidance":{"common":1}}`, false},
		{updateVideo, `{"stringVariables":[{"key":"k"}]}`, false},
	} {
		t.Run(tc.schema+" "+tc.body, func(t *testing.T) {
			t.Parallel()
			e := newStudioEnv(t, nil)
			body := tc.body
			if strings.Contains(body, "{src}") {
				body = strings.ReplaceAll(body, "{src}", e.readyArtifact(stKey, "video"))
			}
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
			require.NoError(t, err)
			schemaErr := stSchema(t, tc.schema).Validate(inst)
			assert.Equal(t, tc.valid, schemaErr == nil, "schema verdict: %v", schemaErr)
			p := paths[tc.schema]
			r := e.do(stReq(p.method, p.path, stKey, body))
			if tc.valid {
				assert.Equal(t, http.StatusOK, r.Status, "dubsim accepts it: %s", r.Body)
			} else {
				assert.Equal(t, http.StatusBadRequest, r.Status, "dubsim refuses it: %s", r.Body)
			}
		})
	}
}

// stAbsent, as a value of stMod, deletes the field.
const stAbsent = "<absent>"

// stMod returns base with the fields of mod set (or deleted).
func stMod(base, mod map[string]any) map[string]any {
	for k, v := range mod {
		if v == stAbsent {
			delete(base, k)
		} else {
			base[k] = v
		}
	}
	return base
}

// TestStudioDocumentRefuses: the document is strict: answers that break a
// rule of the studio (a field in the wrong status, a missing or extra field,
// a value outside an enumeration, a missing header, the wrong XML root) do
// not validate, while the same answers without the fault do.
func TestStudioDocumentRefuses(t *testing.T) {
	t.Parallel()
	artifact := func(mod map[string]any) map[string]any {
		a := map[string]any{"id": "698334c05758d9ae85903469", "name": "Source video", "type": "video", "status": "upload_completed",
			"uploadMethod": "direct_url", "size": 3750000, "duration": 12, "errorMessage": nil,
			"createdAt": "2026-02-04T12:00:00.000Z", "updatedAt": "2026-02-04T12:00:07.209Z",
			"s3Path": "uploads/698334c05758d9ae85903469/short.mp4", "company": map[string]any{"id": "663266da5ec2709f7826386f"},
			"createdBy": map[string]any{"id": "6633800fe4e6d9a72a921bb6"}}
		return stMod(a, mod)
	}
	created := func(mod map[string]any) map[string]any {
		a := artifact(map[string]any{"status": "created", "size": nil, "duration": nil, "s3Bucket": "dubsim-artifacts",
			"company":   map[string]any{"id": "663266da5ec2709f7826386f", "name": "Acme Media"},
			"createdBy": map[string]any{"id": "6633800fe4e6d9a72a921bb6", "name": "Alice Johnson"}})
		return stMod(a, mod)
	}
	video := func(mod map[string]any) map[string]any {
		v := map[string]any{"id": "683b275c0a4e53a77de3f4d1", "name": "Social cutdown 15s", "status": "new", "processingType": "subtitling",
			"srcLang": "en", "dstLangs": []any{"es-ES"}, "videoUrl": "http://127.0.0.1/api/v1/projects/" + stProject + "/videos/683b275c0a4e53a77de3f4d1",
			"videoDuration": 15, "remark": nil, "stringVariables": nil, "createdAt": "2026-02-03T16:00:00.000Z", "updatedAt": "2026-02-03T16:00:00.000Z"}
		return stMod(v, mod)
	}
	project := func(mod map[string]any) map[string]any {
		p := map[string]any{"id": stProject, "name": "Summer", "status": "new", "translationGlossary": nil, "voicesGlossary": nil,
			"pronunciationGlossary": nil, "remark": nil, "clientName": nil, "folderId": nil, "projectUrl": "http://127.0.0.1/projects/" + stProject,
			"createdAt": "2026-02-04T12:00:00.000Z", "updatedAt": "2026-02-04T12:00:00.000Z"}
		return stMod(p, mod)
	}
	js := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	xmlH := http.Header{"Content-Type": {"application/xml"}}
	getArtifact, getVideo := "/api/v1/artifacts/"+stUnknown, stVideoPath(stProject, stVideo)
	upload := "/_uploads/00000000-0000-4000-8000-000000000000/a.wav"
	for _, tc := range []struct {
		name, method, path string
		status             int
		header             http.Header
		body               any // JSON-encoded unless a string
		valid              bool
	}{
		{"artifact completed", "GET", getArtifact, 200, js, artifact(nil), true},
		{"artifact completed script", "GET", getArtifact, 200, js, artifact(map[string]any{"type": "script", "duration": nil}), true},
		{"artifact started", "GET", getArtifact, 200, js, artifact(map[string]any{"status": "upload_started", "size": nil, "duration": nil}), true},
		{"artifact failed", "GET", getArtifact, 200, js, artifact(map[string]any{"status": "upload_failed", "size": nil, "duration": nil, "errorMessage": "x"}), true},
		{"artifact failed without errorMessage", "GET", getArtifact, 200, js, artifact(map[string]any{"status": "upload_failed", "size": nil, "duration": nil}), false},
		{"artifact failed with a size", "GET", getArtifact, 200, js, artifact(map[string]any{"status": "upload_failed", "duration": nil, "errorMessage": "x"}), false},
		{"artifact created with a size", "GET", getArtifact, 200, js, artifact(map[string]any{"status": "created", "duration": nil}), false},
		{"artifact started with an errorMessage", "GET", getArtifact, 200, js, artifact(map[string]any{"status": "upload_started", "size": nil, "duration": nil, "errorMessage": "x"}), false},
		{"artifact completed video without duration", "GET", getArtifact, 200, js, artifact(map[string]any{"duration": nil}), false},
		{"artifact completed without size", "GET", getArtifact, 200, js, artifact(map[string]any{"size": nil}), false},
		{"artifact completed script with a duration", "GET", getArtifact, 200, js, artifact(map[string]any{"type": "script"}), false},
		{"artifact in the docs' middle status", "GET", getArtifact, 200, js, artifact(map[string]any{"status": "ready"}), false},
		{"artifact without errorMessage", "GET", getArtifact, 200, js, artifact(map[string]any{"errorMessage": stAbsent}), false},
		{"artifact with s3Bucket", "GET", getArtifact, 200, js, artifact(map[string]any{"s3Bucket": "b"}), false},
		{"artifact with the company's name", "GET", getArtifact, 200, js, artifact(map[string]any{"company": map[string]any{"id": "663266da5ec2709f7826386f", "name": "Acme"}}), false},
		{"artifact with a non-hex id", "GET", getArtifact, 200, js, artifact(map[string]any{"id": "67a8f9b0c1d2e3f4g5h6i7j8"}), false},
		{"artifact with a timestamp without milliseconds", "GET", getArtifact, 200, js, artifact(map[string]any{"createdAt": "2026-02-04T12:00:00Z"}), false},
		{"artifact created", "POST", stArtifacts, 200, js, created(nil), true},
		{"artifact created in another status", "POST", stArtifacts, 200, js, created(map[string]any{"status": "upload_started"}), false},
		{"artifact created without the company's name", "POST", stArtifacts, 200, js, created(map[string]any{"company": map[string]any{"id": "663266da5ec2709f7826386f"}}), false},
		{"video", "GET", getVideo, 200, js, video(nil), true},
		{"video with guidance", "GET", getVideo, 200, js, video(map[string]any{"translationGuidance": nil}), false},
		{"video with an unknown status", "GET", getVideo, 200, js, video(map[string]any{"status": "archived"}), false},
		{"video without remark", "GET", getVideo, 200, js, video(map[string]any{"remark": stAbsent}), false},
		{"video without stringVariables", "GET", getVideo, 200, js, video(map[string]any{"stringVariables": stAbsent}), false},
		{"video with empty stringVariables", "GET", getVideo, 200, js, video(map[string]any{"stringVariables": []any{}}), true},
		{"video created with processingType", "POST", stCreateVideoPath(stProject), 200, js, video(nil), false},
		{"video updated without guidance", "PATCH", stUpdateVideoPath(stProject, stVideo), 200, js, video(nil), false},
		{"video updated", "PATCH", stUpdateVideoPath(stProject, stVideo), 200, js, video(map[string]any{"translationGuidance": map[string]any{"common": "x"}}), true},
		{"project", "GET", stProjectPath(stProject), 200, js, project(nil), true},
		{"project in another status", "GET", stProjectPath(stProject), 200, js, project(map[string]any{"status": "in_progress"}), false},
		{"project with a relative projectUrl", "GET", stProjectPath(stProject), 200, js, project(map[string]any{"projectUrl": "/projects/x"}), false},
		{"error", "GET", stProjectPath(stProject), 404, js, map[string]any{"error": "Not Found"}, true},
		{"error in the platform's envelope", "GET", stProjectPath(stProject), 404, js, map[string]any{"error": "NotFoundError", "message": "x"}, false},
		{"rate limit", "GET", stProjects, 429, http.Header{"Content-Type": js["Content-Type"], "Retry-After": {"60"}}, map[string]any{"error": "x"}, true},
		{"rate limit without Retry-After", "GET", stProjects, 429, js, map[string]any{"error": "x"}, false},
		{"a status the operation never answers", "GET", stProjects, 404, js, map[string]any{"error": "Not Found"}, false},
		{"upload", "PUT", upload, 200, http.Header{"Etag": {`"0123456789abcdef0123456789abcdef"`}}, "", true},
		{"upload without ETag", "PUT", upload, 200, http.Header{}, "", false},
		{"upload with a body", "PUT", upload, 200, http.Header{"Etag": {`"0123456789abcdef0123456789abcdef"`}}, "ok", false},
		{"upload error", "PUT", upload, 404, xmlH, `<?xml version="1.0" encoding="UTF-8"?>` + "\n<Error><Code>NoSuchUpload</Code></Error>", true},
		{"upload error with another root", "PUT", upload, 404, xmlH, `<Err><Code>NoSuchUpload</Code></Err>`, false},
		{"upload error in JSON", "PUT", upload, 404, js, `{"error":"Not Found"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body, ok := tc.body.(string)
			if !ok {
				b, err := json.Marshal(tc.body)
				require.NoError(t, err)
				body = string(b)
			}
			_, err := validators[openapi.Studio].Check(tc.method, tc.path, tc.status, tc.header, []byte(body))
			assert.Equal(t, tc.valid, err == nil, "%v", err)
		})
	}
}
