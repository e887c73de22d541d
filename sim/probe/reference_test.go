package probe

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim/audio"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// referenceTestEnc is a sample encoding of the test WAV builder.
type referenceTestEnc struct {
	tag  int // wavFormatPCM or wavFormatFloat
	bits int
}

var (
	referenceTestU8  = referenceTestEnc{wavFormatPCM, 8}
	referenceTestS16 = referenceTestEnc{wavFormatPCM, 16}
	referenceTestS24 = referenceTestEnc{wavFormatPCM, 24}
	referenceTestS32 = referenceTestEnc{wavFormatPCM, 32}
	referenceTestF32 = referenceTestEnc{wavFormatFloat, 32}
	referenceTestF64 = referenceTestEnc{wavFormatFloat, 64}
)

// referenceTestWAVOpts describes a WAV file written by referenceTestWAV.
type referenceTestWAVOpts struct {
	rate       int
	enc        referenceTestEnc
	channels   int  // 0 means 1
	extensible bool // WAVE_FORMAT_EXTENSIBLE fmt chunk
	cbSize     bool // 18-byte fmt chunk (cbSize = 0) for plain formats
	list       bool // odd-sized LIST chunk (with its pad byte) and a "fact" chunk before data
	dataSize   *uint32
}

// referenceTestEncode writes samples (in [-1, 1]) as a WAV file. Channel c
// of a multi-channel file holds the signal scaled by 1/(c+1), so mixing to
// mono keeps the pitch but the channels are not identical.
func referenceTestWAV(o referenceTestWAVOpts, x []float64) []byte {
	ch := max(o.channels, 1)
	bps := o.enc.bits / 8
	le := binary.LittleEndian
	data := make([]byte, 0, len(x)*ch*bps)
	for _, v := range x {
		for c := range ch {
			s := v / float64(c+1)
			switch {
			case o.enc.tag == wavFormatFloat && bps == 4:
				data = le.AppendUint32(data, math.Float32bits(float32(s)))
			case o.enc.tag == wavFormatFloat:
				data = le.AppendUint64(data, math.Float64bits(s))
			case bps == 1:
				data = append(data, byte(math.Round(128+127*s)))
			case bps == 2:
				data = le.AppendUint16(data, uint16(int16(math.Round(32767*s))))
			case bps == 3:
				u := uint32(int32(math.Round(8388607 * s)))
				data = append(data, byte(u), byte(u>>8), byte(u>>16))
			default:
				data = le.AppendUint32(data, uint32(int32(math.Round(2147483647*s))))
			}
		}
	}
	blockAlign := ch * bps
	common := probeTestCat(probeTestLE16(uint16(ch)), probeTestLE32(uint32(o.rate)),
		probeTestLE32(uint32(o.rate*blockAlign)), probeTestLE16(uint16(blockAlign)), probeTestLE16(uint16(o.enc.bits)))
	var fmtBody []byte
	switch {
	case o.extensible:
		guid := probeTestCat(probeTestLE16(uint16(o.enc.tag)), []byte(referenceGUIDTail))
		fmtBody = probeTestCat(probeTestLE16(wavFormatExtensible), common,
			probeTestLE16(22), probeTestLE16(uint16(o.enc.bits)), probeTestLE32(0x4), guid)
	case o.cbSize:
		fmtBody = probeTestCat(probeTestLE16(uint16(o.enc.tag)), common, probeTestLE16(0))
	default:
		fmtBody = probeTestCat(probeTestLE16(uint16(o.enc.tag)), common)
	}
	chunks := probeTestChunk("fmt ", fmtBody)
	if o.list {
		chunks = probeTestCat(chunks,
			probeTestChunk("LIST", []byte("INFOISFT\x07\x00\x00\x00dubsim\x00")),
			probeTestChunk("fact", probeTestLE32(uint32(len(x)))))
	}
	dc := probeTestChunk("data", data)
	if o.dataSize != nil {
		binary.LittleEndian.PutUint32(dc[4:8], *o.dataSize)
	}
	chunks = append(chunks, dc...)
	return probeTestCat([]byte("RIFF"), probeTestLE32(uint32(4+len(chunks))), []byte("WAVE"), chunks)
}

