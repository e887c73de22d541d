package probe

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/tooltest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbeFFmpeg generates real files with ffmpeg and checks Probe's
// duration against ffprobe's format=duration, and its stream facts. The
// plain files of each codec are TestProbeFFmpegStreams' (one start of
// ffprobe per file costs 0.25 s of CPU): these are the layouts and
// duration sources (faststart or not, fragments, large payloads, Xing).
func TestProbeFFmpeg(t *testing.T) {
	t.Parallel()
	probeTestRecordAnswers(t)
	ffmpeg, ffprobe, encoders := probeTestTools(t)

	audioIn := []string{"-f", "lavfi", "-i", "sine=frequency=440:duration=3.5"}
	videoIn := []string{"-f", "lavfi", "-i", "color=c=blue:s=64x36:d=3.5:r=25"}
	av := func(args ...string) []string {
		return append(append(append([]string{}, audioIn...), videoIn...), args...)
	}
	a := func(args ...string) []string { return append(append([]string{}, audioIn...), args...) }
	// A few MB of video, so that the media payload dwarfs the headers.
	big := func(args ...string) []string {
		in := []string{"-f", "lavfi", "-i", "testsrc=s=640x360:d=3.5:r=25", "-c:v", "mjpeg", "-q:v", "2"}
		return append(append(append([]string{}, audioIn...), in...), args...)
	}

	tests := []struct {
		name     string
		file     string
		args     []string
		encoders []string
		format   string
	}{
		{"wav float stereo 48k", "f.wav", a("-ac", "2", "-ar", "48000", "-c:a", "pcm_f32le"), []string{"pcm_f32le"}, FormatWAV},
		{"mp4 faststart", "fast.mp4", av("-c:v", "mpeg4", "-c:a", "aac", "-movflags", "+faststart"), []string{"mpeg4", "aac"}, FormatMP4},
		{"mp4 moov at end", "end.mp4", av("-c:v", "mpeg4", "-c:a", "aac"), []string{"mpeg4", "aac"}, FormatMP4},
		{"mp4 fragmented empty moov", "frag0.mp4", av("-c:v", "mpeg4", "-g", "12", "-c:a", "aac", "-movflags", "+frag_keyframe+empty_moov+default_base_moof"), []string{"mpeg4", "aac"}, FormatMP4},
		{"mp4 fragmented", "frag1.mp4", av("-c:v", "mpeg4", "-g", "12", "-c:a", "aac", "-movflags", "+frag_keyframe"), []string{"mpeg4", "aac"}, FormatMP4},
		{"mp4 dash", "dash.mp4", av("-c:v", "mpeg4", "-g", "25", "-c:a", "aac", "-movflags", "+dash"), []string{"mpeg4", "aac"}, FormatMP4},
		{"ismv", "a.ismv", a("-c:a", "aac", "-f", "ismv"), []string{"aac"}, FormatMP4},
		{"mov large moov at end", "big.mov", big("-c:a", "pcm_s16le"), []string{"mjpeg", "pcm_s16le"}, FormatMP4},
		{"mp4 large faststart", "bigfast.mp4", big("-c:a", "aac", "-movflags", "+faststart"), []string{"mjpeg", "aac"}, FormatMP4},
		{"mp4 large fragmented", "bigfrag.mp4", append(append(append([]string{}, audioIn...), "-f", "lavfi", "-i", "testsrc=s=640x360:d=3.5:r=25"),
			"-c:v", "mpeg4", "-q:v", "1", "-g", "25", "-c:a", "aac", "-movflags", "+frag_keyframe+empty_moov"), []string{"mpeg4", "aac"}, FormatMP4},
		{"mkv large", "big.mkv", big("-c:a", "pcm_s16le"), []string{"mjpeg", "pcm_s16le"}, FormatMKV},
		{"mkv mjpeg pcm", "a.mkv", av("-c:v", "mjpeg", "-c:a", "pcm_s16le"), []string{"mjpeg", "pcm_s16le"}, FormatMKV},
		{"mka flac", "a.mka", a("-c:a", "flac"), []string{"flac"}, FormatMKV},
		{"webm vorbis", "v.webm", a("-c:a", "libvorbis"), []string{"libvorbis"}, FormatMKV},
		{"mp3 lame vbr xing", "vbr.mp3", a("-c:a", "libmp3lame", "-q:a", "4"), []string{"libmp3lame"}, FormatMP3},
		{"mp3 lame cbr no xing", "cbr.mp3", a("-c:a", "libmp3lame", "-b:a", "128k", "-write_xing", "0", "-id3v2_version", "0"), []string{"libmp3lame"}, FormatMP3},
		{"mp3 lame 22k mono", "mono.mp3", a("-c:a", "libmp3lame", "-ar", "22050", "-ac", "1", "-b:a", "32k"), []string{"libmp3lame"}, FormatMP3},
	}
	dir := t.TempDir()
	files := make([]probeTestMedia, len(tests))
	for i, tc := range tests {
		files[i] = probeTestMedia{tc.file, tc.args, tc.encoders}
	}
	probeTestGenerate(t, ffmpeg, dir, encoders, files)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			probeTestNeedEncoders(t, encoders, tc.encoders)
			maxCalls := int64(4)
			if strings.Contains(tc.name, "fragmented") {
				maxCalls = 8 // about one per fragment
			}
			probeTestCheckFile(t, ffprobe, filepath.Join(dir, tc.file), tc.format, maxCalls,
				!strings.Contains(tc.name, "fragmented") && tc.file != "dash.mp4")
		})
	}
}

