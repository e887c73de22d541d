package platform_test

import (
	"encoding/binary"
	"net/http"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim/platform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDocsExampleFlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(call{method: "POST", path: "/api/v1/projects", key: "dubsim-subscription", body: docsExample})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	golden(t, "create_project", r.body)
	m := r.json(t)
	assert.Equal(t, float64(10), m["cost_minutes"], "the docs' example: 10 minutes")
	assert.Equal(t, float64(90), m["balance_minutes"], "the docs' example: 90 left of 100")
	id := m["project_id"].(string)

	r = e.do(call{method: "GET", path: "/api/v1/projects/" + id, key: "dubsim-subscription"})
	require.Equal(t, http.StatusOK, r.status)
	golden(t, "project_in_progress", r.body)

	e.advance(3600)
	r = e.do(call{method: "GET", path: "/api/v1/projects/" + id, key: "dubsim-subscription"})
	require.Equal(t, http.StatusOK, r.status)
	golden(t, "project_ready", r.body)
	m = r.json(t)
	for _, s := range m["output_target_speakers"].([]any) {
		assert.Equal(t, "soundalike", s.(map[string]any)["voice_key"], "use_soundalike_voices")
	}

	r = e.do(call{method: "GET", path: "/api/v1/balance", key: "dubsim-subscription"})
	assert.JSONEq(t, `{"balance_minutes":90}`, string(r.body))
}

func TestFieldsByStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	common := []string{"name", "source_lang", "target_lang", "mixing_mode", "cost_minutes", "created_date", "status"}
	want := map[string][]string{
		"in_progress": append(common, "estimated_completion_date"),
		"ready":       append(common, "completion_date", "output_video_url", "output_tts_audio_url", "output_source_script", "output_target_script", "output_target_speakers"),
		"error":       append(common, "error_message"),
	}
	ok := e.create("dubsim-enterprise", `{"source_lang":"en","target_lang":"de-DE","source_video_url":"https://cdn.test/a.mp4"}`)
	bad := e.create("dubsim-enterprise", `{"source_lang":"en","target_lang":"de-DE","source_video_url":"https://media.dubsim.test/fail.mp4"}`)
	check := func(id, status string) {
		r := e.do(call{method: "GET", path: "/api/v1/projects/" + id, key: "dubsim-enterprise"})
		require.Equal(t, http.StatusOK, r.status)
		m := r.json(t)
		assert.Equal(t, status, m["status"])
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		assert.ElementsMatch(t, want[status], keys, "exactly the documented fields for %s", status)
	}
	check(ok, "in_progress")
	check(bad, "in_progress")
	e.advance(24 * 3600)
	check(ok, "ready")
	check(bad, "error")
	r := e.do(call{method: "GET", path: "/api/v1/projects/" + bad, key: "dubsim-enterprise"})
	golden(t, "project_error", r.body)
}

func TestCreateProjectValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := map[string]string{"source_lang": `"en"`, "target_lang": `"fr-FR"`, "source_video_url": `"https://cdn.test/v.mp4"`}
	body := func(extra ...string) string {
		fields := map[string]string{}
		for k, v := range base {
			fields[k] = v
		}
		for i := 0; i+1 < len(extra); i += 2 {
			if extra[i+1] == "" {
				delete(fields, extra[i])
			} else {
				fields[extra[i]] = extra[i+1]
			}
		}
		var parts []string
		for k, v := range fields {
			parts = append(parts, `"`+k+`":`+v)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	tests := []struct {
		name   string
		key    string
		body   string
		ctype  string
		status int
		errTyp string
		msg    string
	}{
		{"docs example error: source_lang is required", "dubsim-pro", body("source_lang", ""), "", 400, "ValidationError", "source_lang is required"},
		{"target_lang required", "dubsim-pro", body("target_lang", ""), "", 400, "ValidationError", "target_lang is required"},
		{"source_video_url required", "dubsim-pro", body("source_video_url", ""), "", 400, "ValidationError", "source_video_url is required"},
		{"source_lang with locale", "dubsim-pro", body("source_lang", `"en-US"`), "", 400, "ValidationError",
			`source_lang "en-US" is not supported (source languages have no locale: did you mean "en"?); use a code from GET /api/v1/options`},
		{"unknown source_lang", "dubsim-pro", body("source_lang", `"xx"`), "", 400, "ValidationError", `source_lang "xx" is not supported; use a code from GET /api/v1/options`},
		{"target_lang without locale", "dubsim-pro", body("target_lang", `"fr"`), "", 400, "ValidationError",
			`target_lang "fr" is not supported (target languages need a locale, such as "fr-BE"); use a code from GET /api/v1/options`},
		{"target_lang wrong case", "dubsim-pro", body("target_lang", `"fr-fr"`), "", 400, "ValidationError", `target_lang "fr-fr" is not supported; use a code from GET /api/v1/options`},
		{"source_lang not a string", "dubsim-pro", body("source_lang", `5`), "", 400, "ValidationError", "source_lang must be a string; got number"},
		{"url not http", "dubsim-pro", body("source_video_url", `"ftp://x/v.mp4"`), "", 400, "ValidationError", `source_video_url must be an absolute http or https URL; got "ftp://x/v.mp4"`},
		{"url relative", "dubsim-pro", body("source_video_url", `"/v.mp4"`), "", 400, "ValidationError", `source_video_url must be an absolute http or https URL; got "/v.mp4"`},
		{"name at the limit", "dubsim-pro", body("name", `"`+strings.Repeat("é", 500)+`"`), "", 200, "", ""},
		{"name over the limit", "dubsim-pro", body("name", `"`+strings.Repeat("é", 501)+`"`), "", 400, "ValidationError", "name must be at most 500 characters; got 501"},
		{"url at the limit", "dubsim-pro", body("source_video_url", `"https://cdn.test/`+strings.Repeat("v", 8192-21)+`.mp4"`), "", 200, "", ""},
		{"url over the limit", "dubsim-pro", body("source_video_url", `"https://cdn.test/`+strings.Repeat("v", 8192-20)+`.mp4"`), "", 400, "ValidationError",
			"source_video_url must be at most 8192 bytes; got 8193"},
		{"long value quoted cut", "dubsim-pro", body("mixing_mode", `"`+strings.Repeat("d", 1000)+`"`), "", 400, "ValidationError",
			`mixing_mode must be one of voiceover_only, voiceover_with_original_track, voiceover_without_original_voice; got "` + strings.Repeat("d", 197) + `..."`},
		{"mixing_mode enum", "dubsim-pro", body("mixing_mode", `"dub"`), "", 400, "ValidationError",
			`mixing_mode must be one of voiceover_only, voiceover_with_original_track, voiceover_without_original_voice; got "dub"`},
		{"tts_volume enum", "dubsim-pro", body("tts_volume", `"max"`), "", 400, "ValidationError", `tts_volume must be one of very_quiet, quieter, normal, louder, very_loud; got "max"`},
		{"boolean type", "dubsim-pro", body("use_soundalike_voices", `"yes"`), "", 400, "ValidationError", "use_soundalike_voices must be a boolean; got string"},
		{"emotional transfer language", "dubsim-pro", body("target_lang", `"ja-JP"`, "use_emotional_transfer", "true"), "", 400, "ValidationError",
			"use_emotional_transfer supports only English, Spanish, French, German, Italian and Portuguese targets; got ja-JP"},
		{"script and content together", "dubsim-pro", body("source_script_content", `"Hello"`, "source_script", `[{"start_ms":0,"end_ms":10,"text":"a"}]`), "", 400, "ValidationError",
			"source_script cannot be combined with source_script_content"},
		{"script segment timing", "dubsim-pro", body("source_script", `[{"start_ms":10,"end_ms":10,"text":"a"}]`), "", 400, "ValidationError",
			"Invalid timing: start_ms must be less than end_ms"},
		{"script segment text empty", "dubsim-pro", body("source_script", `[{"start_ms":0,"end_ms":10,"text":" "}]`), "", 400, "ValidationError", "source_script[0].text must not be empty"},
		{"script segment start missing", "dubsim-pro", body("source_script", `[{"end_ms":10,"text":"a"}]`), "", 400, "ValidationError", "source_script[0].start_ms is required"},
		{"script segment negative", "dubsim-pro", body("source_script", `[{"start_ms":-1,"end_ms":10,"text":"a"}]`), "", 400, "ValidationError", "source_script[0].start_ms must be at least 0; got -1"},
		{"script segment not integer", "dubsim-pro", body("source_script", `[{"start_ms":1.5,"end_ms":10,"text":"a"}]`), "", 400, "ValidationError", "source_script.start_ms must be an integer; got number 1.5"},
		{"script empty", "dubsim-pro", body("source_script", `[]`), "", 400, "ValidationError", "source_script must contain at least 1 item"},
		{"script overlap", "dubsim-pro", body("source_script", `[{"start_ms":0,"end_ms":100,"text":"a"},{"start_ms":50,"end_ms":200,"text":"b"}]`), "", 400, "ValidationError",
			"source_script[1] starts at 50 ms, before the previous segment ends (100 ms): segments must be in order and must not overlap"},
		{"content without text", "dubsim-pro", body("source_script_content", `"1\n00:00:01,000 --> 00:00:02,000\n\n"`), "", 400, "ValidationError", "source_script_content contains no text"},
		{"content blank", "dubsim-pro", body("source_script_content", `""`), "", 400, "ValidationError", "source_script_content must not be empty"},
		{"glossary not TSV", "dubsim-pro", body("glossary_content", `"hello\tbonjour\nworld monde"`), "", 400, "ValidationError",
			"glossary_content line 2 is not in TSV format: expected <source term><TAB><target term>"},
		{"soundalike without subscription", "dubsim-free", body("use_soundalike_voices", "true"), "", 402, "PaymentRequiredError", "Soundalike voices require an active subscription"},
		{"script content needs pro", "dubsim-subscription", body("source_script_content", `"Hello there."`), "", 402, "PaymentRequiredError", "source_script_content requires a Pro subscription or higher"},
		{"glossary needs pro", "dubsim-subscription", body("glossary_content", `"a\tb"`), "", 402, "PaymentRequiredError", "glossary_content requires a Pro subscription or higher"},
		{"insufficient balance (docs example)", "dubsim-broke", body(), "", 402, "PaymentRequiredError", "Insufficient balance for this project"},
		{"unreadable video", "dubsim-pro", body("source_video_url", `"https://media.dubsim.test/unreadable.mp4"`), "", 400, "VideoInfoError",
			"Unable to read video info: the file at this URL is not a video"},
		{"malformed JSON", "dubsim-pro", `{"source_lang":`, "", 400, "ValidationError", "Malformed JSON body: the JSON ends early: the body stops before the value is complete (truncated?)"},
		{"syntax error", "dubsim-pro", `{"source_lang" "en"}`, "", 400, "ValidationError", "Malformed JSON body: invalid character '\"' after object key (at byte 16)"},
		{"array body", "dubsim-pro", `[1,2]`, "", 400, "ValidationError", "Request body must be a JSON object"},
		{"trailing data", "dubsim-pro", body() + `{}`, "", 400, "ValidationError", "Malformed JSON body: unexpected data after the JSON object"},
		{"no content type", "dubsim-pro", body(), "-", 400, "ValidationError", "Content-Type must be application/json for a request with a JSON body"},
		{"form content type", "dubsim-pro", body(), "application/x-www-form-urlencoded", 400, "ValidationError", "Content-Type must be application/json for a request with a JSON body"},
		{"json with charset", "dubsim-pro", body(), "application/json; charset=utf-8", 200, "", ""},
		{"empty body", "dubsim-pro", "", "", 400, "ValidationError", "Request body must be a JSON object"},
		{"unknown fields are ignored", "dubsim-pro", body("sourceLang", `"en"`), "", 200, "", ""},
		{"missing key", "", body(), "", 401, "UnauthorizedError", "Invalid API key"},
		{"unknown key", "nope", body(), "", 401, "UnauthorizedError", "Invalid API key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := call{method: "POST", path: "/api/v1/projects", key: tc.key, body: tc.body}
			switch tc.ctype {
			case "":
			case "-":
				c.header = map[string]string{"Content-Type": ""}
			default:
				c.header = map[string]string{"Content-Type": tc.ctype}
			}
			r := e.do(c)
			require.Equal(t, tc.status, r.status, "%s", r.body)
			assert.Equal(t, "application/json; charset=utf-8", r.header.Get("Content-Type"))
			if tc.errTyp == "" {
				assert.Contains(t, r.json(t), "project_id")
				return
			}
			assert.Equal(t, map[string]any{"error": tc.errTyp, "message": tc.msg}, r.json(t))
		})
	}
}