// referenceTestHarmonic returns d seconds of a harmonic-rich signal at f0
// (all harmonics below 4 kHz, amplitude 1/k, peak about 0.8) spoken in
// "syllables": 250 ms on, 100 ms off, with 20 ms ramps.
func referenceTestHarmonic(f0 float64, sr int, d float64) []float64 {
	x := make([]float64, int(d*float64(sr)))
	k := max(1, int(4000/f0))
	for i := range x {
		t := float64(i) / float64(sr)
		u := math.Mod(t, 0.35)
		if u >= 0.25 {
			continue
		}
		env := math.Min(1, math.Min(u/0.02, (0.25-u)/0.02))
		s := 0.0
		for h := 1; h <= k; h++ {
			s += math.Sin(2*math.Pi*f0*float64(h)*t+0.3*float64(h*h)) / float64(h)
		}
		x[i] = 0.4 * env * s
	}
	return x
}

// referenceTestSynthWAV renders the package's speech-like voice at pitch
// and sample rate sr: two sentences with silence around them.
func referenceTestSynthWAV(t testing.TB, pitch float64, sr int, seed uint64) []byte {
	t.Helper()
	v := audio.Voice{PitchHz: pitch, Seed: seed}
	tr := audio.Track{SampleRate: sr, Duration: 7 * time.Second, Segments: []audio.Segment{
		{Start: 300 * time.Millisecond, End: 3300 * time.Millisecond, Text: "Hello there, how are you doing today? Fine, thanks.", Voice: v},
		{Start: 3800 * time.Millisecond, End: 6700 * time.Millisecond, Text: "Nous allons parler de la météo et des nouvelles.", Voice: v},
	}}
	b, err := io.ReadAll(audio.NewWAVReader(tr))
	require.NoError(t, err)
	return b
}

func TestAnalyzeReferenceSynthVoices(t *testing.T) {
	t.Parallel()
	for _, sr := range []int{22050, 44100} {
		for i, pitch := range []float64{100, 140, 220, 300} {
			t.Run(fmt.Sprintf("%.0f Hz voice at %d Hz", pitch, sr), func(t *testing.T) {
				t.Parallel()
				wav := referenceTestSynthWAV(t, pitch, sr, uint64(i))
				info := AnalyzeReference(wav)
				assert.Equal(t, FormatWAV, info.Format)
				assert.Equal(t, 7*time.Second, info.Duration)
				assert.InEpsilon(t, pitch, info.PitchHz, 0.08, "measured %.2f Hz", info.PitchHz)
				t.Logf("%d Hz voice %.0f Hz: measured %.2f Hz (%+.2f%%)", sr, pitch, info.PitchHz, 100*(info.PitchHz/pitch-1))
			})
		}
	}
}

