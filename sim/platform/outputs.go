package platform

import (
	"math"
	"strconv"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/audio"
	"github.com/dubsim/dubsim/sim/script"
)

// TTSVolumeDB is the gain of the dubbed voice per tts_volume, in decibels
// relative to normal. The synthesiser's voice peaks at 0.55 of full scale,
// so very_loud peaks at 0.87 and, with the original's 0.13 at most beneath
// it, the mix never clips.
var TTSVolumeDB = map[string]float64{
	"very_quiet": -12,
	"quieter":    -6,
	"normal":     0,
	"louder":     2,
	"very_loud":  4,
}

// Voice pitches: a style's base pitch, varied by up to ±12% per voice, and
// the least ratio between the pitches of two speakers of one project.
const (
	pitchMasculine = 110.0
	pitchFeminine  = 205.0
	pitchSpread    = 0.12
	pitchApart     = 1.1
)

// Track renders a project's dubbed voice (output_tts_audio_url): the target
// script's segments in the voices of their speakers, at the project's
// tts_volume, over the whole source duration, silent between segments.
func Track(p sim.Project) audio.Track {
	voices := targetVoices(p)
	t := audio.Track{SampleRate: outputSampleRate, Duration: p.Duration(), GainDB: TTSVolumeDB[p.TTSVolume]}
	t.Segments = segments(p.TargetScript, t.Duration, voices)
	return t
}

// VideoTrack renders the audio of a project's dubbed video
// (output_video_url): the dubbed voice of Track mixed with the source's
// original track as the project's mixing_mode says.
//
//   - voiceover_only: the voice alone.
//   - voiceover_with_original_track: the voice over the original (speech
//     and background), ducked under each dubbed segment.
//   - voiceover_without_original_voice: the voice over the background alone
//     (the original voices removed), not ducked.
func VideoTrack(p sim.Project) audio.Track {
	t := Track(p)
	seed := sim.NewIDs(0).Hash("original", p.SourceVideoURL)
	switch p.MixingMode {
	case sim.MixWithOriginalTrack:
		t.Original = &audio.Original{Speech: segments(p.SourceScript, t.Duration, sourceVoices(p)), Seed: seed, Duck: true}
	case sim.MixWithoutOriginalVoice:
		t.Original = &audio.Original{Seed: seed}
	}
	return t
}

// segments lays a script out in voices, dropping what starts past the end.
func segments(segs []sim.Segment, d time.Duration, voices map[int]audio.Voice) []audio.Segment {
	var out []audio.Segment
	for _, s := range segs {
		start, end := time.Duration(s.StartMS)*time.Millisecond, time.Duration(s.EndMS)*time.Millisecond
		if start >= d {
			continue
		}
		out = append(out, audio.Segment{Start: start, End: min(end, d), Text: s.Text, Voice: voices[s.SpeakerID]})
	}
	return out
}

// VoiceOf is the voice of a catalogue voice key in a style, the same in
// every project: the style's base pitch varied by the key.
func VoiceOf(style, voiceKey string) audio.Voice {
	h := sim.NewIDs(0).Hash("voice", voiceKey)
	return audio.Voice{PitchHz: stylePitch(style, h), Seed: h}
}

// stylePitch is a style's base pitch varied by h within ±pitchSpread.
func stylePitch(style string, h uint64) float64 {
	base := pitchMasculine
	if style == sim.StyleFeminine {
		base = pitchFeminine
	}
	return base * (1 - pitchSpread + 2*pitchSpread*float64(h%1000)/999)
}

// sourceVoices are the voices of the original speech, one per speaker of
// the source script: the style script.SourceStyle gives the speaker, a pitch
// drawn from the source and the speaker id, kept pitchApart from the
// speakers before it.
func sourceVoices(p sim.Project) map[int]audio.Voice {
	ids := script.Speakers(p.SourceScript)
	voices := make(map[int]audio.Voice, len(ids))
	var taken []float64
	for _, sid := range ids {
		h := sim.NewIDs(0).Hash("original voice", p.SourceVideoURL, strconv.Itoa(sid))
		pitch := apart(stylePitch(script.SourceStyle(p.SourceVideoURL, sid), h), taken)
		taken = append(taken, pitch)
		voices[sid] = audio.Voice{PitchHz: pitch, Seed: h}
	}
	return voices
}

// targetVoices are the dubbed voices, one per target speaker: a catalogue
// voice sounds as VoiceOf says; soundalike and emotional_transfer are the
// voice (pitch and timbre) of the source speaker with the same id, or one
// drawn like it when the source script has no such speaker. Each is kept pitchApart from the
// speakers before it, so two speakers can be told apart.
func targetVoices(p sim.Project) map[int]audio.Voice {
	source := sourceVoices(p)
	voices := make(map[int]audio.Voice, len(p.Speakers))
	var taken []float64
	for _, s := range p.Speakers {
		var v audio.Voice
		switch s.VoiceKey {
		case sim.VoiceSoundalike, sim.VoiceEmotionalTransfer:
			v = source[s.SpeakerID]
			if v.PitchHz == 0 {
				h := sim.NewIDs(0).Hash("original voice", p.SourceVideoURL, strconv.Itoa(s.SpeakerID))
				v = audio.Voice{PitchHz: stylePitch(s.Style, h), Seed: h}
			}
		default:
			v = VoiceOf(s.Style, s.VoiceKey)
		}
		v.PitchHz = apart(v.PitchHz, taken)
		taken = append(taken, v.PitchHz)
		voices[s.SpeakerID] = v
	}
	return voices
}

// apart raises pitch by steps of pitchApart until it is at least that ratio
// away from every pitch in taken.
func apart(pitch float64, taken []float64) float64 {
	for range 32 {
		clash := false
		for _, q := range taken {
			if math.Abs(math.Log(pitch/q)) < math.Log(pitchApart)-1e-9 {
				clash = true
				break
			}
		}
		if !clash {
			break
		}
		pitch *= pitchApart
	}
	return pitch
}
