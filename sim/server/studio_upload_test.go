package server_test

import (
	"bufio"
	"crypto/md5"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/tooltest"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/audio"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// s3ErrorBody is the XML error of the storage endpoint.
type s3ErrorBody struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string   `xml:"Code"`
	Message   string   `xml:"Message"`
	Resource  string   `xml:"Resource"`
	RequestID string   `xml:"RequestId"`
}

// TestPresignedUploadEndToEnd: presign, PUT the file, create the artifact,
// let the clock run: upload_completed with the file's real size and duration.
func TestPresignedUploadEndToEnd(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	const key = "dubsim-free"
	now := in.srv.Engine.Clock.Now()
	wav := refWAVBytes(t, 190, 2500*time.Millisecond)

	st, p := in.call("GET", "/api/v1/artifacts/create?fileName=interview.wav", key, "")
	require.Equal(t, http.StatusOK, st, "%v", p)
	s3, uploadURL := p["s3Path"].(string), p["presignedUploadUrl"].(string)
	assert.Regexp(t, `^s3://`+sim.UploadBucket+`/temp/[0-9a-f-]{36}/interview\.wav$`, s3)
	assert.True(t, strings.HasPrefix(uploadURL, in.url+"/_uploads/"), uploadURL)
	u, err := url.Parse(uploadURL)
	require.NoError(t, err)
	assert.NotEmpty(t, u.Query().Get("X-Amz-Signature"))
	assert.Equal(t, sim.StudioTime(now.Add(sim.UploadValidity)), p["expiresAt"])

	st, etag, body := putBytes(t, uploadURL, wav)
	require.Equal(t, http.StatusOK, st, body)
	sum := md5.Sum(wav)
	assert.Equal(t, `"`+hex.EncodeToString(sum[:])+`"`, etag, "the ETag is the MD5 of the body, quoted")
	assert.Empty(t, body)

	a := createArtifact(t, in, key, map[string]any{"name": "Interview", "type": "audio", "s3Path": s3})
	id := a["id"].(string)
	assert.Equal(t, sim.ArtifactCreated, a["status"])
	studioAdvance(t, in, sim.DefaultStudioTiming.ArtifactStart)
	assert.Equal(t, sim.ArtifactStarted, getArtifact(t, in, key, id)["status"])
	studioAdvance(t, in, time.Minute)
	a = getArtifact(t, in, key, id)
	require.Equal(t, sim.ArtifactCompleted, a["status"], "%v", a)
	assert.Equal(t, float64(len(wav)), a["size"])
	assert.Equal(t, wavDuration(t, wav), a["duration"])
	assert.Equal(t, 2.5, a["duration"])

	// A second PUT replaces the file, as a storage PUT does; an artifact
	// created from the path afterwards reads the new file.
	longer := refWAVBytes(t, 190, 4*time.Second)
	st, etag, _ = putBytes(t, uploadURL, longer)
	require.Equal(t, http.StatusOK, st)
	sum = md5.Sum(longer)
	assert.Equal(t, `"`+hex.EncodeToString(sum[:])+`"`, etag)
	id2 := createArtifact(t, in, key, map[string]any{"name": "Interview (long)", "type": "audio", "s3Path": s3})["id"].(string)
	studioAdvance(t, in, time.Minute)
	a = getArtifact(t, in, key, id2)
	require.Equal(t, sim.ArtifactCompleted, a["status"], "%v", a)
	assert.Equal(t, float64(len(longer)), a["size"])
	assert.Equal(t, 4.0, a["duration"])
}

// putRaw sends a PUT with the given Content-Length over a plain TCP
// connection, then only the bytes of send, and reads the answer: a request
// that announces more than it sends, which net/http's client cannot make.
func putRaw(t testing.TB, uploadURL string, contentLength int64, send []byte) *http.Response {
	t.Helper()
	u, err := url.Parse(uploadURL)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	_, err = fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", u.RequestURI(), u.Host, contentLength)
	require.NoError(t, err)
	_, err = conn.Write(send)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodPut})
	require.NoError(t, err)
	return resp
}

