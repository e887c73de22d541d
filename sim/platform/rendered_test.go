package platform_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Get Project answers of ready projects are kept encoded; every write
// (re-translation, forced outcome, delete) makes the next answer fresh, and
// nothing of a request other than the project decides it: the caller and
// the host of the download URLs are part of the key.
func TestGetProjectKeptAnswerFollowsWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := "dubsim-enterprise"
	id := e.create(key, `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://media.dubsim.test/short.mp4"}`)
	path := "/api/v1/projects/" + id
	get := func(header map[string]string) reply {
		t.Helper()
		return e.do(call{method: "GET", path: path, key: key, header: header})
	}
	e.advance(3600)
	first := get(nil)
	require.Equal(t, http.StatusOK, first.status, "%s", first.body)
	require.Equal(t, "ready", first.json(t)["status"])
	second := get(nil)
	assert.Equal(t, string(first.body), string(second.body), "a kept answer is the answer")
	assert.Equal(t, first.header, second.header)

	other := get(map[string]string{"Host": "dubsim.other:9"})
	assert.True(t, strings.HasPrefix(other.json(t)["output_video_url"].(string), "http://dubsim.other:9/files/projects/"+id+"/"), "%s", other.body)
	assert.NotEqual(t, string(first.body), string(other.body))
	again := get(nil)
	assert.Equal(t, string(first.body), string(again.body))

	r := e.do(call{method: "GET", path: path, key: "dubsim-pro"})
	assert.Equal(t, http.StatusNotFound, r.status, "another account's project: %s", r.body)

	// A re-translation is a write: the next answer shows it.
	req := `{"target_script":[{"start_ms":100,"end_ms":1544,"text":"Au revoir le monde!","speaker_id":1}],` +
		`"target_speakers":[{"speaker_id":1,"voice_key":"53f154:fr-FR-DeniseNeural","style":"feminine"}]}`
	r = e.do(call{method: "POST", path: path + "/translations", key: key, body: req})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "in_progress", get(nil).json(t)["status"])
	e.advance(3600)
	done := get(nil).json(t)
	assert.Equal(t, "ready", done["status"])
	assert.Equal(t, "Au revoir le monde!", done["output_target_script"].([]any)[0].(map[string]any)["text"])
	assert.NotEqual(t, first.json(t)["output_video_url"], done["output_video_url"], "a new output generation")

	r = e.do(call{method: "DELETE", path: path, key: key})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, http.StatusNotFound, get(nil).status, "deleted")
}

// A failed project's answer is kept too; forcing another outcome is a write.
func TestGetProjectKeptAnswerOfAFailedProject(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := "dubsim-enterprise"
	id := e.create(key, `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://media.dubsim.test/short.mp4"}`)
	r := e.do(call{method: "POST", path: "/_sim/projects/" + id + "/outcome", body: `{"outcome":"error","error_message":"Boom","now":true}`})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	path := "/api/v1/projects/" + id
	for range 2 {
		m := e.do(call{method: "GET", path: path, key: key}).json(t)
		assert.Equal(t, "error", m["status"])
		assert.Equal(t, "Boom", m["error_message"])
	}
}
