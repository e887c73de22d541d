package server_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/audio"
	"github.com/dubsim/dubsim/sim/openapi"
	"github.com/dubsim/dubsim/sim/openapi/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pcmWAV is a silent 16-bit PCM WAV file of the given format.
func pcmWAV(rate, channels int, d time.Duration) []byte {
	data := uint32(int64(rate) * int64(channels) * 2 * int64(d) / int64(time.Second))
	return append(audio.WAVHeader(rate, channels, 16, data), make([]byte, data)...)
}

// tinyMP4 is a small MP4 whose video track is codec (a sample entry type
// such as "avc1") of size w×h at fps frames per second, with 2 seconds of
// frames; the media payload is zeros (dubsim reads headers only).
func tinyMP4(codec string, w, h, fps int) []byte {
	be16 := func(v int) []byte { return binary.BigEndian.AppendUint16(nil, uint16(v)) }
	be32 := func(v int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
	box := func(typ string, payload ...[]byte) []byte {
		body := bytes.Join(payload, nil)
		return bytes.Join([][]byte{be32(8 + len(body)), []byte(typ), body}, nil)
	}
	const timescale = 90000
	frames := 2 * fps
	times := func(scale, dur int) []byte { // version 0: creation, modification, timescale, duration
		return bytes.Join([][]byte{make([]byte, 12), be32(scale), be32(dur)}, nil)
	}
	entry := box(codec, make([]byte, 8), make([]byte, 16), be16(w), be16(h), make([]byte, 50))
	trak := box("trak",
		box("tkhd", make([]byte, 84)),
		box("mdia",
			box("mdhd", times(timescale, frames*(timescale/fps)), make([]byte, 4)),
			box("hdlr", make([]byte, 8), []byte("vide"), make([]byte, 13)),
			box("minf", box("stbl",
				box("stsd", make([]byte, 4), be32(1), entry),
				box("stts", make([]byte, 4), be32(1), be32(frames), be32(timescale/fps))))))
	return bytes.Join([][]byte{
		box("ftyp", []byte("isom"), be32(0x200), []byte("isomiso2")),
		box("moov", box("mvhd", times(1000, 2000), make([]byte, 80)), trak),
		box("mdat", make([]byte, 4000)),
	}, nil)
}

// filesServer is a loopback media server answering the files of a map by
// path.
func filesServer(t testing.TB, files map[string][]byte) *httptest.Server {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, r.URL.Path, time.Time{}, bytes.NewReader(b))
	}))
	t.Cleanup(hs.Close)
	return hs
}

