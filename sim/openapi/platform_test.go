package openapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/audio"
	"github.com/dubsim/dubsim/sim/openapi"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The contract tests of the platform document: every documented response of
// every platform operation, produced by real requests. Identifiers carry the
// prefix "pl" because the studio and control tests share the package.

// Fixture API keys (fixtures/accounts.json).
const (
	plFree  = "dubsim-free"         // plan none: 30 minutes, no re-translation, no cloning
	plSub   = "dubsim-subscription" // subscription: 100 minutes
	plPro   = "dubsim-pro"          // pro: 600 minutes, cloning, no re-translation
	plEnt   = "dubsim-enterprise"   // enterprise: re-translation and cloning
	plBroke = "dubsim-broke"        // enterprise with a balance of 0
)

// Source videos of fixtures/media.json.
const (
	plShort   = "https://media.dubsim.test/short.mp4"      // 12 s: 1 minute, ready 66 s after creation
	plFail    = "https://media.dubsim.test/fail.mp4"       // 240 s: ends in error 180 s after creation
	plUnread  = "https://media.dubsim.test/unreadable.mp4" // refused: VideoInfoError
	plMissing = "123456789"                                // a project id no test creates
)

// plDocsExample is the provider's example request: 600 s, so 10 minutes.
const plDocsExample = `{"name":"My Project","source_lang":"en","target_lang":"fr-FR","source_video_url":"https://example.com/video.mp4","use_soundalike_voices":true,"mixing_mode":"voiceover_with_original_track"}`

// plRetranslation is a valid re-translation body for a fr-FR project.
const plRetranslation = `{"target_script":[{"start_ms":100,"end_ms":1544,"text":"Au revoir le monde!","speaker_id":1}],"target_speakers":[{"speaker_id":1,"voice_key":"53f154:fr-FR-DeniseNeural","style":"feminine"}],"mixing_mode":"voiceover_only"}`

func pl(method, path, key, body string) req {
	return req{Interface: openapi.Platform, Method: method, Path: path, Key: key, JSON: body}
}

func plProjectBody(video string) string {
	return fmt.Sprintf(`{"name":"contract","source_lang":"en","target_lang":"fr-FR","source_video_url":%q}`, video)
}

// plCreate creates a project and returns its id.
func plCreate(e *env, key, video string) string {
	e.t.Helper()
	r := e.do(pl("POST", "/api/v1/projects", key, plProjectBody(video)))
	require.Equal(e.t, http.StatusOK, r.Status, "%s", r.Body)
	id, _ := r.JSON["project_id"].(string)
	require.NotEmpty(e.t, id)
	return id
}

// plAccount creates an account through the control API and returns its key.
func plAccount(e *env, body string) string {
	e.t.Helper()
	r := e.do(req{Interface: openapi.Control, Method: "POST", Path: "/_sim/accounts", JSON: body})
	require.Equal(e.t, http.StatusCreated, r.Status, "%s", r.Body)
	key, _ := r.JSON["api_key"].(string)
	require.NotEmpty(e.t, key)
	return key
}

// plExpect asserts the status and, for an error, the envelope's name.
func plExpect(t *testing.T, r resp, status int, errName string) {
	t.Helper()
	assert.Equal(t, status, r.Status, "%s", r.Body)
	if errName != "" {
		assert.Equal(t, errName, r.JSON["error"], "%s", r.Body)
	}
}

func plWAV(t *testing.T, d time.Duration) []byte {
	t.Helper()
	b, err := io.ReadAll(audio.NewWAVReader(audio.Track{SampleRate: 22050, Duration: d, Segments: []audio.Segment{
		{Start: 0, End: d, Text: "This is my voice.", Voice: audio.Voice{PitchHz: 180, Seed: 1}},
	}}))
	require.NoError(t, err)
	return b
}

// plForm is a multipart voice cloning body.
type plForm struct {
	fields [][2]string
	files  [][]byte
}

func (f plForm) encode(t *testing.T) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, kv := range f.fields {
		require.NoError(t, mw.WriteField(kv[0], kv[1]))
	}
	for i, data := range f.files {
		w, err := mw.CreateFormFile("reference_audio_files", fmt.Sprintf("voice_%d.wav", i+1))
		require.NoError(t, err)
		_, err = w.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	return mw.FormDataContentType(), buf.Bytes()
}

func plSynth(t *testing.T, key string, f plForm, header map[string]string) req {
	t.Helper()
	ct, body := f.encode(t)
	h := map[string]string{"Content-Type": ct}
	for k, v := range header {
		h[k] = v
	}
	return req{Interface: openapi.Platform, Method: "POST", Path: "/api/v1/cloning/synthesize", Key: key, Body: body, Header: h}
}

