package audio

import (
	"encoding/binary"
	"io"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// synthTestTrack is a track with two speakers and gaps around them.
func synthTestTrack() Track {
	return Track{
		SampleRate: 22050,
		Duration:   12 * time.Second,
		Segments: []Segment{
			{Start: 500 * time.Millisecond, End: 5 * time.Second, Text: "Hello there, how are you doing today? I am fine, thank you very much for asking.", Voice: Voice{PitchHz: 110, Seed: 1}},
			{Start: 6 * time.Second, End: 11 * time.Second, Text: "Bonjour à tous, je suis très content de vous voir ici ce soir.", Voice: Voice{PitchHz: 220, Seed: 2}},
		},
	}
}

// synthReadSamples reads the whole WAV of t and returns its samples.
func synthReadSamples(t *testing.T, tr Track) []int16 {
	t.Helper()
	data, err := io.ReadAll(NewWAVReader(tr))
	require.NoError(t, err)
	require.Len(t, data, int(WAVSize(tr)))
	pcm := data[wavHeaderSize:]
	out := make([]int16, len(pcm)/2)
	for i := range out {
		out[i] = int16(binary.LittleEndian.Uint16(pcm[2*i:]))
	}
	return out
}

// synthRMS is the root mean square of x.
func synthRMS(x []int16) float64 {
	if len(x) == 0 {
		return 0
	}
	s := 0.0
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(len(x)))
}

// synthFrameRMS returns the RMS of consecutive frames of the given length.
func synthFrameRMS(x []int16, frame int) []float64 {
	var out []float64
	for i := 0; i+frame <= len(x); i += frame {
		out = append(out, synthRMS(x[i:i+frame]))
	}
	return out
}

// synthEstimateF0 estimates the fundamental of x by normalised
// autocorrelation over lags for 70 to 500 Hz: the first peak within 85% of
// the best one, refined by parabolic interpolation. It returns 0 when x is
// too short.
func synthEstimateF0(x []int16, sr float64) float64 {
	minLag, maxLag := int(sr/500), int(sr/70)
	n := len(x) - maxLag - 1
	if n <= 0 {
		return 0
	}
	f := make([]float64, len(x))
	for i, v := range x {
		f[i] = float64(v)
	}
	e0 := 0.0
	for i := range n {
		e0 += f[i] * f[i]
	}
	r := make([]float64, maxLag+2)
	best := 0.0
	for lag := minLag; lag <= maxLag+1; lag++ {
		c, e1 := 0.0, 0.0
		for i := range n {
			c += f[i] * f[i+lag]
			e1 += f[i+lag] * f[i+lag]
		}
		if e0 > 0 && e1 > 0 {
			r[lag] = c / math.Sqrt(e0*e1)
		}
		best = math.Max(best, r[lag])
	}
	for lag := minLag + 1; lag <= maxLag; lag++ {
		if r[lag] >= 0.85*best && r[lag] >= r[lag-1] && r[lag] >= r[lag+1] {
			den := r[lag-1] - 2*r[lag] + r[lag+1]
			d := 0.0
			if den != 0 {
				d = 0.5 * (r[lag-1] - r[lag+1]) / den
			}
			return sr / (float64(lag) + d)
		}
	}
	return 0
}

// synthVoicedF0s estimates f0 on 40 ms windows (hop 15 ms, plus the longest
// lag) of x that lie inside a syllable (every 10 ms frame of them is loud).
func synthVoicedF0s(x []int16, sr float64) []float64 {
	win, hop, frame := int(0.040*sr), int(0.015*sr), int(0.010*sr)
	frames := synthFrameRMS(x, frame)
	peak := slices.Max(frames)
	var out []float64
	maxLag := int(sr / 70)
	for start := 0; start+win+maxLag < len(x); start += hop {
		loud := true
		for i := start / frame; i < (start+win+maxLag)/frame+1 && i < len(frames); i++ {
			if frames[i] < 0.2*peak {
				loud = false
				break
			}
		}
		if !loud {
			continue
		}
		if f0 := synthEstimateF0(x[start:start+win+maxLag], sr); f0 > 0 {
			out = append(out, f0)
		}
	}
	return out
}

func synthMedian(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}

