package audio

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dubsim/dubsim/internal/tooltest"
	"github.com/dubsim/dubsim/sim/probe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// speechTestSeg is a segment's timing and text, for comparisons.
type speechTestSeg struct {
	start, end time.Duration
	text       string
}

func speechTestSegs(tr Track) []speechTestSeg {
	out := make([]speechTestSeg, len(tr.Segments))
	for i, s := range tr.Segments {
		out[i] = speechTestSeg{s.Start, s.End, s.Text}
	}
	return out
}

// speechTestCounted counts the letters and digits of s.
func speechTestCounted(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
	return n
}

// speechTestCheck checks the invariants of SpeechTrack(text, rate, voice, sr).
func speechTestCheck(t *testing.T, text string, rate float64, voice Voice, sr int, tr Track) {
	t.Helper()
	if tr.SampleRate != sr {
		t.Fatalf("SampleRate %d, want %d", tr.SampleRate, sr)
	}
	counted := speechTestCounted(text)
	if counted == 0 {
		if tr.Duration != 0 || len(tr.Segments) != 0 {
			t.Fatalf("no letters or digits but Duration %v and %d segments", tr.Duration, len(tr.Segments))
		}
		return
	}
	if len(tr.Segments) == 0 {
		t.Fatalf("%d letters or digits but no segments", counted)
	}
	if tr.Segments[0].Start != speechLeadIn {
		t.Fatalf("first segment starts at %v", tr.Segments[0].Start)
	}
	if last := tr.Segments[len(tr.Segments)-1]; tr.Duration != last.End+speechTail {
		t.Fatalf("Duration %v, last segment ends at %v", tr.Duration, last.End)
	}
	if bound := speechLeadIn + speechTail + time.Duration(len(text))*(time.Duration(float64(time.Second)/rate)+600*time.Millisecond); tr.Duration > bound {
		t.Fatalf("Duration %v > bound %v", tr.Duration, bound)
	}
	half := time.Duration(math.Round(1e9 / (2 * rate))) // rate in [0.5, 1000]
	var prev time.Duration
	segCounted := 0
	for i, s := range tr.Segments {
		if s.Start < prev || s.End <= s.Start || s.End > tr.Duration {
			t.Fatalf("segment %d [%v, %v] after %v in a %v track", i, s.Start, s.End, prev, tr.Duration)
		}
		if s.End-s.Start > speechMaxSegment {
			t.Fatalf("segment %d lasts %v", i, s.End-s.Start)
		}
		n := speechTestCounted(s.Text)
		if n == 0 || s.Text != strings.TrimFunc(s.Text, unicode.IsSpace) {
			t.Fatalf("segment %d text %q", i, s.Text)
		}
		// A letter lasts two half-characters, whitespace runs and
		// symbols add to that.
		if s.End-s.Start < time.Duration(2*n)*half {
			t.Fatalf("segment %d: %d letters in %v", i, n, s.End-s.Start)
		}
		if s.Voice != voice {
			t.Fatalf("segment %d voice %+v", i, s.Voice)
		}
		segCounted += n
		prev = s.End
	}
	// Every letter and digit is spoken exactly once.
	if segCounted != counted {
		t.Fatalf("segments hold %d letters and digits, the text %d", segCounted, counted)
	}
}