func TestPlatformBalanceAndCatalogues(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	cases := []struct {
		name   string
		req    req
		status int
		check  func(t *testing.T, r resp)
	}{
		{"balance", pl("GET", "/api/v1/balance", plPro, ""), 200, func(t *testing.T, r resp) {
			assert.EqualValues(t, 600, r.JSON["balance_minutes"])
		}},
		{"balance of an empty account", pl("GET", "/api/v1/balance", plBroke, ""), 200, func(t *testing.T, r resp) {
			assert.EqualValues(t, 0, r.JSON["balance_minutes"])
		}},
		{"options", pl("GET", "/api/v1/options", plFree, ""), 200, func(t *testing.T, r resp) {
			assert.Contains(t, r.JSON["source_langs"], "en")
			assert.Contains(t, r.JSON["target_langs"], "fr-FR")
		}},
		{"voices", pl("GET", "/api/v1/voices", plFree, ""), 200, func(t *testing.T, r resp) {
			voices, _ := r.JSON["voices"].(map[string]any)
			assert.NotEmpty(t, voices["fr-FR"])
		}},
		{"balance without a key", pl("GET", "/api/v1/balance", "", ""), 401, func(t *testing.T, r resp) {
			assert.Equal(t, "missing Authorization header; send Authorization: Bearer <API_KEY>", r.Header.Get("X-Dubsim-Auth-Error"))
		}},
		{"options with another scheme", req{Interface: openapi.Platform, Method: "GET", Path: "/api/v1/options",
			Header: map[string]string{"Authorization": "Basic ZHVic2ltOnBybw=="}}, 401, func(t *testing.T, r resp) {
			assert.Equal(t, "Authorization header must use the Bearer scheme", r.Header.Get("X-Dubsim-Auth-Error"))
		}},
		{"voices with an unknown key", pl("GET", "/api/v1/voices", "no-such-key", ""), 401, func(t *testing.T, r resp) {
			assert.Equal(t, "unknown API key", r.Header.Get("X-Dubsim-Auth-Error"))
		}},
		{"balance with an empty bearer token", req{Interface: openapi.Platform, Method: "GET", Path: "/api/v1/balance",
			Header: map[string]string{"Authorization": "Bearer "}}, 401, func(t *testing.T, r resp) {
			assert.Equal(t, "empty bearer token", r.Header.Get("X-Dubsim-Auth-Error"))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.do(tc.req)
			assert.Equal(t, tc.status, r.Status, "%s", r.Body)
			if tc.status == 401 {
				assert.Equal(t, "UnauthorizedError", r.JSON["error"])
				assert.Equal(t, "Invalid API key", r.JSON["message"])
			}
			tc.check(t, r)
		})
	}
}

func TestPlatformCreateProject(t *testing.T) {
	t.Parallel()
	big := `{"name":"` + strings.Repeat("x", 10<<20) + `","source_lang":"en"}`
	cases := []struct {
		name    string
		req     req
		status  int
		errName string
		message string // the message, or a prefix of it ending in "…"
	}{
		{name: "the docs' example", req: pl("POST", "/api/v1/projects", plSub, plDocsExample), status: 200},
		{name: "every optional field", req: pl("POST", "/api/v1/projects", plPro, `{"name":"all","source_lang":"en","target_lang":"de-DE",
			"source_video_url":"https://media.dubsim.test/short.mp4","mixing_mode":"voiceover_only","use_emotional_transfer":true,
			"use_soundalike_voices":true,"source_script":[{"start_ms":0,"end_ms":1500,"text":"Hello there."},{"start_ms":2000,"end_ms":4000,"text":"General Kenobi."}],
			"use_fixed_timings":true,"glossary_content":"Hello\tHallo","tts_volume":"louder"}`), status: 200},
		{name: "missing source_lang", req: pl("POST", "/api/v1/projects", plPro, `{"target_lang":"fr-FR","source_video_url":"https://example.com/video.mp4"}`),
			status: 400, errName: "ValidationError", message: "source_lang is required"},
		{name: "target language without locale", req: pl("POST", "/api/v1/projects", plPro, `{"source_lang":"en","target_lang":"fr","source_video_url":"https://example.com/video.mp4"}`),
			status: 400, errName: "ValidationError", message: `target_lang "fr" is not supported…`},
		{name: "not an http URL", req: pl("POST", "/api/v1/projects", plPro, `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"ftp://example.com/v.mp4"}`),
			status: 400, errName: "ValidationError", message: "source_video_url must be an absolute http or https URL…"},
		{name: "unknown mixing mode", req: pl("POST", "/api/v1/projects", plPro, `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://example.com/video.mp4","mixing_mode":"loud"}`),
			status: 400, errName: "ValidationError", message: "mixing_mode must be one of…"},
		{name: "wrong type", req: pl("POST", "/api/v1/projects", plPro, `{"source_lang":1,"target_lang":"fr-FR","source_video_url":"https://example.com/video.mp4"}`),
			status: 400, errName: "ValidationError", message: "source_lang must be a string; got number"},
		{name: "script and script content", req: pl("POST", "/api/v1/projects", plPro, `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://example.com/video.mp4",
			"source_script":[{"start_ms":0,"end_ms":1000,"text":"Hi"}],"source_script_content":"Hi"}`),
			status: 400, errName: "ValidationError", message: sim.MsgScriptAndContent},
		{name: "overlapping source script", req: pl("POST", "/api/v1/projects", plPro, `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://example.com/video.mp4",
			"source_script":[{"start_ms":0,"end_ms":1000,"text":"Hi"},{"start_ms":500,"end_ms":1500,"text":"there"}]}`),
			status: 400, errName: "ValidationError", message: "source_script[1] starts at 500 ms…"},
		{name: "emotional transfer into Japanese", req: pl("POST", "/api/v1/projects", plPro, `{"source_lang":"en","target_lang":"ja-JP","source_video_url":"https://example.com/video.mp4","use_emotional_transfer":true}`),
			status: 400, errName: "ValidationError", message: "use_emotional_transfer supports only…"},
		{name: "glossary not TSV", req: pl("POST", "/api/v1/projects", plPro, `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://example.com/video.mp4","glossary_content":"no tab"}`),
			status: 400, errName: "ValidationError", message: "glossary_content line 1 is not in TSV format…"},
		{name: "malformed JSON", req: pl("POST", "/api/v1/projects", plPro, `{"source_lang":`),
			status: 400, errName: "ValidationError", message: "Malformed JSON body…"},
		{name: "not an object", req: pl("POST", "/api/v1/projects", plPro, `["en"]`),
			status: 400, errName: "ValidationError", message: sim.MsgBodyNotObject},
		{name: "not JSON content", req: req{Interface: openapi.Platform, Method: "POST", Path: "/api/v1/projects", Key: plPro,
			Body: []byte(plDocsExample), Header: map[string]string{"Content-Type": "text/plain"}},
			status: 400, errName: "ValidationError", message: sim.MsgContentType},
		{name: "unreadable video", req: pl("POST", "/api/v1/projects", plPro, plProjectBody(plUnread)),
			status: 400, errName: "VideoInfoError", message: "Unable to read video info…"},
		{name: "idempotency key too long", req: req{Interface: openapi.Platform, Method: "POST", Path: "/api/v1/projects", Key: plPro,
			JSON: plDocsExample, Header: map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}},
			status: 400, errName: "ValidationError", message: "Idempotency-Key must be at most 255 characters"},
		{name: "no key", req: pl("POST", "/api/v1/projects", "", plDocsExample), status: 401, errName: "UnauthorizedError", message: sim.MsgInvalidAPIKey},
		{name: "soundalike without a subscription", req: pl("POST", "/api/v1/projects", plFree, plDocsExample),
			status: 402, errName: "PaymentRequiredError", message: sim.MsgSoundalikeSubscription},
		{name: "emotional transfer without a subscription", req: pl("POST", "/api/v1/projects", plFree, `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://example.com/video.mp4","use_emotional_transfer":true}`),
			status: 402, errName: "PaymentRequiredError", message: sim.MsgEmotionalSubscription},
		{name: "source script below Pro", req: pl("POST", "/api/v1/projects", plSub, `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://example.com/video.mp4","source_script_content":"Hello."}`),
			status: 402, errName: "PaymentRequiredError", message: "source_script_content requires a Pro subscription or higher"},
		{name: "no balance", req: pl("POST", "/api/v1/projects", plBroke, plDocsExample),
			status: 402, errName: "PaymentRequiredError", message: sim.MsgInsufficientBalance},
		{name: "body over 10 MiB", req: pl("POST", "/api/v1/projects", plPro, big),
			status: 413, errName: "ValidationError", message: "Request body exceeds the limit of 10485760 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			r := e.do(tc.req)
			plExpect(t, r, tc.status, tc.errName)
			if tc.message != "" {
				msg, _ := r.JSON["message"].(string)
				if prefix, ok := strings.CutSuffix(tc.message, "…"); ok {
					assert.True(t, strings.HasPrefix(msg, prefix), "message %q, want prefix %q", msg, prefix)
				} else {
					assert.Equal(t, tc.message, msg)
				}
			}
			if tc.status == 200 {
				assert.Regexp(t, `^[1-9][0-9]{8}$`, r.JSON["project_id"])
				assert.EqualValues(t, 0, r.JSON["translations_count"])
			}
		})
	}
	t.Run("the docs' numbers", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil)
		r := e.do(pl("POST", "/api/v1/projects", plSub, plDocsExample))
		plExpect(t, r, 200, "")
		assert.EqualValues(t, 10, r.JSON["cost_minutes"])
		assert.EqualValues(t, 90, r.JSON["balance_minutes"])
		b := e.do(pl("GET", "/api/v1/balance", plSub, ""))
		assert.EqualValues(t, 90, b.JSON["balance_minutes"])
	})
}

