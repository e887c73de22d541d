package platform_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/tooltest"

	"github.com/dubsim/dubsim/sim/audio"
	"github.com/dubsim/dubsim/sim/idempotency"
	"github.com/dubsim/dubsim/sim/probe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const synthPath = "/api/v1/cloning/synthesize"

type formFile struct {
	name string
	data []byte
}

type form struct {
	fields [][2]string // name, value, in order
	files  []formFile
}

// body encodes the form; boundary "" lets the writer choose a random one.
func (f form) body(t testing.TB, boundary string) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if boundary != "" {
		require.NoError(t, mw.SetBoundary(boundary))
	}
	for _, kv := range f.fields {
		require.NoError(t, mw.WriteField(kv[0], kv[1]))
	}
	for _, file := range f.files {
		w, err := mw.CreateFormFile("reference_audio_files", file.name)
		require.NoError(t, err)
		_, err = w.Write(file.data)
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	return mw.FormDataContentType(), buf.Bytes()
}

// refWAV is a reference voice sample at the given pitch.
func refWAV(t testing.TB, pitch float64) []byte {
	t.Helper()
	track := audio.Track{SampleRate: 22050, Duration: 4 * time.Second, Segments: []audio.Segment{
		{Start: 200 * time.Millisecond, End: 3800 * time.Millisecond, Text: "This is my voice, say it like me.", Voice: audio.Voice{PitchHz: pitch, Seed: 3}},
	}}
	b, err := io.ReadAll(audio.NewWAVReader(track))
	require.NoError(t, err)
	return b
}