func TestSpeechTrackLayout(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	// At 10 characters per second a letter lasts 100 ms, a whitespace run
	// inside a phrase 50 ms.
	tests := []struct {
		name string
		text string
		rate float64
		want []speechTestSeg
		dur  time.Duration
	}{
		{"one word", "Hello", 10, []speechTestSeg{{150 * ms, 650 * ms, "Hello"}}, 850 * ms},
		{"whitespace counts half", "Hello world", 10, []speechTestSeg{{150 * ms, 1200 * ms, "Hello world"}}, 1400 * ms},
		{"a whitespace run counts once", "a \t  b", 10, []speechTestSeg{{150 * ms, 400 * ms, "a \t  b"}}, 600 * ms},
		{"symbols count nothing", "rock & roll", 10, []speechTestSeg{{150 * ms, 1050 * ms, "rock & roll"}}, 1250 * ms},
		{"comma", "Hello, world.", 10, []speechTestSeg{{150 * ms, 650 * ms, "Hello"}, {870 * ms, 1370 * ms, "world"}}, 1570 * ms},
		{"semicolon and colon", "One; two: six", 10, []speechTestSeg{
			{150 * ms, 450 * ms, "One"}, {670 * ms, 970 * ms, "two"}, {1190 * ms, 1490 * ms, "six"}}, 1690 * ms},
		{"sentence ends", "Hi. Yes! No? Ok… So", 10, []speechTestSeg{
			{150 * ms, 350 * ms, "Hi"}, {800 * ms, 1100 * ms, "Yes"}, {1550 * ms, 1750 * ms, "No"},
			{2200 * ms, 2400 * ms, "Ok"}, {2850 * ms, 3050 * ms, "So"}}, 3250 * ms},
		{"line break", "Line one\nLine two", 10, []speechTestSeg{{150 * ms, 900 * ms, "Line one"}, {1500 * ms, 2250 * ms, "Line two"}}, 2450 * ms},
		{"paragraph break after a sentence", "End.\r\n\r\nNew", 10, []speechTestSeg{{150 * ms, 450 * ms, "End"}, {1050 * ms, 1350 * ms, "New"}}, 1550 * ms},
		{"ellipsis and ?!", "Wait... what?!", 10, []speechTestSeg{{150 * ms, 550 * ms, "Wait"}, {1000 * ms, 1400 * ms, "what"}}, 1600 * ms},
		{"comma then sentence end keeps the longer", "Yes, . no", 10, []speechTestSeg{{150 * ms, 450 * ms, "Yes"}, {900 * ms, 1100 * ms, "no"}}, 1300 * ms},
		{"sentence end then comma keeps the longer", "Yes. , no", 10, []speechTestSeg{{150 * ms, 450 * ms, "Yes"}, {900 * ms, 1100 * ms, "no"}}, 1300 * ms},
		{"line break then comma keeps the longer", "Yes\n, no", 10, []speechTestSeg{{150 * ms, 450 * ms, "Yes"}, {1050 * ms, 1250 * ms, "no"}}, 1450 * ms},
		{"a phrase of symbols is dropped", "Hi, -- , there", 10, []speechTestSeg{{150 * ms, 350 * ms, "Hi"}, {570 * ms, 1070 * ms, "there"}}, 1270 * ms},
		{"numbers and times are words", "Pi is 3.14, at 10:30", 10, []speechTestSeg{{150 * ms, 950 * ms, "Pi is 3.14"}, {1170 * ms, 1820 * ms, "at 10:30"}}, 2020 * ms},
		{"thousands separator", "1,000 km", 10, []speechTestSeg{{150 * ms, 800 * ms, "1,000 km"}}, 1000 * ms},
		{"leading and trailing punctuation", "...«Hello»!  \n ", 10, []speechTestSeg{{150 * ms, 650 * ms, "«Hello»"}}, 850 * ms},
		{"whitespace outside the letters takes no time", "« Hello, dear » ", 10, []speechTestSeg{
			{150 * ms, 650 * ms, "« Hello"}, {870 * ms, 1270 * ms, "dear »"}}, 1470 * ms},
		{"chinese", "你好，世界。再见", 10, []speechTestSeg{
			{150 * ms, 350 * ms, "你好"}, {570 * ms, 770 * ms, "世界"}, {1220 * ms, 1420 * ms, "再见"}}, 1620 * ms},
		{"japanese", "はい、そうです。", 10, []speechTestSeg{{150 * ms, 350 * ms, "はい"}, {570 * ms, 970 * ms, "そうです"}}, 1170 * ms},
		{"arabic", "مرحبا، كيف حالك؟ بخير", 10, []speechTestSeg{
			{150 * ms, 650 * ms, "مرحبا"}, {870 * ms, 1620 * ms, "كيف حالك"}, {2070 * ms, 2470 * ms, "بخير"}}, 2670 * ms},
		// Vowel signs and the virama are marks, not letters.
		{"devanagari", "नमस्ते। आप कैसे हैं?", 10, []speechTestSeg{{150 * ms, 550 * ms, "नमस्ते"}, {1000 * ms, 1600 * ms, "आप कैसे हैं"}}, 1800 * ms},
		{"full-width", "ＡＢ！ＣＤ；ＥＦ", 10, []speechTestSeg{{150 * ms, 350 * ms, "ＡＢ"}, {800 * ms, 1000 * ms, "ＣＤ"}, {1220 * ms, 1420 * ms, "ＥＦ"}}, 1620 * ms},
		{"14 chars/s", "Hello", 14, []speechTestSeg{{150 * ms, 150*ms + 10*35714286, "Hello"}}, 350*ms + 10*35714286},
		{"rate 0 means 14", "Hello", 0, []speechTestSeg{{150 * ms, 150*ms + 10*35714286, "Hello"}}, 350*ms + 10*35714286},
		{"NaN rate means 14", "Hello", math.NaN(), []speechTestSeg{{150 * ms, 150*ms + 10*35714286, "Hello"}}, 350*ms + 10*35714286},
		{"rate clamped to 1000", "Hello", 5000, []speechTestSeg{{150 * ms, 155 * ms, "Hello"}}, 355 * ms},
		{"rate clamped to 0.5", "Hi", 0.01, []speechTestSeg{{150 * ms, 4150 * ms, "Hi"}}, 4350 * ms},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := Voice{PitchHz: 123, Seed: 9}
			tr := SpeechTrack(tc.text, tc.rate, v, 44100)
			assert.Equal(t, tc.want, speechTestSegs(tr))
			assert.Equal(t, tc.dur, tr.Duration)
			rate := tc.rate
			if !(rate > 0) {
				rate = 14
			}
			speechTestCheck(t, tc.text, max(0.5, min(1000, rate)), v, 44100, tr)
		})
	}
}