// probeTestCheckFile checks what Probe finds in the file at path against
// ffprobe: the format, the duration (within 50 ms), the stream facts (the
// frame rate only when withRate), and the reads: at most maxCalls ReadAt
// calls, and a small part of a large file.
func probeTestCheckFile(t *testing.T, ffprobe, path, format string, maxCalls int64, withRate bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	want, streams := probeTestFFprobe(t, ctx, ffprobe, path)

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)

	r := &probeTestCountingReader{r: f}
	info, err := Probe(r, st.Size())
	require.NoError(t, err)
	assert.Equal(t, format, info.Format)
	assert.InDelta(t, float64(want), float64(info.Duration), float64(50*time.Millisecond),
		"Probe %v, ffprobe %v", info.Duration, want)
	assert.LessOrEqual(t, r.calls.Load(), maxCalls, "ReadAt calls")
	if st.Size() > 1<<20 {
		assert.Less(t, r.bytes.Load()*4, st.Size(), "read a small part of a large file")
	}
	probeTestAssertStreams(t, streams, info, withRate)
	t.Logf("%s: probe %v ffprobe %v (%d bytes, %d ReadAt, %d bytes read); %+v",
		filepath.Base(path), info.Duration, want, st.Size(), r.calls.Load(), r.bytes.Load(), info)
}

// probeTestTools returns the paths of ffmpeg and ffprobe and ffmpeg's
// encoders, or ends the test when they are missing (internal/tooltest).
func probeTestTools(t *testing.T) (ffmpeg, ffprobe string, encoders map[string]bool) {
	t.Helper()
	ffmpeg = tooltest.Path(t, "ffmpeg", "apt-get install ffmpeg")
	ffprobe = tooltest.Path(t, "ffprobe", "apt-get install ffmpeg")
	probeTestEncoderList.once.Do(func() {
		probeTestEncoderList.out, probeTestEncoderList.err = exec.Command(ffmpeg, "-hide_banner", "-encoders").Output()
	})
	out, err := probeTestEncoderList.out, probeTestEncoderList.err
	require.NoError(t, err)
	encoders = map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && len(f[0]) == 6 {
			encoders[f[1]] = true
		}
	}
	return ffmpeg, ffprobe, encoders
}

// probeTestEncoderList is ffmpeg's list of encoders, asked once for the
// tests that need it.
var probeTestEncoderList struct {
	once sync.Once
	out  []byte
	err  error
}

// probeTestMedia is a file for ffmpeg to make: its name, ffmpeg's
// arguments for it alone (its lavfi inputs, "-f lavfi -i SPEC", and its
// output options) and the encoders they use.
type probeTestMedia struct {
	file           string
	args, encoders []string
}

