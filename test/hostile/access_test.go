package hostile

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// accessStart runs dubsim on the data file data (kept across restarts).
func accessStart(t *testing.T, data string) *proctest.Proc {
	t.Helper()
	return proctest.Start(t, proctest.Binary(t), nil,
		"--addr", "127.0.0.1:0", "--data", data, "--log-level", "off", "--seed", "0", "--time-scale", "0")
}

// accessReady creates a short project as key, lets it finish and returns its
// id and the output URLs Get Project gives.
func accessReady(t *testing.T, p *proctest.Proc, key string) (id, audioURL, videoURL string) {
	t.Helper()
	st, body := call(t, "POST", p.Base+"/api/v1/projects", key,
		`{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://media.dubsim.test/short.mp4"}`)
	require.Equal(t, http.StatusOK, st, body)
	var rc struct {
		ProjectID json.Number `json:"project_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &rc), body)
	id = rc.ProjectID.String()
	st, body = call(t, "POST", p.Base+"/_sim/clock/advance", "", `{"seconds":86400}`)
	require.Equal(t, http.StatusOK, st, body)
	var v struct {
		Status string `json:"status"`
		Video  string `json:"output_video_url"`
		Audio  string `json:"output_tts_audio_url"`
	}
	st, body = call(t, "GET", p.Base+"/api/v1/projects/"+id, key, "")
	require.Equal(t, http.StatusOK, st, body)
	require.NoError(t, json.Unmarshal([]byte(body), &v), body)
	require.Equal(t, "ready", v.Status, body)
	return id, v.Audio, v.Video
}

// Output URLs must not be computable from a project id: project ids
// follow the public seed, so were the URL
// {base}/files/projects/{id}/{generation}/dubbed_audio.wav with no key,
// anyone (another company's user, or no account at all) could download any
// company's dubbed audio and video. The URL therefore carries a signature
// keyed by the data file's secret: the computed URL,
// with or without a key, and another project's signature on the victim's id
// answer 404 and no media; the victim's own URLs work, and still do after a
// restart on the same data file.
func TestOutputURLsCannotBeComputed(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "dubsim.db")
	p := accessStart(t, data)
	id, audioURL, videoURL := accessReady(t, p, "dubsim-pro")

	st, b := call(t, "GET", audioURL, "", "")
	require.Equal(t, http.StatusOK, st, "the owner's own URL")
	require.True(t, strings.HasPrefix(b, "RIFF"), "a WAV file")
	wav := len(b)

	// What an attacker computes from the id alone.
	computed := map[string]string{
		"audio": p.Base + "/files/projects/" + id + "/1/dubbed_audio.wav",
		"video": p.Base + "/files/projects/" + id + "/1/dubbed_video.mov",
	}
	// Another company's user signs its own project and moves the signature
	// onto the victim's id.
	_, ownAudio, _ := accessReady(t, p, "dubsim-free")
	own, err := url.Parse(ownAudio)
	require.NoError(t, err)
	ownID := strings.Split(strings.TrimPrefix(own.Path, "/files/projects/"), "/")[0]
	own.Path = strings.Replace(own.Path, "/"+ownID+"/", "/"+id+"/", 1)
	computed["own signature"] = own.String()
	// The victim's URL with its signature changed or removed.
	tampered, err := url.Parse(audioURL)
	require.NoError(t, err)
	q := tampered.Query()
	for k, v := range q {
		if len(v) == 1 && len(v[0]) > 8 {
			q.Set(k, strings.Repeat("0", len(v[0])))
		}
	}
	tampered.RawQuery = q.Encode()
	computed["wrong signature"] = tampered.String()
	tampered.RawQuery = ""
	computed["no signature"] = tampered.String()

	for name, u := range computed {
		for _, key := range []string{"", "dubsim-free"} {
			st, b := call(t, "GET", u, key, "")
			t.Logf("%s (key %q): %d, %d bytes", name, key, st, len(b))
			assert.Equal(t, http.StatusNotFound, st, "%s with key %q: %s", name, key, u)
			assert.Equal(t, `{"error":"NotFoundError","message":"File not found"}`, strings.TrimSpace(b[:min(len(b), 100)]), "%s: the documented 404, no media", name)
		}
	}
	assert.True(t, p.Alive())

	// The same data file gives the same URLs after a restart.
	p.Terminate(t)
	p = accessStart(t, data)
	for _, u := range []string{audioURL, videoURL} {
		u = strings.Replace(u, audioURL[:strings.Index(audioURL, "/files/")], p.Base, 1)
		st, b := call(t, "GET", u, "", "")
		assert.Equal(t, http.StatusOK, st, "after a restart: %s", u)
		if strings.HasSuffix(strings.Split(u, "?")[0], ".wav") {
			assert.Len(t, b, wav, "the same file")
		}
	}
	assert.True(t, p.Alive())
}