func TestAnalyzeReferenceEncodings(t *testing.T) {
	t.Parallel()
	u32 := func(v uint32) *uint32 { return &v }
	const secs = 3.0
	tests := []struct {
		name     string
		f0       float64
		opts     referenceTestWAVOpts
		cut      func(wav []byte) []byte // nil: the whole file
		wantDur  time.Duration
		wantZero bool // PitchHz must be 0
	}{
		{"8-bit unsigned", 130, referenceTestWAVOpts{rate: 8000, enc: referenceTestU8}, nil, 3 * time.Second, false},
		{"16-bit 16 kHz", 95, referenceTestWAVOpts{rate: 16000, enc: referenceTestS16}, nil, 3 * time.Second, false},
		{"24-bit 48 kHz", 175, referenceTestWAVOpts{rate: 48000, enc: referenceTestS24}, nil, 3 * time.Second, false},
		{"32-bit int 44.1 kHz", 250, referenceTestWAVOpts{rate: 44100, enc: referenceTestS32}, nil, 3 * time.Second, false},
		{"float32 22.05 kHz", 330, referenceTestWAVOpts{rate: 22050, enc: referenceTestF32}, nil, 3 * time.Second, false},
		{"float64 96 kHz", 380, referenceTestWAVOpts{rate: 96000, enc: referenceTestF64}, nil, 3 * time.Second, false},
		{"stereo 16-bit", 210, referenceTestWAVOpts{rate: 44100, enc: referenceTestS16, channels: 2}, nil, 3 * time.Second, false},
		{"6 channels float32", 120, referenceTestWAVOpts{rate: 48000, enc: referenceTestF32, channels: 6}, nil, 3 * time.Second, false},
		{"extensible 24-bit stereo", 160, referenceTestWAVOpts{rate: 48000, enc: referenceTestS24, channels: 2, extensible: true}, nil, 3 * time.Second, false},
		{"extensible float32", 280, referenceTestWAVOpts{rate: 44100, enc: referenceTestF32, extensible: true}, nil, 3 * time.Second, false},
		{"fmt with cbSize", 140, referenceTestWAVOpts{rate: 22050, enc: referenceTestS16, cbSize: true}, nil, 3 * time.Second, false},
		{"LIST and fact before data", 200, referenceTestWAVOpts{rate: 44100, enc: referenceTestS16, list: true}, nil, 3 * time.Second, false},
		{"data truncated halfway", 115, referenceTestWAVOpts{rate: 44100, enc: referenceTestS16, list: true},
			func(b []byte) []byte { return b[:len(b)/2] }, 3 * time.Second, false},
		{"truncated inside a 24-bit stereo frame", 240, referenceTestWAVOpts{rate: 48000, enc: referenceTestS24, channels: 2},
			func(b []byte) []byte { return b[:len(b)/3+4] }, 3 * time.Second, false},
		{"streaming data size", 150, referenceTestWAVOpts{rate: 16000, enc: referenceTestS16, dataSize: u32(0xFFFFFFFF)}, nil, 0, false},
		{"zero data size", 150, referenceTestWAVOpts{rate: 16000, enc: referenceTestS16, dataSize: u32(0)}, nil, 0, false},
		{"absurd data size", 150, referenceTestWAVOpts{rate: 16000, enc: referenceTestS16, dataSize: u32(0xFFFFFFF0)}, nil, 134217727500 * time.Microsecond, false},
		{"truncated before the data", 150, referenceTestWAVOpts{rate: 16000, enc: referenceTestS16},
			func(b []byte) []byte { return b[:40] }, 0, true},
		{"only 100 ms of audio", 150, referenceTestWAVOpts{rate: 16000, enc: referenceTestS16},
			func(b []byte) []byte { return b[:44+2*1600] }, 3 * time.Second, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wav := referenceTestWAV(tc.opts, referenceTestHarmonic(tc.f0, tc.opts.rate, secs))
			if tc.cut != nil {
				wav = tc.cut(wav)
			}
			info := AnalyzeReference(wav)
			assert.Equal(t, FormatWAV, info.Format)
			assert.Equal(t, tc.wantDur, info.Duration)
			if tc.wantZero {
				assert.Zero(t, info.PitchHz)
				return
			}
			// A steady pitch is measured far better than the 8% required.
			assert.InEpsilon(t, tc.f0, info.PitchHz, 0.01, "measured %.2f Hz", info.PitchHz)
			t.Logf("%.0f Hz: measured %.2f Hz (%+.2f%%)", tc.f0, info.PitchHz, 100*(info.PitchHz/tc.f0-1))
		})
	}
}

// referenceTestNoise returns d seconds of seeded Gaussian white noise with
// the given RMS.
func referenceTestNoise(seed uint64, sr int, d, rms float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := make([]float64, int(d*float64(sr)))
	for i := range x {
		x[i] = math.Max(-1, math.Min(1, rms*rng.NormFloat64()))
	}
	return x
}

func TestAnalyzeReferenceUnvoiced(t *testing.T) {
	t.Parallel()
	s16 := referenceTestWAVOpts{rate: 44100, enc: referenceTestS16}
	tone := referenceTestHarmonic(150, 44100, 0.35) // one 250 ms "syllable"
	tests := []struct {
		name string
		x    []float64
		want bool // a pitch is measured (about 150 Hz)
	}{
		{"digital silence", make([]float64, 3*44100), false},
		{"near silence (-90 dBFS noise)", referenceTestNoise(1, 44100, 3, 3e-5), false},
		{"white noise", referenceTestNoise(2, 44100, 5, 0.2), false},
		{"loud white noise", referenceTestNoise(3, 44100, 5, 0.5), false},
		// Frames voiced here and there in noise: fewer than 10% of the
		// non-silent frames are voiced.
		{"a syllable in 10 s of noise", append(referenceTestNoise(4, 44100, 10, 0.2), tone...), false},
		{"a syllable after silence", append(make([]float64, 5*44100), tone...), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			info := AnalyzeReference(referenceTestWAV(s16, tc.x))
			assert.Equal(t, FormatWAV, info.Format)
			assert.Equal(t, time.Duration(len(tc.x))*time.Second/44100, info.Duration)
			if tc.want {
				assert.InEpsilon(t, 150, info.PitchHz, 0.08)
			} else {
				assert.Zero(t, info.PitchHz)
			}
		})
	}
}