// TestPlatformCreateStatus201 covers --create-status 201: Create Project and
// Create Re-translation answer 201; the validation stays 200.
func TestPlatformCreateStatus201(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *app.Config) { c.CreateStatus = http.StatusCreated })
	r := e.do(pl("POST", "/api/v1/projects", plEnt, plProjectBody(plShort)))
	plExpect(t, r, 201, "")
	id := r.JSON["project_id"].(string)
	e.advance(2 * time.Minute)
	v := e.do(pl("POST", "/api/v1/projects/"+id+"/validate-translation-request", plEnt, plRetranslation))
	plExpect(t, v, 200, "")
	rt := e.do(pl("POST", "/api/v1/projects/"+id+"/translations", plEnt, plRetranslation))
	plExpect(t, rt, 201, "")
	assert.EqualValues(t, 1, rt.JSON["translations_count"])
	assert.EqualValues(t, 0, rt.JSON["cost_minutes"])
}

// TestPlatformProjectLifecycle reads and deletes projects in each status.
func TestPlatformProjectLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ready := plCreate(e, plPro, plShort)
	failing := plCreate(e, plPro, plFail)

	r := e.do(pl("GET", "/api/v1/projects/"+ready, plPro, ""))
	plExpect(t, r, 200, "")
	assert.Equal(t, "in_progress", r.JSON["status"])
	assert.Contains(t, r.JSON, "estimated_completion_date")
	assert.NotContains(t, r.JSON, "output_video_url")
	assert.NotContains(t, r.JSON, "completion_date")

	r = e.do(pl("DELETE", "/api/v1/projects/"+ready, plPro, ""))
	plExpect(t, r, 400, "ValidationError")
	assert.Equal(t, sim.MsgDeleteInProgress, r.JSON["message"])

	e.advance(4 * time.Minute)

	r = e.do(pl("GET", "/api/v1/projects/"+ready, plPro, ""))
	plExpect(t, r, 200, "")
	assert.Equal(t, "ready", r.JSON["status"])
	for _, f := range []string{"completion_date", "output_video_url", "output_tts_audio_url", "output_source_script", "output_target_script", "output_target_speakers"} {
		assert.Contains(t, r.JSON, f)
	}
	assert.NotContains(t, r.JSON, "estimated_completion_date")
	assert.NotContains(t, r.JSON, "error_message")
	audioURL := r.JSON["output_tts_audio_url"].(string)
	assert.Regexp(t, "^"+regexp.QuoteMeta(fmt.Sprintf("%s/files/projects/%s/1/dubbed_audio.wav?signed=", e.url, ready))+"[0-9a-f]{32}$", audioURL)

	r = e.do(pl("GET", "/api/v1/projects/"+failing, plPro, ""))
	plExpect(t, r, 200, "")
	assert.Equal(t, "error", r.JSON["status"])
	assert.Equal(t, "Processing failed: the audio track could not be decoded", r.JSON["error_message"])
	assert.NotContains(t, r.JSON, "output_video_url")
	assert.NotContains(t, r.JSON, "estimated_completion_date")

	cases := []struct {
		name    string
		req     req
		status  int
		errName string
	}{
		{"another account's project", pl("GET", "/api/v1/projects/"+ready, plEnt, ""), 404, "NotFoundError"},
		{"unknown project", pl("GET", "/api/v1/projects/"+plMissing, plPro, ""), 404, "NotFoundError"},
		{"get without a key", pl("GET", "/api/v1/projects/"+ready, "", ""), 401, "UnauthorizedError"},
		{"delete another account's project", pl("DELETE", "/api/v1/projects/"+ready, plEnt, ""), 404, "NotFoundError"},
		{"delete an unknown project", pl("DELETE", "/api/v1/projects/"+plMissing, plPro, ""), 404, "NotFoundError"},
		{"delete without a key", pl("DELETE", "/api/v1/projects/"+ready, "", ""), 401, "UnauthorizedError"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.req)
			plExpect(t, r, tc.status, tc.errName)
			if tc.status == 404 {
				assert.Equal(t, sim.MsgProjectNotFound, r.JSON["message"])
			}
		})
	}

	for _, id := range []string{ready, failing} {
		r = e.do(pl("DELETE", "/api/v1/projects/"+id, plPro, ""))
		plExpect(t, r, 200, "")
		assert.Equal(t, true, r.JSON["success"])
		r = e.do(pl("GET", "/api/v1/projects/"+id, plPro, ""))
		plExpect(t, r, 404, "NotFoundError")
	}
	r = e.do(req{Interface: openapi.Platform, Method: "GET", Path: strings.TrimPrefix(audioURL, e.url)})
	plExpect(t, r, 404, "NotFoundError")
	assert.Equal(t, "File not found", r.JSON["message"])
	r = e.do(pl("GET", "/api/v1/balance", plPro, ""))
	assert.EqualValues(t, 599, r.JSON["balance_minutes"], "the failed project was refunded; delete refunds nothing")
}