func TestSpeechTrackEmpty(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"", " ", "\n\t \r\n", "...!?,;:", "— – - * &", "。、！？", "؟ ، ।", "\u0301\u0902"} {
		t.Run(strconv.Quote(text), func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, Track{SampleRate: 22050}, SpeechTrack(text, 14, Voice{PitchHz: 200}, 22050))
		})
	}
}

func TestSpeechTrackSplit(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	words50 := strings.TrimSpace(strings.Repeat("word ", 50))
	tests := []struct {
		name string
		text string
		want []speechTestSeg // nil: check the invariants and the piece count only
		n    int
	}{
		// 200 letters and 49 spaces: 449 half-characters of 50 ms, cap
		// 240, two pieces closed at the first space after 225.
		{"words", words50, []speechTestSeg{
			{150 * ms, 11800 * ms, strings.TrimSpace(strings.Repeat("word ", 26))},
			{11850 * ms, 22600 * ms, strings.TrimSpace(strings.Repeat("word ", 24))},
		}, 2},
		// 70 words: 629 half-characters, three pieces closed at the first
		// space after 210 (greedy filling would give 26, 26 and 18 words).
		{"balanced pieces", strings.TrimSpace(strings.Repeat("word ", 70)), []speechTestSeg{
			{150 * ms, 10900 * ms, strings.TrimSpace(strings.Repeat("word ", 24))},
			{10950 * ms, 21700 * ms, strings.TrimSpace(strings.Repeat("word ", 24))},
			{21750 * ms, 31600 * ms, strings.TrimSpace(strings.Repeat("word ", 22))},
		}, 3},
		// 300 han characters: 600 half-characters, three pieces of 100.
		{"chinese without spaces", strings.Repeat("汉", 300), []speechTestSeg{
			{150 * ms, 10150 * ms, strings.Repeat("汉", 100)},
			{10150 * ms, 20150 * ms, strings.Repeat("汉", 100)},
			{20150 * ms, 30150 * ms, strings.Repeat("汉", 100)},
		}, 3},
		// Exactly 12 s: not split.
		{"at the cap", strings.Repeat("a", 120), []speechTestSeg{{150 * ms, 12150 * ms, strings.Repeat("a", 120)}}, 1},
		{"just over the cap", strings.Repeat("a", 121), []speechTestSeg{
			{150 * ms, 6250 * ms, strings.Repeat("a", 61)}, {6250 * ms, 12250 * ms, strings.Repeat("a", 60)},
		}, 2},
		// "so" alone (the long word does not fit after it), then the long
		// word cut at the target (78 letters), then its rest with "ok".
		{"a long word among short ones", "so " + strings.Repeat("x", 150) + " ok", []speechTestSeg{
			{150 * ms, 350 * ms, "so"},
			{400 * ms, 8200 * ms, strings.Repeat("x", 78)},
			{8200 * ms, 15650 * ms, strings.Repeat("x", 72) + " ok"},
		}, 3},
		{"long words", strings.TrimSpace(strings.Repeat(strings.Repeat("y", 119)+" ", 5)), nil, 5},
		{"symbols between long runs", strings.Repeat("z", 100) + " --- " + strings.Repeat("z", 100) + " — " + strings.Repeat("z", 100), nil, 3},
		// Found by the fuzzer: a leading symbol must not delay the
		// first piece (nor a trailing one stretch the last).
		{"symbols around a long phrase", "\xa9 « " + strings.Repeat("0", 130) + " »", []speechTestSeg{
			{150 * ms, 6650 * ms, "\xa9 « " + strings.Repeat("0", 65)},
			{6650 * ms, 13150 * ms, strings.Repeat("0", 65) + " »"},
		}, 2},
		{"marks in a long word", strings.Repeat("के", 400), nil, 4},
		{"long thai", strings.Repeat("สวัสดีครับ", 60), nil, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := SpeechTrack(tc.text, 10, Voice{}, 22050)
			speechTestCheck(t, tc.text, 10, Voice{}, 22050, tr)
			if tc.want != nil {
				assert.Equal(t, tc.want, speechTestSegs(tr))
			}
			assert.Len(t, tr.Segments, tc.n)
			// Splitting keeps the phrase's total time: the track lasts
			// as long as its letters and whitespace runs.
			// The text holds the byte 0xa9 on purpose (not UTF-8); in the
			// cutset it decodes to utf8.RuneError, as it does in the text.
			w := speechWeight(strings.Trim(tc.text, "\xa9 «»")) //nolint:staticcheck // SA1011, see above
			assert.Equal(t, speechLeadIn+speechTail+time.Duration(w)*50*ms, tr.Duration)
		})
	}
}

