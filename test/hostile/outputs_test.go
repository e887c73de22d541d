package hostile

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The dubbed audio of a two-hour project is 317 MB, synthesized on every
// download: about 4 s of CPU each time, for anyone who has the URL (no key).
// The output cache renders it once per project generation; a repeated
// download costs a read.
//
// Outside the long run the project is the docs' 10-minute example (26 MB):
// the render is still ten times a read (210 ms against 10-20 ms), and
// without the cache each download costs the render again (180-200 ms).
func TestRepeatedOutputDownloadsCostARead(t *testing.T) {
	t.Parallel()
	source, size := "https://example.com/video.mp4", int64(26_460_044)
	if tooltest.Long() {
		source, size = "https://media.dubsim.test/long.mp4", 317_520_044
	}
	p := start(t)
	st, body := call(t, "POST", p.Base+"/api/v1/projects", "dubsim-enterprise",
		`{"source_lang":"en","target_lang":"fr-FR","source_video_url":"`+source+`"}`)
	require.Equal(t, http.StatusOK, st, body)
	id := body[strings.Index(body, `"project_id":`)+len(`"project_id":`):]
	id = strings.Trim(id[:strings.IndexAny(id, ",}")], `" `)
	st, body = call(t, "POST", p.Base+"/_sim/clock/advance", "", `{"seconds":86400}`)
	require.Equal(t, http.StatusOK, st, body)
	st, body = call(t, "GET", p.Base+"/api/v1/projects/"+id, "dubsim-enterprise", "")
	require.Equal(t, http.StatusOK, st, body)
	var view struct {
		URL string `json:"output_tts_audio_url"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &view), body)
	url := view.URL // signed (TestOutputURLsCannotBeComputed)

	var cpu [3]time.Duration
	for i := range cpu {
		before, err := p.CPU()
		require.NoError(t, err)
		resp, err := http.Get(url)
		require.NoError(t, err)
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, size, n, "the WAV of the whole project")
		after, err := p.CPU()
		require.NoError(t, err)
		cpu[i] = after - before
	}
	t.Logf("CPU of dubsim per download of the %d-byte audio: %v (first), %v, %v", size, cpu[0], cpu[1], cpu[2])
	assert.True(t, p.Alive())
	for _, c := range cpu[1:] {
		assert.Less(t, c, cpu[0]/2, "a repeated download costs much less than the render")
	}
}