func (e *env) synth(key, ctype string, body []byte, header map[string]string) reply {
	req := httptest.NewRequest("POST", synthPath, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return reply{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

func stdForm(t testing.TB, text string, pitch float64) form {
	return form{fields: [][2]string{{"text", text}, {"language", "en-US"}}, files: []formFile{{"reference_voice_1.wav", refWAV(t, pitch)}}}
}

type wavHeader struct {
	rate, channels, bits int
	dataBytes            int
}

func parseWAV(t *testing.T, b []byte) wavHeader {
	t.Helper()
	require.Greater(t, len(b), 44)
	require.Equal(t, "RIFF", string(b[0:4]))
	require.Equal(t, "WAVE", string(b[8:12]))
	assert.Equal(t, uint32(len(b)-8), binary.LittleEndian.Uint32(b[4:8]), "RIFF size matches the file")
	require.Equal(t, "fmt ", string(b[12:16]))
	assert.Equal(t, uint16(1), binary.LittleEndian.Uint16(b[20:22]), "PCM")
	require.Equal(t, "data", string(b[36:40]))
	h := wavHeader{
		channels: int(binary.LittleEndian.Uint16(b[22:24])), rate: int(binary.LittleEndian.Uint32(b[24:28])),
		bits: int(binary.LittleEndian.Uint16(b[34:36])), dataBytes: int(binary.LittleEndian.Uint32(b[40:44])),
	}
	assert.Equal(t, len(b)-44, h.dataBytes, "data size matches the data")
	return h
}

func TestCloningSynthesize(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ct, body := stdForm(t, "Hello world, this is a test of our voice cloning technology!", 120).body(t, "")
	r := e.synth("dubsim-enterprise", ct, body, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "audio/wav", r.header.Get("Content-Type"))
	assert.Equal(t, fmt.Sprint(len(r.body)), r.header.Get("Content-Length"))
	h := parseWAV(t, r.body)
	assert.Equal(t, wavHeader{rate: 44100, channels: 1, bits: 16, dataBytes: h.dataBytes}, h)
	seconds := float64(h.dataBytes) / 2 / 44100
	assert.InDelta(t, 4.8, seconds, 1.6, "60 characters at about 14 per second, with pauses")

	again := e.synth("dubsim-enterprise", ct, body, nil)
	assert.Equal(t, r.body, again.body, "deterministic: the same request gives the same bytes")

	// The output follows the reference speaker's pitch.
	ctHigh, bodyHigh := stdForm(t, "Hello world, this is a test of our voice cloning technology!", 240).body(t, "")
	high := e.synth("dubsim-enterprise", ctHigh, bodyHigh, nil)
	require.Equal(t, http.StatusOK, high.status)
	low := probe.AnalyzeReference(r.body).PitchHz
	hi := probe.AnalyzeReference(high.body).PitchHz
	assert.InDelta(t, 120, low, 18, "output pitch follows a 120 Hz reference")
	assert.InDelta(t, 240, hi, 36, "output pitch follows a 240 Hz reference")

	// Longer text, longer audio.
	ctLong, bodyLong := stdForm(t, strings.Repeat("Hello world, this is a test. ", 10), 120).body(t, "")
	long := e.synth("dubsim-enterprise", ctLong, bodyLong, nil)
	assert.Greater(t, parseWAV(t, long.body).dataBytes, 5*h.dataBytes)
}

func TestCloningWAVHeaderGolden(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ct, body := stdForm(t, "Golden header, please.", 150).body(t, "goldenboundary")
	r := e.synth("dubsim-pro", ct, body, nil)
	require.Equal(t, http.StatusOK, r.status)
	got := hex.Dump(r.body[:44])
	path := filepath.Join("testdata", "cloning_wav_header.golden")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "go test ./sim/platform -update creates it")
	assert.Equal(t, string(want), got, "RIFF header of the cloning output")
}

func TestCloningRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	proDisabled := e.newAccount(`{"plan":"pro","balance_minutes":0,"cloning_enabled":false}`)
	subEnabled := e.newAccount(`{"plan":"subscription","cloning_enabled":true}`)
	wav := refWAV(t, 150)
	multibyte := strings.Repeat("é", 5000)
	tests := []struct {
		name   string
		key    string
		form   *form
		ctype  string
		raw    string
		status int
		want   string
	}{
		{name: "5000 multibyte characters pass", form: &form{fields: [][2]string{{"text", multibyte}, {"language", "fr-FR"}}, files: []formFile{{"a.wav", wav}}}, status: 200},
		{name: "5001 characters fail", form: &form{fields: [][2]string{{"text", multibyte + "é"}, {"language", "fr-FR"}}, files: []formFile{{"a.wav", wav}}},
			status: 400, want: `{"error":"ValidationError","message":"text must be at most 5000 characters; got 5001"}`},
		{name: "far too long", form: &form{fields: [][2]string{{"text", strings.Repeat("abcd", 6000)}, {"language", "fr-FR"}}, files: []formFile{{"a.wav", wav}}},
			status: 400, want: `{"error":"ValidationError","message":"text must be at most 5000 characters; got more than 5000"}`},
		{name: "text missing", form: &form{fields: [][2]string{{"language", "en-US"}}, files: []formFile{{"a.wav", wav}}},
			status: 400, want: `{"error":"ValidationError","message":"text is required"}`},
		{name: "text blank", form: &form{fields: [][2]string{{"text", "  \n\t "}, {"language", "en-US"}}, files: []formFile{{"a.wav", wav}}},
			status: 400, want: `{"error":"ValidationError","message":"text must not be empty"}`},
		{name: "text punctuation only", form: &form{fields: [][2]string{{"text", "... !?"}, {"language", "en-US"}}, files: []formFile{{"a.wav", wav}}},
			status: 400, want: `{"error":"ValidationError","message":"text must contain something to say (letters or digits); got \"... !?\""}`},
		{name: "text not UTF-8", form: &form{fields: [][2]string{{"text", "\xff\xfe hello"}, {"language", "en-US"}}, files: []formFile{{"a.wav", wav}}},
			status: 400, want: `{"error":"ValidationError","message":"text must be valid UTF-8"}`},
		{name: "language missing", form: &form{fields: [][2]string{{"text", "Hi"}}, files: []formFile{{"a.wav", wav}}},
			status: 400, want: `{"error":"ValidationError","message":"language is required"}`},
		{name: "language without locale", form: &form{fields: [][2]string{{"text", "Hi"}, {"language", "en"}}, files: []formFile{{"a.wav", wav}}},
			status: 400, want: `{"error":"ValidationError","message":"language \"en\" is not supported; use a target language from GET /api/v1/options (with locale, such as \"en-US\")"}`},
		{name: "no reference", form: &form{fields: [][2]string{{"text", "Hi"}, {"language", "en-US"}}},
			status: 400, want: `{"error":"ValidationError","message":"reference_audio_files is required: send at least one voice sample (WAV, MP3, M4A or FLAC)"}`},
		{name: "text file named .wav", form: &form{fields: [][2]string{{"text", "Hi"}, {"language", "en-US"}}, files: []formFile{{"a.wav", wav}, {"notes.wav", []byte("just some text, not audio at all")}}},
			status: 400, want: `{"error":"ValidationError","message":"reference_audio_files[1] (\"notes.wav\") is not a supported audio file (WAV, MP3, M4A or FLAC; recognised from its content: an unrecognised format)"}`},
		{name: "webm refused", form: &form{fields: [][2]string{{"text", "Hi"}, {"language", "en-US"}}, files: []formFile{{"clip.webm", []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\xf2\x81\x04\x42\xf3\x81\x08\x42\x82\x84webm\x42\x87\x81\x04\x42\x85\x81\x02")}}},
			status: 400, want: `{"error":"ValidationError","message":"reference_audio_files[0] (\"clip.webm\") is not a supported audio file (WAV, MP3, M4A or FLAC; recognised from its content: matroska)"}`},
		{name: "empty file", form: &form{fields: [][2]string{{"text", "Hi"}, {"language", "en-US"}}, files: []formFile{{"empty.wav", nil}}},
			status: 400, want: `{"error":"ValidationError","message":"reference_audio_files[0] (\"empty.wav\") is empty; send a WAV, MP3, M4A or FLAC voice sample"}`},
		{name: "FLAC accepted", form: &form{fields: [][2]string{{"text", "Hi"}, {"language", "en-US"}}, files: []formFile{{"v.flac", append([]byte("fLaC\x00\x00\x00\x22"), make([]byte, 60)...)}}}, status: 200},
		{name: "MP3 accepted whatever its name", form: &form{fields: [][2]string{{"text", "Hi"}, {"language", "en-US"}}, files: []formFile{{"voice.bin", append([]byte("ID3\x03\x00\x00\x00\x00\x00\x00"), make([]byte, 60)...)}}}, status: 200},
		{name: "M4A accepted", form: &form{fields: [][2]string{{"text", "Hi"}, {"language", "en-US"}}, files: []formFile{{"v.m4a", append([]byte("\x00\x00\x00\x18ftypM4A \x00\x00\x02\x00M4A isom"), make([]byte, 60)...)}}}, status: 200},
		{name: "too many files", form: &form{fields: [][2]string{{"text", "Hi"}, {"language", "en-US"}}, files: func() []formFile {
			var fs []formFile
			for i := 0; i < 11; i++ {
				fs = append(fs, formFile{"a.wav", wav[:2048]})
			}
			return fs
		}()}, status: 400, want: `{"error":"ValidationError","message":"At most 10 reference_audio_files are accepted"}`},
		{name: "JSON body", ctype: "application/json", raw: `{"text":"Hi","language":"en-US"}`,
			status: 400, want: `{"error":"ValidationError","message":"This endpoint takes multipart/form-data with the fields text, language and one or more reference_audio_files; got Content-Type \"application/json\""}`},
		{name: "no content type", raw: `text=Hi`,
			status: 400, want: `{"error":"ValidationError","message":"This endpoint takes multipart/form-data with the fields text, language and one or more reference_audio_files; got Content-Type \"\""}`},
		{name: "no boundary", ctype: "multipart/form-data", raw: `x`,
			status: 400, want: `{"error":"ValidationError","message":"multipart/form-data needs a boundary parameter in Content-Type"}`},
		{name: "truncated multipart", ctype: "multipart/form-data; boundary=XYZ", raw: "--XYZ\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\nHello",
			status: 400, want: `{"error":"ValidationError","message":"Malformed multipart body while reading text: unexpected EOF"}`},
		{name: "pro without cloning enabled", key: proDisabled, form: &form{fields: [][2]string{{"text", "Hi"}, {"language", "en-US"}}, files: []formFile{{"a.wav", wav}}},
			status: 403, want: `{"error":"Voice cloning API is not enabled for your account. Please contact your sales manager to enable it."}`},
		{name: "below pro", key: subEnabled, form: &form{fields: [][2]string{{"text", "Hi"}, {"language", "en-US"}}, files: []formFile{{"a.wav", wav}}},
			status: 403, want: `{"error":"Voice cloning requires a PRO subscription or higher. Please contact your sales manager to upgrade your plan."}`},
		{name: "fixture without cloning", key: "dubsim-subscription", ctype: "application/json", raw: `{}`,
			status: 403, want: `{"error":"Voice cloning requires a PRO subscription or higher. Please contact your sales manager to upgrade your plan."}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			key := tc.key
			if key == "" {
				key = "dubsim-pro"
			}
			ct, body := tc.ctype, []byte(tc.raw)
			if tc.form != nil {
				ct, body = tc.form.body(t, "")
			}
			r := e.synth(key, ct, body, nil)
			require.Equal(t, tc.status, r.status, "%s", r.body)
			if tc.status == http.StatusOK {
				assert.Equal(t, "audio/wav", r.header.Get("Content-Type"))
				parseWAV(t, r.body)
				return
			}
			assert.JSONEq(t, tc.want, string(r.body))
		})
	}
}

// streamedForm is a multipart body with one reference file of size bytes,
// generated on the fly so the test itself holds no large buffer.
func streamedForm(size int64) (string, io.Reader) {
	const boundary = "dubsimboundary"
	head := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\nHello there\r\n" +
		"--" + boundary + "\r\nContent-Disposition: form-data; name=\"language\"\r\n\r\nen-US\r\n" +
		"--" + boundary + "\r\nContent-Disposition: form-data; name=\"reference_audio_files\"; filename=\"big.wav\"\r\nContent-Type: audio/wav\r\n\r\n"
	wavHead := audio.WAVHeader(44100, 1, 16, uint32(size-44))
	tail := "\r\n--" + boundary + "--\r\n"
	return "multipart/form-data; boundary=" + boundary, io.MultiReader(strings.NewReader(head), bytes.NewReader(wavHead),
		io.LimitReader(zeroReader{}, size-44), strings.NewReader(tail))
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestCloningOversizeReferenceIsRefusedWithoutBuffering(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name   string
		size   int64
		status int
	}{
		{"exactly 50 MB passes", 50_000_000, http.StatusOK},
		{"one byte more is refused", 50_000_001, http.StatusRequestEntityTooLarge},
		{"50 MiB is refused", 50 << 20, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct, body := streamedForm(tc.size)
			req := httptest.NewRequest("POST", synthPath, body)
			req.Header.Set("Authorization", "Bearer dubsim-pro")
			req.Header.Set("Content-Type", ct)
			rec := httptest.NewRecorder()
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			e.h.ServeHTTP(rec, req)
			runtime.ReadMemStats(&after)
			require.Equal(t, tc.status, rec.Code, "%s", rec.Body.String()[:min(rec.Body.Len(), 300)])
			if tc.status != http.StatusOK {
				assert.JSONEq(t, `{"error":"ValidationError","message":"reference_audio_files[0] (\"big.wav\") is larger than 50 MB"}`, rec.Body.String())
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %.1f MB for a %.1f MB upload", float64(alloc)/1e6, float64(tc.size)/1e6)
			if !raceEnabled { // the race detector's instrumentation allocates on its own
				assert.Less(t, alloc, uint64(16<<20), "the upload is streamed, not held in memory")
			}
		})
	}
}

func TestCloningIdempotency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := stdForm(t, "Idempotent voices sound the same.", 150)
	ct1, body1 := f.body(t, "boundaryAAAA")
	first := e.synth("dubsim-pro", ct1, body1, idem("clone-1"))
	require.Equal(t, http.StatusOK, first.status)

	// A retry built again by the client library has a new boundary: same request.
	ct2, body2 := f.body(t, "boundaryBBBB")
	replay := e.synth("dubsim-pro", ct2, body2, idem("clone-1"))
	require.Equal(t, http.StatusOK, replay.status, "%s", replay.body)
	assert.Equal(t, "true", replay.header.Get(idempotency.HeaderReplayed))
	assert.Equal(t, first.body, replay.body, "a replay returns the same bytes")
	assert.Equal(t, "audio/wav", replay.header.Get("Content-Type"))

	ct3, body3 := stdForm(t, "Another text entirely.", 150).body(t, "")
	other := e.synth("dubsim-pro", ct3, body3, idem("clone-1"))
	assert.Equal(t, http.StatusUnprocessableEntity, other.status)
	assert.Equal(t, "IdempotencyError", other.json(t)["error"])
}

// TestCloningOutputWithFFprobe checks the output with an external decoder.
func TestCloningOutputWithFFprobe(t *testing.T) {
	t.Parallel()
	tooltest.Path(t, "ffprobe", "apt-get install ffmpeg")
	e := newEnv(t)
	ct, body := stdForm(t, "Bonjour à tous. Ceci est un test, avec des pauses; et une fin!", 130).body(t, "")
	r := e.synth("dubsim-pro", ct, body, nil)
	require.Equal(t, http.StatusOK, r.status)
	path := filepath.Join(t.TempDir(), "out.wav")
	require.NoError(t, os.WriteFile(path, r.body, 0o644))
	out, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels,bits_per_sample:format=duration", "-of", "default=nw=1", path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	h := parseWAV(t, r.body)
	for _, want := range []string{"codec_name=pcm_s16le", "sample_rate=44100", "channels=1", "bits_per_sample=16",
		fmt.Sprintf("duration=%.6f", float64(h.dataBytes)/2/44100)} {
		assert.Contains(t, string(out), want)
	}
}