func TestPlatformRetranslation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	plain := plAccount(e, `{"plan":"none","balance_minutes":100,"retranslation_enabled":true}`)
	ready := plCreate(e, plEnt, plShort)
	plainReady := plCreate(e, plain, plShort)
	e.advance(2 * time.Minute)
	busy := plCreate(e, plEnt, plShort)

	body := func(speakerVoice string, segments string) string {
		return `{"target_script":[` + segments + `],"target_speakers":[{"speaker_id":1,"voice_key":"` + speakerVoice + `","style":"feminine"}]}`
	}
	seg := `{"start_ms":100,"end_ms":1500,"text":"Bonjour","speaker_id":1}`
	denise := "53f154:fr-FR-DeniseNeural"
	big := `{"target_script":[{"start_ms":0,"end_ms":1,"text":"` + strings.Repeat("x", 10<<20) + `","speaker_id":1}]}`
	cases := []struct {
		name    string
		key     string
		id      string
		body    string
		status  int
		errName string
		message string
	}{
		{"not enabled for the account", plPro, ready, plRetranslation, 403, "ForbiddenError", sim.MsgRetranslationDisabled},
		{"unknown project", plEnt, plMissing, plRetranslation, 404, "NotFoundError", sim.MsgProjectNotFound},
		{"another account's project", plEnt, plainReady, plRetranslation, 404, "NotFoundError", sim.MsgProjectNotFound},
		{"no key", "", ready, plRetranslation, 401, "UnauthorizedError", sim.MsgInvalidAPIKey},
		{"project in progress", plEnt, busy, plRetranslation, 400, "ValidationError",
			fmt.Sprintf(sim.MsgRetranslationNotReady, busy, "in_progress")},
		{"unknown voice", plEnt, ready, body("unknown-voice", seg), 400, "ValidationError", "Unknown voice unknown-voice"},
		{"voice of another language", plEnt, ready, body("d0187f:de-DE-AmalaNeural", seg), 400, "ValidationError",
			fmt.Sprintf(sim.MsgVoiceLanguage, "d0187f:de-DE-AmalaNeural", "fr-FR")},
		{"speaker missing from target_speakers", plEnt, ready, body(denise, `{"start_ms":100,"end_ms":1500,"text":"Bonjour","speaker_id":2}`), 400, "ValidationError",
			"Speaker ID 2 referenced in script but not found in target_speakers"},
		{"start not before end", plEnt, ready, body(denise, `{"start_ms":1500,"end_ms":1200,"text":"Bonjour","speaker_id":1}`), 400, "ValidationError",
			"Invalid timing: start_ms must be less than end_ms"},
		{"overlapping segments", plEnt, ready, body(denise, seg+`,{"start_ms":1000,"end_ms":2000,"text":"encore","speaker_id":1}`), 400, "ValidationError",
			fmt.Sprintf(sim.MsgOverlap, 0, 100, 1500, 1, 1000, 2000)},
		{"empty text", plEnt, ready, body(denise, `{"start_ms":100,"end_ms":1500,"text":" ","speaker_id":1}`), 400, "ValidationError",
			fmt.Sprintf(sim.MsgEmptyText, "target_script[0]")},
		{"missing target_speakers", plEnt, ready, `{"target_script":[` + seg + `]}`, 400, "ValidationError", "target_speakers is required"},
		{"malformed JSON", plEnt, ready, `{"target_script":`, 400, "ValidationError", ""},
		{"soundalike voice without a subscription", plain, plainReady, body("soundalike", seg), 402, "PaymentRequiredError", sim.MsgSoundalikeSubscription},
		{"body over 10 MiB", plEnt, ready, big, 413, "ValidationError", "Request body exceeds the limit of 10485760 bytes"},
	}
	// Refusals change nothing, so both operations see the same projects.
	t.Run("refusals", func(t *testing.T) {
		for _, op := range []string{"translations", "validate-translation-request"} {
			for _, tc := range cases {
				t.Run(op+"/"+tc.name, func(t *testing.T) {
					t.Parallel()
					r := e.do(pl("POST", "/api/v1/projects/"+tc.id+"/"+op, tc.key, tc.body))
					plExpect(t, r, tc.status, tc.errName)
					if tc.message != "" {
						assert.Equal(t, tc.message, r.JSON["message"])
					}
				})
			}
		}
	})

	r := e.do(pl("POST", "/api/v1/projects/"+ready+"/validate-translation-request", plEnt, plRetranslation))
	plExpect(t, r, 200, "")
	assert.Equal(t, true, r.JSON["valid"])
	r = e.do(pl("GET", "/api/v1/projects/"+ready, plEnt, ""))
	assert.Equal(t, "ready", r.JSON["status"], "validation changes nothing")

	r = e.do(pl("POST", "/api/v1/projects/"+ready+"/translations", plEnt, plRetranslation))
	plExpect(t, r, 200, "")
	assert.Equal(t, ready, r.JSON["project_id"])
	assert.EqualValues(t, 0, r.JSON["cost_minutes"])
	assert.EqualValues(t, 1, r.JSON["translations_count"])

	r = e.do(pl("GET", "/api/v1/projects/"+ready, plEnt, ""))
	assert.Equal(t, "in_progress", r.JSON["status"])
	e.advance(2 * time.Minute)
	r = e.do(pl("GET", "/api/v1/projects/"+ready, plEnt, ""))
	plExpect(t, r, 200, "")
	assert.Equal(t, "ready", r.JSON["status"])
	assert.Equal(t, "voiceover_only", r.JSON["mixing_mode"])
	assert.Regexp(t, "^"+regexp.QuoteMeta(fmt.Sprintf("%s/files/projects/%s/2/dubbed_video.mov?signed=", e.url, ready))+"[0-9a-f]{32}$", r.JSON["output_video_url"])
	speakers, _ := r.JSON["output_target_speakers"].([]any)
	require.Len(t, speakers, 1)
	assert.Equal(t, denise, speakers[0].(map[string]any)["voice_key"])
}

func TestPlatformOutputFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	id := plCreate(e, plEnt, plShort)
	failed := plCreate(e, plEnt, plFail)
	other := plCreate(e, plEnt, plShort)
	e.advance(4 * time.Minute)
	p := e.do(pl("GET", "/api/v1/projects/"+id, plEnt, ""))
	require.Equal(t, "ready", p.JSON["status"])
	wav := strings.TrimPrefix(p.JSON["output_tts_audio_url"].(string), e.url)
	mov := strings.TrimPrefix(p.JSON["output_video_url"].(string), e.url)
	r := e.do(req{Interface: openapi.Platform, Method: "HEAD", Path: wav})
	require.Equal(t, 200, r.Status)
	size := r.Header.Get("Content-Length")
	lastModified := r.Header.Get("Last-Modified")
	require.NotEmpty(t, lastModified)

	cases := []struct {
		name    string
		path    string
		header  map[string]string
		status  int
		check   func(t *testing.T, r resp)
		errName string
	}{
		{name: "audio", path: wav, status: 200, check: func(t *testing.T, r resp) {
			assert.Equal(t, "audio/wav", r.Header.Get("Content-Type"))
			assert.Equal(t, size, r.Header.Get("Content-Length"))
		}},
		{name: "video", path: mov, status: 200, check: func(t *testing.T, r resp) {
			assert.Equal(t, "video/quicktime", r.Header.Get("Content-Type"))
		}},
		{name: "one range", path: wav, header: map[string]string{"Range": "bytes=0-11"}, status: 206, check: func(t *testing.T, r resp) {
			assert.Equal(t, "bytes 0-11/"+size, r.Header.Get("Content-Range"))
			assert.Equal(t, "12", r.Header.Get("Content-Length"))
		}},
		{name: "two ranges", path: mov, header: map[string]string{"Range": "bytes=0-3,8-11"}, status: 206, check: func(t *testing.T, r resp) {
			assert.True(t, strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/byteranges; boundary="), r.Header.Get("Content-Type"))
		}},
		{name: "not modified", path: wav, header: map[string]string{"If-Modified-Since": lastModified}, status: 304},
		{name: "nothing but *", path: wav, header: map[string]string{"If-None-Match": "*"}, status: 304},
		{name: "modified since", path: wav, header: map[string]string{"If-Unmodified-Since": "Sat, 01 Jan 2000 00:00:00 GMT"}, status: 412, errName: "ValidationError"},
		{name: "no such entity tag", path: mov, header: map[string]string{"If-Match": `"abc"`}, status: 412, errName: "ValidationError"},
		{name: "range past the end", path: wav, header: map[string]string{"Range": "bytes=999999999-"}, status: 416, errName: "ValidationError", check: func(t *testing.T, r resp) {
			assert.Equal(t, "bytes */"+size, r.Header.Get("Content-Range"))
		}},
		{name: "malformed range", path: wav, header: map[string]string{"Range": "bytes=z"}, status: 416, errName: "ValidationError"},
		{name: "unknown project", path: "/files/projects/" + plMissing + "/1/dubbed_audio.wav", status: 404, errName: "NotFoundError"},
		{name: "another generation", path: strings.Replace(wav, "/1/", "/2/", 1), status: 404, errName: "NotFoundError"},
		{name: "generation not a number", path: strings.Replace(wav, "/1/", "/one/", 1), status: 404, errName: "NotFoundError"},
		{name: "another file", path: strings.Replace(wav, "dubbed_audio.wav", "dubbed_audio.mp3", 1), status: 404, errName: "NotFoundError"},
		{name: "failed project", path: "/files/projects/" + failed + "/1/dubbed_audio.wav", status: 404, errName: "NotFoundError"},
		{name: "no signature", path: strings.SplitN(wav, "?", 2)[0], status: 404, errName: "NotFoundError"},
		{name: "wrong signature", path: strings.SplitN(wav, "=", 2)[0] + "=" + strings.Repeat("0", 32), status: 404, errName: "NotFoundError"},
		{name: "the signature of another project", path: strings.Replace(wav, "/"+id+"/", "/"+other+"/", 1), status: 404, errName: "NotFoundError"},
	}
	for _, method := range []string{"GET", "HEAD"} {
		for _, tc := range cases {
			t.Run(method+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				r := e.do(req{Interface: openapi.Platform, Method: method, Path: tc.path, Header: tc.header})
				assert.Equal(t, tc.status, r.Status)
				if method == "GET" && tc.errName != "" {
					assert.Equal(t, tc.errName, r.JSON["error"], "%s", r.Body)
				}
				if method == "HEAD" {
					assert.Empty(t, r.Body)
				}
				if tc.check != nil {
					tc.check(t, r)
				}
			})
		}
	}
}