func TestAnalyzeReferenceOtherFormats(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		head []byte
		want string
	}{
		{"flac", []byte("fLaC\x00\x00\x00\x22\x10\x00\x10\x00"), FormatFLAC},
		{"mp3 with ID3", []byte("ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x64"), FormatMP3},
		{"mp3 frame", []byte{0xFF, 0xFB, 0x90, 0x64, 0, 0, 0, 0}, FormatMP3},
		{"m4a", probeTestCat(probeTestBE32(20), []byte("ftypM4A "), probeTestBE32(0), []byte("M4A ")), FormatMP4},
		{"matroska", []byte{0x1A, 0x45, 0xDF, 0xA3, 0x80}, FormatMKV},
		{"unknown", []byte("OggS\x00\x02\x00\x00"), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Even followed by what would be valid PCM, no pitch is measured.
			head := append(bytes.Clone(tc.head), referenceTestWAV(referenceTestWAVOpts{rate: 16000, enc: referenceTestS16}, referenceTestHarmonic(150, 16000, 1))...)
			assert.Equal(t, ReferenceInfo{Format: tc.want}, AnalyzeReference(head))
		})
	}
}

func TestAnalyzeReferenceMalformed(t *testing.T) {
	t.Parallel()
	good := referenceTestWAV(referenceTestWAVOpts{rate: 16000, enc: referenceTestS16}, referenceTestHarmonic(150, 16000, 1))
	// patch returns good with bytes at off replaced.
	patch := func(off int, b ...byte) []byte {
		c := bytes.Clone(good)
		copy(c[off:], b)
		return c
	}
	riff := func(chunks ...[]byte) []byte {
		body := probeTestCat(chunks...)
		return probeTestCat([]byte("RIFF"), probeTestLE32(uint32(4+len(body))), []byte("WAVE"), body)
	}
	fmt16 := probeTestChunk("fmt ", probeTestCat(probeTestLE16(1), probeTestLE16(1), probeTestLE32(16000),
		probeTestLE32(32000), probeTestLE16(2), probeTestLE16(16)))
	pcm := good[44:]
	fmtF32 := probeTestChunk("fmt ", probeTestCat(probeTestLE16(3), probeTestLE16(1), probeTestLE32(16000),
		probeTestLE32(64000), probeTestLE16(4), probeTestLE16(32)))
	// A float32 signal at 150 Hz with every 50th sample NaN.
	nanSprinkled := referenceTestWAV(referenceTestWAVOpts{rate: 16000, enc: referenceTestF32}, referenceTestHarmonic(150, 16000, 1))[44:]
	for i := 0; i < len(nanSprinkled); i += 4 * 50 {
		copy(nanSprinkled[i:], "\x00\x00\xc0\x7f")
	}
	tests := []struct {
		name string
		head []byte
		want ReferenceInfo
	}{
		{"empty", nil, ReferenceInfo{}},
		{"one byte", []byte("R"), ReferenceInfo{}},
		{"RIFF only", []byte("RIFF\x00\x00"), ReferenceInfo{}},
		{"RIFF WAVE without chunks", []byte("RIFF\x04\x00\x00\x00WAVE"), ReferenceInfo{Format: FormatWAV}},
		{"chunk header cut", good[:16], ReferenceInfo{Format: FormatWAV}},
		{"fmt body cut", good[:30], ReferenceInfo{Format: FormatWAV}},
		{"fmt chunk too short", riff(probeTestChunk("fmt ", make([]byte, 8)), probeTestChunk("data", pcm)), ReferenceInfo{Format: FormatWAV}},
		{"no fmt chunk", riff(probeTestChunk("data", pcm)), ReferenceInfo{Format: FormatWAV}},
		{"absurd chunk size before fmt", riff([]byte("LIST\xf0\xff\xff\xff"), fmt16, probeTestChunk("data", pcm)), ReferenceInfo{Format: FormatWAV}},
		{"fmt after data", riff(probeTestChunk("data", pcm), fmt16), ReferenceInfo{Format: FormatWAV, PitchHz: -1, Duration: time.Second}},
		{"zero channels", patch(22, 0, 0), ReferenceInfo{Format: FormatWAV, Duration: time.Second}},
		{"zero sample rate: the declared byte rate gives the duration", patch(24, 0, 0, 0, 0), ReferenceInfo{Format: FormatWAV, Duration: time.Second}},
		{"zero sample and byte rates", patch(24, 0, 0, 0, 0, 0, 0, 0, 0), ReferenceInfo{Format: FormatWAV}},
		{"sample rate too low to analyse", patch(24, 0xD0, 0x07, 0, 0), ReferenceInfo{Format: FormatWAV, Duration: 8 * time.Second}},
		{"sample rate too high to analyse", patch(24, 0x00, 0x00, 0x10, 0x00), ReferenceInfo{Format: FormatWAV, Duration: 15258789}},
		{"12-bit samples", patch(34, 12, 0), ReferenceInfo{Format: FormatWAV, Duration: time.Second}},
		{"ADPCM", patch(20, 2, 0), ReferenceInfo{Format: FormatWAV, Duration: time.Second}},
		{"float 16-bit", patch(20, 3, 0), ReferenceInfo{Format: FormatWAV, Duration: time.Second}},
		{"65535 channels", patch(22, 0xFF, 0xFF), ReferenceInfo{Format: FormatWAV, Duration: time.Second}},
		{"extensible with an unknown subformat", riff(probeTestChunk("fmt ", probeTestCat(probeTestLE16(wavFormatExtensible),
			probeTestLE16(1), probeTestLE32(16000), probeTestLE32(32000), probeTestLE16(2), probeTestLE16(16),
			probeTestLE16(22), probeTestLE16(16), probeTestLE32(4), probeTestLE16(1), make([]byte, 14))), probeTestChunk("data", pcm)),
			ReferenceInfo{Format: FormatWAV, Duration: time.Second}},
		{"extensible cut short", riff(probeTestChunk("fmt ", probeTestCat(probeTestLE16(wavFormatExtensible),
			probeTestLE16(1), probeTestLE32(16000), probeTestLE32(32000), probeTestLE16(2), probeTestLE16(16))), probeTestChunk("data", pcm)),
			ReferenceInfo{Format: FormatWAV, Duration: time.Second}},
		{"NaN samples are zeros", riff(fmtF32, probeTestChunk("data", nanSprinkled)), ReferenceInfo{Format: FormatWAV, PitchHz: -1, Duration: time.Second}},
		{"only NaN", riff(fmtF32, probeTestChunk("data", bytes.Repeat([]byte("\x00\x00\xc0\x7f"), 16000))), ReferenceInfo{Format: FormatWAV, Duration: time.Second}},
		{"only +Inf", riff(fmtF32, probeTestChunk("data", bytes.Repeat([]byte("\x00\x00\x80\x7f"), 16000))), ReferenceInfo{Format: FormatWAV, Duration: time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := AnalyzeReference(tc.head)
			if tc.want.PitchHz < 0 { // a pitch about 150 Hz
				assert.InEpsilon(t, 150, got.PitchHz, 0.08)
				got.PitchHz, tc.want.PitchHz = 0, 0
			}
			assert.Equal(t, tc.want, got)
		})
	}
	t.Run("random bytes", func(t *testing.T) {
		t.Parallel()
		rng := rand.New(rand.NewPCG(5, 6))
		for i := range 2000 {
			b := make([]byte, rng.IntN(3000))
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
			if i%2 == 0 && len(b) >= 12 { // a RIFF header in front of noise
				copy(b, "RIFF\xff\xff\xff\xffWAVE")
			}
			got := AnalyzeReference(b)
			referenceTestCheckInfo(t, b, got)
			require.Equal(t, got, AnalyzeReference(b), "deterministic")
		}
	})
}