func TestSpeechTrackDeterministic(t *testing.T) {
	t.Parallel()
	text := speechTestText(3000)
	a := SpeechTrack(text, 13.5, Voice{PitchHz: 180, Seed: 4}, 44100)
	b := SpeechTrack(strings.Clone(text), 13.5, Voice{PitchHz: 180, Seed: 4}, 44100)
	assert.Equal(t, a, b)
	speechTestCheck(t, text, 13.5, Voice{PitchHz: 180, Seed: 4}, 44100, a)
	assert.Greater(t, len(a.Segments), 50)
}

func FuzzSpeechTrack(f *testing.F) {
	for _, s := range []string{"", "Hello, world.", "你好，世界。再见", "مرحبا، كيف حالك؟", "नमस्ते। आप कैसे हैं?",
		"Pi is 3.14\n\nNew paragraph...", strings.Repeat("long ", 100), strings.Repeat("汉", 500), "\xff\xfe.,a"} {
		f.Add(s, 14.0)
	}
	f.Fuzz(func(t *testing.T, text string, rate float64) {
		if !(rate >= 1 && rate <= 40) {
			rate = 1 + math.Mod(math.Abs(rate), 39)
			if math.IsNaN(rate) || math.IsInf(rate, 0) {
				rate = 14
			}
		}
		v := Voice{PitchHz: 150, Seed: 1}
		tr := SpeechTrack(text, rate, v, 44100)
		speechTestCheck(t, text, rate, v, 44100, tr)
		if again := SpeechTrack(text, rate, v, 44100); !assert.ObjectsAreEqual(tr, again) {
			t.Fatal("not deterministic")
		}
	})
}

