package platform

import (
	"math"
	"strconv"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/audio"
	"github.com/dubsim/dubsim/sim/script"
)

// TTSVolumeDB is the gain of the dubbed voice per tts_volume: the voice
// peaks at 0.55 of full scale, so very_loud (0.87) over the original (0.13
// at most) never clips.
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
// script in its speakers' voices over the whole source duration.
func Track(p sim.Project) audio.Track {
	voices := targetVoices(p)
	t := audio.Track{SampleRate: outputSampleRate, Duration: p.Duration(), GainDB: TTSVolumeDB[p.TTSVolume]}
	t.Segments = segments(p.TargetScript, t.Duration, voices)
	return t
}

// VideoTrack renders the audio of a project's dubbed video: Track alone, or
// over the original (ducked under each segment), or over its background
// alone, as mixing_mode says.
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

// voice is a voice of a style drawn from parts (the same parts, the same
// voice in every project): the style's base pitch varied within ±pitchSpread.
func voice(style string, parts ...string) audio.Voice {
	h := sim.NewIDs(0).Hash(parts...)
	base := pitchMasculine
	if style == sim.StyleFeminine {
		base = pitchFeminine
	}
	return audio.Voice{PitchHz: base * (1 - pitchSpread + 2*pitchSpread*float64(h%1000)/999), Seed: h}
}

func originalVoice(p sim.Project, sid int, style string) audio.Voice {
	return voice(style, "original voice", p.SourceVideoURL, strconv.Itoa(sid))
}

// sourceVoices are the voices of the original speech, one per speaker of
// the source script, each kept pitchApart from those before it.
func sourceVoices(p sim.Project) map[int]audio.Voice {
	ids := script.Speakers(p.SourceScript)
	voices := make(map[int]audio.Voice, len(ids))
	var taken []float64
	for _, sid := range ids {
		v := originalVoice(p, sid, script.SourceStyle(p.SourceVideoURL, sid))
		v.PitchHz = apart(v.PitchHz, taken)
		taken = append(taken, v.PitchHz)
		voices[sid] = v
	}
	return voices
}

// targetVoices are the dubbed voices, one per target speaker, each kept
// pitchApart from those before it: soundalike and emotional_transfer take
// the voice of the source speaker with the same id (or one drawn like it).
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
				v = originalVoice(p, s.SpeakerID, s.Style)
			}
		default:
			v = voice(s.Style, "voice", s.VoiceKey)
		}
		v.PitchHz = apart(v.PitchHz, taken)
		taken = append(taken, v.PitchHz)
		voices[s.SpeakerID] = v
	}
	return voices
}

// apart raises pitch by steps of pitchApart until it is that ratio away
// from every pitch in taken.
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