// TestPresignedUploadErrors: the storage endpoint answers S3-style XML
// errors, and a refused PUT stores nothing.
func TestPresignedUploadErrors(t *testing.T) {
	t.Parallel()
	wav := refWAVBytes(t, 200, 300*time.Millisecond)
	tests := []struct {
		name    string
		advance time.Duration
		// put sends the request and returns the answer.
		put    func(t *testing.T, uploadURL string) *http.Response
		status int
		code   string
		msg    func(expires time.Time) string
	}{
		{"wrong signature", 0, func(t *testing.T, uploadURL string) *http.Response {
			u, _ := url.Parse(uploadURL)
			q := u.Query()
			q.Set("X-Amz-Signature", strings.Repeat("0", 64))
			u.RawQuery = q.Encode()
			return doPut(t, u.String(), wav)
		}, http.StatusForbidden, "SignatureDoesNotMatch", func(time.Time) string {
			return "The request signature does not match; use the presignedUploadUrl exactly as returned, query string included"
		}},
		{"no query string", 0, func(t *testing.T, uploadURL string) *http.Response {
			return doPut(t, strings.Split(uploadURL, "?")[0], wav)
		}, http.StatusForbidden, "SignatureDoesNotMatch", nil},
		{"unknown upload", 0, func(t *testing.T, uploadURL string) *http.Response {
			u, _ := url.Parse(uploadURL)
			parts := strings.Split(u.Path, "/") // "", "_uploads", id, file
			parts[2] = "00000000-0000-4000-8000-000000000000"
			u.Path = strings.Join(parts, "/")
			return doPut(t, u.String(), wav)
		}, http.StatusNotFound, "NoSuchUpload", func(time.Time) string {
			return "No presigned upload exists at this address; get one with GET /api/v1/artifacts/create?fileName=..."
		}},
		{"another file name", 0, func(t *testing.T, uploadURL string) *http.Response {
			return doPut(t, strings.Replace(uploadURL, "/take.wav?", "/other.wav?", 1), wav)
		}, http.StatusNotFound, "NoSuchUpload", nil},
		{"expired after 24 h", 25 * time.Hour, func(t *testing.T, uploadURL string) *http.Response {
			return doPut(t, uploadURL, wav)
		}, http.StatusForbidden, "AccessDenied", func(expires time.Time) string {
			return "Request has expired: the presigned URL expired at " + sim.StudioTime(expires)
		}},
		{"over 5 GB by Content-Length", 0, func(t *testing.T, uploadURL string) *http.Response {
			// 8 KiB of the announced body: the journal keeps that much of a
			// request the handler did not read.
			return putRaw(t, uploadURL, sim.MaxArtifactBytes+1, make([]byte, 8<<10))
		}, http.StatusRequestEntityTooLarge, "EntityTooLarge", func(time.Time) string {
			return "Your proposed upload exceeds the maximum allowed size of 5 GB"
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := start(t, nil)
			const key = "dubsim-free"
			expires := in.srv.Engine.Clock.Now().Add(sim.UploadValidity)
			s3, uploadURL := presign(t, in, key, "take.wav")
			if tc.advance > 0 {
				studioAdvance(t, in, tc.advance)
			}
			resp := tc.put(t, uploadURL)
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tc.status, resp.StatusCode, "%s", raw)
			assert.Equal(t, "application/xml", resp.Header.Get("Content-Type"))
			assert.Empty(t, resp.Header.Get("ETag"))
			assert.True(t, strings.HasPrefix(string(raw), xml.Header), "%s", raw)
			var e s3ErrorBody
			require.NoError(t, xml.Unmarshal(raw, &e), "%s", raw)
			assert.Equal(t, tc.code, e.Code)
			assert.True(t, strings.HasPrefix(e.Resource, "/_uploads/"), e.Resource)
			assert.NotEmpty(t, e.RequestID)
			if tc.msg != nil {
				assert.Equal(t, tc.msg(expires), e.Message)
			}

			// Nothing was stored: an artifact of the path fails.
			id := createArtifact(t, in, key, map[string]any{"name": "Take", "type": "audio", "s3Path": s3})["id"].(string)
			studioAdvance(t, in, time.Minute)
			a := getArtifact(t, in, key, id)
			assert.Equal(t, sim.ArtifactFailed, a["status"])
			want := fmt.Sprintf(sim.MsgUploadNotFound, s3)
			if tc.advance >= sim.UploadValidity {
				want = fmt.Sprintf(sim.MsgUploadExpired, s3, sim.StudioTime(expires))
			}
			assert.Equal(t, want, a["errorMessage"])
		})
	}
}