// probeTestGenerate makes in dir, in one run of ffmpeg, every file whose
// encoders ffmpeg has: each output maps its own inputs. A start of ffmpeg
// loads 215 libraries, about 0.3 s of CPU, more than encoding one of these
// files.
func probeTestGenerate(t *testing.T, ffmpeg, dir string, encoders map[string]bool, files []probeTestMedia) {
	t.Helper()
	var inputs, outputs []string
	for _, m := range files {
		if !probeTestHasEncoders(encoders, m.encoders) {
			continue
		}
		for i := 0; i < len(m.args); i++ {
			if i+3 < len(m.args) && m.args[i] == "-f" && m.args[i+1] == "lavfi" && m.args[i+2] == "-i" {
				outputs = append(outputs, "-map", strconv.Itoa(len(inputs)/4))
				inputs = append(inputs, m.args[i:i+4]...)
				i += 3
				continue
			}
			outputs = append(outputs, m.args[i])
		}
		outputs = append(outputs, "-fflags", "+bitexact", "-shortest", filepath.Join(dir, m.file))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	args := slices.Concat([]string{"-hide_banner", "-v", "error", "-y"}, inputs, outputs)
	msg, err := exec.CommandContext(ctx, ffmpeg, args...).CombinedOutput()
	require.NoError(t, err, "ffmpeg %s: %s", strings.Join(args, " "), msg)
}

func probeTestHasEncoders(encoders map[string]bool, need []string) bool {
	for _, enc := range need {
		if !encoders[enc] {
			return false
		}
	}
	return true
}

// probeTestNeedEncoders skips t when ffmpeg lacks one of the encoders.
func probeTestNeedEncoders(t *testing.T, encoders map[string]bool, need []string) {
	t.Helper()
	if !probeTestHasEncoders(encoders, need) {
		t.Skipf("ffmpeg lacks one of the encoders %v", need)
	}
}

// probeTestAnswers are ffprobe's answers (its JSON output) for files these
// tests generate, by the SHA-256 of the file (testdata/ffprobe.json). A
// start of ffprobe costs about 0.25 s of CPU, more than the check it
// serves, and ffmpeg makes the same bytes from the same arguments (-fflags
// +bitexact: no random ids), so a file answered before needs no ffprobe.
// A file not in it (another ffmpeg, other arguments) asks ffprobe. The long
// run always asks ffprobe, and fails when a recorded answer for the same
// bytes says otherwise; -update records the answers of the files seen.
var probeTestAnswers struct {
	once sync.Once
	mu   sync.Mutex
	file map[string]json.RawMessage // as read from testdata
	seen map[string]json.RawMessage // this run's, for -update
}

var probeTestUpdate = flag.Bool("update", false, "record ffprobe's answers in testdata/ffprobe.json")

const probeTestAnswersPath = "testdata/ffprobe.json"

// probeTestRecordAnswers writes this run's answers at the end of t, when
// -update is given (run it on the whole package: the file keeps only the
// answers seen).
func probeTestRecordAnswers(t *testing.T) {
	if !*probeTestUpdate {
		return
	}
	t.Cleanup(func() {
		a := &probeTestAnswers
		a.mu.Lock()
		defer a.mu.Unlock()
		b, err := json.MarshalIndent(a.seen, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(probeTestAnswersPath), 0o755))
		require.NoError(t, os.WriteFile(probeTestAnswersPath, append(b, '\n'), 0o644))
	})
}

// probeTestFFprobe returns what ffprobe reports of path (asked, or recorded
// for the same bytes): its format's duration, and its first video and first
// audio stream as a MediaInfo (frame rate: the stream's r_frame_rate).
func probeTestFFprobe(t *testing.T, ctx context.Context, ffprobe, path string) (time.Duration, MediaInfo) {
	t.Helper()
	a := &probeTestAnswers
	a.once.Do(func() {
		a.seen = map[string]json.RawMessage{}
		if b, err := os.ReadFile(probeTestAnswersPath); err == nil {
			require.NoError(t, json.Unmarshal(b, &a.file), probeTestAnswersPath)
		}
	})
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	key := hex.EncodeToString(sum[:])
	recorded, ok := a.file[key]
	if ok && !tooltest.Long() && !*probeTestUpdate {
		a.mu.Lock()
		a.seen[key] = recorded
		a.mu.Unlock()
		return probeTestParseFFprobe(t, recorded)
	}
	out, err := exec.CommandContext(ctx, ffprobe, "-v", "error", "-show_entries",
		"format=duration:stream=codec_type,codec_name,width,height,r_frame_rate,sample_rate,channels", "-of", "json", path).Output()
	require.NoError(t, err)
	out = bytes.TrimSpace(out)
	a.mu.Lock()
	a.seen[key] = json.RawMessage(out)
	a.mu.Unlock()
	d, mi := probeTestParseFFprobe(t, out)
	if ok && !*probeTestUpdate {
		rd, rmi := probeTestParseFFprobe(t, recorded)
		require.Equal(t, d, rd, "ffprobe's duration of %s is not the one recorded in %s for its bytes (go test -update)", path, probeTestAnswersPath)
		require.Equal(t, mi, rmi, "ffprobe's streams of %s are not the ones recorded in %s for its bytes (go test -update)", path, probeTestAnswersPath)
	}
	return d, mi
}

