package platform_test

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests of this file measure the outputs a client downloads, as a
// client's own test would: levels, silences, periodicity and pitch of the
// dubbed audio and of the video's audio track.

const outRate = 22050

// outputs is a ready project as a client sees it, with its two files'
// samples.
type outputs struct {
	project map[string]any
	tts     []int16 // output_tts_audio_url
	video   []int16 // the audio track of output_video_url
}

// ready creates a project with body, lets it finish and downloads its
// outputs.
func (e *env) ready(key, body string) outputs {
	e.t.Helper()
	id := e.create(key, body)
	e.advance(3600)
	r := e.do(call{method: "GET", path: "/api/v1/projects/" + id, key: key})
	require.Equal(e.t, http.StatusOK, r.status, "%s", r.body)
	o := outputs{project: r.json(e.t)}
	require.Equal(e.t, "ready", o.project["status"], "%s", r.body)
	wav := e.download(o.project["output_tts_audio_url"].(string))
	require.Greater(e.t, len(wav), 44)
	o.tts = pcm(wav[44:])
	mov := e.download(o.project["output_video_url"].(string))
	// The movie's mdat ends with the PCM samples, as many as the WAV's.
	require.Greater(e.t, len(mov), 2*len(o.tts))
	o.video = pcm(mov[len(mov)-2*len(o.tts):])
	return o
}

func (e *env) download(raw string) []byte {
	e.t.Helper()
	u, err := url.Parse(raw)
	require.NoError(e.t, err)
	r := e.do(call{method: "GET", path: u.RequestURI()})
	require.Equal(e.t, http.StatusOK, r.status, "%s", raw)
	return r.body
}