// TestPlatformOutputGenerations: a re-translation keeps the previous outputs
// downloadable while it runs, then replaces them.
func TestPlatformOutputGenerations(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	id := plCreate(e, plEnt, plShort)
	e.advance(2 * time.Minute)
	file := func(u string) req { return req{Interface: openapi.Platform, Method: "GET", Path: u} }
	gen1 := plOutputPath(e, id, plEnt, "output_tts_audio_url")
	plExpect(t, e.do(file(gen1)), 200, "")
	plExpect(t, e.do(pl("POST", "/api/v1/projects/"+id+"/translations", plEnt, plRetranslation)), 200, "")
	plExpect(t, e.do(file(gen1)), 200, "")
	plExpect(t, e.do(file(strings.Replace(gen1, "/1/", "/2/", 1))), 404, "NotFoundError")
	e.advance(2 * time.Minute)
	gen2 := plOutputPath(e, id, plEnt, "output_tts_audio_url")
	assert.Contains(t, gen2, "/2/dubbed_audio.wav?signed=")
	assert.NotEqual(t, strings.SplitN(gen1, "?", 2)[1], strings.SplitN(gen2, "?", 2)[1], "a new generation, a new signature")
	plExpect(t, e.do(file(gen1)), 404, "NotFoundError")
	plExpect(t, e.do(file(strings.Replace(gen1, "/1/", "/2/", 1))), 404, "NotFoundError")
	plExpect(t, e.do(file(gen2)), 200, "")
}

// plOutputPath is the path (and query) of a ready project's output URL field.
func plOutputPath(e *env, id, key, field string) string {
	e.t.Helper()
	r := e.do(pl("GET", "/api/v1/projects/"+id, key, ""))
	require.Equal(e.t, "ready", r.JSON["status"], "%s", r.Body)
	u, _ := r.JSON[field].(string)
	require.True(e.t, strings.HasPrefix(u, e.url), "%s", u)
	return strings.TrimPrefix(u, e.url)
}