// speechTestText returns a multilingual text of exactly n characters.
func speechTestText(n int) string {
	sentences := []string{
		"The quick brown fox jumps over the lazy dog. ",
		"Le cœur a ses raisons que la raison ne connaît point. ",
		"Über den Wolken muss die Freiheit wohl grenzenlos sein, sagt man. ",
		"Съешь же ещё этих мягких французских булок, да выпей чаю! ",
		"我们今天去公园散步，天气非常好。",
		"الطقس جميل اليوم، هل تريد أن نخرج؟ ",
		"आज मौसम बहुत अच्छा है। ",
		"¿Dónde está la biblioteca? Está cerca: a 1,5 km.\n",
		"今日はとても良い天気ですね。\n\n",
	}
	var b strings.Builder
	for i := 0; utf8.RuneCountInString(b.String()) < n; i++ {
		b.WriteString(sentences[i%len(sentences)])
	}
	runes := []rune(b.String())
	return string(runes[:n])
}

// speechTestRender returns the WAV of tr.
func speechTestRender(t testing.TB, tr Track) []byte {
	t.Helper()
	b, err := io.ReadAll(NewWAVReader(tr))
	require.NoError(t, err)
	return b
}

// speechTestReference is a reference voice sample at pitch: two sentences
// with silence around them.
func speechTestReference(t testing.TB, pitch float64) []byte {
	v := Voice{PitchHz: pitch, Seed: 5}
	return speechTestRender(t, Track{SampleRate: 22050, Duration: 7 * time.Second, Segments: []Segment{
		{Start: 300 * time.Millisecond, End: 3300 * time.Millisecond, Text: "Hello there, how are you doing today? Fine, thanks.", Voice: v},
		{Start: 3800 * time.Millisecond, End: 6700 * time.Millisecond, Text: "Nous allons parler de la météo et des nouvelles.", Voice: v},
	}})
}

// speechTestHead is the prefix of an upload the cloning handler keeps.
const speechTestHead = 4 << 20

func TestSpeechTrackPitchRoundTrip(t *testing.T) {
	t.Parallel()
	text := speechTestText(400)
	measure := func(t *testing.T, pitch float64) float64 {
		wav := speechTestRender(t, SpeechTrack(text, 14, Voice{PitchHz: pitch, Seed: 2}, 44100))
		info := probe.AnalyzeReference(wav[:min(len(wav), speechTestHead)])
		require.Equal(t, probe.FormatWAV, info.Format)
		return info.PitchHz
	}
	t.Run("180 Hz voice", func(t *testing.T) {
		t.Parallel()
		got := measure(t, 180)
		t.Logf("SpeechTrack at 180 Hz measures %.2f Hz", got)
		assert.InEpsilon(t, 180, got, 0.10)
	})
	t.Run("110 and 220 Hz references", func(t *testing.T) {
		t.Parallel()
		clone := func(refPitch float64) (ref, out float64) {
			ref = probe.AnalyzeReference(speechTestReference(t, refPitch)).PitchHz
			require.NotZero(t, ref)
			return ref, measure(t, ref)
		}
		lowRef, low := clone(110)
		highRef, high := clone(220)
		t.Logf("references %.2f and %.2f Hz; clones %.2f and %.2f Hz (ratio %.3f)", lowRef, highRef, low, high, high/low)
		assert.InEpsilon(t, 110, low, 0.10)
		assert.InEpsilon(t, 220, high, 0.10)
		assert.Greater(t, high/low, 1.6)
	})
}

