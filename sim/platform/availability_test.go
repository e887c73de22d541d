package platform_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dubsim/dubsim/sim"
)

// TestSpecialVoicesAgreeOnEveryTarget walks every target language of Get
// Options with each special voice flag: a create is either refused with the
// flag's message, or its project, once ready, gives outputs that validate
// and re-translate accept as they are (the docs make Get Project's outputs
// the starting point of a re-translation).
func TestSpecialVoicesAgreeOnEveryTarget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const key = "dubsim-enterprise" // re-translation enabled, every plan feature

	r := e.do(call{method: "GET", path: "/api/v1/options", key: key})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var opts struct {
		TargetLangs []string `json:"target_langs"`
	}
	require.NoError(t, json.Unmarshal(r.body, &opts))
	require.NotEmpty(t, opts.TargetLangs)

	type created struct{ flag, target, id string }
	var made []created
	refused := map[string]int{}
	for _, flag := range []struct{ field, message string }{
		{"use_soundalike_voices", sim.MsgSoundalikeLanguage},
		{"use_emotional_transfer", sim.MsgEmotionalLanguage},
	} {
		for i, target := range opts.TargetLangs {
			body := fmt.Sprintf(`{"name":"walk","source_lang":"en","target_lang":%q,"source_video_url":"https://media.dubsim.test/short-%d.mp4",%q:true}`, target, i, flag.field)
			r := e.do(call{method: "POST", path: "/api/v1/projects", key: key, body: body})
			switch r.status {
			case http.StatusOK:
				made = append(made, created{flag.field, target, r.json(t)["project_id"].(string)})
			case http.StatusBadRequest:
				assert.Equal(t, map[string]any{"error": "ValidationError", "message": fmt.Sprintf(flag.message, target)}, r.json(t), "%s on %s", flag.field, target)
				refused[flag.field]++
			default:
				t.Fatalf("%s on %s: status %d: %s", flag.field, target, r.status, r.body)
			}
		}
	}
	t.Logf("%d targets; refused at create: soundalike %d, emotional transfer %d; %d projects checked",
		len(opts.TargetLangs), refused["use_soundalike_voices"], refused["use_emotional_transfer"], len(made))

	e.advance(24 * 3600) // every project is ready

	for _, p := range made {
		r := e.do(call{method: "GET", path: "/api/v1/projects/" + p.id, key: key})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var got struct {
			Status   string `json:"status"`
			Speakers []struct {
				VoiceKey string `json:"voice_key"`
			} `json:"output_target_speakers"`
		}
		var raw map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(r.body, &raw))
		require.NoError(t, json.Unmarshal(r.body, &got))
		require.Equal(t, "ready", got.Status, "%s %s", p.flag, p.target)
		require.NotEmpty(t, got.Speakers)
		for _, s := range got.Speakers {
			want := map[string]string{"use_soundalike_voices": sim.VoiceSoundalike, "use_emotional_transfer": sim.VoiceEmotionalTransfer}[p.flag]
			assert.Equal(t, want, s.VoiceKey, "%s %s", p.flag, p.target)
		}
		req := fmt.Sprintf(`{"target_script":%s,"target_speakers":%s}`, raw["output_target_script"], raw["output_target_speakers"])
		v := e.do(call{method: "POST", path: "/api/v1/projects/" + p.id + "/validate-translation-request", key: key, body: req})
		assert.Equal(t, http.StatusOK, v.status, "validate %s %s: %s", p.flag, p.target, v.body)
		assert.JSONEq(t, `{"valid":true}`, string(v.body), "validate %s %s", p.flag, p.target)
		rt := e.do(call{method: "POST", path: "/api/v1/projects/" + p.id + "/translations", key: key, body: req})
		assert.Equal(t, http.StatusOK, rt.status, "re-translate %s %s: %s", p.flag, p.target, rt.body)
	}
	// Neither outcome may be empty, or the walk proves nothing.
	for _, field := range []string{"use_soundalike_voices", "use_emotional_transfer"} {
		assert.NotZero(t, refused[field], "%s is refused on some target", field)
		assert.Less(t, refused[field], len(opts.TargetLangs), "%s is accepted on some target", field)
	}
}
