package audio

// This file holds the deterministic speech-like signal shared by the WAV and
// MOV outputs.
//
// Every sample is a pure function of its index and the Track: the oscillator
// phase is computed analytically from the time since the segment start, the
// syllable pattern is a hash of (text, segment index, slot index), and the
// noise is a hash of the sample index. Seeking therefore never needs to replay
// synthesis from the start of the file.

import (
	"cmp"
	"hash/fnv"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Segment is one stretch of speech in a track.
type Segment struct {
	Start, End time.Duration // End > Start; segments are sorted and do not overlap (the caller guarantees it; clamp defensively anyway)
	Text       string        // drives the deterministic syllable pattern (hash of text and index)
	Voice      Voice
}

// Voice parameterises the speech-like signal.
type Voice struct {
	PitchHz float64 // base f0, e.g. 110 for a masculine voice, 210 for a feminine one; <= 0 means 150
	Seed    uint64  // varies timbre/contour deterministically between voices
}

// Track describes a whole mono PCM track.
//
// A SampleRate <= 0 means 22050. The number of samples is
// round(Duration * SampleRate), capped at 2147483629 so that the WAV data
// chunk fits the 32-bit RIFF sizes (about 27 hours at 22050 Hz, 13.5 hours
// at 44100 Hz); a negative Duration means an empty track.
type Track struct {
	SampleRate int
	Duration   time.Duration
	Segments   []Segment
	// GainDB scales the voice of Segments, in decibels: 0 keeps the
	// synthesiser's level (peaks at most 0.55 of full scale).
	GainDB float64
	// Original plays beneath the voice (see Original); nil is silence.
	Original *Original
}

const (
	synthDefaultSampleRate = 22050
	synthDefaultPitchHz    = 150.0

	// synthMaxSamples caps a track so that 36 + 2*samples fits in uint32.
	synthMaxSamples int64 = (math.MaxUint32 - 36) / 2

	// synthGain scales the [-1, 1] signal to 16-bit PCM, leaving headroom.
	synthGain = 0.55 * 32767

	// A voice has synthVowels wavetables of synthTableSize samples (one
	// cycle) summing at most synthMaxHarmonics; a generator keeps the tables
	// of synthVoiceCacheSize voices. A segment's slot pattern has at most
	// synthMaxPattern slots, from the first synthMaxPatternRunes of its text.
	synthTableSize       = 1024
	synthVowels          = 5
	synthMaxHarmonics    = 24
	synthVoiceCacheSize  = 8
	synthMaxPattern      = 512
	synthMaxPatternRunes = 4096

	// Envelope timings, in seconds.
	synthAttack  = 0.020
	synthRelease = 0.030
	synthFadeIn  = 0.005
	synthFadeOut = 0.010
)

// Slot kinds of a segment's syllable pattern.
const (
	synthSlotInner    uint8 = iota // syllable followed by a short closure
	synthSlotFinal                 // last syllable of a word, followed by a gap
	synthSlotPause                 // silence (punctuation)
	synthSlotKindMask       = 3
	synthSlotStress   uint8 = 4 // flag: first syllable of a word
)

// synthFormants are rough (F1, F2, F3) of the vowels a, e, i, o, u.
var synthFormants = [synthVowels][3]float64{
	{730, 1090, 2440},
	{530, 1840, 2480},
	{270, 2290, 3010},
	{570, 840, 2410},
	{300, 870, 2240},
}

// synthSampleRate returns the effective sample rate of a track.
func synthSampleRate(sr int) int {
	if sr <= 0 {
		return synthDefaultSampleRate
	}
	return sr
}

// synthSampleAt returns round(d * sr) in samples, clamped to
// [0, synthMaxSamples], without overflowing int64.
func synthSampleAt(d time.Duration, sr int) int64 {
	if d <= 0 || sr <= 0 {
		return 0
	}
	const sec = int64(time.Second)
	s, rem := int64(d)/sec, int64(d)%sec
	if s >= synthMaxSamples/int64(sr)+1 {
		return synthMaxSamples
	}
	return min(s*int64(sr)+(rem*int64(sr)+sec/2)/sec, synthMaxSamples)
}

// synthMix is the splitmix64 finaliser.
func synthMix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// synthUnit maps a hash to [0, 1).
func synthUnit(h uint64) float64 {
	return float64(h>>11) / (1 << 53)
}

// synthSmooth is the smoothstep of x clamped to [0, 1].
func synthSmooth(x float64) float64 {
	x = max(0, min(1, x))
	return x * x * (3 - 2*x)
}

// synthPitch returns the effective base pitch of a voice.
func synthPitch(v Voice) float64 {
	if !(v.PitchHz > 0) || math.IsInf(v.PitchHz, 0) {
		return synthDefaultPitchHz
	}
	return v.PitchHz
}

// synthSpan is a segment in samples, after sorting and clamping.
type synthSpan struct {
	start, end int64
	seg        int // index in Track.Segments
}

// synthSpans sorts and clamps the segments of t to [0, n) without overlaps.
func synthSpans(t Track, sr int, n int64) []synthSpan {
	spans := make([]synthSpan, 0, len(t.Segments))
	for i, seg := range t.Segments {
		spans = append(spans, synthSpan{synthSampleAt(seg.Start, sr), synthSampleAt(seg.End, sr), i})
	}
	slices.SortStableFunc(spans, func(a, b synthSpan) int {
		return cmp.Compare(t.Segments[a.seg].Start, t.Segments[b.seg].Start)
	})
	prev := int64(0)
	kept := spans[:0]
	for _, sp := range spans {
		sp.start, sp.end = max(sp.start, prev), min(sp.end, n)
		if sp.end > sp.start {
			kept = append(kept, sp)
			prev = sp.end
		}
	}
	return kept
}

// synthVoiceKey identifies the wavetables of a voice.
type synthVoiceKey struct {
	pitch float64
	seed  uint64
}

// synthVoiceTables holds one cycle of each vowel timbre of a voice, with a
// guard sample at the end for linear interpolation.
type synthVoiceTables [synthVowels][synthTableSize + 1]float32

// synthNewVoiceTables builds the band-limited glottal-like wavetables of a
// voice: harmonics of f0 with a 1/k^tilt roll-off shaped by vowel formants.
func synthNewVoiceTables(f0 float64, seed uint64, sr float64) *synthVoiceTables {
	// Keep every harmonic below 0.45*sr even at the top of the pitch contour.
	k := int(0.45 * sr / (f0 * 1.2))
	k = max(1, min(k, synthMaxHarmonics))
	formantScale := 1 + 0.17*max(0, min(1, (f0-110)/100))
	formantScale *= 0.95 + 0.1*synthUnit(synthMix(seed^0x5151))
	tilt := 1.0 + 0.3*synthUnit(synthMix(seed^0x7171))
	var amps, sinPh, cosPh [synthMaxHarmonics + 1]float64
	tables := new(synthVoiceTables)
	var cycle [synthTableSize]float64
	sine := synthSineTable()
	for v := range synthVowels {
		for h := 1; h <= k; h++ {
			fh := float64(h) * f0
			g := 0.3
			for i, f := range synthFormants[v] {
				bw := 90.0 + 50*float64(i)
				d := (fh - f*formantScale) / bw
				g += [3]float64{1, 0.6, 0.3}[i] / (1 + d*d)
			}
			amps[h] = g * math.Pow(float64(h), -tilt)
			ph := 0.5 * (synthUnit(synthMix(seed^uint64(h*31+v))) - 0.5)
			sinPh[h], cosPh[h] = math.Sincos(ph)
		}
		peak := 0.0
		for i := range cycle {
			s := 0.0
			for h := 1; h <= k; h++ {
				// sin(h x + ph) with x = 2 pi i / synthTableSize.
				j := (h * i) % synthTableSize
				s += amps[h] * (sine[j]*cosPh[h] + sine[(j+synthTableSize/4)%synthTableSize]*sinPh[h])
			}
			cycle[i] = s
			peak = math.Max(peak, math.Abs(s))
		}
		if peak == 0 {
			peak = 1
		}
		for i, s := range cycle {
			tables[v][i] = float32(s / peak)
		}
		tables[v][synthTableSize] = tables[v][0]
	}
	return tables
}

// synthSineTable is one cycle of sin(2 pi i / synthTableSize).
var synthSineTable = sync.OnceValue(func() *[synthTableSize]float64 {
	t := new([synthTableSize]float64)
	for i := range t {
		t[i] = math.Sin(2 * math.Pi * float64(i) / synthTableSize)
	}
	return t
})

// synthSlot holds the syllable of one slot of a segment.
type synthSlot struct {
	on, off  float64 // voiced region within the slot, in seconds
	amp      float64
	fricEnd  float64 // noise (consonant) region [0, fricEnd), 0 if none
	fricAmp  float64
	vowel    int
	silent   bool
	attack   float64
	release  float64
	invVoice float64 // 1 / (off - on)
}

// synthSegState is everything derived from the current segment.
type synthSegState struct {
	start, end int64
	hash       uint64
	f0         float64
	// Pitch contour: f(t) = f0 * (1 + a1 sin(w1 t + p1) + a2 sin(w2 t + p2)).
	a1, w1, p1, c1 float64
	a2, w2, p2, c2 float64
	slotLen        float64
	pattern        []uint8
	tables         *synthVoiceTables
	dur            float64
}

// synthGen computes the samples of a track on demand. It is not safe for
// concurrent use; its caches never change the values it computes.
type synthGen struct {
	track  Track
	sr     float64
	n      int64
	spans  []synthSpan
	cur    int // span the state belongs to, -1 if none
	st     synthSegState
	voices map[synthVoiceKey]*synthVoiceTables
	slotK  int64
	slot   synthSlot
	// Phase anchors: cycles of f0 at the start of anchor interval anchorJ
	// of the current segment, and their increase per sample within it.
	anchorJ     int64
	anchorCyc   float64
	anchorSlope float64
}

func newSynthGen(t Track, sr int, n int64) *synthGen {
	return &synthGen{
		track:  t,
		sr:     float64(sr),
		n:      n,
		spans:  synthSpans(t, sr, n),
		cur:    -1,
		voices: make(map[synthVoiceKey]*synthVoiceTables),
	}
}

// render writes the samples [first, first+len(dst)) of the voice into dst,
// in 16-bit PCM units before rounding. Samples outside every segment are 0.
func (g *synthGen) render(first int64, dst []float64) {
	end := first + int64(len(dst))
	clear(dst)
	// From the first span that ends after first.
	si := sort.Search(len(g.spans), func(i int) bool { return g.spans[i].end > first })
	for ; si < len(g.spans) && g.spans[si].start < end; si++ {
		sp := g.spans[si]
		g.enter(si)
		for n := max(first, sp.start); n < min(sp.end, end); n++ {
			dst[n-first] = g.sample(n)
		}
	}
}

// pcm rounds a sample to 16 bits, clamping it to the range.
func pcm(x float64) int16 {
	return int16(max(math.MinInt16, min(math.MaxInt16, math.Round(x))))
}

// enter makes span si the current segment.
func (g *synthGen) enter(si int) {
	if g.cur == si {
		return
	}
	sp := g.spans[si]
	seg := g.track.Segments[sp.seg]
	st := &g.st
	st.start, st.end = sp.start, sp.end
	st.dur = float64(sp.end-sp.start) / g.sr
	st.f0 = synthPitch(seg.Voice)
	seed := seg.Voice.Seed
	textHash := fnv.New64a()
	textHash.Write([]byte(seg.Text))
	st.hash = synthMix(textHash.Sum64() ^ synthMix(uint64(sp.seg)+0x1234) ^ synthMix(seed^0xabcdef))
	h := st.hash
	r := func() float64 {
		h = synthMix(h)
		return synthUnit(h)
	}
	// The voice sets the depth of its intonation, the segment the rest.
	vs := synthMix(seed ^ 0x3c3c)
	st.a1 = 0.05 + 0.03*synthUnit(vs)
	st.a2 = 0.02 + 0.015*synthUnit(synthMix(vs))
	st.w1 = 2 * math.Pi * (0.3 + 0.4*r())
	st.w2 = 2 * math.Pi * (1.6 + 1.4*r())
	st.p1 = 2 * math.Pi * r()
	st.p2 = 2 * math.Pi * r()
	st.c1 = math.Cos(st.p1)
	st.c2 = math.Cos(st.p2)
	st.slotLen = 1 / (4.3 + 1.4*r()) // 4.3 to 5.7 syllables per second
	st.pattern = synthPattern(st.pattern[:0], seg.Text, st.hash)
	key := synthVoiceKey{pitch: st.f0, seed: seed}
	tab, ok := g.voices[key]
	if !ok {
		if len(g.voices) >= synthVoiceCacheSize {
			clear(g.voices)
		}
		tab = synthNewVoiceTables(st.f0, seed, g.sr)
		g.voices[key] = tab
	}
	st.tables = tab
	g.cur = si
	g.slotK = -1
	g.anchorJ = -1
}

// synthAnchorShift sets the anchor spacing of the phase: 1<<synthAnchorShift
// samples, between which the cycle count is interpolated linearly (the
// pitch contour changes at a few Hz at most, so this is exact to well below
// a thousandth of a cycle).
const synthAnchorShift = 4

// cycles returns the number of cycles of f0 elapsed at tau seconds into the
// current segment: the integral of the pitch contour
// f(t) = f0 * (1 + a1 sin(w1 t + p1) + a2 sin(w2 t + p2)).
func (st *synthSegState) cycles(tau float64) float64 {
	return st.f0 * (tau +
		st.a1/st.w1*(st.c1-math.Cos(st.w1*tau+st.p1)) +
		st.a2/st.w2*(st.c2-math.Cos(st.w2*tau+st.p2)))
}

// setSlot computes the syllable of slot k of the current segment.
func (g *synthGen) setSlot(k int64) {
	st := &g.st
	g.slotK = k
	kind := st.pattern[k%int64(len(st.pattern))]
	h := synthMix(st.hash ^ synthMix(uint64(k)+0x77))
	r := func() float64 {
		h = synthMix(h)
		return synthUnit(h)
	}
	s := synthSlot{}
	L := st.slotLen
	switch kind & synthSlotKindMask {
	case synthSlotPause:
		s.silent = true
		g.slot = s
		return
	case synthSlotFinal:
		s.on = 0.012 + 0.03*r()
		s.off = L - (0.050 + 0.035*r())
	default:
		s.on = 0.012 + 0.03*r()
		s.off = L - (0.010 + 0.012*r())
	}
	s.amp = 0.55 + 0.35*r()
	if kind&synthSlotStress != 0 {
		s.amp = math.Min(1, s.amp+0.15)
	}
	s.vowel = int(r() * synthVowels)
	if r() < 0.4 {
		s.fricEnd = s.on + 0.008
		s.fricAmp = 0.05 + 0.05*r()
	}
	half := (s.off - s.on) / 2
	s.attack = math.Min(synthAttack, half)
	s.release = math.Min(synthRelease, half)
	s.invVoice = 1 / (s.off - s.on)
	g.slot = s
}

// sample computes sample n, which lies in the current segment, in 16-bit
// PCM units before rounding.
func (g *synthGen) sample(n int64) float64 {
	st := &g.st
	tau := float64(n-st.start) / g.sr
	k := int64(tau / st.slotLen)
	if k != g.slotK {
		g.setSlot(k)
	}
	s := &g.slot
	if s.silent {
		return 0
	}
	u := max(0, tau-float64(k)*st.slotLen)
	x := 0.0
	if u >= s.on && u < s.off {
		e := s.amp * (1 - 0.25*(u-s.on)*s.invVoice)
		if d := u - s.on; d < s.attack {
			e *= synthSmooth(d / s.attack)
		}
		if d := s.off - u; d < s.release {
			e *= synthSmooth(d / s.release)
		}
		// Cycles of f0 elapsed since the segment start, interpolated
		// between anchors at fixed sample offsets, so the phase is a pure
		// function of n.
		rel := n - st.start
		if j := rel >> synthAnchorShift; j != g.anchorJ {
			a := st.cycles(float64(j<<synthAnchorShift) / g.sr)
			b := st.cycles(float64((j+1)<<synthAnchorShift) / g.sr)
			g.anchorJ, g.anchorCyc, g.anchorSlope = j, a, (b-a)/(1<<synthAnchorShift)
		}
		cyc := g.anchorCyc + g.anchorSlope*float64(rel&(1<<synthAnchorShift-1))
		frac := (cyc - math.Floor(cyc)) * synthTableSize
		i := int(frac)
		if i >= synthTableSize { // guard against rounding
			i = synthTableSize - 1
		}
		w := float32(frac - float64(i))
		tab := &st.tables[s.vowel]
		x = e * float64(tab[i]+w*(tab[i+1]-tab[i]))
	}
	if u < s.fricEnd {
		e := s.fricAmp * synthSmooth(u/0.005) * synthSmooth((s.fricEnd-u)/0.01)
		x += e * (2*synthUnit(synthMix(st.hash^uint64(n)*0x9e3779b97f4a7c15)) - 1)
	}
	if x == 0 {
		return 0
	}
	if tau < synthFadeIn {
		x *= synthSmooth(tau / synthFadeIn)
	}
	if d := st.dur - tau; d < synthFadeOut {
		x *= synthSmooth(d / synthFadeOut)
	}
	return x * synthGain
}

// synthIsVowel reports whether r counts as a vowel letter.
func synthIsVowel(r rune) bool {
	return strings.ContainsRune("aeiouyàáâãäåæèéêëìíîïòóôõöøùúûüýÿœаеёиоуыэюяαεηιουωάέήίόύώ", unicode.ToLower(r))
}

// synthIsSyllabic reports whether r is a letter of a script where each
// character is about one syllable.
func synthIsSyllabic(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai)
}