// TestArtifactFragmentsShareTheFormat: the fragments of an artifact must
// share codec, resolution and frame rate (sample rate and channels for
// audio). dubsim compares the headers it read (presigned uploads and the
// URLs it downloads) and fails the artifact on the first mismatch, naming
// the fragment, its source and the differing fact; fragments whose
// header it never read (derived values) are not compared.
func TestArtifactFragmentsShareTheFormat(t *testing.T) {
	t.Parallel()
	const key = "dubsim-free"
	wav44 := pcmWAV(44100, 1, 1500*time.Millisecond)
	wav22 := pcmWAV(22050, 1, 1500*time.Millisecond)
	wav44stereo := pcmWAV(44100, 2, time.Second)
	mp4a := tinyMP4("avc1", 640, 360, 25)
	mp4b := tinyMP4("avc1", 320, 240, 25)
	mp4c := tinyMP4("avc1", 640, 360, 30)
	mp4d := tinyMP4("mp4v", 640, 360, 25)
	media := filesServer(t, map[string][]byte{"/a44.wav": wav44, "/b22.wav": wav22, "/c44.wav": wav44})
	mismatch := func(i int, src, fact, got string, ref int, want string) string {
		return fmt.Sprintf(sim.MsgFragmentMismatch, i, src, fact, got, ref, want)
	}
	frag := func(k, v string, start float64) map[string]any { return map[string]any{k: v, "startTime": start} }

	type want struct {
		status   string
		errMsg   func(srcs []string) string // the sources of the fragments
		size     int64
		duration float64
	}
	tests := []struct {
		name  string
		typ   string
		frags func(t *testing.T, in *inst) (frags []any, srcs []string)
		want  want
	}{
		{"two uploads, sample rates differ", "audio", func(t *testing.T, in *inst) ([]any, []string) {
			a, b := uploadFile(t, in, key, "a.wav", wav44), uploadFile(t, in, key, "b.wav", wav22)
			return []any{frag("s3Path", a, 0), frag("s3Path", b, 1.5)}, []string{a, b}
		}, want{status: sim.ArtifactFailed, errMsg: func(s []string) string {
			return mismatch(2, s[1], "sample rate", "22050 Hz", 1, "44100 Hz")
		}}},
		{"two uploads, same format", "audio", func(t *testing.T, in *inst) ([]any, []string) {
			a, b := uploadFile(t, in, key, "a.wav", wav44), uploadFile(t, in, key, "b.wav", wav44)
			return []any{frag("s3Path", a, 0), frag("s3Path", b, 1.5)}, []string{a, b}
		}, want{status: sim.ArtifactCompleted, size: 2 * int64(len(wav44)), duration: 3}},
		{"three uploads, channels of the third differ", "audio", func(t *testing.T, in *inst) ([]any, []string) {
			a, b, c := uploadFile(t, in, key, "a.wav", wav44), uploadFile(t, in, key, "b.wav", wav44), uploadFile(t, in, key, "c.wav", wav44stereo)
			return []any{frag("s3Path", a, 0), frag("s3Path", b, 1.5), frag("s3Path", c, 3)}, []string{a, b, c}
		}, want{status: sim.ArtifactFailed, errMsg: func(s []string) string {
			return mismatch(3, s[2], "channel count", "2", 1, "1")
		}}},
		{"video uploads, resolutions differ", "video", func(t *testing.T, in *inst) ([]any, []string) {
			a, b := uploadFile(t, in, key, "a.mp4", mp4a), uploadFile(t, in, key, "b.mp4", mp4b)
			return []any{frag("s3Path", a, 0), frag("s3Path", b, 2)}, []string{a, b}
		}, want{status: sim.ArtifactFailed, errMsg: func(s []string) string {
			return mismatch(2, s[1], "resolution", "320x240", 1, "640x360")
		}}},
		{"video uploads, frame rates differ", "video", func(t *testing.T, in *inst) ([]any, []string) {
			a, b := uploadFile(t, in, key, "a.mp4", mp4a), uploadFile(t, in, key, "c.mp4", mp4c)
			return []any{frag("s3Path", a, 0), frag("s3Path", b, 2)}, []string{a, b}
		}, want{status: sim.ArtifactFailed, errMsg: func(s []string) string {
			return mismatch(2, s[1], "frame rate", "30 fps", 1, "25 fps")
		}}},
		{"video uploads, codecs differ", "video", func(t *testing.T, in *inst) ([]any, []string) {
			a, b := uploadFile(t, in, key, "a.mp4", mp4a), uploadFile(t, in, key, "d.mp4", mp4d)
			return []any{frag("s3Path", a, 0), frag("s3Path", b, 2)}, []string{a, b}
		}, want{status: sim.ArtifactFailed, errMsg: func(s []string) string {
			return mismatch(2, s[1], "video codec", "mpeg4", 1, "h264")
		}}},
		{"video uploads, same format", "video", func(t *testing.T, in *inst) ([]any, []string) {
			a, b := uploadFile(t, in, key, "a.mp4", mp4a), uploadFile(t, in, key, "a2.mp4", mp4a)
			return []any{frag("s3Path", a, 0), frag("s3Path", b, 2)}, []string{a, b}
		}, want{status: sim.ArtifactCompleted, size: 2 * int64(len(mp4a)), duration: 4}},
		{"a video and an audio-only upload", "video", func(t *testing.T, in *inst) ([]any, []string) {
			a, b := uploadFile(t, in, key, "a.mp4", mp4a), uploadFile(t, in, key, "b.wav", wav44)
			return []any{frag("s3Path", a, 0), frag("s3Path", b, 2)}, []string{a, b}
		}, want{status: sim.ArtifactFailed, errMsg: func(s []string) string {
			return fmt.Sprintf(sim.MsgFragmentNoVideo, 2, s[1], 1)
		}}},
		{"two downloaded URLs differ", "audio", func(t *testing.T, in *inst) ([]any, []string) {
			a, b := media.URL+"/a44.wav", media.URL+"/b22.wav"
			return []any{frag("url", a, 0), frag("url", b, 1.5)}, []string{a, b}
		}, want{status: sim.ArtifactFailed, errMsg: func(s []string) string {
			return mismatch(2, s[1], "sample rate", "22050 Hz", 1, "44100 Hz")
		}}},
		{"two downloaded URLs, same format", "audio", func(t *testing.T, in *inst) ([]any, []string) {
			a, b := media.URL+"/a44.wav", media.URL+"/c44.wav"
			return []any{frag("url", a, 0), frag("url", b, 1.5)}, []string{a, b}
		}, want{status: sim.ArtifactCompleted, size: 2 * int64(len(wav44)), duration: 3}},
		{"a downloaded URL, then an upload that differs", "audio", func(t *testing.T, in *inst) ([]any, []string) {
			a, b := media.URL+"/a44.wav", uploadFile(t, in, key, "b.wav", wav22)
			return []any{frag("url", a, 0), frag("s3Path", b, 1.5)}, []string{a, b}
		}, want{status: sim.ArtifactFailed, errMsg: func(s []string) string {
			return mismatch(2, s[1], "sample rate", "22050 Hz", 1, "44100 Hz")
		}}},
		{"an upload, then a downloaded URL that differs", "audio", func(t *testing.T, in *inst) ([]any, []string) {
			a, b := uploadFile(t, in, key, "a.wav", wav22), media.URL+"/a44.wav"
			return []any{frag("s3Path", a, 0), frag("url", b, 1.5)}, []string{a, b}
		}, want{status: sim.ArtifactFailed, errMsg: func(s []string) string {
			return mismatch(2, s[1], "sample rate", "44100 Hz", 1, "22050 Hz")
		}}},
		{"a derived URL is not compared", "audio", func(t *testing.T, in *inst) ([]any, []string) {
			a, b := uploadFile(t, in, key, "a.wav", wav44), "https://cdn.test/outro.wav"
			return []any{frag("s3Path", a, 0), frag("url", b, 1.5)}, []string{a, b}
		}, want{status: sim.ArtifactCompleted}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := start(t, nil)
			frags, srcs := tc.frags(t, in)
			id := createArtifact(t, in, key, map[string]any{"name": "Frags", "type": tc.typ, "fragments": frags})["id"].(string)
			in.srv.Engine.Artifacts.WaitDownloads()
			studioAdvance(t, in, time.Hour)
			a := getArtifact(t, in, key, id)
			require.Equal(t, tc.want.status, a["status"], "%v", a)
			if tc.want.status == sim.ArtifactFailed {
				assert.Equal(t, tc.want.errMsg(srcs), a["errorMessage"])
				assert.Nil(t, a["size"])
				assert.Nil(t, a["duration"])
				return
			}
			assert.Nil(t, a["errorMessage"])
			if tc.want.size > 0 {
				assert.Equal(t, float64(tc.want.size), a["size"])
				assert.InDelta(t, tc.want.duration, a["duration"], 1e-9)
			}
		})
	}
}