func pcm(b []byte) []int16 {
	s := make([]int16, len(b)/2)
	for i := range s {
		s[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return s
}

// seg is a script segment of a Get Project answer.
type seg struct {
	StartMS   int64  `json:"start_ms"`
	EndMS     int64  `json:"end_ms"`
	Text      string `json:"text"`
	SpeakerID int    `json:"speaker_id"`
}

func script(t *testing.T, p map[string]any, field string) []seg {
	t.Helper()
	b, err := json.Marshal(p[field])
	require.NoError(t, err)
	var segs []seg
	require.NoError(t, json.Unmarshal(b, &segs))
	return segs
}

// spans are sample ranges [a, b).
type span struct{ a, b int }

func inSegments(segs []seg) []span {
	var out []span
	for _, s := range segs {
		out = append(out, span{int(s.StartMS) * outRate / 1000, int(s.EndMS) * outRate / 1000})
	}
	return out
}

// gaps are the ranges at least margin samples away from every segment.
func gaps(segs []seg, n, margin int) []span {
	var out []span
	at := 0
	for _, s := range inSegments(segs) {
		if s.a-margin > at {
			out = append(out, span{at, s.a - margin})
		}
		at = s.b + margin
	}
	if at < n {
		out = append(out, span{at, n})
	}
	return out
}

func rms(x []float64) float64 {
	var sum float64
	for _, v := range x {
		sum += v * v
	}
	return math.Sqrt(sum / float64(max(1, len(x))))
}

func floats(s []int16, spans []span) []float64 {
	var out []float64
	for _, sp := range spans {
		for i := sp.a; i < min(sp.b, len(s)); i++ {
			out = append(out, float64(s[i]))
		}
	}
	return out
}

// silentShare is the share of the 10 ms windows of spans whose RMS is below
// -60 dBFS (33 in 16-bit units).
func silentShare(s []int16, spans []span) float64 {
	const w = outRate / 100
	var silent, all int
	for _, sp := range spans {
		for a := sp.a; a+w <= min(sp.b, len(s)); a += w {
			all++
			if rms(floats(s, []span{{a, a + w}})) < 33 {
				silent++
			}
		}
	}
	return float64(silent) / float64(max(1, all))
}

// residual is video - tts: what the video plays beneath the dubbed voice.
func residual(o outputs) []int16 {
	r := make([]int16, len(o.video))
	for i := range r {
		r[i] = o.video[i] - o.tts[i]
	}
	return r
}

// f0 is the median pitch, by autocorrelation, of the voiced 40 ms frames of
// spans (frames louder than minRMS whose normalised autocorrelation peak is
// above 0.5), and the share of frames that were voiced.
func f0(s []int16, spans []span, minRMS float64) (hz, voiced float64) {
	const frame = outRate * 40 / 1000
	minLag, maxLag := outRate/400, outRate/60
	var pitches []float64
	frames := 0
	for _, sp := range spans {
		for a := sp.a; a+frame+maxLag <= min(sp.b, len(s)); a += frame {
			x := floats(s, []span{{a, a + frame + maxLag}})
			if rms(x[:frame]) < minRMS {
				continue
			}
			frames++
			best, bestLag := 0.0, 0
			for lag := minLag; lag <= maxLag; lag++ {
				var num, e0, e1 float64
				for i := range frame {
					num += x[i] * x[i+lag]
					e0 += x[i] * x[i]
					e1 += x[i+lag] * x[i+lag]
				}
				if c := num / math.Sqrt(e0*e1+1e-9); c > best {
					best, bestLag = c, lag
				}
			}
			if best > 0.5 {
				pitches = append(pitches, float64(outRate)/float64(bestLag))
			}
		}
	}
	if len(pitches) == 0 {
		return 0, 0
	}
	sort.Float64s(pitches)
	return pitches[len(pitches)/2], float64(len(pitches)) / float64(frames)
}

const shortSource = `"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://media.dubsim.test/short.mp4"`

// twoSpeakers is a 12-second source script of two speakers, kept as it is
// (use_fixed_timings) and dubbed in soundalike voices, so that projects
// that differ in one option have the same script and voices.
const twoSpeakers = shortSource + `,"use_fixed_timings":true,"use_soundalike_voices":true,"source_script":[` +
	`{"start_ms":500,"end_ms":3500,"text":"Hello world, this is the first line of the show.","speaker_id":1},` +
	`{"start_ms":4200,"end_ms":7600,"text":"The red car is fast and the road is very long.","speaker_id":2},` +
	`{"start_ms":8400,"end_ms":11500,"text":"Goodbye world, see you on the road again.","speaker_id":1}]`

// TestTTSVolumeLevels: the five tts_volume values give five levels of the
// dubbed voice, in the documented steps, in the WAV and in the video, and
// the loudest never clips.
func TestTTSVolumeLevels(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	want := map[string]float64{"very_quiet": -12, "quieter": -6, "normal": 0, "louder": 2, "very_loud": 4}
	levels := map[string][2]float64{}
	for _, v := range []string{"very_quiet", "quieter", "normal", "louder", "very_loud"} {
		o := e.ready("dubsim-enterprise", `{`+twoSpeakers+`,"mixing_mode":"voiceover_only","tts_volume":"`+v+`"}`)
		segs := inSegments(script(t, o.project, "output_target_script"))
		levels[v] = [2]float64{rms(floats(o.tts, segs)), rms(floats(o.video, segs))}
		t.Logf("tts_volume %-10s RMS in segments: WAV %.0f, video %.0f", v, levels[v][0], levels[v][1])
	}
	for v, db := range want {
		for i, what := range []string{"WAV", "video"} {
			got := 20 * math.Log10(levels[v][i]/levels["normal"][i])
			assert.InDelta(t, db, got, 0.05, "%s %s: dB relative to normal", what, v)
		}
	}
	o := e.ready("dubsim-enterprise", `{`+twoSpeakers+`,"tts_volume":"very_loud"}`)
	for name, s := range map[string][]int16{"WAV": o.tts, "video": o.video} {
		peak := 0
		for _, v := range s {
			peak = max(peak, int(v), -int(v))
		}
		t.Logf("very_loud over the original: %s peak %d", name, peak)
		assert.Less(t, peak, 32767, "%s clips", name)
	}
}

// TestMixingModes: the video's audio of the three mixing modes tells them
// apart: silent gaps only with voiceover_only; beneath the voice (the
// video's samples minus the dubbed audio's), the
// original speech (periodic, at the source speakers' pitch) only with
// voiceover_with_original_track, a background bed (not periodic) with
// voiceover_without_original_voice.
func TestMixingModes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	got := map[string]outputs{}
	for _, mode := range []string{"voiceover_only", "voiceover_with_original_track", "voiceover_without_original_voice"} {
		got[mode] = e.ready("dubsim-enterprise", `{`+shortSource+`,"mixing_mode":"`+mode+`"}`)
	}
	type measure struct{ silent, gapRMS, underRMS, underVoiced float64 }
	m := map[string]measure{}
	for mode, o := range got {
		segs := script(t, o.project, "output_target_script")
		g := gaps(segs, len(o.video), outRate/5)
		require.NotEmpty(t, g)
		in := inSegments(segs)
		under := residual(o)
		_, voiced := f0(under, in, 30)
		m[mode] = measure{silentShare(o.video, g), rms(floats(o.video, g)), rms(floats(under, in)), voiced}
		t.Logf("%-33s silent share of gaps %.2f, gap RMS %.0f; beneath the voice: RMS %.0f, voiced frames %.2f",
			mode, m[mode].silent, m[mode].gapRMS, m[mode].underRMS, m[mode].underVoiced)
	}
	assert.Greater(t, m["voiceover_only"].silent, 0.99)
	assert.Zero(t, m["voiceover_only"].underRMS, "voiceover_only: the video is the dubbed voice")
	for _, mode := range []string{"voiceover_with_original_track", "voiceover_without_original_voice"} {
		assert.Less(t, m[mode].silent, 0.05, "%s: the original's background fills the gaps", mode)
		assert.Greater(t, m[mode].gapRMS, 100.0, mode)
	}
	assert.Greater(t, m["voiceover_with_original_track"].underVoiced, 0.5, "the original speech beneath the voice")
	assert.Less(t, m["voiceover_without_original_voice"].underVoiced, 0.1, "no voice beneath the dub")
}

// TestGlossaryInTargetScript: the terms of glossary_content are in the
// target script, matched case-insensitively on whole words and phrases, the
// longest first, after an optional header line; the rest is the pseudo
// translation it was without a glossary.
func TestGlossaryInTargetScript(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := func(glossary string) string {
		b := `{` + shortSource + `,"source_script":[` +
			`{"start_ms":500,"end_ms":2000,"text":"Hello World."},` +
			`{"start_ms":3000,"end_ms":6000,"text":"The red car is fast, the cart is red."},` +
			`{"start_ms":7000,"end_ms":9000,"text":"A red car-park."}]`
		if glossary != "" {
			b += `,"glossary_content":` + glossary
		}
		return b + `}`
	}
	text := func(o outputs) []string {
		var out []string
		for _, s := range script(t, o.project, "output_target_script") {
			out = append(out, s.Text)
		}
		return out
	}
	plain := text(e.ready("dubsim-pro", body("")))
	with := text(e.ready("dubsim-pro", body(`"source\ttarget\nworld\tplanète\ncar\tvoiture\nred car\tvoiture rouge\n"`)))
	t.Logf("without a glossary: %q", plain)
	t.Logf("with a glossary:    %q", with)
	require.Len(t, with, 3)
	assert.Regexp(t, `^\S+ planète\.$`, with[0], "world, any case, keeps its punctuation")
	assert.Equal(t, strings.Fields(plain[0])[0], strings.Fields(with[0])[0], "the other words are translated as before")
	assert.Contains(t, with[1], " voiture rouge ", "the longest term first")
	assert.NotContains(t, with[1], "voiture rouge rouge")
	assert.NotContains(t, plain[1]+plain[0], "voiture")
	assert.NotContains(t, with[1], "target", "the header line is not a term")
	assert.Equal(t, 1, strings.Count(with[1], "voiture"), "cart is not car")
	assert.NotContains(t, with[2], "voiture", "car-park is not car")
}

// TestFixedTimingsKeepCues: with use_fixed_timings the cues and speaker ids
// of source_script and source_script_content are the output source script;
// without it, timings follow the speech-rate rule and speakers are the
// client's (source_script) or the simulator's (source_script_content).
func TestFixedTimingsKeepCues(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	given := []seg{{500, 3500, "Hello world, this is the first line of the show.", 1},
		{4200, 7600, "The red car is fast and the road is very long.", 2},
		{8400, 11500, "Goodbye world, see you on the road again.", 1}}
	o := e.ready("dubsim-enterprise", `{`+twoSpeakers+`}`)
	assert.Equal(t, given, script(t, o.project, "output_source_script"))
	target := script(t, o.project, "output_target_script")
	require.Len(t, target, len(given))
	for i := range given {
		assert.Equal(t, [3]int64{given[i].StartMS, given[i].EndMS, int64(given[i].SpeakerID)},
			[3]int64{target[i].StartMS, target[i].EndMS, int64(target[i].SpeakerID)})
	}

	o = e.ready("dubsim-enterprise", `{`+strings.Replace(twoSpeakers, `"use_fixed_timings":true`, `"use_fixed_timings":false`, 1)+`}`)
	got := script(t, o.project, "output_source_script")
	require.Len(t, got, len(given))
	for i := range given {
		assert.Equal(t, given[i].SpeakerID, got[i].SpeakerID, "the client's speakers")
	}
	assert.NotEqual(t, given, got, "timings follow the speech-rate rule")

	srt := "1\n00:00:00,700 --> 00:00:02,250\nALICE: Hello there.\n\n2\n00:00:03,000 --> 00:00:05,500\n[Bob] General Kenobi!\n\n" +
		"3\n00:00:06,000 --> 00:00:07,000\nYou are a bold one.\n\n4\n00:00:08,000 --> 00:00:09,500\nAlice: Indeed.\n"
	content, err := json.Marshal(srt)
	require.NoError(t, err)
	o = e.ready("dubsim-enterprise", `{`+shortSource+`,"use_fixed_timings":true,"source_script_content":`+string(content)+`}`)
	assert.Equal(t, []seg{{700, 2250, "Hello there.", 1}, {3000, 5500, "General Kenobi!", 2}, {6000, 7000, "You are a bold one.", 2}, {8000, 9500, "Indeed.", 1}},
		script(t, o.project, "output_source_script"))
}

// TestSpeakerPitches: each speaker of a project has a pitch of its own in
// the dubbed audio, and a soundalike voice has the pitch of the original
// speaker it replaces (measured beneath the dub in the video).
func TestSpeakerPitches(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct{ name, body string }{
		{"soundalike", `{` + twoSpeakers + `}`},
		{"catalogue", `{` + strings.Replace(twoSpeakers, `"use_soundalike_voices":true`, `"use_soundalike_voices":false`, 1) + `}`},
	} {
		o := e.ready("dubsim-enterprise", tc.body)
		segs := script(t, o.project, "output_target_script")
		pitch := map[int]float64{}
		for _, sid := range []int{1, 2} {
			var mine []seg
			for _, s := range segs {
				if s.SpeakerID == sid {
					mine = append(mine, s)
				}
			}
			hz, voiced := f0(o.tts, inSegments(mine), 300)
			pitch[sid] = hz
			original, _ := f0(residual(o), inSegments(mine), 30)
			t.Logf("%s: speaker %d: dubbed voice %.1f Hz (%.2f of frames voiced), original beneath %.1f Hz", tc.name, sid, hz, voiced, original)
			require.NotZero(t, hz)
			if tc.name == "soundalike" {
				assert.InEpsilon(t, original, hz, 0.03, "speaker %d: a soundalike voice follows the original's pitch", sid)
			}
		}
		ratio := math.Max(pitch[1], pitch[2]) / math.Min(pitch[1], pitch[2])
		assert.Greater(t, ratio, 1.05, "%s: two speakers, two pitches (%v)", tc.name, pitch)
	}
}

// TestOutputsRepeat: the same request gives the same bytes, the mix
// included.
func TestOutputsRepeat(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := `{` + twoSpeakers + `,"tts_volume":"louder","glossary_content":"world\tplanète"}`
	a, b := e.ready("dubsim-enterprise", body), e.ready("dubsim-enterprise", body)
	assert.NotEqual(t, a.project["output_video_url"], b.project["output_video_url"], "two projects")
	assert.Equal(t, a.tts, b.tts)
	assert.Equal(t, a.video, b.video)
	assert.NotEqual(t, a.tts, a.video, "the original beneath the dub")
}
