package hostile

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// boundsStart runs dubsim like start, with env added to its environment.
func boundsStart(t *testing.T, env []string, args ...string) *proctest.Proc {
	t.Helper()
	base := []string{"--addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "dubsim.db"), "--log-level", "off"}
	return proctest.Start(t, proctest.Binary(t), env, append(base, args...)...)
}

// boundsDirBytes is the size of the regular files under dir.
func boundsDirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// zeros is an endless body of zero bytes, counting what was read of it.
type zeros struct {
	left int64
	read atomic.Int64
}

func (z *zeros) Read(p []byte) (int, error) {
	if z.left <= 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	n = min(n, z.left)
	clear(p[:n])
	z.left -= n
	z.read.Add(n)
	return int(n), nil
}

// A POST with an Idempotency-Key is spooled to the temp directory to be
// fingerprinted, no further than the route's body limit: a 200 MB body to
// Create Project writes at most 10 MiB there, and the route answers its
// own 413.
func TestIdempotencyKeySpoolsNoMoreThanTheRouteLimit(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	p := boundsStart(t, []string{"TMPDIR=" + tmp})
	post := func(size int64, key string) (*zeros, *http.Request) {
		body := &zeros{left: size}
		req, err := http.NewRequest(http.MethodPost, p.Base+"/api/v1/projects", body)
		require.NoError(t, err)
		req.ContentLength = size
		req.Header.Set("Authorization", "Bearer dubsim-subscription")
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		return body, req
	}
	_, req := post(11<<20, "")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	want, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "without a key: %s", want)

	body, req := post(200<<20, "bounds-spool")

	var peak atomic.Int64
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if n := boundsDirBytes(tmp); n > peak.Load() {
					peak.Store(n)
				}
			}
		}
	}()
	resp, err = http.DefaultClient.Do(req)
	close(done)
	var got []byte
	status := 0
	if err == nil {
		status = resp.StatusCode
		got, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	t.Logf("status %d, %s of the body sent, temp dir peak %s", status, mb(body.read.Load()), mb(peak.Load()))
	require.NoError(t, err, "the server answers before the body ends")
	assert.Equal(t, http.StatusRequestEntityTooLarge, status)
	assert.Equal(t, string(want), string(got), "the answer the route gives without a key")
	assert.Contains(t, string(got), "10485760 bytes")
	assert.LessOrEqual(t, peak.Load(), int64(10<<20+1), "bytes in the temp dir at any time")
	assert.Zero(t, boundsDirBytes(tmp), "nothing left in the temp dir")
	assert.True(t, p.Alive())
}

// Temp files a crash left (a spooled request body, a partial upload) are
// removed at the next start: dubsim removes its own, and only those.
func TestCrashTempFilesAreRemovedAtStart(t *testing.T) {
	t.Parallel()
	tmp, dataDir := t.TempDir(), t.TempDir()
	data := filepath.Join(dataDir, "dubsim.db")
	blobs := data + ".blobs"
	require.NoError(t, os.MkdirAll(blobs, 0o755))
	write := func(path string) {
		require.NoError(t, os.WriteFile(path, make([]byte, 1<<20), 0o600))
	}
	write(filepath.Join(tmp, "dubsim-idem-123456"))
	write(filepath.Join(tmp, "someone-elses"))
	write(filepath.Join(blobs, "tmp~987654"))
	p := proctest.Start(t, proctest.Binary(t), []string{"TMPDIR=" + tmp},
		"--addr", "127.0.0.1:0", "--data", data, "--log-level", "off")
	require.True(t, p.Alive())
	for path, kept := range map[string]bool{
		filepath.Join(tmp, "dubsim-idem-123456"): false,
		filepath.Join(tmp, "someone-elses"):      true,
		filepath.Join(blobs, "tmp~987654"):       false,
	} {
		_, err := os.Stat(path)
		assert.Equal(t, kept, err == nil, "%s kept", path)
	}
}