func TestUnknownFieldsRejectMode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *platform.Config) { c.RejectUnknownFields = true })
	r := e.do(call{method: "POST", path: "/api/v1/projects", key: "dubsim-pro", body: `{"sourceLang":"en"}`})
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.JSONEq(t, `{"error":"ValidationError","message":"Unknown field \"sourceLang\""}`, string(r.body))
}

func TestCreateStatus201(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *platform.Config) { c.CreateStatus = http.StatusCreated })
	r := e.do(call{method: "POST", path: "/api/v1/projects", key: "dubsim-pro", body: docsExample})
	assert.Equal(t, http.StatusCreated, r.status)
}

func TestAuth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name, header, hint string
	}{
		{"missing", "", "missing Authorization header; send Authorization: Bearer <API_KEY>"},
		{"basic scheme", "Basic Zm9vOmJhcg==", "Authorization header must use the Bearer scheme"},
		{"no scheme", "dubsim-pro", "Authorization header must use the Bearer scheme"},
		{"empty token", "Bearer  ", "empty bearer token"},
		{"unknown key", "Bearer sk-unknown", "unknown API key"},
	}
	for _, path := range []string{"/api/v1/balance", "/api/v1/options", "/api/v1/voices", "/api/v1/projects/123456789"} {
		for _, tc := range tests {
			t.Run(path+" "+tc.name, func(t *testing.T) {
				t.Parallel()
				r := e.do(call{method: "GET", path: path, header: map[string]string{"Authorization": tc.header}})
				assert.Equal(t, http.StatusUnauthorized, r.status)
				assert.JSONEq(t, `{"error":"UnauthorizedError","message":"Invalid API key"}`, string(r.body))
				assert.Equal(t, tc.hint, r.header.Get(platform.HeaderAuthHint))
			})
		}
	}
	r := e.do(call{method: "GET", path: "/api/v1/balance", header: map[string]string{"Authorization": "bearer dubsim-pro"}})
	assert.Equal(t, http.StatusOK, r.status, "the scheme is case-insensitive")
}