// referenceTestCheckInfo checks the invariants of AnalyzeReference(head).
func referenceTestCheckInfo(t *testing.T, head []byte, got ReferenceInfo) {
	t.Helper()
	if got.Format != DetectFormat(head) {
		t.Fatalf("Format %q, DetectFormat says %q", got.Format, DetectFormat(head))
	}
	if got.PitchHz != 0 && !(got.PitchHz >= referenceMinPitchHz && got.PitchHz <= referenceMaxPitchHz) {
		t.Fatalf("PitchHz %v", got.PitchHz)
	}
	if got.Duration < 0 {
		t.Fatalf("Duration %v", got.Duration)
	}
	if got.Format != FormatWAV && (got.PitchHz != 0 || got.Duration != 0) {
		t.Fatalf("%s gives %+v", got.Format, got)
	}
}

// TestAnalyzeReferenceBoundedMemory checks that the allocation does not
// follow the length of the prefix (only 15 s are analysed) nor the sizes
// the header declares. Not parallel: the memory statistics are process-wide.
func TestAnalyzeReferenceBoundedMemory(t *testing.T) {
	long := referenceTestWAV(referenceTestWAVOpts{rate: 44100, enc: referenceTestS16}, referenceTestHarmonic(150, 44100, 20))
	absurd := referenceTestWAV(referenceTestWAVOpts{rate: 44100, enc: referenceTestS16, channels: 1024, dataSize: new(uint32(0xFFFFFFF0))},
		referenceTestHarmonic(150, 44100, 0.1))
	tests := []struct {
		name     string
		head     []byte
		maxAlloc uint64
	}{
		{"20 s at 44.1 kHz", long, 1 << 20},
		{"1024 channels and a 4 GB data size", absurd, 64 << 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			info := AnalyzeReference(tc.head)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d-byte prefix: %+v, allocated %d bytes", len(tc.head), info, alloc)
			assert.Less(t, alloc, tc.maxAlloc)
		})
	}
}

