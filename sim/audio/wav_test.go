package audio

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/tooltest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata")

// wavLongTrack is a track of the given duration with a 3-second segment
// every 5 seconds, spoken by four voices in turn.
func wavLongTrack(sr int, d time.Duration) Track {
	tr := Track{SampleRate: sr, Duration: d}
	texts := []string{"Good evening, and welcome to the show.", "We have a lot to talk about tonight!", "Shall we begin?", "Yes, let us start."}
	pitches := []float64{110, 210, 130, 180}
	for i, start := 0, time.Second; start+3*time.Second <= d; i, start = i+1, start+5*time.Second {
		tr.Segments = append(tr.Segments, Segment{
			Start: start, End: start + 3*time.Second,
			Text:  texts[i%len(texts)],
			Voice: Voice{PitchHz: pitches[i%len(pitches)], Seed: uint64(i % len(pitches))},
		})
	}
	return tr
}

// wavParsedHeader is a canonical WAV header read back.
type wavParsedHeader struct {
	riff, wave, fmtID, dataID   string
	riffSize, fmtSize, dataSize uint32
	format, channels, bits      uint16
	blockAlign                  uint16
	sampleRate, byteRate        uint32
}

func wavParseHeader(t *testing.T, h []byte) wavParsedHeader {
	t.Helper()
	require.GreaterOrEqual(t, len(h), wavHeaderSize)
	le := binary.LittleEndian
	return wavParsedHeader{
		riff: string(h[0:4]), riffSize: le.Uint32(h[4:]), wave: string(h[8:12]),
		fmtID: string(h[12:16]), fmtSize: le.Uint32(h[16:]), format: le.Uint16(h[20:]),
		channels: le.Uint16(h[22:]), sampleRate: le.Uint32(h[24:]), byteRate: le.Uint32(h[28:]),
		blockAlign: le.Uint16(h[32:]), bits: le.Uint16(h[34:]),
		dataID: string(h[36:40]), dataSize: le.Uint32(h[40:]),
	}
}

func TestWAVHeaderGolden(t *testing.T) {
	t.Parallel()
	tr := synthTestTrack()
	head := make([]byte, wavHeaderSize)
	_, err := io.ReadFull(NewWAVReader(tr), head)
	require.NoError(t, err)
	got := hex.Dump(head)
	path := filepath.Join("testdata", "wav_header.golden")
	if *updateGolden {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -run TestWAVHeaderGolden -update to create it")
	assert.Equal(t, string(want), got)
	assert.Equal(t, head, WAVHeader(22050, 1, 16, uint32(WAVSize(tr)-wavHeaderSize)))
}

func TestWAVHeaderFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		track       Track
		wantRate    uint32
		wantSamples uint32
	}{
		{"22050 Hz", Track{SampleRate: 22050, Duration: 12345 * time.Millisecond}, 22050, 272207},
		{"44100 Hz", Track{SampleRate: 44100, Duration: 2 * time.Second}, 44100, 88200},
		{"default rate", Track{Duration: time.Second}, 22050, 22050},
		{"empty", Track{SampleRate: 8000}, 8000, 0},
		{"negative duration", Track{SampleRate: 8000, Duration: -time.Second}, 8000, 0},
		{"one sample", Track{SampleRate: 1000, Duration: time.Millisecond}, 1000, 1},
		{"two hours", Track{SampleRate: 22050, Duration: 2 * time.Hour}, 22050, 158760000},
		{"capped", Track{SampleRate: 44100, Duration: 100 * time.Hour}, 44100, uint32(synthMaxSamples)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := NewWAVReader(tc.track)
			head := make([]byte, wavHeaderSize)
			_, err := io.ReadFull(r, head)
			require.NoError(t, err)
			h := wavParseHeader(t, head)
			assert.Equal(t, wavParsedHeader{
				riff: "RIFF", wave: "WAVE", fmtID: "fmt ", dataID: "data",
				riffSize: 36 + 2*tc.wantSamples, fmtSize: 16, dataSize: 2 * tc.wantSamples,
				format: 1, channels: 1, bits: 16, blockAlign: 2,
				sampleRate: tc.wantRate, byteRate: 2 * tc.wantRate,
			}, h)
			size := WAVSize(tc.track)
			assert.Equal(t, int64(wavHeaderSize)+int64(h.dataSize), size)
			end, err := r.Seek(0, io.SeekEnd)
			require.NoError(t, err)
			assert.Equal(t, size, end)
			if size < 1<<20 {
				_, err = r.Seek(0, io.SeekStart)
				require.NoError(t, err)
				n, err := io.Copy(io.Discard, r)
				require.NoError(t, err)
				assert.Equal(t, size, n)
			}
		})
	}
}