// probeTestParseFFprobe reads ffprobe's JSON output.
func probeTestParseFFprobe(t *testing.T, out []byte) (time.Duration, MediaInfo) {
	t.Helper()
	var doc struct {
		Format struct {
			Duration string `json:"duration"`
		} `json:"format"`
		Streams []struct {
			CodecType  string `json:"codec_type"`
			CodecName  string `json:"codec_name"`
			Width      int    `json:"width"`
			Height     int    `json:"height"`
			FrameRate  string `json:"r_frame_rate"`
			SampleRate string `json:"sample_rate"`
			Channels   int    `json:"channels"`
		} `json:"streams"`
	}
	require.NoError(t, json.Unmarshal(out, &doc), "ffprobe output %s", out)
	var mi MediaInfo
	video, sound := false, false
	for _, s := range doc.Streams {
		switch {
		case s.CodecType == "video" && !video:
			video = true
			mi.VideoCodec, mi.Width, mi.Height = s.CodecName, s.Width, s.Height
			if r, ok := new(big.Rat).SetString(s.FrameRate); ok {
				mi.FrameRate, _ = r.Float64()
			}
		case s.CodecType == "audio" && !sound:
			sound = true
			mi.AudioCodec, mi.Channels = s.CodecName, s.Channels
			var err error
			mi.SampleRate, err = strconv.Atoi(s.SampleRate)
			require.NoError(t, err, "ffprobe sample_rate %q", s.SampleRate)
		}
	}
	secs, err := strconv.ParseFloat(doc.Format.Duration, 64)
	require.NoError(t, err, "ffprobe duration %q", doc.Format.Duration)
	return probeTestSeconds(secs), mi
}

// probeTestAssertStreams compares Probe's stream facts with ffprobe's; the
// frame rate only when withRate.
func probeTestAssertStreams(t *testing.T, want, got MediaInfo, withRate bool) {
	t.Helper()
	assert.Equal(t, want.VideoCodec, got.VideoCodec, "video codec")
	assert.Equal(t, want.Width, got.Width, "width")
	assert.Equal(t, want.Height, got.Height, "height")
	if withRate {
		assert.InEpsilon(t, want.FrameRate+1, got.FrameRate+1, 1e-4, "frame rate: ffprobe %g, probe %g", want.FrameRate, got.FrameRate)
	}
	assert.Equal(t, want.AudioCodec, got.AudioCodec, "audio codec")
	assert.Equal(t, want.SampleRate, got.SampleRate, "sample rate")
	assert.Equal(t, want.Channels, got.Channels, "channels")
}