// doPut PUTs body to rawURL and returns the answer (the caller closes it).
func doPut(t testing.TB, rawURL string, body []byte) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, rawURL, strings.NewReader(string(body)))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return resp
}

// TestPresignedUploadExpiresBeforeAFileArrives: an artifact of a presigned
// path whose slot expires before processing ends, with nothing PUT, fails
// with the expiry, not with "not found".
func TestPresignedUploadExpiresBeforeAFileArrives(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	const key = "dubsim-free"
	expires := in.srv.Engine.Clock.Now().Add(sim.UploadValidity)
	s3, _ := presign(t, in, key, "late.mp4")
	studioAdvance(t, in, sim.UploadValidity-3*time.Second)
	id := createArtifact(t, in, key, map[string]any{"name": "Late", "type": "video", "s3Path": s3})["id"].(string)
	studioAdvance(t, in, time.Minute)
	a := getArtifact(t, in, key, id)
	assert.Equal(t, sim.ArtifactFailed, a["status"])
	assert.Equal(t, fmt.Sprintf(sim.MsgUploadExpired, s3, sim.StudioTime(expires)), a["errorMessage"])
}

// wavStream generates a WAV file of size bytes: a canonical PCM header, then
// silence. Nothing is buffered: it is a stream of any size in constant memory.
type wavStream struct {
	header    []byte
	size, off int64
}

const (
	streamRate     = 48000
	streamChannels = 2
	streamByteRate = streamRate * streamChannels * 2
)

func newWAVStream(size int64) *wavStream {
	return &wavStream{header: audio.WAVHeader(streamRate, streamChannels, 16, uint32(size-44)), size: size}
}

func (g *wavStream) Read(p []byte) (int, error) {
	if g.off >= g.size {
		return 0, io.EOF
	}
	if rem := g.size - g.off; int64(len(p)) > rem {
		p = p[:rem]
	}
	c := 0
	if g.off < int64(len(g.header)) {
		c = copy(p, g.header[g.off:])
	}
	clear(p[c:])
	g.off += int64(len(p))
	return len(p), nil
}

// heapSampler records the highest HeapInuse seen every 50 ms.
type heapSampler struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	peak uint64
}

func sampleHeap() *heapSampler {
	s := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tk := time.NewTicker(50 * time.Millisecond)
		defer tk.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			s.mu.Lock()
			s.peak = max(s.peak, ms.HeapInuse)
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-tk.C:
			}
		}
	}()
	return s
}

// Stop ends the sampling and returns the peak.
func (s *heapSampler) Stop() uint64 {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// freeBytes is the space available to unprivileged users on the
// filesystem of dir.
func freeBytes(t testing.TB, dir string) uint64 {
	t.Helper()
	var fs syscall.Statfs_t
	require.NoError(t, syscall.Statfs(dir, &fs))
	return fs.Bavail * uint64(fs.Bsize)
}

// TestPresignedUploadStreamsGigabytes PUTs a WAV generated on the fly
// through the real HTTP handler on loopback and checks that the heap does
// not grow with the size of the file (streamed to disk), then that the
// artifact made of it has the file's size and duration. The long run
// (tooltest.Long) sends 2 GiB and 64 MiB: sizes and offsets past 2 GiB do
// not fit an int32. By default it sends 320 MiB, five times the heap bound,
// so that a file held in memory still fails the bound.
//
// Not parallel: the heap is the process's, and parallel tests would add
// their own allocations to the measure (parallel tests wait while this one
// runs).
func TestPresignedUploadStreamsGigabytes(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2 GiB to disk; skipped with -short")
	}
	const maxGrowth = 64 << 20
	size := int64(5 * maxGrowth)
	if tooltest.Long() {
		size = 2<<30 + 64<<20
	}
	blobs := t.TempDir()
	if free := freeBytes(t, blobs); free < uint64(size)+1<<30 {
		t.Skipf("needs %d MiB free in %s; %d MiB available", (size+1<<30)>>20, blobs, free>>20)
	}
	in := start(t, func(c *app.Config) { c.BlobDir = blobs })
	const key = "dubsim-free"
	s3, uploadURL := presign(t, in, key, "feature.wav")

	body := newWAVStream(size)
	req, err := http.NewRequest(http.MethodPut, uploadURL, body)
	require.NoError(t, err)
	req.ContentLength = size
	tr := &http.Transport{WriteBufferSize: 256 << 10}
	defer tr.CloseIdleConnections()

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sampler := sampleHeap()
	began := time.Now()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	elapsed := time.Since(began)
	peak := sampler.Stop()
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)

	growth := int64(peak) - int64(before.HeapInuse)
	t.Logf("PUT %d MiB in %v: %.0f MiB/s; heap in use %.1f MiB before, peak %.1f MiB (growth %.1f MiB, limit %d MiB); allocated during the upload %.1f MiB in %d objects",
		size>>20, elapsed.Round(time.Millisecond), float64(size)/(1<<20)/elapsed.Seconds(),
		float64(before.HeapInuse)/(1<<20), float64(peak)/(1<<20), float64(growth)/(1<<20), maxGrowth>>20,
		float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), after.Mallocs-before.Mallocs)
	assert.Less(t, growth, int64(maxGrowth), "heap growth while streaming %d bytes", size)

	id := createArtifact(t, in, key, map[string]any{"name": "Feature", "type": "audio", "s3Path": s3})["id"].(string)
	studioAdvance(t, in, time.Hour)
	a := getArtifact(t, in, key, id)
	require.Equal(t, sim.ArtifactCompleted, a["status"], "%v", a)
	assert.Equal(t, float64(size), a["size"])
	wantDur := (time.Duration(size-44) * time.Second / streamByteRate).Seconds()
	assert.InDelta(t, wantDur, a["duration"], 1e-6, "%.0f s of 48 kHz stereo", wantDur)
}

