package server_test

// The documented error messages are sent byte for byte through the real
// listener; what dubsim knows beyond them goes in X-Dubsim-Error-Detail.

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const headerErrorDetail = "X-Dubsim-Error-Detail"

func TestInvalidTimingMessageIsTheDocumentedText(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	const key = "dubsim-enterprise"
	c := newPClient(t, in.url)
	id := readyProject(t, in, key)
	const want = `{"error":"ValidationError","message":"Invalid timing: start_ms must be less than end_ms"}`
	for _, tc := range []struct {
		name, path, body, detail string
	}{
		{"validate", "/api/v1/projects/" + id + "/validate-translation-request", retranslationBody("1500", "1200", "1", "1"), "target_script[0]: start_ms 1500, end_ms 1200"},
		{"re-translate", "/api/v1/projects/" + id + "/translations", retranslationBody("1544", "1544", "1", "1"), "target_script[0]: start_ms 1544, end_ms 1544"},
		{"create", "/api/v1/projects", createBody("10", "10"), "source_script[0]: start_ms 10, end_ms 10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := c.json("POST", tc.path, key, tc.body, nil)
			require.NoError(t, a.err)
			assert.Equal(t, http.StatusBadRequest, a.status)
			assert.Equal(t, want, exactBody(a), "the documented body, byte for byte")
			assert.Equal(t, tc.detail, a.header.Get(headerErrorDetail))
		})
	}
	other := c.json("POST", "/api/v1/projects", key, `{"target_lang":"fr-FR","source_video_url":"https://cdn.test/a.mp4"}`, nil)
	assert.Empty(t, other.header.Get(headerErrorDetail), "only errors with a detail carry the header")
}

// TestDocumentedErrorBodies sends, through the real listener, a request for
// each error body the provider's documentation quotes (docs-notes part C)
// and checks the body byte for byte.
func TestDocumentedErrorBodies(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	const key = "dubsim-enterprise"
	c := newPClient(t, in.url)
	ready := readyProject(t, in, key)
	busy := in.create(key, "https://cdn.test/busy.mp4")
	broke := newAccount(t, in, `{"plan":"pro","balance_minutes":0}`)
	acmeProject := studioProject(t, in, "dubsim-free")
	validate := "/api/v1/projects/" + ready + "/validate-translation-request"
	speakers := `"target_speakers":[{"speaker_id":1,"voice_key":"` + frDenise + `","style":"feminine"}]`

	tests := []struct {
		name, method, path, key, body string
		status                        int
		want                          string
	}{
		{"platform: source_lang is required", "POST", "/api/v1/projects", key, `{"target_lang":"fr-FR","source_video_url":"https://cdn.test/a.mp4"}`,
			400, `{"error":"ValidationError","message":"source_lang is required"}`},
		{"platform: Invalid API key", "GET", "/api/v1/balance", "not-a-key", "",
			401, `{"error":"UnauthorizedError","message":"Invalid API key"}`},
		{"platform: Insufficient balance for this project", "POST", "/api/v1/projects", broke, `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://cdn.test/a.mp4"}`,
			402, `{"error":"PaymentRequiredError","message":"Insufficient balance for this project"}`},
		{"platform: Project not found", "DELETE", "/api/v1/projects/123456789", key, "",
			404, `{"error":"NotFoundError","message":"Project not found"}`},
		{"platform: Cannot delete project while processing is in progress", "DELETE", "/api/v1/projects/" + busy, key, "",
			400, `{"error":"ValidationError","message":"Cannot delete project while processing is in progress"}`},
		{"platform: Unknown voice unknown-voice", "POST", validate, key,
			`{"target_script":[{"start_ms":100,"end_ms":1544,"text":"x","speaker_id":1}],"target_speakers":[{"speaker_id":1,"voice_key":"unknown-voice","style":"feminine"}]}`,
			400, `{"error":"ValidationError","message":"Unknown voice unknown-voice"}`},
		{"platform: Speaker ID 2 referenced in script but not found in target_speakers", "POST", validate, key,
			`{"target_script":[{"start_ms":100,"end_ms":1544,"text":"x","speaker_id":2}],` + speakers + `}`,
			400, `{"error":"ValidationError","message":"Speaker ID 2 referenced in script but not found in target_speakers"}`},
		{"platform: Invalid timing", "POST", validate, key,
			`{"target_script":[{"start_ms":1544,"end_ms":100,"text":"x","speaker_id":1}],` + speakers + `}`,
			400, `{"error":"ValidationError","message":"Invalid timing: start_ms must be less than end_ms"}`},
		{"studio: Missing or invalid authorization token", "GET", "/api/v1/projects/" + acmeProject, "", "",
			400, `{"error":"Missing or invalid authorization token"}`},
		{"studio: Access denied to this project", "GET", "/api/v1/projects/" + acmeProject, "dubsim-enterprise", "",
			400, `{"error":"Access denied to this project"}`},
		{"studio: Not Found", "GET", "/api/v1/projects/" + acmeProject + "/videos/000000000000000000000000", "dubsim-free", "",
			404, `{"error":"Not Found"}`},
		{"studio: No valid fields to update", "PATCH", "/api/v1/projects/" + acmeProject, "dubsim-free", `{"unknown":1}`,
			400, `{"error":"No valid fields to update"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := c.json(tc.method, tc.path, tc.key, tc.body, nil)
			require.NoError(t, a.err)
			assert.Equal(t, tc.status, a.status, "%s", a.body)
			assert.Equal(t, tc.want, exactBody(a))
		})
	}
}
