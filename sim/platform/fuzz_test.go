package platform_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// checkReply asserts the invariants every answer keeps, whatever the input:
// never a 5xx, always JSON, errors always in the platform envelope.
func checkReply(t *testing.T, r reply) {
	t.Helper()
	if r.status >= 500 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer is not a JSON object: %q", r.body)
	}
	if r.status >= 400 {
		if _, ok := m["error"].(string); !ok {
			t.Fatalf("error without an error name: %s", r.body)
		}
		if msg, ok := m["message"].(string); !ok || msg == "" {
			t.Fatalf("error without a message: %s", r.body)
		}
	}
}

func FuzzCreateProjectBody(f *testing.F) {
	for _, s := range []string{
		docsExample, `{}`, `[]`, `null`, `{"source_lang":1}`,
		`{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://x/y","source_script":[{"start_ms":0,"end_ms":5,"text":"a"}]}`,
		`{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://x/y","source_script_content":"WEBVTT\n\n00:01.000 --> 00:02.000\n<v A>hi"}`,
		`{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://x/y","glossary_content":"a\tb\n\tc"}`,
		`{"source_lang":"en","target_lang":"ja-JP","source_video_url":"https://x/y","use_emotional_transfer":true}`,
		// Integral numbers in any spelling are integers; fractions and
		// out-of-range integers are refused.
		`{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://x/y","source_script":[{"start_ms":100.0,"end_ms":1e3,"text":"a"}]}`,
		`{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://x/y","source_script":[{"start_ms":1.5,"end_ms":1e400,"text":"a"}]}`,
		`{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://x/y","source_script":[{"start_ms":-0.0,"end_ms":9007199254740993.0,"text":"a"}]}`,
	} {
		f.Add(s)
	}
	e := newEnv(f)
	f.Fuzz(func(t *testing.T, body string) {
		e.t = t
		r := e.do(call{method: "POST", path: "/api/v1/projects", key: "dubsim-enterprise", body: body})
		checkReply(t, r)
		if r.status == http.StatusOK {
			var m map[string]any
			_ = json.Unmarshal(r.body, &m)
			id, _ := m["project_id"].(string)
			checkReply(t, e.do(call{method: "GET", path: "/api/v1/projects/" + id, key: "dubsim-enterprise"}))
		}
	})
}

func FuzzRetranslationBody(f *testing.F) {
	for _, s := range []string{
		`{"target_script":[{"start_ms":100,"end_ms":1544,"text":"Au revoir le monde!","speaker_id":1}],"target_speakers":[{"speaker_id":1,"voice_key":"53f154:fr-FR-DeniseNeural","style":"feminine"}]}`,
		`{"target_script":[],"target_speakers":[]}`, `{"target_script":null}`, `{"target_script":[{}],"target_speakers":[{}]}`,
		`{"target_script":[{"start_ms":1e30,"end_ms":-1,"text":"","speaker_id":99999999999}],"target_speakers":[{"speaker_id":1,"voice_key":"soundalike","style":"x"}]}`,
		`{"target_script":[{"start_ms":100.0,"end_ms":1.544e3,"text":"a","speaker_id":1e0}],"target_speakers":[{"speaker_id":1.0,"voice_key":"53f154:fr-FR-DeniseNeural","style":"feminine"}]}`,
		`{"target_script":[{"start_ms":100.5,"end_ms":1e2,"text":"a","speaker_id":1.5}],"target_speakers":[{"speaker_id":1e400,"voice_key":"x","style":"feminine"}]}`,
	} {
		f.Add(s)
	}
	e := newEnv(f)
	id := e.create("dubsim-enterprise", `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://media.dubsim.test/short.mp4"}`)
	e.advance(3600)
	f.Fuzz(func(t *testing.T, body string) {
		e.t = t
		checkReply(t, e.do(call{method: "POST", path: "/api/v1/projects/" + id + "/validate-translation-request", key: "dubsim-enterprise", body: body}))
		r := e.do(call{method: "POST", path: "/api/v1/projects/" + id + "/translations", key: "dubsim-enterprise", body: body})
		checkReply(t, r)
		if r.status == http.StatusOK {
			e.advance(3600) // back to ready for the next input
			checkReply(t, e.do(call{method: "GET", path: "/api/v1/projects/" + id, key: "dubsim-enterprise"}))
		}
	})
}

func FuzzCloningMultipart(f *testing.F) {
	wav := refWAV(f, 140)[:4096]
	for _, fm := range []form{
		{fields: [][2]string{{"text", "Hello there."}, {"language", "en-US"}}, files: []formFile{{"a.wav", wav}}},
		{fields: [][2]string{{"text", ""}, {"language", "xx"}}},
		{fields: [][2]string{{"language", "ja-JP"}, {"text", "こんにちは。"}}, files: []formFile{{"b.flac", []byte("fLaC\x00\x00\x00\x22")}}},
	} {
		_, body := fm.body(f, "fuzzboundary")
		f.Add(body)
	}
	f.Add([]byte("--fuzzboundary--\r\n"))
	e := newEnv(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		r := e.synth("dubsim-enterprise", "multipart/form-data; boundary=fuzzboundary", body, nil)
		if r.status == http.StatusOK {
			if r.header.Get("Content-Type") != "audio/wav" || len(r.body) < 44 || string(r.body[:4]) != "RIFF" {
				t.Fatalf("200 without a WAV: %q", r.body[:min(len(r.body), 64)])
			}
			return
		}
		checkReply(t, r)
	})
}