// synthPattern derives the slot pattern of a segment from its text: each
// word gives one slot per syllable (vowel group), the last one followed by a
// gap, and punctuation gives a pause. A text without words gives a pattern
// drawn from h. The result is never empty.
func synthPattern(dst []uint8, text string, h uint64) []uint8 {
	dst = dst[:0]
	letters, syl := 0, 0
	inVowel := false
	flush := func() {
		if letters == 0 {
			return
		}
		if syl == 0 {
			syl = max(1, letters/3)
		}
		dst = synthWord(dst, min(syl, 5))
		letters, syl, inVowel = 0, 0, false
	}
	runes := 0
	for _, r := range text {
		if runes++; runes > synthMaxPatternRunes || len(dst) >= synthMaxPattern {
			break
		}
		switch {
		case synthIsSyllabic(r):
			flush()
			letters, syl = 1, 1
			flush()
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			letters++
			v := synthIsVowel(r)
			if v && !inVowel {
				syl++
			}
			inVowel = v
		default:
			flush()
			if strings.ContainsRune(".,;:!?。，、！？", r) && len(dst) > 0 &&
				dst[len(dst)-1]&synthSlotKindMask != synthSlotPause {
				dst = append(dst, synthSlotPause)
			}
		}
	}
	flush()
	if len(dst) > 0 {
		return dst
	}
	// No words: 32 words of 1 to 3 syllables, with a pause now and then.
	for w := range 32 {
		h = synthMix(h)
		dst = synthWord(dst, 1+int(h%3))
		if w%7 == 6 {
			dst = append(dst, synthSlotPause)
		}
	}
	return dst
}

// synthWord appends the slots of a word of syl syllables, the first
// stressed, the last followed by a gap, stopping at synthMaxPattern.
func synthWord(dst []uint8, syl int) []uint8 {
	for i := range syl {
		if len(dst) >= synthMaxPattern {
			break
		}
		k := synthSlotInner
		if i == syl-1 {
			k = synthSlotFinal
		}
		if i == 0 {
			k |= synthSlotStress
		}
		dst = append(dst, k)
	}
	return dst
}
