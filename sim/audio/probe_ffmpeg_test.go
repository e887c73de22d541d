package audio

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probeTestRequireTools reports whether missing ffmpeg/ffprobe must fail the
// test rather than skip it (CI sets DUBSIM_REQUIRE_TOOLS=1).
func probeTestRequireTools() bool { return os.Getenv("DUBSIM_REQUIRE_TOOLS") == "1" }

// TestProbeFFmpeg generates real files with ffmpeg and checks Probe's
// duration against ffprobe's format=duration.
func TestProbeFFmpeg(t *testing.T) {
	t.Parallel()
	ffmpeg, err1 := exec.LookPath("ffmpeg")
	ffprobe, err2 := exec.LookPath("ffprobe")
	if err1 != nil || err2 != nil {
		if probeTestRequireTools() {
			t.Fatalf("ffmpeg/ffprobe required (DUBSIM_REQUIRE_TOOLS=1): %v %v", err1, err2)
		}
		t.Skip("ffmpeg/ffprobe not installed")
	}
	out, err := exec.CommandContext(t.Context(), ffmpeg, "-hide_banner", "-encoders").Output()
	require.NoError(t, err)
	encoders := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && len(f[0]) == 6 {
			encoders[f[1]] = true
		}
	}

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
		{"wav pcm", "a.wav", a("-c:a", "pcm_s16le"), []string{"pcm_s16le"}, FormatWAV},
		{"wav float stereo 48k", "f.wav", a("-ac", "2", "-ar", "48000", "-c:a", "pcm_f32le"), []string{"pcm_f32le"}, FormatWAV},
		{"mp4 faststart", "fast.mp4", av("-c:v", "mpeg4", "-c:a", "aac", "-movflags", "+faststart"), []string{"mpeg4", "aac"}, FormatMP4},
		{"mp4 moov at end", "end.mp4", av("-c:v", "mpeg4", "-c:a", "aac"), []string{"mpeg4", "aac"}, FormatMP4},
		{"mp4 h264", "h264.mp4", av("-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"), []string{"libx264", "aac"}, FormatMP4},
		{"mp4 fragmented empty moov", "frag0.mp4", av("-c:v", "mpeg4", "-g", "12", "-c:a", "aac", "-movflags", "+frag_keyframe+empty_moov+default_base_moof"), []string{"mpeg4", "aac"}, FormatMP4},
		{"mp4 fragmented", "frag1.mp4", av("-c:v", "mpeg4", "-g", "12", "-c:a", "aac", "-movflags", "+frag_keyframe"), []string{"mpeg4", "aac"}, FormatMP4},
		{"mp4 dash", "dash.mp4", av("-c:v", "mpeg4", "-g", "25", "-c:a", "aac", "-movflags", "+dash"), []string{"mpeg4", "aac"}, FormatMP4},
		{"ismv", "a.ismv", a("-c:a", "aac", "-f", "ismv"), []string{"aac"}, FormatMP4},
		{"mov large moov at end", "big.mov", big("-c:a", "pcm_s16le"), []string{"mjpeg", "pcm_s16le"}, FormatMP4},
		{"mp4 large faststart", "bigfast.mp4", big("-c:a", "aac", "-movflags", "+faststart"), []string{"mjpeg", "aac"}, FormatMP4},
		{"mp4 large fragmented", "bigfrag.mp4", append(append(append([]string{}, audioIn...), "-f", "lavfi", "-i", "testsrc=s=640x360:d=3.5:r=25"),
			"-c:v", "mpeg4", "-q:v", "1", "-g", "25", "-c:a", "aac", "-movflags", "+frag_keyframe+empty_moov"), []string{"mpeg4", "aac"}, FormatMP4},
		{"mkv large", "big.mkv", big("-c:a", "pcm_s16le"), []string{"mjpeg", "pcm_s16le"}, FormatMKV},
		{"m4a", "a.m4a", a("-c:a", "aac"), []string{"aac"}, FormatMP4},
		{"mov mjpeg pcm", "a.mov", av("-c:v", "mjpeg", "-c:a", "pcm_s16le"), []string{"mjpeg", "pcm_s16le"}, FormatMP4},
		{"mkv mjpeg pcm", "a.mkv", av("-c:v", "mjpeg", "-c:a", "pcm_s16le"), []string{"mjpeg", "pcm_s16le"}, FormatMKV},
		{"mka flac", "a.mka", a("-c:a", "flac"), []string{"flac"}, FormatMKV},
		{"webm vp8 opus", "a.webm", av("-c:v", "libvpx", "-deadline", "realtime", "-c:a", "libopus"), []string{"libvpx", "libopus"}, FormatMKV},
		{"webm vorbis", "v.webm", a("-c:a", "libvorbis"), []string{"libvorbis"}, FormatMKV},
		{"mp3 lame vbr xing", "vbr.mp3", a("-c:a", "libmp3lame", "-q:a", "4"), []string{"libmp3lame"}, FormatMP3},
		{"mp3 lame cbr no xing", "cbr.mp3", a("-c:a", "libmp3lame", "-b:a", "128k", "-write_xing", "0", "-id3v2_version", "0"), []string{"libmp3lame"}, FormatMP3},
		{"mp3 lame 22k mono", "mono.mp3", a("-c:a", "libmp3lame", "-ar", "22050", "-ac", "1", "-b:a", "32k"), []string{"libmp3lame"}, FormatMP3},
		{"flac", "a.flac", a("-c:a", "flac"), []string{"flac"}, FormatFLAC},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, enc := range tc.encoders {
				if !encoders[enc] {
					t.Skipf("ffmpeg encoder %s not available", enc)
				}
			}
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			path := filepath.Join(dir, tc.file)
			args := append([]string{"-hide_banner", "-v", "error", "-y"}, tc.args...)
			args = append(args, "-shortest", path)
			cmd := exec.CommandContext(ctx, ffmpeg, args...)
			msg, err := cmd.CombinedOutput()
			require.NoError(t, err, "ffmpeg %s: %s", strings.Join(args, " "), msg)

			msg, err = exec.CommandContext(ctx, ffprobe, "-v", "error", "-show_entries", "format=duration",
				"-of", "default=noprint_wrappers=1:nokey=1", path).Output()
			require.NoError(t, err)
			secs, err := strconv.ParseFloat(strings.TrimSpace(string(msg)), 64)
			require.NoError(t, err, "ffprobe output %q", msg)
			want := probeTestSeconds(secs)

			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			st, err := f.Stat()
			require.NoError(t, err)

			r := &probeTestCountingReader{r: f}
			info, err := Probe(r, st.Size())
			require.NoError(t, err)
			assert.Equal(t, tc.format, info.Format)
			assert.InDelta(t, float64(want), float64(info.Duration), float64(50*time.Millisecond),
				"Probe %v, ffprobe %v", info.Duration, want)
			maxCalls := int64(4)
			if strings.Contains(tc.name, "fragmented") {
				maxCalls = 8 // about one per fragment
			}
			assert.LessOrEqual(t, r.calls.Load(), maxCalls, "ReadAt calls")
			if st.Size() > 1<<20 {
				assert.Less(t, r.bytes.Load()*4, st.Size(), "read a small part of a large file")
			}
			t.Logf("%s: probe %v ffprobe %v (%d bytes, %d ReadAt, %d bytes read)",
				tc.file, info.Duration, want, st.Size(), r.calls.Load(), r.bytes.Load())
		})
	}
}