// BenchmarkPresignedUpload PUTs 64 MiB per iteration to one presigned URL
// (each PUT replaces the file) through the HTTP handler on loopback.
func BenchmarkPresignedUpload(b *testing.B) {
	const size = 64 << 20
	in := start(b, nil)
	_, uploadURL := presign(b, in, "dubsim-free", "bench.wav")
	client := &http.Client{Transport: &http.Transport{WriteBufferSize: 256 << 10}}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		req, err := http.NewRequest(http.MethodPut, uploadURL, newWAVStream(size))
		if err != nil {
			b.Fatal(err)
		}
		req.ContentLength = size
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

// TestPresignedUploadProcessingTimeFollowsTheSize: processing lasts
// ArtifactBase plus ArtifactPerGB per gigabyte, for an uploaded file as for
// any other (a timing of 1000 h per GB makes a 32 KB file take minutes).
func TestPresignedUploadProcessingTimeFollowsTheSize(t *testing.T) {
	t.Parallel()
	timing := sim.DefaultStudioTiming
	timing.ArtifactPerGB = 1000 * time.Hour
	in := start(t, func(c *app.Config) { c.StudioTiming = timing })
	const key = "dubsim-free"
	wav := refWAVBytes(t, 180, time.Second)
	s3 := uploadFile(t, in, key, "slow.wav", wav)
	id := createArtifact(t, in, key, map[string]any{"name": "Slow", "type": "audio", "s3Path": s3})["id"].(string)
	processing := timing.ArtifactProcessing(int64(len(wav)))
	require.Greater(t, processing, time.Minute)
	studioAdvance(t, in, timing.ArtifactStart+processing-time.Second)
	assert.Equal(t, sim.ArtifactStarted, getArtifact(t, in, key, id)["status"], "1 s before the end")
	studioAdvance(t, in, time.Second)
	assert.Equal(t, sim.ArtifactCompleted, getArtifact(t, in, key, id)["status"])
}

// TestPresignedUploadOfAFileNameWithPercentEscapes: every file name presign
// accepts gives a URL that takes the PUT.
func TestPresignedUploadOfAFileNameWithPercentEscapes(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	wav := refWAVBytes(t, 180, 300*time.Millisecond)
	for _, name := range []string{"my take.wav", "résumé.wav", "a+b.wav", "a?b.wav", "a#b.wav", "100%.wav", "a%20b.wav", "a%2Fb.wav"} {
		t.Run(name, func(t *testing.T) {
			st, p := in.call("GET", "/api/v1/artifacts/create?fileName="+url.QueryEscape(name), "dubsim-free", "")
			require.Equal(t, http.StatusOK, st, "%v", p)
			assert.True(t, strings.HasSuffix(p["s3Path"].(string), "/"+name), p["s3Path"])
			st, _, body := putBytes(t, p["presignedUploadUrl"].(string), wav)
			assert.Equal(t, http.StatusOK, st, "%s", body)
		})
	}
}