func TestPlatformCloning(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	noCloning := plAccount(e, `{"plan":"pro","balance_minutes":10,"cloning_enabled":false}`)
	ref := plWAV(t, 3*time.Second)
	std := func(text string) plForm {
		return plForm{fields: [][2]string{{"text", text}, {"language", "en-US"}}, files: [][]byte{ref}}
	}
	eleven := plForm{fields: [][2]string{{"text", "Hello"}, {"language", "en-US"}}}
	for range 11 {
		eleven.files = append(eleven.files, plWAV(t, 100*time.Millisecond))
	}
	cases := []struct {
		name    string
		req     req
		status  int
		message string
	}{
		{"pro", plSynth(t, plPro, std("Hello world, this is a test of our voice cloning technology!"), nil), 200, ""},
		{"enterprise, in Spanish", plSynth(t, plEnt, plForm{fields: [][2]string{{"text", "Hola a todos"}, {"language", "es-ES"}}, files: [][]byte{ref, ref}}, nil), 200, ""},
		{"no key", plSynth(t, "", std("Hello"), nil), 401, sim.MsgInvalidAPIKey},
		{"plan below PRO", plSynth(t, plSub, std("Hello"), nil), 403, sim.MsgCloningPlan},
		{"cloning not enabled", plSynth(t, noCloning, std("Hello"), nil), 403, sim.MsgCloningDisabled},
		{"JSON instead of multipart", pl("POST", "/api/v1/cloning/synthesize", plPro, `{"text":"Hello","language":"en-US"}`), 400,
			fmt.Sprintf(sim.MsgCloningMultipart, "application/json")},
		{"no text", plSynth(t, plPro, plForm{fields: [][2]string{{"language", "en-US"}}, files: [][]byte{ref}}, nil), 400, "text is required"},
		{"nothing to say", plSynth(t, plPro, std("?!"), nil), 400, `text must contain something to say (letters or digits); got "?!"`},
		{"text over 5000 characters", plSynth(t, plPro, std(strings.Repeat("é", 5001)), nil), 400, "text must be at most 5000 characters; got 5001"},
		{"language without locale", plSynth(t, plPro, plForm{fields: [][2]string{{"text", "Hello"}, {"language", "en"}}, files: [][]byte{ref}}, nil), 400,
			`language "en" is not supported; use a target language from GET /api/v1/options (with locale, such as "en-US")`},
		{"no reference", plSynth(t, plPro, plForm{fields: [][2]string{{"text", "Hello"}, {"language", "en-US"}}}, nil), 400,
			"reference_audio_files is required: send at least one voice sample (WAV, MP3, M4A or FLAC)"},
		{"reference not audio", plSynth(t, plPro, plForm{fields: [][2]string{{"text", "Hello"}, {"language", "en-US"}}, files: [][]byte{[]byte("just text, no audio")}}, nil), 400,
			`reference_audio_files[0] ("voice_1.wav") is not a supported audio file (WAV, MP3, M4A or FLAC; recognised from its content: an unrecognised format)`},
		{"eleven references", plSynth(t, plPro, eleven, nil), 400, "At most 10 reference_audio_files are accepted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.do(tc.req)
			assert.Equal(t, tc.status, r.Status, "%.300s", r.Body)
			switch tc.status {
			case 200:
				assert.Equal(t, "audio/wav", r.Header.Get("Content-Type"))
				assert.Equal(t, "RIFF", string(r.Body[:4]))
				assert.Equal(t, fmt.Sprint(len(r.Body)), r.Header.Get("Content-Length"))
			case 403:
				assert.Equal(t, map[string]any{"error": tc.message}, r.JSON)
			default:
				assert.Equal(t, tc.message, r.JSON["message"])
			}
		})
	}
	t.Run("reference over 50 MB", func(t *testing.T) {
		t.Parallel()
		huge := make([]byte, 50_000_001) // a WAV header, then zeros
		copy(huge, ref[:44])
		r := e.do(plSynth(t, plPro, plForm{fields: [][2]string{{"text", "Hello"}, {"language", "en-US"}}, files: [][]byte{huge}}, nil))
		plExpect(t, r, 413, "ValidationError")
		assert.Equal(t, `reference_audio_files[0] ("voice_1.wav") is larger than 50 MB`, r.JSON["message"])
	})
}

// TestPlatformIdempotency covers replays, 422 (the key used with another
// request) and 409 (the key's first request still in flight) on every POST
// operation.
func TestPlatformIdempotency(t *testing.T) {
	t.Parallel()
	withKey := func(r req, k string) req {
		h := map[string]string{}
		for n, v := range r.Header {
			h[n] = v
		}
		h["Idempotency-Key"] = k
		r.Header = h
		return r
	}

	t.Run("replay and mismatch", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil)
		id := plCreate(e, plEnt, plShort)
		e.advance(2 * time.Minute)

		first := e.do(withKey(pl("POST", "/api/v1/projects", plEnt, plDocsExample), "k1"))
		plExpect(t, first, 200, "")
		again := e.do(withKey(pl("POST", "/api/v1/projects", plEnt, plDocsExample), "k1"))
		plExpect(t, again, 200, "")
		assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
		assert.Equal(t, string(first.Body), string(again.Body))

		// A cloning answer streams (it is replayed from a recipe): the
		// immediate retry is a replay too, never a 409 "in flight".
		synth := plSynth(t, plEnt, plForm{fields: [][2]string{{"text", "Hello"}, {"language", "en-US"}}, files: [][]byte{plWAV(t, time.Second)}}, nil)
		sFirst := e.do(withKey(synth, "k3"))
		require.Equal(t, 200, sFirst.Status, "%s", sFirst.Body)
		sAgain := e.do(withKey(synth, "k3"))
		require.Equal(t, 200, sAgain.Status, "%s", sAgain.Body)
		assert.Equal(t, "true", sAgain.Header.Get("Idempotent-Replayed"))
		assert.Equal(t, sFirst.Body, sAgain.Body)

		// Errors are stored and replayed too.
		broke := e.do(withKey(pl("POST", "/api/v1/projects", plBroke, plDocsExample), "k2"))
		plExpect(t, broke, 402, "PaymentRequiredError")
		broke = e.do(withKey(pl("POST", "/api/v1/projects", plBroke, plDocsExample), "k2"))
		plExpect(t, broke, 402, "PaymentRequiredError")
		assert.Equal(t, "true", broke.Header.Get("Idempotent-Replayed"))

		reuse := []req{
			pl("POST", "/api/v1/projects", plEnt, plProjectBody(plShort)),
			pl("POST", "/api/v1/projects/"+id+"/translations", plEnt, plRetranslation),
			pl("POST", "/api/v1/projects/"+id+"/validate-translation-request", plEnt, plRetranslation),
			plSynth(t, plEnt, plForm{fields: [][2]string{{"text", "Hello"}, {"language", "en-US"}}, files: [][]byte{plWAV(t, time.Second)}}, nil),
		}
		for _, r := range reuse {
			t.Run(r.Path, func(t *testing.T) {
				got := e.do(withKey(r, "k1"))
				plExpect(t, got, 422, "IdempotencyError")
				assert.Equal(t, fmt.Sprintf(sim.MsgIdempotencyMismatch, "k1"), got.JSON["message"])
			})
		}
	})

	t.Run("in flight", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil)
		id := plCreate(e, plEnt, plShort)
		e.advance(2 * time.Minute)

		// A source video on a loopback host is probed at creation: holding
		// the probe holds the creation, with its idempotency key, in flight.
		entered, release := make(chan struct{}, 1), make(chan struct{})
		media := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-release
			http.Error(w, "gone", http.StatusNotFound)
		}))
		t.Cleanup(media.Close)
		var once sync.Once
		releaseAll := func() { once.Do(func() { close(release) }) }
		t.Cleanup(releaseAll)

		slow := pl("POST", "/api/v1/projects", plEnt, plProjectBody(media.URL+"/clip.mp4"))
		done := make(chan int, 1)
		go func() {
			hr, err := http.NewRequest("POST", e.url+slow.Path, strings.NewReader(slow.JSON))
			if err != nil {
				done <- 0
				return
			}
			hr.Header.Set("Authorization", "Bearer "+plEnt)
			hr.Header.Set("Content-Type", "application/json")
			hr.Header.Set("Idempotency-Key", "busy")
			hr.Header.Set(server.HeaderInterface, openapi.Platform)
			res, err := http.DefaultClient.Do(hr)
			if err != nil {
				done <- 0
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			done <- res.StatusCode
		}()
		select {
		case <-entered:
		case status := <-done:
			t.Fatalf("the creation ended (%d) before its video was probed", status)
		}

		conflicts := []req{
			slow,
			pl("POST", "/api/v1/projects", plEnt, plDocsExample),
			pl("POST", "/api/v1/projects/"+id+"/translations", plEnt, plRetranslation),
			pl("POST", "/api/v1/projects/"+id+"/validate-translation-request", plEnt, plRetranslation),
			plSynth(t, plEnt, plForm{fields: [][2]string{{"text", "Hello"}, {"language", "en-US"}}, files: [][]byte{plWAV(t, time.Second)}}, nil),
		}
		for _, r := range conflicts {
			got := e.do(withKey(r, "busy"))
			plExpect(t, got, 409, "ConflictError")
			assert.Equal(t, fmt.Sprintf(sim.MsgIdempotencyInFlight, "busy"), got.JSON["message"])
		}
		releaseAll()
		assert.Equal(t, http.StatusBadRequest, <-done, "the held creation ends: its video cannot be read")
		r := e.do(withKey(slow, "busy"))
		plExpect(t, r, 400, "VideoInfoError")
		assert.Equal(t, "true", r.Header.Get("Idempotent-Replayed"))
	})
}

