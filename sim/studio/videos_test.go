package studio_test

// Videos of studio projects: creation, reads and updates.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func videosPath(pid string) string { return "/api/v1/projects/" + pid + "/videos" }

func videoPath(pid, vid string) string { return "/api/v1/projects/" + pid + "/videos/" + vid }

func updateVideoPath(pid, vid string) string {
	return "/api/projects/" + pid + "/videos/" + vid
}

func TestCreateVideoRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ready := e.readyArtifact(keyAcme, "video")
	script := e.readyArtifact(keyAcme, "script")
	pending := e.artifact(keyAcme, `{"name":"P","type":"video","url":"https://cdn.test/p.mp4"}`)
	failed := e.artifact(keyAcme, `{"name":"F","type":"video","url":"https://cdn.test/f.mp4"}`)
	_, err := e.srv.Engine.Outcomes.ForceArtifact(context.Background(), failed, sim.ForceError, "Codec not supported", nil, nil, true)
	require.NoError(t, err)
	initech := e.readyArtifact(keyInitech, "video")

	post := func(pid, body string) call {
		return call{method: "POST", path: "/api/v1/projects/" + pid + "/videos/create", key: keyAcme, body: body}
	}
	// with builds a valid body with one field replaced (or removed with "-").
	with := func(field, value string) call {
		f := map[string]string{"name": `"Clip"`, "workflowType": `"dubbing"`, "sourceArtifactId": `"` + ready + `"`,
			"sourceLanguage": `"en"`, "targetLanguages": `["es-ES","fr-FR"]`}
		order := []string{"name", "workflowType", "sourceArtifactId", "sourceLanguage", "targetLanguages"}
		if _, ok := f[field]; !ok {
			order = append(order, field)
		}
		f[field] = value
		var parts []string
		for _, k := range order {
			if f[k] != "-" {
				parts = append(parts, `"`+k+`":`+f[k])
			}
		}
		return post(prAcmeSummer, "{"+strings.Join(parts, ",")+"}")
	}
	const wfMsg = "workflowType must be one of dubbing, voiceover, audio_description, transcription, translation, subtitling; got %q"
	const srcMsg = "sourceLanguage must be an ISO 639-1 code like en, or multi; got %q"
	const usable = "; an artifact is usable only when its status is upload_completed"
	cases := []errCase{
		{name: "name missing", call: with("name", "-"), msg: "name is required"},
		{name: "name empty", call: with("name", `""`), msg: "name must not be empty"},
		{name: "name not a string", call: with("name", `1`), msg: "name must be a string; got 1"},
		{name: "name too long", call: with("name", `"`+repeat("v", 501)+`"`), msg: "name must be at most 500 characters; got 501"},
		{name: "workflowType missing", call: with("workflowType", "-"), msg: "workflowType is required"},
		{name: "workflowType null", call: with("workflowType", "null"), msg: "workflowType is required"},
		{name: "processingType instead of workflowType", call: post(prAcmeSummer, `{"name":"Clip","processingType":"dubbing","sourceArtifactId":"`+ready+`","sourceLanguage":"en","targetLanguages":["es-ES"]}`), msg: "workflowType is required (video creation names the processing type workflowType)"},
		{name: "workflowType not a string", call: with("workflowType", `["dubbing"]`), msg: `workflowType must be a string; got ["dubbing"]`},
		{name: "workflowType standard", call: with("workflowType", `"standard"`), msg: fmt.Sprintf(wfMsg, "standard")},
		{name: "workflowType unknown", call: with("workflowType", `"karaoke"`), msg: fmt.Sprintf(wfMsg, "karaoke")},
		{name: "workflowType empty", call: with("workflowType", `""`), msg: fmt.Sprintf(wfMsg, "")},
		{name: "sourceArtifactId missing", call: with("sourceArtifactId", "-"), msg: "sourceArtifactId is required"},
		{name: "originalVideoArtifactId hint", call: post(prAcmeSummer, `{"name":"Clip","workflowType":"dubbing","originalVideoArtifactId":"`+ready+`","sourceLanguage":"en","targetLanguages":["es-ES"]}`), msg: "sourceArtifactId is required (originalVideoArtifactId is its older name)"},
		{name: "sourceArtifactId empty", call: with("sourceArtifactId", `""`), msg: "sourceArtifactId must not be empty"},
		{name: "sourceArtifactId not a string", call: with("sourceArtifactId", `123`), msg: "sourceArtifactId must be a string; got 123"},
		{name: "sourceLanguage missing", call: with("sourceLanguage", "-"), msg: "sourceLanguage is required"},
		{name: "sourceLanguage empty", call: with("sourceLanguage", `""`), msg: "sourceLanguage must not be empty"},
		{name: "sourceLanguage with region", call: with("sourceLanguage", `"en-US"`), msg: fmt.Sprintf(srcMsg, "en-US")},
		{name: "sourceLanguage upper case", call: with("sourceLanguage", `"EN"`), msg: fmt.Sprintf(srcMsg, "EN")},
		{name: "sourceLanguage three letters", call: with("sourceLanguage", `"eng"`), msg: fmt.Sprintf(srcMsg, "eng")},
		{name: "sourceLanguage Multi", call: with("sourceLanguage", `"Multi"`), msg: fmt.Sprintf(srcMsg, "Multi")},
		{name: "sourceLanguage multi not enabled", call: with("sourceLanguage", `"multi"`), msg: "sourceLanguage: multi is not enabled for your organization; an administrator enables it through your account manager"},
		{name: "sourceLanguage not offered", call: with("sourceLanguage", `"xx"`), msg: `sourceLanguage "xx" is not a supported source language (the source_langs of the platform's GET /api/v1/options, or multi)`},
		{name: "targetLanguages not offered", call: with("targetLanguages", `["es-ES","qq-QQ"]`), msg: `targetLanguages[1] "qq-QQ" is not a supported target language (the target_langs of the platform's GET /api/v1/options)`},
		{name: "targetLanguages region not offered", call: with("targetLanguages", `["fr-US"]`), msg: `targetLanguages[0] "fr-US" is not a supported target language (the target_langs of the platform's GET /api/v1/options)`},
		{name: "targetLanguages missing", call: with("targetLanguages", "-"), msg: "targetLanguages is required"},
		{name: "targetLanguages null", call: with("targetLanguages", "null"), msg: "targetLanguages is required"},
		{name: "targetLanguages a string", call: with("targetLanguages", `"es-ES"`), msg: `targetLanguages must be an array of strings; got "es-ES"`},
		{name: "targetLanguages empty", call: with("targetLanguages", `[]`), msg: "targetLanguages must name at least one language"},
		{name: "targetLanguages of numbers", call: with("targetLanguages", `["es-ES",7]`), msg: "targetLanguages[1] must be a string; got 7"},
		{name: "targetLanguages without region", call: with("targetLanguages", `["es"]`), msg: `targetLanguages[0] must be a language code like es-ES; got "es"`},
		{name: "targetLanguages lower-case region", call: with("targetLanguages", `["es-ES","fr-fr"]`), msg: `targetLanguages[1] must be a language code like es-ES; got "fr-fr"`},
		{name: "targetLanguages duplicate", call: with("targetLanguages", `["es-ES","fr-FR","es-ES"]`), msg: "targetLanguages[2]: es-ES is listed twice"},
		{name: "targetLanguages too many", call: with("targetLanguages", langList(101)), msg: "targetLanguages must name at most 100 languages; got 101"},
		{name: "source artifact unknown", call: with("sourceArtifactId", `"`+unknownID+`"`), msg: "sourceArtifactId: artifact " + unknownID + " does not exist"},
		{name: "source artifact of another company", call: with("sourceArtifactId", `"`+initech+`"`), msg: "sourceArtifactId: artifact " + initech + " does not belong to your company"},
		{name: "source artifact not processed yet", call: with("sourceArtifactId", `"`+pending+`"`), msg: "sourceArtifactId: artifact " + pending + " has status created" + usable},
		{name: "source artifact failed", call: with("sourceArtifactId", `"`+failed+`"`), msg: "sourceArtifactId: artifact " + failed + " has status upload_failed: Codec not supported" + usable},
		{name: "source artifact is a script", call: with("sourceArtifactId", `"`+script+`"`), msg: "sourceArtifactId: artifact " + script + " is of type script; this field takes an artifact of type video or audio"},
		{name: "background is a video", call: with("backgroundWavArtifactId", `"`+ready+`"`), msg: "backgroundWavArtifactId: artifact " + ready + " is of type video; this field takes an artifact of type audio"},
		{name: "international mix unknown", call: with("internationalMixWavArtifactId", `"`+unknownID+`"`), msg: "internationalMixWavArtifactId: artifact " + unknownID + " does not exist"},
		{name: "vocals not a string", call: with("vocalsHitlWavArtifactId", `5`), msg: "vocalsHitlWavArtifactId must be a string; got 5"},
		{name: "remark not a string", call: with("remark", `["x"]`), msg: `remark must be a string; got ["x"]`},
		{name: "stringVariables not an array", call: with("stringVariables", `{"key":"a","value":"b"}`), msg: `stringVariables must be an array of {key, value} objects; got {"key":"a","value":"b"}`},
		{name: "stringVariables item not an object", call: with("stringVariables", `["a"]`), msg: `stringVariables[0] must be an object with string fields key and value; got "a"`},
		{name: "stringVariables item null", call: with("stringVariables", `[null]`), msg: `stringVariables[0] must be an object with string fields key and value; got null`},
		{name: "stringVariables key empty", call: with("stringVariables", `[{"key":"a","value":"b"},{"key":"","value":"v"}]`), msg: "stringVariables[1].key must be a non-empty string"},
		{name: "stringVariables key missing", call: with("stringVariables", `[{"value":"v"}]`), msg: "stringVariables[0].key must be a non-empty string"},
		{name: "stringVariables value missing", call: with("stringVariables", `[{"key":"k"}]`), msg: "stringVariables[0].value must be a string"},
		{name: "stringVariables value a number", call: with("stringVariables", `[{"key":"k","value":1}]`), msg: "stringVariables[0].value must be a string"},
		{name: "stringVariables too many", call: with("stringVariables", varList(101)), msg: "stringVariables must have at most 100 entries; got 101"},
		{name: "pipelineOptions not an object", call: with("pipelineOptions", `"auto"`), msg: `pipelineOptions must be an object; got "auto"`},
		{name: "pipelineOptions flag not a boolean", call: with("pipelineOptions", `{"shouldAutomateTranslation":"yes"}`), msg: "pipelineOptions.shouldAutomateTranslation must be a boolean"},
	}
	for i := range cases {
		cases[i].status = http.StatusBadRequest
	}
	valid := with("remark", `"x"`).body
	cases = append(cases,
		errCase{name: "unknown project", call: post(unknownID, valid), status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		errCase{name: "another company's project", call: post(prInitech, valid), status: http.StatusBadRequest, msg: sim.MsgStudioDenied},
		errCase{name: "another company's project with a bad body", call: post(prInitech, `{}`), status: http.StatusBadRequest, msg: sim.MsgStudioDenied},
	)
	runErrors(t, e, cases)
	assert.Len(t, e.ok2list(t, call{method: "GET", path: videosPath(prAcmeSummer), key: keyAcme}), 3, "no refused request created a video")
}