func TestSpeechTrackFFprobe(t *testing.T) {
	t.Parallel()
	ffprobe := tooltest.Path(t, "ffprobe", "apt-get install ffmpeg")
	tests := []struct {
		name string
		text string
		rate float64
	}{
		{"multilingual", speechTestText(300), 14},
		{"one word, odd duration", "Hi", 13},
		{"slow", "Bonjour, le monde.\nAu revoir!", 3.3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := SpeechTrack(tc.text, tc.rate, Voice{PitchHz: 190}, 44100)
			path := filepath.Join(t.TempDir(), "clone.wav")
			require.NoError(t, os.WriteFile(path, speechTestRender(t, tr), 0o644))
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, ffprobe, "-v", "error", "-select_streams", "a:0",
				"-show_entries", "stream=codec_name,sample_rate,channels,bits_per_sample,duration", "-of", "json", path).Output()
			require.NoError(t, err)
			var probe struct {
				Streams []struct {
					CodecName     string `json:"codec_name"`
					SampleRate    string `json:"sample_rate"`
					Channels      int    `json:"channels"`
					BitsPerSample int    `json:"bits_per_sample"`
					Duration      string `json:"duration"`
				} `json:"streams"`
			}
			require.NoError(t, json.Unmarshal(out, &probe), "%s", out)
			require.Len(t, probe.Streams, 1)
			s := probe.Streams[0]
			assert.Equal(t, "pcm_s16le", s.CodecName)
			assert.Equal(t, "44100", s.SampleRate)
			assert.Equal(t, 1, s.Channels)
			assert.Equal(t, 16, s.BitsPerSample)
			secs, err := strconv.ParseFloat(s.Duration, 64)
			require.NoError(t, err)
			assert.InDelta(t, tr.Duration.Seconds(), secs, 0.001, "ffprobe %s s, Track %v", s.Duration, tr.Duration)
		})
	}
}

// speechTestCountingWriter discards what it is given, sampling the heap
// now and then.
type speechTestCountingWriter struct {
	n, writes int64
	peak      uint64 // highest HeapAlloc seen
}

func (w *speechTestCountingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	if w.writes++; w.writes%64 == 0 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		w.peak = max(w.peak, m.HeapAlloc)
	}
	return len(p), nil
}

// TestCloningSynthesisBoundedMemory synthesises the WAV of 5000 characters
// and checks that the heap grows by less than 8 MB beyond the output (which
// is streamed, never held): the growth of HeapAlloc sampled during the
// copy, and the total allocation (an upper bound of it). Not parallel: the
// memory statistics are process-wide. The race detector does not change the
// numbers (its shadow memory is not Go heap), so the check stays on under
// -race; -short uses 500 characters.
func TestCloningSynthesisBoundedMemory(t *testing.T) {
	n := 5000
	if testing.Short() {
		n = 500
	}
	text := speechTestText(n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	tr := SpeechTrack(text, 14, Voice{PitchHz: 170, Seed: 3}, 44100)
	w := &speechTestCountingWriter{}
	_, err := io.Copy(w, NewWAVReader(tr))
	require.NoError(t, err)

	runtime.ReadMemStats(&after)
	total := after.TotalAlloc - before.TotalAlloc
	peak := int64(max(w.peak, after.HeapAlloc)) - int64(before.HeapAlloc)
	t.Logf("%d characters: %d segments, %v, %d bytes of WAV; heap grew by at most %d bytes (sampled), %d bytes allocated in all",
		n, len(tr.Segments), tr.Duration, w.n, peak, total)
	assert.Equal(t, WAVSize(tr), w.n)
	assert.Less(t, peak, int64(8<<20), "peak heap growth")
	assert.Less(t, total, uint64(8<<20), "total allocation")
}

func BenchmarkCloningSynthesis5000(b *testing.B) {
	text := speechTestText(5000)
	voice := Voice{PitchHz: 170, Seed: 3}
	size := WAVSize(SpeechTrack(text, 14, voice, 44100))
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		tr := SpeechTrack(text, 14, voice, 44100)
		n, err := io.Copy(io.Discard, NewWAVReader(tr))
		if err != nil || n != size {
			b.Fatalf("copied %d bytes (%v), want %d", n, err, size)
		}
	}
	b.ReportMetric(float64(size), "wav-bytes/op")
}

// TestSpeechTestText checks the benchmark text helper itself.
func TestSpeechTestText(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 100, 5000} {
		s := speechTestText(n)
		assert.Equal(t, n, utf8.RuneCountInString(s), fmt.Sprint(n))
	}
}