// referenceTestFuzzSeeds are short WAV files made by the synthesiser and
// the test encoder (700 sample frames at 4 kHz: enough for several
// voiced frames, small enough for the fuzzer to minimise its finds quickly),
// and a few other headers.
func referenceTestFuzzSeeds(t testing.TB) [][]byte {
	const frames = 700
	var seeds [][]byte
	for i, pitch := range []float64{140, 240} {
		v := audio.Voice{PitchHz: pitch, Seed: uint64(i)}
		d := frames * time.Second / 4000
		tr := audio.Track{SampleRate: 4000, Duration: d, Segments: []audio.Segment{{Start: 0, End: d, Text: "aha", Voice: v}}}
		b, err := io.ReadAll(audio.NewWAVReader(tr))
		require.NoError(t, err)
		seeds = append(seeds, b)
	}
	x := referenceTestHarmonic(200, 4000, float64(frames)/4000)
	for _, o := range []referenceTestWAVOpts{
		{rate: 4000, enc: referenceTestU8},
		{rate: 4000, enc: referenceTestS24, list: true},
		{rate: 4000, enc: referenceTestF32, extensible: true},
		{rate: 4000, enc: referenceTestF64, cbSize: true},
		{rate: 4000, enc: referenceTestS32, channels: 2, dataSize: new(uint32(0xFFFFFFFF))},
	} {
		seeds = append(seeds, referenceTestWAV(o, x))
	}
	return append(seeds,
		nil,
		[]byte("RIFF\xff\xff\xff\xffWAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00data\xff\xff\xff\xff"),
		[]byte("fLaC\x00\x00\x00\x22"),
		[]byte("ID3\x04\x00\x10\x7f\x7f\x7f\x7f"),
		probeTestCat(probeTestBE32(20), []byte("ftypM4A "), probeTestBE32(0), []byte("M4A ")),
	)
}

// FuzzAnalyzeReference checks that AnalyzeReference never panics, returns
// a pitch of 0 or in [60, 400] Hz, and finishes quickly. The minimisation of
// a new find is quadratic in its size and each run analyses the audio, so
// cap it when fuzzing: go test -fuzz FuzzAnalyzeReference -fuzzminimizetime 5s.
func FuzzAnalyzeReference(f *testing.F) {
	for _, s := range referenceTestFuzzSeeds(f) {
		f.Add(s)
	}
	limit := 2 * time.Second
	if raceEnabled {
		limit = 20 * time.Second
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		start := time.Now()
		got := AnalyzeReference(head)
		if d := time.Since(start); d > limit {
			t.Fatalf("took %v on %d bytes", d, len(head))
		}
		referenceTestCheckInfo(t, head, got)
	})
}

