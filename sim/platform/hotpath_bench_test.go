package platform_test

// Benchmarks of request decoding and validation through the handler path.
// The decoder and the validation are unexported, so each request runs the
// whole handler (router, authentication, decode, validate); a body that
// fails only its last check isolates decode and validate from the engine.
//
//	go test -run XXX -bench 'Decode' -benchmem ./sim/platform

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// script200 is a source or target script of 200 segments within ten
// minutes; withSpeakers adds speaker ids (1 and 2, alternating).
func script200(withSpeakers bool) []map[string]any {
	segs := make([]map[string]any, 200)
	for i := range segs {
		start := int64(i)*2900 + 100
		s := map[string]any{"start_ms": start, "end_ms": start + 2500, "text": fmt.Sprintf("Segment %d: this is what the speaker says here.", i)}
		if withSpeakers {
			s["speaker_id"] = 1 + i%2
		}
		segs[i] = s
	}
	return segs
}

func mustJSON(tb testing.TB, v any) string {
	b, err := json.Marshal(v)
	require.NoError(tb, err)
	return string(b)
}

// BenchmarkDecodeValidateCreate posts Create Project bodies for an account
// whose balance never runs out. valid/* create a project (decode, validate,
// probe, engine); invalid/* fail on the last rule checked, after the whole
// body was decoded and validated, so they measure decode and validate.
func BenchmarkDecodeValidateCreate(b *testing.B) {
	e := newEnv(b)
	key := e.newAccount(`{"plan":"enterprise","balance_minutes":1000000000000,"retranslation_enabled":true}`)

	withScript := map[string]any{"name": "Benchmark", "source_lang": "en", "target_lang": "fr-FR",
		"source_video_url": "https://example.com/video.mp4", "mixing_mode": "voiceover_with_original_track",
		"tts_volume": "normal", "use_fixed_timings": true, "source_script": script200(false),
		"glossary_content": "hello\tbonjour\nworld\tmonde\nvoice\tvoix"}
	overlapping := script200(false)
	overlapping[199]["start_ms"] = overlapping[198]["start_ms"] // the last segment overlaps the one before
	invalidScript := map[string]any{}
	for k, v := range withScript {
		invalidScript[k] = v
	}
	invalidScript["source_script"] = overlapping
	minimalBad := strings.Replace(docsExample, `"use_soundalike_voices":true`, `"use_soundalike_voices":true,"glossary_content":"a\tb\nno tab"`, 1)

	for _, c := range []struct {
		name, body string
		status     int
	}{
		{"valid/docs_example", docsExample, http.StatusOK},
		{"valid/script200", mustJSON(b, withScript), http.StatusOK},
		{"invalid/docs_example", minimalBad, http.StatusBadRequest},
		{"invalid/script200", mustJSON(b, invalidScript), http.StatusBadRequest},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				if r := e.do(call{method: "POST", path: "/api/v1/projects", key: key, body: c.body}); r.status != c.status {
					b.Fatalf("status %d: %s", r.status, r.body)
				}
			}
		})
	}
}

// BenchmarkDecodeRetranslation posts a 200-segment re-translation to the
// validation endpoint of a ready ten-minute project: valid, and invalid on
// the last rule checked (the last segment overlaps the one before).
func BenchmarkDecodeRetranslation(b *testing.B) {
	e := newEnv(b)
	const key = "dubsim-enterprise"
	id := e.create(key, docsExample) // fr-FR, ten minutes
	e.advance(3600)
	cat := e.engine.Data.Catalog()
	speakers := []map[string]any{
		{"speaker_id": 1, "voice_key": cat.VoicesFor("fr-FR", "masculine")[0].VoiceKey, "style": "masculine"},
		{"speaker_id": 2, "voice_key": cat.VoicesFor("fr-FR", "feminine")[0].VoiceKey, "style": "feminine"},
	}
	valid := map[string]any{"target_script": script200(true), "target_speakers": speakers, "mixing_mode": "voiceover_only", "tts_volume": "louder"}
	overlapping := script200(true)
	overlapping[199]["start_ms"] = overlapping[198]["start_ms"]
	invalid := map[string]any{"target_script": overlapping, "target_speakers": speakers}
	path := "/api/v1/projects/" + id + "/validate-translation-request"

	for _, c := range []struct {
		name, body string
		status     int
	}{
		{"valid", mustJSON(b, valid), http.StatusOK},
		{"invalid", mustJSON(b, invalid), http.StatusBadRequest},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				if r := e.do(call{method: "POST", path: path, key: key, body: c.body}); r.status != c.status {
					b.Fatalf("status %d: %s", r.status, r.body)
				}
			}
		})
	}
}