// TestProbeFFmpegStreams generates files of various codecs, sizes, frame
// rates, sample rates and channel counts with ffmpeg and checks Probe's
// stream facts against ffprobe's, and its format, duration and reads as
// TestProbeFFmpeg does.
func TestProbeFFmpegStreams(t *testing.T) {
	t.Parallel()
	probeTestRecordAnswers(t)
	ffmpeg, ffprobe, encoders := probeTestTools(t)
	sine := func(rate, channels int) []string {
		return []string{"-f", "lavfi", "-i", fmt.Sprintf("sine=frequency=440:duration=1:sample_rate=%d", rate), "-ac", strconv.Itoa(channels)}
	}
	color := func(size, rate string) []string {
		return []string{"-f", "lavfi", "-i", "color=c=blue:s=" + size + ":d=1:r=" + rate}
	}
	cat := func(parts ...[]string) []string { return slices.Concat(parts...) }

	tests := []struct {
		name     string
		file     string
		args     []string
		encoders []string
	}{
		{"wav u8 mono 8k", "u8.wav", cat(sine(8000, 1), []string{"-c:a", "pcm_u8"}), []string{"pcm_u8"}},
		{"wav s16 stereo 22.05k", "s16.wav", cat(sine(22050, 2), []string{"-c:a", "pcm_s16le"}), []string{"pcm_s16le"}},
		{"wav s24 6ch 96k", "s24.wav", cat(sine(96000, 6), []string{"-c:a", "pcm_s24le"}), []string{"pcm_s24le"}},
		{"wav f64 mono 44.1k", "f64.wav", cat(sine(44100, 1), []string{"-c:a", "pcm_f64le"}), []string{"pcm_f64le"}},
		{"wav alaw", "alaw.wav", cat(sine(8000, 1), []string{"-c:a", "pcm_alaw"}), []string{"pcm_alaw"}},
		{"flac 48k stereo", "a.flac", cat(sine(48000, 2), []string{"-c:a", "flac"}), []string{"flac"}},
		{"flac 16k mono", "b.flac", cat(sine(16000, 1), []string{"-c:a", "flac"}), []string{"flac"}},
		{"mp3 48k stereo", "a.mp3", cat(sine(48000, 2), []string{"-c:a", "libmp3lame"}), []string{"libmp3lame"}},
		{"mp3 11.025k mono", "b.mp3", cat(sine(11025, 1), []string{"-c:a", "libmp3lame", "-b:a", "16k"}), []string{"libmp3lame"}},
		{"mp2 32k stereo", "a.mp2", cat(sine(32000, 2), []string{"-c:a", "mp2"}), []string{"mp2"}},
		{"m4a aac 22.05k mono", "a.m4a", cat(sine(22050, 1), []string{"-c:a", "aac"}), []string{"aac"}},
		{"mp4 h264 640x360 25 aac 48k", "a.mp4", cat(color("640x360", "25"), sine(48000, 2), []string{"-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"}), []string{"libx264", "aac"}},
		{"mp4 h264 320x240 30000/1001", "b.mp4", cat(color("320x240", "30000/1001"), sine(44100, 1), []string{"-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"}), []string{"libx264", "aac"}},
		{"mp4 mpeg4 176x144 15", "c.mp4", cat(color("176x144", "15"), []string{"-c:v", "mpeg4"}), []string{"mpeg4"}},
		{"mov mjpeg 64x48 50 pcm 96k", "a.mov", cat(color("64x48", "50"), sine(96000, 2), []string{"-c:v", "mjpeg", "-c:a", "pcm_s16le"}), []string{"mjpeg", "pcm_s16le"}},
		{"mov mjpeg 24 pcm 8k mono", "b.mov", cat(color("96x64", "24"), sine(8000, 1), []string{"-c:v", "mjpeg", "-c:a", "pcm_s16le"}), []string{"mjpeg", "pcm_s16le"}},
		{"mkv h264 1280x720 60 flac", "a.mkv", cat(color("1280x720", "60"), sine(44100, 2), []string{"-c:v", "libx264", "-preset", "ultrafast", "-c:a", "flac"}), []string{"libx264", "flac"}},
		{"mkv mpeg4 24000/1001 pcm s24", "b.mkv", cat(color("320x180", "24000/1001"), sine(48000, 1), []string{"-c:v", "mpeg4", "-c:a", "pcm_s24le"}), []string{"mpeg4", "pcm_s24le"}},
		{"mka mp3", "a.mka", cat(sine(22050, 1), []string{"-c:a", "libmp3lame"}), []string{"libmp3lame"}},
		{"webm vp8 opus", "a.webm", cat(color("160x90", "30"), sine(48000, 2), []string{"-c:v", "libvpx", "-deadline", "realtime", "-c:a", "libopus"}), []string{"libvpx", "libopus"}},
		{"webm vp9 vorbis", "b.webm", cat(color("128x72", "12"), sine(24000, 1), []string{"-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-c:a", "libvorbis"}), []string{"libvpx-vp9", "libvorbis"}},
	}
	dir := t.TempDir()
	files := make([]probeTestMedia, len(tests))
	for i, tc := range tests {
		files[i] = probeTestMedia{tc.file, tc.args, tc.encoders}
	}
	probeTestGenerate(t, ffmpeg, dir, encoders, files)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			probeTestNeedEncoders(t, encoders, tc.encoders)
			probeTestCheckFile(t, ffprobe, filepath.Join(dir, tc.file), probeTestFormats[filepath.Ext(tc.file)], 4, true)
		})
	}
}

// probeTestFormats is the format of a file by its extension.
var probeTestFormats = map[string]string{
	".wav": FormatWAV, ".flac": FormatFLAC, ".mp3": FormatMP3, ".mp2": FormatMP3,
	".m4a": FormatMP4, ".mp4": FormatMP4, ".mov": FormatMP4, ".mkv": FormatMKV, ".mka": FormatMKV, ".webm": FormatMKV,
}