func TestCatalogues(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(call{method: "GET", path: "/api/v1/options", key: "dubsim-free"})
	require.Equal(t, http.StatusOK, r.status)
	golden(t, "options", r.body)
	m := r.json(t)
	assert.Len(t, m["source_langs"], 16)
	assert.Len(t, m["target_langs"], 121)
	targets := map[string]bool{}
	for _, l := range m["target_langs"].([]any) {
		targets[l.(string)] = true
	}

	r = e.do(call{method: "GET", path: "/api/v1/voices", key: "dubsim-free"})
	require.Equal(t, http.StatusOK, r.status)
	voices := r.json(t)["voices"].(map[string]any)
	assert.Len(t, voices, len(targets), "every target language has voices")
	for lang, vs := range voices {
		assert.True(t, targets[lang], lang)
		for _, v := range vs.([]any) {
			entry := v.(map[string]any)
			assert.Len(t, entry, 3)
			assert.Regexp(t, `^[0-9a-f]{6}:`+lang+`-[A-Za-z]+$`, entry["voice_key"])
			assert.Contains(t, []any{"masculine", "feminine"}, entry["style"])
			assert.NotEmpty(t, entry["name"])
		}
	}
}

func TestDeleteProject(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.create("dubsim-pro", docsExample)
	r := e.do(call{method: "DELETE", path: "/api/v1/projects/" + id, key: "dubsim-pro"})
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.JSONEq(t, `{"error":"ValidationError","message":"Cannot delete project while processing is in progress"}`, string(r.body))

	r = e.do(call{method: "DELETE", path: "/api/v1/projects/" + id, key: "dubsim-enterprise"})
	assert.Equal(t, http.StatusNotFound, r.status, "another account's project")
	assert.JSONEq(t, `{"error":"NotFoundError","message":"Project not found"}`, string(r.body))

	e.advance(3600)
	get := e.do(call{method: "GET", path: "/api/v1/projects/" + id, key: "dubsim-pro"}).json(t)
	audioURL := strings.TrimPrefix(get["output_tts_audio_url"].(string), "http://example.com")
	videoURL := strings.TrimPrefix(get["output_video_url"].(string), "http://example.com")
	require.Equal(t, http.StatusOK, e.do(call{method: "HEAD", path: audioURL}).status)

	r = e.do(call{method: "DELETE", path: "/api/v1/projects/" + id, key: "dubsim-pro"})
	assert.Equal(t, http.StatusOK, r.status)
	assert.JSONEq(t, `{"success":true}`, string(r.body))
	for _, c := range []call{
		{method: "GET", path: "/api/v1/projects/" + id, key: "dubsim-pro"},
		{method: "DELETE", path: "/api/v1/projects/" + id, key: "dubsim-pro"},
	} {
		r = e.do(c)
		assert.Equal(t, http.StatusNotFound, r.status)
		assert.JSONEq(t, `{"error":"NotFoundError","message":"Project not found"}`, string(r.body))
	}
	for _, u := range []string{audioURL, videoURL} {
		assert.Equal(t, http.StatusNotFound, e.do(call{method: "GET", path: u}).status, "download URLs stop working: %s", u)
	}
	r = e.do(call{method: "GET", path: "/api/v1/balance", key: "dubsim-pro"})
	assert.JSONEq(t, `{"balance_minutes":590}`, string(r.body), "no refund on delete")
}

func TestOutputFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.create("dubsim-enterprise", `{"source_lang":"en","target_lang":"es-ES","source_video_url":"https://media.dubsim.test/short.mp4"}`)
	e.advance(3600)
	get := e.do(call{method: "GET", path: "/api/v1/projects/" + id, key: "dubsim-enterprise",
		header: map[string]string{"X-Forwarded-Proto": "https", "Host": "dubsim.internal:9000"}}).json(t)
	audioURL := get["output_tts_audio_url"].(string)
	videoURL := get["output_video_url"].(string)
	assert.Regexp(t, `^https://dubsim\.internal:9000/files/projects/`+id+`/1/dubbed_audio\.wav\?signed=[0-9a-f]{32}$`, audioURL)
	assert.Regexp(t, `^https://dubsim\.internal:9000/files/projects/`+id+`/1/dubbed_video\.mov\?signed=[0-9a-f]{32}$`, videoURL)
	audioPath := strings.TrimPrefix(audioURL, "https://dubsim.internal:9000")
	_, sig, _ := strings.Cut(audioPath, "?")
	assert.Equal(t, sig, videoURL[strings.Index(videoURL, "?")+1:], "one signature per generation")

	r := e.do(call{method: "GET", path: audioPath})
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "audio/wav", r.header.Get("Content-Type"))
	require.Greater(t, len(r.body), 44)
	assert.Equal(t, "RIFF", string(r.body[0:4]))
	assert.Equal(t, "WAVE", string(r.body[8:12]))
	rate := binary.LittleEndian.Uint32(r.body[24:28])
	dataLen := binary.LittleEndian.Uint32(r.body[40:44])
	assert.Equal(t, uint32(len(r.body)-44), dataLen)
	assert.InDelta(t, 12.0, float64(dataLen)/2/float64(rate), 0.01, "a WAV as long as the source (12 s)")

	r = e.do(call{method: "GET", path: audioPath, header: map[string]string{"Range": "bytes=0-99"}})
	assert.Equal(t, http.StatusPartialContent, r.status)
	assert.Len(t, r.body, 100)

	r = e.do(call{method: "GET", path: strings.TrimPrefix(videoURL, "https://dubsim.internal:9000")})
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "video/quicktime", r.header.Get("Content-Type"))
	assert.Equal(t, "ftyp", string(r.body[4:8]))

	for _, p := range []string{
		"/files/projects/" + id + "/2/dubbed_audio.wav", // a generation that does not exist yet
		"/files/projects/" + id + "/0/dubbed_audio.wav",
		"/files/projects/" + id + "/x/dubbed_audio.wav",
		"/files/projects/" + id + "/1/other.wav",
		"/files/projects/999999999/1/dubbed_audio.wav",
		"/files/projects/" + id + "/1/dubbed_audio.wav",                     // no signature
		"/files/projects/" + id + "/1/dubbed_audio.wav?signed=",             // an empty one
		"/files/projects/" + id + "/1/dubbed_audio.wav?" + sig[:len(sig)-1], // a wrong one
		"/files/projects/" + id + "/2/dubbed_audio.wav?" + sig,              // another generation's
	} {
		r = e.do(call{method: "GET", path: p})
		assert.Equal(t, http.StatusNotFound, r.status, p)
		assert.JSONEq(t, `{"error":"NotFoundError","message":"File not found"}`, string(r.body))
	}
}

func TestRoutesAndMethods(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(call{method: "GET", path: "/api/v1/nothing", key: "dubsim-pro"})
	assert.Equal(t, http.StatusNotFound, r.status)
	assert.JSONEq(t, `{"error":"NotFoundError","message":"No route GET /api/v1/nothing; see the endpoint list in the dubsim README"}`, string(r.body))
	r = e.do(call{method: "PUT", path: "/api/v1/balance", key: "dubsim-pro"})
	assert.Equal(t, http.StatusMethodNotAllowed, r.status)
	assert.JSONEq(t, `{"error":"MethodNotAllowedError","message":"Method PUT is not allowed on /api/v1/balance"}`, string(r.body))
	r = e.do(call{method: "GET", path: "/api/v1/projects/123", key: "dubsim-pro"})
	assert.JSONEq(t, `{"error":"NotFoundError","message":"Project not found"}`, string(r.body))
}
