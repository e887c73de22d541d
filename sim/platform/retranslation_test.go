package platform_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const frVoice = "f4fb50:fr-FR-AlainNeural"

func TestRetranslationOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := "dubsim-enterprise"
	id := e.create(key, `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://media.dubsim.test/short.mp4"}`)
	// The docs' example request, verbatim (docs A.8).
	req := `{"target_script":[{"start_ms":100,"end_ms":1544,"text":"Au revoir le monde!","speaker_id":1}],` +
		`"target_speakers":[{"speaker_id":1,"voice_key":"53f154:fr-FR-DeniseNeural","style":"feminine"}],"mixing_mode":"voiceover_only"}`
	validate := "/api/v1/projects/" + id + "/validate-translation-request"
	translate := "/api/v1/projects/" + id + "/translations"

	notReady := `{"error":"ValidationError","message":"Project ` + id + ` cannot be re-translated while its status is in_progress; re-translation needs status ready"}`
	r := e.do(call{method: "POST", path: validate, key: key, body: req})
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.JSONEq(t, notReady, string(r.body))
	r = e.do(call{method: "POST", path: translate, key: key, body: req})
	assert.JSONEq(t, notReady, string(r.body))

	e.advance(3600)
	r = e.do(call{method: "POST", path: validate, key: key, body: req})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.JSONEq(t, `{"valid":true}`, string(r.body))

	r = e.do(call{method: "POST", path: translate, key: key, body: req})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	m := r.json(t)
	assert.Equal(t, id, m["project_id"])
	assert.Equal(t, float64(0), m["cost_minutes"])
	assert.Equal(t, float64(1), m["translations_count"])
	assert.Equal(t, float64(5999), m["balance_minutes"])
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`, m["estimated_completion_date"])

	r = e.do(call{method: "GET", path: "/api/v1/projects/" + id, key: key})
	assert.Equal(t, "in_progress", r.json(t)["status"])
	e.advance(3600)
	var got struct {
		Status     string `json:"status"`
		MixingMode string `json:"mixing_mode"`
		Video      string `json:"output_video_url"`
		Target     []struct {
			StartMS   int64  `json:"start_ms"`
			EndMS     int64  `json:"end_ms"`
			Text      string `json:"text"`
			SpeakerID int    `json:"speaker_id"`
		} `json:"output_target_script"`
		Speakers []map[string]any `json:"output_target_speakers"`
	}
	r = e.do(call{method: "GET", path: "/api/v1/projects/" + id, key: key})
	require.NoError(t, json.Unmarshal(r.body, &got))
	assert.Equal(t, "ready", got.Status)
	assert.Equal(t, "voiceover_only", got.MixingMode)
	assert.Contains(t, got.Video, "/"+id+"/2/", "new outputs after a re-translation")
	require.Len(t, got.Target, 1)
	assert.Equal(t, "Au revoir le monde!", got.Target[0].Text)
	assert.Equal(t, 1, got.Target[0].SpeakerID)
	assert.Equal(t, []map[string]any{{"speaker_id": float64(1), "voice_key": "53f154:fr-FR-DeniseNeural", "style": "feminine"}}, got.Speakers)
}

func TestRetranslationErrorsOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := "dubsim-enterprise"
	id := e.create(key, `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://media.dubsim.test/short.mp4"}`)
	e.advance(3600)
	tests := []struct {
		name   string
		key    string
		id     string
		body   string
		status int
		want   string
	}{
		{"docs: unknown voice", key, id, `{"target_script":[{"start_ms":100,"end_ms":1544,"text":"x","speaker_id":1}],"target_speakers":[{"speaker_id":1,"voice_key":"unknown-voice","style":"feminine"}]}`,
			400, `{"error":"ValidationError","message":"Unknown voice unknown-voice"}`},
		{"docs: speaker not found", key, id, `{"target_script":[{"start_ms":100,"end_ms":1544,"text":"x","speaker_id":2}],"target_speakers":[{"speaker_id":1,"voice_key":"` + frVoice + `","style":"feminine"}]}`,
			400, `{"error":"ValidationError","message":"Speaker ID 2 referenced in script but not found in target_speakers"}`},
		{"docs: invalid timing", key, id, `{"target_script":[{"start_ms":1544,"end_ms":100,"text":"x","speaker_id":1}],"target_speakers":[{"speaker_id":1,"voice_key":"` + frVoice + `","style":"feminine"}]}`,
			400, `{"error":"ValidationError","message":"Invalid timing: start_ms must be less than end_ms"}`},
		{"speaker_id not a number", key, id, `{"target_script":[{"start_ms":1,"end_ms":100,"text":"x","speaker_id":"1"}],"target_speakers":[]}`,
			400, `{"error":"ValidationError","message":"target_script.speaker_id must be an integer; got string"}`},
		{"unknown project", key, "123456789", `{}`, 404, `{"error":"NotFoundError","message":"Project not found"}`},
		{"not enabled", "dubsim-pro", id, `{}`, 403,
			`{"error":"ForbiddenError","message":"Re-translation is not enabled for this account; contact support@dubformer.ai to enable it"}`},
		{"malformed", key, id, `{"target_script":`, 400, `{"error":"ValidationError","message":"Malformed JSON body: the JSON ends early: the body stops before the value is complete (truncated?)"}`},
	}
	for _, tc := range tests {
		for _, endpoint := range []string{"/translations", "/validate-translation-request"} {
			t.Run(tc.name+endpoint, func(t *testing.T) {
				r := e.do(call{method: "POST", path: "/api/v1/projects/" + tc.id + endpoint, key: tc.key, body: tc.body})
				assert.Equal(t, tc.status, r.status, "%s", r.body)
				assert.JSONEq(t, tc.want, string(r.body), "validation answers what the re-translation would")
			})
		}
	}
	r := e.do(call{method: "GET", path: "/api/v1/projects/" + id, key: key})
	assert.Equal(t, "ready", r.json(t)["status"], "refused requests change nothing")
}