func langList(n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(`"%c%c-%c%c"`, 'a'+i/26%26, 'a'+i%26, 'A'+i/26%26, 'A'+i%26)
	}
	return "[" + strings.Join(out, ",") + "]"
}

func varList(n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(`{"key":"k%d","value":"v"}`, i)
	}
	return "[" + strings.Join(out, ",") + "]"
}

func TestCreateVideo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withPublicURL)
	src := e.readyArtifact(keyAcme, "video")
	bg := e.readyArtifact(keyAcme, "audio")
	body := `{"name":"New Marketing Video","workflowType":"dubbing","sourceArtifactId":"` + src + `","sourceLanguage":"en","targetLanguages":["es-ES","fr-FR"],` +
		`"backgroundWavArtifactId":"` + bg + `","internationalMixWavArtifactId":"` + bg + `","vocalsHitlWavArtifactId":"` + bg + `",` +
		`"pipelineOptions":{"shouldAutomateTranscription":true,"shouldAutomateTranslation":true,"shouldAutomateVoiceSelection":false},` +
		`"remark":"Optional comment","stringVariables":[{"key":"storyTitleId","value":"12345"},{"key":"storyDeeplink","value":"https://cms.test/?titleId=12345&view=7"}]}`
	r := e.do(call{method: "POST", path: "/api/v1/projects/" + prAcmeSummer + "/videos/create", key: keyAcme, body: body})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	golden(t, "video_create", r.body)
	v := r.json(t)
	id := v["id"].(string)
	assert.Equal(t, "dubbing", v["workflowType"])
	assert.NotContains(t, v, "processingType", "creation names it workflowType")
	assert.Equal(t, 12.0, v["videoDuration"], "from the source artifact")
	assert.Equal(t, publicURL+videoPath(prAcmeSummer, id), v["videoUrl"])

	r = e.do(call{method: "GET", path: videoPath(prAcmeSummer, id), key: keyAcme2})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	golden(t, "video_get", r.body)
	g := r.json(t)
	assert.Equal(t, "dubbing", g["processingType"])
	assert.NotContains(t, g, "workflowType")
	assert.NotContains(t, g, "translationGuidance", "Get Video has no guidance")

	l := e.ok2list(t, call{method: "GET", path: videosPath(prAcmeSummer), key: keyAcme})
	require.Len(t, l, 4)
	assert.Equal(t, g, l[3], "oldest first; the list entry is the Get shape")

	t.Run("lifecycle", func(t *testing.T) {
		e.advance(time.Minute)
		assert.Equal(t, "in_progress", e.ok(call{method: "GET", path: videoPath(prAcmeSummer, id), key: keyAcme})["status"])
		e.advance(10 * time.Minute)
		assert.Equal(t, "in_progress", e.ok(call{method: "GET", path: videoPath(prAcmeSummer, id), key: keyAcme})["status"])
		e.advance(12 * time.Second)
		done := e.ok(call{method: "GET", path: videoPath(prAcmeSummer, id), key: keyAcme})
		assert.Equal(t, "completed", done["status"])
		assert.Equal(t, "2026-02-04T12:11:12.000Z", done["updatedAt"], "10 min + 1 min per minute of video after starting")
	})

	t.Run("audio source, minimal body", func(t *testing.T) {
		v := e.ok(call{method: "POST", path: "/api/v1/projects/" + prAcmeTutorials + "/videos/create", key: keyAcme,
			body: `{"name":"Audio","workflowType":"subtitling","sourceArtifactId":"` + bg + `","sourceLanguage":"de","targetLanguages":["en-US"]}`})
		assert.Equal(t, "subtitling", v["workflowType"])
		assert.Nil(t, v["remark"])
		assert.Nil(t, v["stringVariables"])
	})

	t.Run("multi for a company that has it", func(t *testing.T) {
		gsrc := e.readyArtifact(keyGlobex, "video")
		v := e.ok(call{method: "POST", path: "/api/v1/projects/" + prGlobexNight + "/videos/create", key: keyGlobex,
			body: `{"name":"Episode 3","workflowType":"dubbing","sourceArtifactId":"` + gsrc + `","sourceLanguage":"multi","targetLanguages":["ja-JP"]}`})
		assert.Equal(t, "multi", v["srcLang"])
	})

	t.Run("artifact whose processing ended by now is usable", func(t *testing.T) {
		a := e.artifact(keyAcme, `{"name":"Late","type":"video","url":"https://media.dubsim.test/short.mp4"}`)
		// Only the simulated clock moves; no read applies the transition
		// before the video creation does.
		e.advanceClockOnly(time.Minute)
		v := e.ok(call{method: "POST", path: "/api/v1/projects/" + prAcmeSummer + "/videos/create", key: keyAcme,
			body: `{"name":"Late","workflowType":"dubbing","sourceArtifactId":"` + a + `","sourceLanguage":"en","targetLanguages":["es-ES"]}`})
		assert.Equal(t, 12.0, v["videoDuration"])
	})
}

func TestReadVideoRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	get := func(path string) call { return call{method: "GET", path: path, key: keyAcme} }
	runErrors(t, e, []errCase{
		{name: "list of unknown project", call: get(videosPath(unknownID)), status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		{name: "get in unknown project", call: get(videoPath(unknownID, viSummerHero)), status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		{name: "unknown video", call: get(videoPath(prAcmeSummer, unknownID)), status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		{name: "video of another project", call: get(videoPath(prAcmeTutorials, viSummerHero)), status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		{name: "list of another company's project", call: get(videosPath(prGlobexNight)), status: http.StatusBadRequest, msg: sim.MsgStudioDenied},
		{name: "get in another company's project", call: get(videoPath(prGlobexNight, viGlobexEp1)), status: http.StatusBadRequest, msg: sim.MsgStudioDenied},
		{name: "another company's video through an own project", call: get(videoPath(prAcmeSummer, viGlobexEp1)), status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
	})
	l := e.ok2list(t, call{method: "GET", path: videosPath(prAcmeSummer), key: keyAcme})
	require.Len(t, l, 3)
	for _, v := range l {
		assert.ElementsMatch(t, []string{"id", "name", "status", "processingType", "srcLang", "dstLangs", "videoUrl", "videoDuration",
			"remark", "stringVariables", "createdAt", "updatedAt"}, keys(v))
	}
	assert.Equal(t, viSummerHero, l[0]["id"], "oldest first")
}

func TestUpdateVideoRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	patch := func(body string) call {
		return call{method: "PATCH", path: updateVideoPath(prAcmeSummer, viSummerSocial), key: keyAcme, body: body}
	}
	const ptMsg = "processingType must be one of dubbing, voiceover, audio_description, transcription, translation, subtitling, standard; got %q"
	cases := []errCase{
		{name: "empty object", call: patch(`{}`), msg: sim.MsgNoValidFields},
		{name: "only unknown fields", call: patch(`{"workflowType":"dubbing","srcLang":"fr"}`), msg: sim.MsgNoValidFields},
		{name: "nulls of scalar fields", call: patch(`{"name":null,"status":null,"processingType":null,"dstLangs":null}`), msg: sim.MsgNoValidFields},
		{name: "name empty", call: patch(`{"name":""}`), msg: "name must not be empty"},
		{name: "name too long", call: patch(`{"name":"` + repeat("n", 501) + `"}`), msg: "name must be at most 500 characters; got 501"},
		{name: "remark too long", call: patch(`{"remark":"` + repeat("r", 65537) + `"}`), msg: "remark must be at most 65536 bytes; got 65537"},
		{name: "guidance too long", call: patch(`{"translationGuidance":{"common":"` + repeat("g", 65537) + `"}}`), msg: "translationGuidance.common must be at most 65536 bytes; got 65537"},
		{name: "guidance byLang too long", call: patch(`{"translationGuidance":{"byLang":{"es":"` + repeat("g", 65537) + `"}}}`), msg: "translationGuidance.byLang.es must be at most 65536 bytes; got 65537"},
		{name: "stringVariables value too long", call: patch(`{"stringVariables":[{"key":"k","value":"` + repeat("s", 65537) + `"}]}`), msg: "stringVariables[0].value must be at most 65536 bytes; got 65537"},
		{name: "dstLangs a string", call: patch(`{"dstLangs":"en"}`), msg: `dstLangs must be an array of strings; got "en"`},
		{name: "dstLangs empty", call: patch(`{"dstLangs":[]}`), msg: "dstLangs must name at least one language"},
		{name: "dstLangs bad code", call: patch(`{"dstLangs":["en","EN"]}`), msg: `dstLangs[1] must be a language code like es-ES or es; got "EN"`},
		{name: "dstLangs underscore", call: patch(`{"dstLangs":["es_ES"]}`), msg: `dstLangs[0] must be a language code like es-ES or es; got "es_ES"`},
		{name: "dstLangs duplicate", call: patch(`{"dstLangs":["fr","fr"]}`), msg: "dstLangs[1]: fr is listed twice"},
		{name: "dstLangs language not offered", call: patch(`{"dstLangs":["fr","qq"]}`), msg: `dstLangs[1] "qq" is not a supported target language (the target_langs of the platform's GET /api/v1/options)`},
		{name: "dstLangs code not offered", call: patch(`{"dstLangs":["qq-QQ"]}`), msg: `dstLangs[0] "qq-QQ" is not a supported target language (the target_langs of the platform's GET /api/v1/options)`},
		{name: "processingType unknown", call: patch(`{"processingType":"karaoke"}`), msg: fmt.Sprintf(ptMsg, "karaoke")},
		{name: "processingType empty", call: patch(`{"processingType":""}`), msg: "processingType must not be empty"},
		{name: "processingType not a string", call: patch(`{"processingType":1}`), msg: "processingType must be a string; got 1"},
		{name: "status unknown", call: patch(`{"status":"done"}`), msg: `status must be one of new, in_progress, completed; got "done"`},
		{name: "status empty", call: patch(`{"status":""}`), msg: "status must not be empty"},
		{name: "remark not a string", call: patch(`{"remark":false}`), msg: "remark must be a string; got false"},
		{name: "stringVariables not an array", call: patch(`{"stringVariables":"x"}`), msg: `stringVariables must be an array of {key, value} objects; got "x"`},
		{name: "stringVariables key empty", call: patch(`{"stringVariables":[{"key":"","value":"v"}]}`), msg: "stringVariables[0].key must be a non-empty string"},
		{name: "translationGuidance a string", call: patch(`{"translationGuidance":"formal"}`), msg: `translationGuidance must be an object {common, byLang}; got "formal"`},
		{name: "translationGuidance empty", call: patch(`{"translationGuidance":{}}`), msg: "translationGuidance must have common or byLang (send null to remove the guidance)"},
		{name: "translationGuidance common not a string", call: patch(`{"translationGuidance":{"common":5}}`), msg: "translationGuidance.common must be a string"},
		{name: "translationGuidance byLang not an object", call: patch(`{"translationGuidance":{"byLang":["es-ES"]}}`), msg: `translationGuidance.byLang must be an object of strings keyed by target language; got ["es-ES"]`},
		{name: "translationGuidance byLang value not a string", call: patch(`{"translationGuidance":{"byLang":{"es-ES":1}}}`), msg: "translationGuidance.byLang.es-ES must be a string"},
		{name: "translationGuidance byLang value null", call: patch(`{"translationGuidance":{"byLang":{"es-ES":null}}}`), msg: "translationGuidance.byLang.es-ES must be a string"},
		{name: "byLang key not a stored target", call: patch(`{"translationGuidance":{"byLang":{"es-ES":"tu","ja-JP":"x"}}}`), msg: "translationGuidance.byLang: ja-JP is not a target language of the video (es-ES, fr-FR, de-DE)"},
		{name: "byLang key not a target sent in the same request", call: patch(`{"dstLangs":["ja-JP"],"translationGuidance":{"byLang":{"es-ES":"tu"}}}`), msg: "translationGuidance.byLang: es-ES is not a target language of the video (ja-JP)"},
		{name: "translationGuidance with an empty byLang", call: patch(`{"translationGuidance":{"byLang":{}}}`), msg: "translationGuidance must have common or byLang (send null to remove the guidance)"},
		{name: "byLang key without region", call: patch(`{"translationGuidance":{"byLang":{"es":"tu"}}}`), msg: "translationGuidance.byLang: es is not a target language of the video (es-ES, fr-FR, de-DE)"},
	}
	for i := range cases {
		cases[i].status = http.StatusBadRequest
	}
	cases = append(cases,
		errCase{name: "unknown video", call: call{method: "PATCH", path: updateVideoPath(prAcmeSummer, unknownID), key: keyAcme, body: `{"name":"x"}`}, status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		errCase{name: "unknown project", call: call{method: "PATCH", path: updateVideoPath(unknownID, viSummerSocial), key: keyAcme, body: `{"name":"x"}`}, status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		errCase{name: "video of another project", call: call{method: "PATCH", path: updateVideoPath(prAcmeTutorials, viSummerSocial), key: keyAcme, body: `{"name":"x"}`}, status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		errCase{name: "unknown video with no field", call: call{method: "PATCH", path: updateVideoPath(prAcmeSummer, unknownID), key: keyAcme, body: `{}`}, status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		errCase{name: "another company's video", call: call{method: "PATCH", path: updateVideoPath(prGlobexNight, viGlobexEp1), key: keyAcme, body: `{"name":"x"}`}, status: http.StatusBadRequest, msg: sim.MsgStudioDenied},
	)
	runErrors(t, e, cases)
	v := e.ok(call{method: "GET", path: videoPath(prAcmeSummer, viSummerSocial), key: keyAcme})
	assert.Equal(t, "Social cutdown 15s", v["name"], "a refused update changes nothing")
	assert.Equal(t, []any{"es-ES", "fr-FR", "de-DE"}, v["dstLangs"])
}

func TestUpdateVideo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withPublicURL)
	path := updateVideoPath(prAcmeSummer, viSummerHero)
	get := func() map[string]any {
		return e.ok(call{method: "GET", path: videoPath(prAcmeSummer, viSummerHero), key: keyAcme})
	}
	before := get()

	e.advance(5 * time.Minute)
	r := e.do(call{method: "PATCH", path: path, key: keyAcme, body: `{"name":"New video name","dstLangs":["en","fr"],"processingType":"standard","status":"in_progress",` +
		`"remark":"Updated video description","stringVariables":[{"key":"campaignId","value":"SUM25-HERO-v2"}],` +
		`"translationGuidance":{"common":"Keep Acme Fizz","byLang":{"fr":"Vous"}}}`})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	golden(t, "video_update", r.body)
	u := r.json(t)
	assert.Equal(t, map[string]any{"common": "Keep Acme Fizz", "byLang": map[string]any{"fr": "Vous"}}, u["translationGuidance"])
	assert.Equal(t, "2026-02-04T12:05:00.000Z", u["updatedAt"])
	assert.Equal(t, before["createdAt"], u["createdAt"])
	assert.Equal(t, before["srcLang"], u["srcLang"])
	assert.Equal(t, before["videoDuration"], u["videoDuration"])
	g := get()
	assert.NotContains(t, g, "translationGuidance")
	delete(u, "translationGuidance")
	assert.Equal(t, u, g, "the update response is the Get shape plus the guidance")

	for _, tc := range []struct {
		name, body string
		check      func(t *testing.T, v map[string]any)
	}{
		{"stringVariables replace the whole array", `{"stringVariables":[{"key":"a","value":"1"},{"key":"b","value":""}]}`, func(t *testing.T, v map[string]any) {
			assert.Equal(t, []any{map[string]any{"key": "a", "value": "1"}, map[string]any{"key": "b", "value": ""}}, v["stringVariables"])
		}},
		{"stringVariables empty array", `{"stringVariables":[]}`, func(t *testing.T, v map[string]any) {
			assert.Equal(t, []any{}, v["stringVariables"])
		}},
		{"stringVariables null clears", `{"stringVariables":null}`, func(t *testing.T, v map[string]any) {
			assert.Contains(t, v, "stringVariables")
			assert.Nil(t, v["stringVariables"])
		}},
		{"guidance checked against stored targets", `{"translationGuidance":{"byLang":{"en":"x","fr":"y"}}}`, func(t *testing.T, v map[string]any) {
			assert.Equal(t, map[string]any{"byLang": map[string]any{"en": "x", "fr": "y"}}, v["translationGuidance"])
		}},
		{"guidance checked against targets sent with it", `{"dstLangs":["ja-JP"],"translationGuidance":{"byLang":{"ja-JP":"keigo"}}}`, func(t *testing.T, v map[string]any) {
			assert.Equal(t, []any{"ja-JP"}, v["dstLangs"])
			assert.Equal(t, map[string]any{"byLang": map[string]any{"ja-JP": "keigo"}}, v["translationGuidance"])
		}},
		{"guidance replaced, not merged", `{"translationGuidance":{"common":"Only this"}}`, func(t *testing.T, v map[string]any) {
			assert.Equal(t, map[string]any{"common": "Only this"}, v["translationGuidance"])
		}},
		{"guidance kept when not sent", `{"remark":"r"}`, func(t *testing.T, v map[string]any) {
			assert.Equal(t, map[string]any{"common": "Only this"}, v["translationGuidance"])
			assert.Equal(t, "r", v["remark"])
		}},
		{"guidance null removes", `{"translationGuidance":null}`, func(t *testing.T, v map[string]any) {
			assert.Contains(t, v, "translationGuidance")
			assert.Nil(t, v["translationGuidance"])
		}},
		{"remark empty string", `{"remark":""}`, func(t *testing.T, v map[string]any) {
			assert.Equal(t, "", v["remark"])
		}},
		{"unknown fields beside a valid one ignored", `{"name":"N","workflowType":"x"}`, func(t *testing.T, v map[string]any) {
			assert.Equal(t, "N", v["name"])
			assert.Equal(t, "standard", v["processingType"])
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := e.ok(call{method: "PATCH", path: path, key: keyAcme, body: tc.body})
			tc.check(t, v)
			g := get()
			for _, k := range []string{"stringVariables", "dstLangs", "remark", "name"} {
				assert.Equal(t, v[k], g[k], "%s stored", k)
			}
		})
	}

	t.Run("a status written by the client stops the lifecycle", func(t *testing.T) {
		src := e.readyArtifact(keyAcme, "video")
		id := e.video(keyAcme, prAcmeSummer, src)
		v := e.ok(call{method: "PATCH", path: updateVideoPath(prAcmeSummer, id), key: keyAcme, body: `{"status":"new"}`})
		assert.Equal(t, "new", v["status"])
		e.advance(24 * time.Hour)
		assert.Equal(t, "new", e.ok(call{method: "GET", path: videoPath(prAcmeSummer, id), key: keyAcme})["status"])

		other := e.video(keyAcme, prAcmeSummer, src)
		e.ok(call{method: "PATCH", path: updateVideoPath(prAcmeSummer, other), key: keyAcme, body: `{"remark":"still automatic"}`})
		e.advance(time.Minute)
		assert.Equal(t, "in_progress", e.ok(call{method: "GET", path: videoPath(prAcmeSummer, other), key: keyAcme})["status"], "other fields keep the lifecycle")
	})
}

func TestUpdateVideoTargetsKeepGuidanceConsistent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	// The fixture video has guidance for es-ES and fr-FR: dropping those
	// targets without sending new guidance is refused.
	r := e.do(call{method: "PATCH", path: updateVideoPath(prAcmeSummer, viSummerHero), key: keyAcme, body: `{"dstLangs":["ja-JP"]}`})
	assertError(t, r, http.StatusBadRequest, "dstLangs: the video's translationGuidance.byLang has entries for es-ES, fr-FR, which would no longer be target languages; send translationGuidance in the same request (or null to remove it)")
	// With the guidance in the same request, it goes through.
	v := e.ok(call{method: "PATCH", path: updateVideoPath(prAcmeSummer, viSummerHero), key: keyAcme, body: `{"dstLangs":["ja-JP"],"translationGuidance":{"byLang":{"ja-JP":"丁寧語"}}}`})
	assert.Equal(t, []any{"ja-JP"}, v["dstLangs"])
	assert.Equal(t, map[string]any{"byLang": map[string]any{"ja-JP": "丁寧語"}}, v["translationGuidance"])
}

func TestUpdateVideoLaxEnums(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *app.Config) { c.StudioLaxEnums = true })
	v := e.ok(call{method: "PATCH", path: updateVideoPath(prAcmeSummer, viSummerSocial), key: keyAcme, body: `{"status":"qa_review","processingType":"lipsync"}`})
	assert.Equal(t, "qa_review", v["status"])
	assert.Equal(t, "lipsync", v["processingType"])
	assertError(t, e.do(call{method: "PATCH", path: updateVideoPath(prAcmeSummer, viSummerSocial), key: keyAcme, body: `{"status":""}`}),
		http.StatusBadRequest, "status must not be empty")
}