// plEveryOperation is one request per documented platform operation.
func plEveryOperation(t *testing.T) []req {
	id := "/api/v1/projects/" + plMissing
	file := "/files/projects/" + plMissing + "/1/dubbed_audio.wav"
	return []req{
		pl("GET", "/api/v1/balance", plPro, ""),
		pl("GET", "/api/v1/options", plPro, ""),
		pl("GET", "/api/v1/voices", plPro, ""),
		pl("POST", "/api/v1/projects", plPro, plDocsExample),
		pl("GET", id, plPro, ""),
		pl("DELETE", id, plPro, ""),
		pl("POST", id+"/translations", plEnt, plRetranslation),
		pl("POST", id+"/validate-translation-request", plEnt, plRetranslation),
		plSynth(t, plPro, plForm{fields: [][2]string{{"text", "Hello"}, {"language", "en-US"}}, files: [][]byte{plWAV(t, time.Second)}}, nil),
		{Interface: openapi.Platform, Method: "GET", Path: file},
		{Interface: openapi.Platform, Method: "HEAD", Path: file},
	}
}

// plFailingStore fails every transaction once fail is set, like a disk
// that has gone away.
type plFailingStore struct {
	sim.Store
	fail atomic.Bool
}

var errPlDisk = errors.New("disk I/O error")

func (s *plFailingStore) View(ctx context.Context, fn func(sim.Tx) error) error {
	if s.fail.Load() {
		return errPlDisk
	}
	return s.Store.View(ctx, fn)
}

func (s *plFailingStore) Update(ctx context.Context, fn func(sim.Tx) error) error {
	if s.fail.Load() {
		return errPlDisk
	}
	return s.Store.Update(ctx, fn)
}

func (s *plFailingStore) Batch(ctx context.Context, fn func(sim.Tx) error) error {
	if s.fail.Load() {
		return errPlDisk
	}
	return s.Store.Batch(ctx, fn)
}

// TestPlatformInternalError: a storage failure is a 500 with a masked
// message on every operation.
func TestPlatformInternalError(t *testing.T) {
	t.Parallel()
	st := &plFailingStore{}
	e := newEnv(t, func(c *app.Config) { st.Store = c.Store; c.Store = st })
	st.fail.Store(true)
	t.Cleanup(func() { st.fail.Store(false) })
	for _, r := range plEveryOperation(t) {
		t.Run(r.Method+" "+r.Path, func(t *testing.T) {
			got := e.do(r)
			assert.Equal(t, http.StatusInternalServerError, got.Status, "%s", got.Body)
			if r.Method != "HEAD" {
				assert.Equal(t, map[string]any{"error": "InternalServerError", "message": sim.MsgInternal}, got.JSON)
			}
		})
	}
}

// TestPlatformRateLimitFault: a rate_limit fault rule answers 429 with
// Retry-After on every operation.
func TestPlatformRateLimitFault(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for i, r := range plEveryOperation(t) {
		t.Run(r.Method+" "+r.Path, func(t *testing.T) {
			rule := fmt.Sprintf(`{"method":%q,"path":%q,"count":1,"action":{"type":"rate_limit","retry_after_seconds":%d}}`, r.Method, r.Path, i+1)
			f := e.do(req{Interface: openapi.Control, Method: "POST", Path: "/_sim/faults", JSON: rule})
			require.Equal(t, http.StatusCreated, f.Status, "%s", f.Body)
			got := e.do(r)
			assert.Equal(t, http.StatusTooManyRequests, got.Status, "%s", got.Body)
			assert.Equal(t, fmt.Sprint(i+1), got.Header.Get("Retry-After"))
			if r.Method != "HEAD" {
				assert.Equal(t, "RateLimitError", got.JSON["error"])
			}
		})
	}
}