// TestArtifactFragmentsKeepDownloadedFormats: while a presigned fragment
// waits to be resolved, the format of a downloaded fragment is kept in the
// artifact's result; the state dump shows it as the control API documents,
// and the upload is compared with it when processing ends.
func TestArtifactFragmentsKeepDownloadedFormats(t *testing.T) {
	t.Parallel()
	const key = "dubsim-free"
	wav44, wav22 := pcmWAV(44100, 2, time.Second), pcmWAV(22050, 2, time.Second)
	media := filesServer(t, map[string][]byte{"/a.wav": wav44})
	doc, err := openapi.Document("control")
	require.NoError(t, err)
	v, err := validate.New("control", doc)
	require.NoError(t, err)

	in := start(t, nil)
	s3, put := presign(t, in, key, "b.wav")
	id := createArtifact(t, in, key, map[string]any{"name": "Frags", "type": "audio", "fragments": []any{
		map[string]any{"url": media.URL + "/a.wav", "startTime": 0}, map[string]any{"s3Path": s3, "startTime": 1}}})["id"].(string)
	in.srv.Engine.Artifacts.WaitDownloads()

	resp, err := http.Get(in.url + "/_sim/studio")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	_, err = v.Check(http.MethodGet, "/_sim/studio", resp.StatusCode, resp.Header, body)
	require.NoError(t, err, "%s", body)
	var dump struct {
		Artifacts []struct {
			ID     string `json:"id"`
			Result struct {
				Media []map[string]any `json:"media"`
			} `json:"result"`
		} `json:"artifacts"`
	}
	require.NoError(t, json.Unmarshal(body, &dump))
	var kept []map[string]any
	for _, a := range dump.Artifacts {
		if a.ID == id {
			kept = a.Result.Media
		}
	}
	assert.Equal(t, []map[string]any{{"audio_codec": "pcm_s16le", "sample_rate": 44100.0, "channels": 2.0}, {}}, kept)

	st, _, msg := putBytes(t, put, wav22) // after the download: compared at the end
	require.Equal(t, http.StatusOK, st, msg)
	studioAdvance(t, in, time.Hour)
	a := getArtifact(t, in, key, id)
	assert.Equal(t, sim.ArtifactFailed, a["status"])
	assert.Equal(t, fmt.Sprintf(sim.MsgFragmentMismatch, 2, s3, "sample rate", "22050 Hz", 1, "44100 Hz"), a["errorMessage"])
}

// The message names a fragment by its source, as in the docs' example.
func TestFragmentMismatchMessageShape(t *testing.T) {
	t.Parallel()
	msg := fmt.Sprintf(sim.MsgFragmentMismatch, 2, "s3://bucket/b.wav", "sample rate", "22050 Hz", 1, "44100 Hz")
	assert.True(t, strings.HasPrefix(msg, "Fragment 2 (s3://bucket/b.wav): sample rate 22050 Hz differs from fragment 1's 44100 Hz"), msg)
}