func TestSynthSignal(t *testing.T) {
	t.Parallel()
	tr := synthTestTrack()
	sr := float64(tr.SampleRate)
	samples := synthReadSamples(t, tr)
	at := func(d time.Duration) int { return int(synthSampleAt(d, tr.SampleRate)) }

	t.Run("gaps are silent", func(t *testing.T) {
		t.Parallel()
		gaps := [][2]time.Duration{{0, 500 * time.Millisecond}, {5 * time.Second, 6 * time.Second}, {11 * time.Second, 12 * time.Second}}
		for _, g := range gaps {
			peak := 0
			for _, v := range samples[at(g[0]):at(g[1])] {
				peak = max(peak, int(math.Abs(float64(v))))
			}
			assert.LessOrEqual(t, peak, 16, "gap %v", g)
		}
	})

	for i, seg := range tr.Segments {
		x := samples[at(seg.Start):at(seg.End)]
		t.Run(seg.Text[:5], func(t *testing.T) {
			t.Parallel()
			assert.Greater(t, synthRMS(x), 1500.0, "speech is loud enough")

			// The amplitude envelope comes and goes at syllable rate.
			frames := synthFrameRMS(x, int(0.010*sr))
			peak := slices.Max(frames)
			onsets, low := 0, true
			for _, f := range frames {
				switch {
				case low && f > 0.4*peak:
					onsets++
					low = false
				case !low && f < 0.1*peak:
					low = true
				}
			}
			rate := float64(onsets) / (seg.End - seg.Start).Seconds()
			assert.GreaterOrEqual(t, rate, 3.0, "syllables per second")
			assert.LessOrEqual(t, rate, 7.0, "syllables per second")

			// The pitch is near the voice's and is not constant.
			f0s := synthVoicedF0s(x, sr)
			require.Greater(t, len(f0s), 20, "voiced windows")
			med := synthMedian(f0s)
			assert.InEpsilon(t, seg.Voice.PitchHz, med, 0.15, "median f0 of segment %d", i)
			lo, hi := slices.Min(f0s), slices.Max(f0s)
			t.Logf("%.1f syllables/s; f0 median %.1f Hz, %.1f..%.1f Hz over %d windows", rate, med, lo, hi, len(f0s))
			assert.Greater(t, (hi-lo)/med, 0.04, "pitch contour varies (%.1f..%.1f Hz)", lo, hi)
			assert.Less(t, (hi-lo)/med, 0.5, "no octave jumps (%.1f..%.1f Hz)", lo, hi)
		})
	}
}

func TestSynthVoicesDiffer(t *testing.T) {
	t.Parallel()
	const text = "The quick brown fox jumps over the lazy dog."
	f0 := func(pitch float64) float64 {
		tr := Track{SampleRate: 16000, Duration: 3 * time.Second, Segments: []Segment{
			{Start: 0, End: 3 * time.Second, Text: text, Voice: Voice{PitchHz: pitch, Seed: 7}},
		}}
		return synthMedian(synthVoicedF0s(synthReadSamples(t, tr), 16000))
	}
	low, high := f0(110), f0(220)
	assert.InEpsilon(t, 110, low, 0.15)
	assert.InEpsilon(t, 220, high, 0.15)
	assert.Greater(t, high/low, 1.6)
}

func TestSynthDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		voice Voice
		want  float64
	}{
		{"zero pitch means 150", Voice{}, 150},
		{"negative pitch means 150", Voice{PitchHz: -3}, 150},
		{"NaN pitch means 150", Voice{PitchHz: math.NaN()}, 150},
		{"explicit pitch", Voice{PitchHz: 180}, 180},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, synthPitch(tc.voice))
			tr := Track{Duration: 2 * time.Second, Segments: []Segment{{Start: 0, End: 2 * time.Second, Text: "one two three four", Voice: tc.voice}}}
			assert.InEpsilon(t, tc.want, synthMedian(synthVoicedF0s(synthReadSamples(t, tr), synthDefaultSampleRate)), 0.15)
		})
	}
}

func TestSynthSampleAt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		d    time.Duration
		sr   int
		want int64
	}{
		{"zero", 0, 22050, 0},
		{"negative", -time.Second, 22050, 0},
		{"one second", time.Second, 44100, 44100},
		{"rounds half up", 500 * time.Microsecond, 1000, 1},
		{"rounds down", 499 * time.Microsecond, 1000, 0},
		{"fraction", 12345 * time.Millisecond, 22050, 272207},
		{"two hours", 2 * time.Hour, 22050, 2 * 3600 * 22050},
		{"capped", 1000 * time.Hour, 44100, synthMaxSamples},
		{"huge", time.Duration(math.MaxInt64), 44100, synthMaxSamples},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, synthSampleAt(tc.d, tc.sr))
		})
	}
}

