package audio

// This file mixes a track's voice with what plays beneath it: the source's
// own soundtrack, made of its speech (in the source speakers' voices) and a
// background bed. Like the voice, every mixed sample is a pure function of
// its index, so a seek never replays the mix from the start.

import (
	"encoding/binary"
	"math"
	"sort"
	"time"
)

// Original is the source's own soundtrack beneath the voice of a Track.
//
// Its speech is synthesised like the voice, 4 dB below it. Its background
// bed is low-passed noise (a moving sum of 32 hashed white-noise samples,
// about -40 dBFS RMS, never above 0.1 of full scale) that runs the whole
// track. With Duck, the whole original is lowered by 15 dB under each of the
// voice's segments, reaching that depth at the segment start after a 150 ms
// ramp and leaving it over 150 ms after the segment end.
type Original struct {
	Speech []Segment // the source's speech; nil when its voices are removed
	Seed   uint64    // varies the background bed
	Duck   bool      // lower the original under the voice's segments
}

// The levels and timings Original describes.
const (
	originalSpeechDB = -4.0
	originalDuckDB   = -15.0
	originalDuckRamp = 150 * time.Millisecond
	// bedWindow is the length of the bed's moving sum: a low-pass with
	// its first null at sampleRate/bedWindow (689 Hz at 22050 Hz).
	bedWindow = 32
	bedPeak   = 0.1 * 32767 // in 16-bit PCM units
	// bedUnit is the half-range of one integer noise sample; the moving
	// sum stays exact in an int64, so a sample does not depend on where a
	// read started.
	bedUnit = 1 << 20
)

// mixChunk is how many samples a mixer computes at a time.
const mixChunk = 1024

// dbGain converts decibels to a linear gain (0 dB is exactly 1).
func dbGain(db float64) float64 {
	if db == 0 || math.IsNaN(db) || math.IsInf(db, 0) {
		return 1
	}
	return math.Pow(10, db/20)
}

// mixer computes the PCM samples of a track: its voice times its gain, plus
// its original beneath.
type mixer struct {
	n      int64
	voice  *synthGen
	gain   float64
	speech *synthGen // nil without original speech
	bed    bool
	seed   uint64
	duck   bool
	ramp   int64 // originalDuckRamp in samples
	buf    []float64
	under  []float64
}

func newMixer(t Track, sr int, n int64) *mixer {
	m := &mixer{n: n, voice: newSynthGen(t, sr, n), gain: dbGain(t.GainDB)}
	if o := t.Original; o != nil {
		if len(o.Speech) > 0 {
			m.speech = newSynthGen(Track{SampleRate: sr, Duration: t.Duration, Segments: o.Speech}, sr, n)
		}
		m.bed, m.seed, m.duck = true, o.Seed, o.Duck
		m.ramp = max(1, synthSampleAt(originalDuckRamp, sr))
		m.under = make([]float64, mixChunk)
	}
	m.buf = make([]float64, mixChunk)
	return m
}

// fill writes the samples [first, first+len(dst)/2) as 16-bit little-endian
// PCM into dst.
func (m *mixer) fill(first int64, dst []byte) {
	count := int64(len(dst) / 2)
	for off := int64(0); off < count; off += mixChunk {
		c := min(mixChunk, count-off)
		buf := m.buf[:c]
		m.voice.render(first+off, buf)
		if m.gain != 1 {
			for i := range buf {
				buf[i] *= m.gain
			}
		}
		if m.bed {
			m.addOriginal(first+off, buf)
		}
		out := dst[2*off : 2*(off+c)]
		for i, x := range buf {
			binary.LittleEndian.PutUint16(out[2*i:], uint16(pcm(x)))
		}
	}
}

// addOriginal adds the original beneath samples [first, first+len(buf)).
func (m *mixer) addOriginal(first int64, buf []float64) {
	under := m.under[:len(buf)]
	if m.speech != nil {
		m.speech.render(first, under)
		g := dbGain(originalSpeechDB)
		for i := range under {
			under[i] *= g
		}
	} else {
		clear(under)
	}
	m.addBed(first, under)
	if m.duck {
		m.applyDuck(first, under)
	}
	for i, u := range under {
		buf[i] += u
	}
}

// bedNoise is the integer white noise of the bed at sample k.
func (m *mixer) bedNoise(k int64) int64 {
	return int64(synthMix(m.seed^uint64(k)*0x9e3779b97f4a7c15)%(2*bedUnit+1)) - bedUnit
}

// addBed adds the background bed: the moving sum of bedWindow noise samples
// ending at each sample, scaled so that it never exceeds bedPeak.
func (m *mixer) addBed(first int64, dst []float64) {
	const scale = bedPeak / (bedWindow * bedUnit)
	var sum int64
	for k := first - bedWindow + 1; k <= first; k++ {
		sum += m.bedNoise(k)
	}
	for i := range dst {
		if i > 0 {
			n := first + int64(i)
			sum += m.bedNoise(n) - m.bedNoise(n-bedWindow)
		}
		dst[i] += float64(sum) * scale
	}
}

// applyDuck lowers dst, samples [first, first+len(dst)), under the voice's
// segments.
func (m *mixer) applyDuck(first int64, dst []float64) {
	spans := m.voice.spans
	floor := dbGain(originalDuckDB)
	// First span that ends after first: the one sample first is in or
	// the next one.
	si := sort.Search(len(spans), func(i int) bool { return spans[i].end > first })
	// near is the depth d samples away from a segment: 1 inside it (d <= 0),
	// 0 a ramp or more away.
	near := func(d int64) float64 { return synthSmooth(1 - float64(d)/float64(m.ramp)) }
	for i := range dst {
		n := first + int64(i)
		for si < len(spans) && spans[si].end <= n {
			si++
		}
		depth := 0.0
		if si < len(spans) {
			depth = near(spans[si].start - n)
		}
		if si > 0 {
			depth = max(depth, near(n-spans[si-1].end))
		}
		if depth > 0 {
			dst[i] *= 1 - (1-floor)*depth
		}
	}
}