// TestReferenceDecode checks the decoded samples themselves (the pitch does
// not see a decoding error that keeps the signal periodic, such as a sign
// or scale error): a 200 Hz sine of amplitude 0.5 must come out of the
// mixer, the 1 kHz low-pass and the decimation with its RMS (channel c
// holds it scaled by 1/(c+1)) and at the expected analysis rate.
func TestReferenceDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		opts     referenceTestWAVOpts
		wantRate float64
	}{
		{"8-bit unsigned 8 kHz", referenceTestWAVOpts{rate: 8000, enc: referenceTestU8}, 8000},
		{"16-bit 11025 Hz", referenceTestWAVOpts{rate: 11025, enc: referenceTestS16}, 11025},
		{"16-bit stereo 44.1 kHz", referenceTestWAVOpts{rate: 44100, enc: referenceTestS16, channels: 2}, 11025},
		{"24-bit 48 kHz", referenceTestWAVOpts{rate: 48000, enc: referenceTestS24}, 9600},
		{"24-bit extensible 3 channels", referenceTestWAVOpts{rate: 16000, enc: referenceTestS24, channels: 3, extensible: true}, 8000},
		{"32-bit int 22.05 kHz", referenceTestWAVOpts{rate: 22050, enc: referenceTestS32}, 11025},
		{"float32 96 kHz", referenceTestWAVOpts{rate: 96000, enc: referenceTestF32}, 96000.0 / 9},
		{"float64 stereo 12 kHz", referenceTestWAVOpts{rate: 12000, enc: referenceTestF64, channels: 2}, 6000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			x := make([]float64, tc.opts.rate) // 1 s
			for i := range x {
				x[i] = 0.5 * math.Sin(2*math.Pi*200*float64(i)/float64(tc.opts.rate))
			}
			w, _, ok := referenceParseWAV(referenceTestWAV(tc.opts, x))
			require.True(t, ok)
			require.True(t, w.decodable)
			s := referenceDecode(w)
			assert.InDelta(t, tc.wantRate, s.sr, 1e-9)
			decim := float64(tc.opts.rate) / s.sr
			assert.Len(t, s.x, int(float64(len(x))/decim))
			mix := 0.0
			for c := range max(1, tc.opts.channels) {
				mix += 1 / float64(c+1)
			}
			mix /= float64(max(1, tc.opts.channels))
			gain := 1 / math.Sqrt(1+math.Pow(200/referenceLowpassHz, 8)) // Butterworth, 4th order
			want := 0.5 * mix * gain / math.Sqrt2
			tail := s.x[len(s.x)/10:] // after the filter's transient
			sum := 0.0
			for _, v := range tail {
				sum += float64(v) * float64(v)
			}
			assert.InEpsilon(t, want, math.Sqrt(sum/float64(len(tail))), 0.01)
		})
	}
}

// TestAnalyzeReferenceFirst15s checks that only the first 15 s are analysed:
// 14 s at 120 Hz then 20 s at 260 Hz measure 120 Hz.
func TestAnalyzeReferenceFirst15s(t *testing.T) {
	t.Parallel()
	x := append(referenceTestHarmonic(120, 16000, 14), referenceTestHarmonic(260, 16000, 20)...)
	info := AnalyzeReference(referenceTestWAV(referenceTestWAVOpts{rate: 16000, enc: referenceTestS16}, x))
	assert.InEpsilon(t, 120, info.PitchHz, 0.08)
	assert.Equal(t, 34*time.Second, info.Duration)
}

// TestReferenceFuzzSeedsMeasured checks that the fuzz seeds reach the
// pitch measurement (so the fuzzer starts from the deep paths).
func TestReferenceFuzzSeedsMeasured(t *testing.T) {
	t.Parallel()
	for i, s := range referenceTestFuzzSeeds(t)[:7] {
		assert.NotZero(t, AnalyzeReference(s).PitchHz, "seed %d", i)
	}
}