func TestWAVHeaderFunc(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                 string
		rate, channels, bits int
		data                 uint32
		wantByteRate         uint32
		wantAlign            uint16
		wantRIFF             uint32
	}{
		{"mono 16", 22050, 1, 16, 100, 44100, 2, 136},
		{"stereo 16", 44100, 2, 16, 0, 176400, 4, 36},
		{"mono 8", 8000, 1, 8, 7, 8000, 1, 43},
		{"stereo 24", 48000, 2, 24, 6, 288000, 6, 42},
		{"saturated", 8000, 1, 16, 0xFFFFFFF0, 16000, 2, 0xFFFFFFFF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := WAVHeader(tc.rate, tc.channels, tc.bits, tc.data)
			require.Len(t, b, wavHeaderSize)
			h := wavParseHeader(t, b)
			assert.Equal(t, tc.wantByteRate, h.byteRate)
			assert.Equal(t, tc.wantAlign, h.blockAlign)
			assert.Equal(t, tc.wantRIFF, h.riffSize)
			assert.Equal(t, tc.data, h.dataSize)
			assert.Equal(t, uint16(tc.channels), h.channels)
			assert.Equal(t, uint16(tc.bits), h.bits)
		})
	}
}

// wavCheckSeeks checks that reads after random seeks from fresh readers and
// from one reused reader give the same bytes as the full file.
func wavCheckSeeks(t *testing.T, open func() io.ReadSeeker, full []byte, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 42))
	size := int64(len(full))
	reused := open()
	for i := range 300 {
		off := rng.Int64N(size)
		switch i % 6 {
		case 0: // near the header / data boundary
			off = rng.Int64N(min(size, 200))
		case 1: // near the end
			off = max(0, size-1-rng.Int64N(min(size, 5000)))
		}
		n := 1 + rng.IntN(70000)
		want := full[off:min(size, off+int64(n))]

		r := reused
		if i%2 == 0 {
			r = open()
		}
		var err error
		switch i % 3 {
		case 0:
			_, err = r.Seek(off, io.SeekStart)
		case 1:
			_, err = r.Seek(off-size, io.SeekEnd)
		default:
			cur, serr := r.Seek(0, io.SeekCurrent)
			require.NoError(t, serr)
			_, err = r.Seek(off-cur, io.SeekCurrent)
		}
		require.NoError(t, err)
		got := make([]byte, len(want))
		if i%5 == 0 { // tiny reads
			// t.Fatalf rather than require.NoError per byte: require's
			// t.Helper walks the stack on every call, which cost more
			// than the reads themselves.
			for j := range got {
				if _, err = io.ReadFull(r, got[j:j+1]); err != nil {
					t.Fatalf("seek %d to %d, byte %d: %v", i, off, j, err)
				}
			}
		} else {
			_, err = io.ReadFull(r, got)
			require.NoError(t, err)
		}
		if !bytes.Equal(want, got) {
			t.Fatalf("seek %d to %d, read %d bytes: differs from the full read", i, off, len(want))
		}
	}
}

func TestWAVDeterminism(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		track Track
	}{
		{"two speakers", synthTestTrack()},
		{"44100 Hz many segments", wavLongTrack(44100, 40*time.Second)},
		{"odd rate", wavLongTrack(11025, 17*time.Second+123*time.Millisecond)},
		{"no segments", Track{SampleRate: 8000, Duration: 3 * time.Second}},
		{"louder over the original", mixTestTrack(4, &Original{Speech: synthTestTrack().Segments, Seed: 7, Duck: true})},
		{"quieter over the background", mixTestTrack(-12, &Original{Seed: 8})},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, err := io.ReadAll(NewWAVReader(tc.track))
			require.NoError(t, err)
			b, err := io.ReadAll(NewWAVReader(tc.track))
			require.NoError(t, err)
			require.Len(t, a, int(WAVSize(tc.track)))
			assert.True(t, bytes.Equal(a, b), "two readers agree")
			wavCheckSeeks(t, func() io.ReadSeeker { return NewWAVReader(tc.track) }, a, uint64(i))
		})
	}
}