// Platform name and source_video_url are kept with each project, so they
// are bounded: refused past 500 characters and 8192 bytes (here 9 MB
// each), with a message naming the field and the limit.
func TestHugeStringFieldsAreRefused(t *testing.T) {
	t.Parallel()
	p := start(t)
	huge := strings.Repeat("n", 9<<20)
	cases := []struct{ name, body, msg string }{
		{"name", `{"name":"` + huge + `","source_lang":"en","target_lang":"fr-FR","source_video_url":"https://cdn.test/v.mp4"}`,
			"name must be at most 500 characters; got 9437184"},
		{"source_video_url", `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://cdn.test/` + huge + `"}`,
			"source_video_url must be at most 8192 bytes; got 9437201"},
	}
	for _, c := range cases {
		for i := range 10 {
			req, err := http.NewRequest(http.MethodPost, p.Base+"/api/v1/projects", strings.NewReader(c.body))
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer dubsim-enterprise")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Dubsim-Interface", "platform") // the body's first 64 KiB do not tell (fidelity X4)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s, request %d: %.200s", c.name, i, got)
			assert.JSONEq(t, `{"error":"ValidationError","message":"`+c.msg+`"}`, string(got))
		}
	}
	rss, peak := memory(t, p)
	t.Logf("after 20 creates with 9 MB fields: resident %s, peak %s", mb(rss), mb(peak))
	assert.Less(t, peak, int64(300<<20), "peak resident memory")
	assert.True(t, p.Alive())
}

// boundsPresign asks for a presigned upload URL with key.
func boundsPresign(t *testing.T, p *proctest.Proc, key string) (string, int) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, p.Base+"/api/v1/artifacts/create?fileName=a.wav", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var v struct {
		URL string `json:"presignedUploadUrl"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&v)
	return v.URL, resp.StatusCode
}

// boundsPut PUTs size bytes to a presigned URL.
func boundsPut(t *testing.T, url string, size int) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url, bytes.NewReader(make([]byte, size)))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Uploads of 5 GB each and unlimited presigns would fill the disk. With a
// company quota of 3 MB and a total of 5 MB, uploads past either are
// refused with 403 QuotaExceeded and not stored, and presigns are capped.
func TestUploadsBeyondTheQuotaAreRefused(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "dubsim.db")
	p := proctest.Start(t, proctest.Binary(t), nil, "--addr", "127.0.0.1:0", "--data", data, "--log-level", "off",
		"--company-blob-quota", "3000000", "--blob-quota", "5000000", "--presigns-per-company", "3")
	const mbyte = 1_000_000
	company := func(key string, size int) (int, string) {
		url, status := boundsPresign(t, p, key)
		require.Equal(t, http.StatusOK, status)
		return boundsPut(t, url, size)
	}
	status, body := company("dubsim-free", 2*mbyte)
	require.Equal(t, http.StatusOK, status, body)
	status, body = company("dubsim-subscription", 2*mbyte) // the same company: 4 MB
	assert.Equal(t, http.StatusForbidden, status)
	assert.Contains(t, body, "<Code>QuotaExceeded</Code><Message>Your upload exceeds a storage quota: the files of your company would exceed its storage quota of 0.003 GB</Message>")
	status, body = company("dubsim-pro", 3*mbyte) // another company: 5 MB in all
	require.Equal(t, http.StatusOK, status, body)
	status, body = company("dubsim-enterprise", 100<<20) // 100 MiB more, a third company
	assert.Equal(t, http.StatusForbidden, status)
	assert.Contains(t, body, "the files stored by this simulator would exceed its storage quota of 0.005 GB")
	assert.LessOrEqual(t, boundsDirBytes(data+".blobs"), int64(5*mbyte), "bytes stored")

	// The refused 100 MiB upload is still outstanding: two more, then no more.
	for i := range 2 {
		_, status := boundsPresign(t, p, "dubsim-enterprise")
		require.Equal(t, http.StatusOK, status, "presign %d", i)
	}
	_, status = boundsPresign(t, p, "dubsim-enterprise")
	assert.Equal(t, http.StatusForbidden, status, "a fourth outstanding presign")
	assert.True(t, p.Alive())
}
