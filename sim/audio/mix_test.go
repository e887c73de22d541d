package audio

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mixTestTrack is synthTestTrack's voice at gainDB over original, the
// original speech spoken by other voices a little before the dub.
func mixTestTrack(gainDB float64, original *Original) Track {
	t := synthTestTrack()
	t.GainDB, t.Original = gainDB, original
	if original != nil && original.Speech != nil {
		speech := make([]Segment, len(original.Speech))
		for i, s := range original.Speech {
			s.Voice = Voice{PitchHz: s.Voice.PitchHz * 1.3, Seed: s.Voice.Seed + 100}
			speech[i] = s
		}
		o := *original
		o.Speech = speech
		t.Original = &o
	}
	return t
}

// mixSpans returns the samples of x inside the track's segments (in) and at
// least 200 ms away from them (out).
func mixSpans(tr Track, x []int16) (in, out []int16) {
	sr := synthSampleRate(tr.SampleRate)
	margin := int64(sr / 5)
	spans := synthSpans(tr, sr, int64(len(x)))
	for n := range int64(len(x)) {
		near, inside := false, false
		for _, s := range spans {
			inside = inside || (n >= s.start && n < s.end)
			near = near || (n >= s.start-margin && n < s.end+margin)
		}
		switch {
		case inside:
			in = append(in, x[n])
		case !near:
			out = append(out, x[n])
		}
	}
	return in, out
}

func TestMixGain(t *testing.T) {
	t.Parallel()
	base := synthRMS(synthReadSamples(t, mixTestTrack(0, nil)))
	for _, db := range []float64{-12, -6, 2, 4} {
		got := synthRMS(synthReadSamples(t, mixTestTrack(db, nil)))
		assert.InDelta(t, db, 20*math.Log10(got/base), 0.01, "GainDB %v", db)
	}
}

// TestMixOriginal: the original speech and the bed play beneath the voice,
// lowered by 15 dB under its segments when ducked, and nothing clips at the
// loudest gain.
func TestMixOriginal(t *testing.T) {
	t.Parallel()
	voice := synthReadSamples(t, mixTestTrack(0, nil))
	beneath := func(o *Original) (in, out float64) {
		tr := mixTestTrack(0, o)
		x := synthReadSamples(t, tr)
		require.Len(t, x, len(voice))
		d := make([]int16, len(x))
		for i := range x {
			d[i] = x[i] - voice[i]
		}
		a, b := mixSpans(tr, d)
		return synthRMS(a), synthRMS(b)
	}
	in, out := beneath(&Original{Seed: 3})
	t.Logf("bed: RMS %.0f under the voice, %.0f away from it", in, out)
	assert.InDelta(t, 0, 20*math.Log10(in/out), 1, "a bed that is not ducked")
	assert.InDelta(t, -40, 20*math.Log10(out/32768), 1.5, "the bed's level in dBFS")
	in, out = beneath(&Original{Seed: 3, Duck: true})
	t.Logf("ducked bed: RMS %.0f under the voice, %.0f away from it", in, out)
	assert.InDelta(t, originalDuckDB, 20*math.Log10(in/out), 1)
	in, _ = beneath(&Original{Speech: synthTestTrack().Segments, Seed: 3, Duck: true})
	t.Logf("ducked original speech and bed: RMS %.0f under the voice", in)
	assert.Greater(t, in, 200.0, "the original speech is heard beneath the voice")

	for _, o := range []*Original{nil, {Seed: 3}, {Speech: synthTestTrack().Segments, Seed: 3, Duck: true}} {
		peak := 0
		for _, v := range synthReadSamples(t, mixTestTrack(4, o)) {
			peak = max(peak, int(v), -int(v))
		}
		assert.Less(t, peak, 32767, "+4 dB over %+v", o)
	}
}

// The bed's noise stays within ±bedUnit, so a moving sum of bedWindow of
// them, scaled by bedPeak/(bedWindow*bedUnit), never exceeds bedPeak.
func TestMixBedBound(t *testing.T) {
	t.Parallel()
	m := newMixer(Track{SampleRate: 22050, Duration: time.Second, Original: &Original{Seed: 1}}, 22050, 22050)
	var lo, hi int64
	for k := range int64(100000) {
		v := m.bedNoise(k)
		lo, hi = min(lo, v), max(hi, v)
	}
	assert.GreaterOrEqual(t, lo, int64(-bedUnit))
	assert.LessOrEqual(t, hi, int64(bedUnit))
}