func TestSynthSpans(t *testing.T) {
	t.Parallel()
	s := time.Second
	tests := []struct {
		name string
		segs []Segment
		want []synthSpan
	}{
		{"none", nil, []synthSpan{}},
		{"sorted", []Segment{{Start: 1 * s, End: 2 * s}, {Start: 3 * s, End: 4 * s}}, []synthSpan{{1000, 2000, 0}, {3000, 4000, 1}}},
		{"unsorted", []Segment{{Start: 3 * s, End: 4 * s}, {Start: 1 * s, End: 2 * s}}, []synthSpan{{1000, 2000, 1}, {3000, 4000, 0}}},
		{"overlap clamped", []Segment{{Start: 1 * s, End: 3 * s}, {Start: 2 * s, End: 4 * s}}, []synthSpan{{1000, 3000, 0}, {3000, 4000, 1}}},
		{"contained dropped", []Segment{{Start: 1 * s, End: 5 * s}, {Start: 2 * s, End: 3 * s}}, []synthSpan{{1000, 5000, 0}}},
		{"empty and reversed dropped", []Segment{{Start: 1 * s, End: 1 * s}, {Start: 3 * s, End: 2 * s}}, []synthSpan{}},
		{"clamped to track", []Segment{{Start: -s, End: s}, {Start: 9 * s, End: 20 * s}, {Start: 11 * s, End: 12 * s}}, []synthSpan{{0, 1000, 0}, {9000, 10000, 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := synthSpans(Track{Segments: tc.segs}, 1000, 10000)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestSynthPattern(t *testing.T) {
	t.Parallel()
	kinds := func(p []uint8) string {
		b := make([]byte, len(p))
		for i, k := range p {
			b[i] = "ifp"[k&synthSlotKindMask]
		}
		return string(b)
	}
	tests := []struct {
		name string
		text string
		want string
	}{
		{"one word one syllable", "dog", "f"},
		{"syllables by vowel groups", "banana", "iif"},
		{"words", "hello big world", "ifff"},
		{"punctuation pauses", "yes, no. maybe", "fpfpif"},
		{"no vowels", "rhythm", "f"},
		{"han characters", "你好", "ff"},
		{"cyrillic", "привет", "if"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := synthPattern(nil, tc.text, 1)
			assert.Equal(t, tc.want, kinds(got))
			assert.NotZero(t, got[0]&synthSlotStress, "first syllable of a word is stressed")
		})
	}
	t.Run("no words", func(t *testing.T) {
		t.Parallel()
		a := synthPattern(nil, " ... ", 1)
		assert.NotEmpty(t, a)
		assert.Equal(t, a, synthPattern(nil, "", 1), "only the hash matters")
		assert.NotEqual(t, a, synthPattern(nil, "", 2), "the hash matters")
	})
	t.Run("bounded", func(t *testing.T) {
		t.Parallel()
		long := make([]byte, 0, 100000)
		for len(long) < 100000 {
			long = append(long, "la "...)
		}
		assert.LessOrEqual(t, len(synthPattern(nil, string(long), 1)), synthMaxPattern)
	})
}

// TestSynthSegmentsIndependent checks that a segment's signal depends on its
// text, index and voice only, not on where it is read from.
func TestSynthSegmentsIndependent(t *testing.T) {
	t.Parallel()
	seg := Segment{Start: time.Second, End: 3 * time.Second, Text: "same words here", Voice: Voice{PitchHz: 150, Seed: 3}}
	base := Track{SampleRate: 8000, Duration: 4 * time.Second, Segments: []Segment{seg}}
	ref := synthReadSamples(t, base)[8000:24000]
	tests := []struct {
		name  string
		tweak func(*Track)
		same  bool
	}{
		{"longer track", func(tr *Track) { tr.Duration = 10 * time.Second }, true},
		{"other text", func(tr *Track) { tr.Segments[0].Text = "other words there" }, false},
		{"other seed", func(tr *Track) { tr.Segments[0].Voice.Seed = 4 }, false},
		{"other pitch", func(tr *Track) { tr.Segments[0].Voice.PitchHz = 151 }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := base
			tr.Segments = slices.Clone(base.Segments)
			tc.tweak(&tr)
			got := synthReadSamples(t, tr)[8000:24000]
			if tc.same {
				assert.Equal(t, ref, got)
			} else {
				assert.NotEqual(t, ref, got)
			}
		})
	}
}

func TestSynthReaderSeekErrors(t *testing.T) {
	t.Parallel()
	r := NewWAVReader(Track{Duration: time.Second})
	size := WAVSize(Track{Duration: time.Second})
	tests := []struct {
		name    string
		offset  int64
		whence  int
		want    int64
		wantErr bool
	}{
		{"start", 10, io.SeekStart, 10, false},
		{"current", 5, io.SeekCurrent, 15, false},
		{"end", -4, io.SeekEnd, size - 4, false},
		{"past end", 100, io.SeekEnd, size + 100, false},
		{"negative", -1, io.SeekStart, 0, true},
		{"bad whence", 0, 42, 0, true},
	}
	for _, tc := range tests { // sequential: they share the reader
		got, err := r.Seek(tc.offset, tc.whence)
		if tc.wantErr {
			assert.Error(t, err, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
	_, err := r.Seek(0, io.SeekEnd)
	require.NoError(t, err)
	n, err := r.Read(make([]byte, 10))
	assert.Equal(t, 0, n)
	assert.ErrorIs(t, err, io.EOF)
}