// TestWAVReaderBoundedMemory reads a 10-minute track (a voice over the ducked
// original speech and bed, the most a reader computes: 26 MB of WAV, six
// times the bound) through a 32 KiB buffer and checks that it allocates a
// bounded amount of memory. It is not parallel: the memory statistics are
// process-wide, and the sequential tests run before the parallel ones resume.
func TestWAVReaderBoundedMemory(t *testing.T) {
	const dur = 10 * time.Minute
	tr := wavLongTrack(22050, dur)
	tr.GainDB, tr.Original = 4, &Original{Speech: tr.Segments, Seed: 1, Duck: true}
	buf := make([]byte, 32<<10)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)

	r := NewWAVReader(tr)
	var total int64
	for {
		n, err := r.Read(buf)
		total += int64(n)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}

	runtime.ReadMemStats(&after)
	runtime.KeepAlive(r)
	alloc := after.TotalAlloc - before.TotalAlloc
	inuse := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("read %d bytes (%v); allocated %d bytes, heap in use grew by %d bytes", total, dur, alloc, inuse)
	assert.Equal(t, WAVSize(tr), total)
	assert.Less(t, alloc, uint64(4<<20), "total allocation")
	assert.Less(t, inuse, int64(4<<20), "heap in use")
}

func BenchmarkWAVReader(b *testing.B) {
	benchmarkWAVReader(b, wavLongTrack(22050, time.Minute))
}

// BenchmarkWAVReaderMixed reads the audio of a dubbed video mixed with its
// original (voiceover_with_original_track): the original speech is a second
// voice to synthesise.
func BenchmarkWAVReaderMixed(b *testing.B) {
	tr := wavLongTrack(22050, time.Minute)
	tr.Original = &Original{Speech: tr.Segments, Seed: 1, Duck: true}
	benchmarkWAVReader(b, tr)
}

func benchmarkWAVReader(b *testing.B, tr Track) {
	buf := make([]byte, 32<<10)
	b.SetBytes(WAVSize(tr))
	b.ReportAllocs()
	for b.Loop() {
		r := NewWAVReader(tr)
		for {
			_, err := r.Read(buf)
			if err == io.EOF {
				break
			}
		}
	}
}

// wavRequireTools returns the paths of the named command-line tools, or
// skips the test when one is missing (fails it with DUBSIM_REQUIRE_TOOLS=1).
func wavRequireTools(t *testing.T, names ...string) []string {
	t.Helper()
	paths := make([]string, len(names))
	for i, name := range names {
		paths[i] = tooltest.Path(t, name, "")
	}
	return paths
}

// wavRun runs a command and returns its standard output; it fails the test
// on a non-zero exit or on anything written to standard error.
func wavRun(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), stderr.String())
	assert.Empty(t, stderr.String(), "%s %s", name, strings.Join(args, " "))
	return stdout.Bytes()
}

func TestWAVSox(t *testing.T) {
	t.Parallel()
	tools := wavRequireTools(t, "sox")
	tr := synthTestTrack()
	path := filepath.Join(t.TempDir(), "dub.wav")
	f, err := os.Create(path)
	require.NoError(t, err)
	_, err = io.Copy(f, NewWAVReader(tr))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	info := string(wavRun(t, tools[0], "--i", path))
	for _, want := range []string{
		"Channels       : 1",
		"Sample Rate    : 22050",
		"Precision      : 16-bit",
		"Duration       : 00:00:12.00 = 264600 samples",
		"Sample Encoding: 16-bit Signed Integer PCM",
	} {
		assert.Contains(t, info, want)
	}
	// sox decodes the whole file and reports its statistics (on stderr).
	out, err := exec.Command(tools[0], path, "-n", "stat").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Regexp(t, `Samples read:\s+264600\n`, string(out))
	assert.Regexp(t, `Length \(seconds\):\s+12\.000000\n`, string(out))
	assert.NotRegexp(t, `(?i)warn|fail`, string(out))
}
