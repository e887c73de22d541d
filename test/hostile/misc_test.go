package hostile

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/dubsim/dubsim/sim/audio"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// miscArtifact creates an artifact from url and returns the status and the
// body of the answer.
func miscArtifact(t *testing.T, p *proctest.Proc, key, url string) (int, string) {
	t.Helper()
	return call(t, "POST", p.Base+"/api/v1/artifacts/create", key, `{"name":"a","type":"audio","url":"`+url+`"}`)
}

// miscID is the id of a created artifact.
func miscID(t *testing.T, body string) string {
	t.Helper()
	var a struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &a), body)
	require.NotEmpty(t, a.ID, body)
	return a.ID
}

// miscSettle advances the simulated clock an hour (the advance waits for
// the downloads the new time depends on) and returns each artifact's status
// and errorMessage.
func miscSettle(t *testing.T, p *proctest.Proc, key string, ids ...string) (status, errs []string) {
	t.Helper()
	st, body := call(t, "POST", p.Base+"/_sim/clock/advance", "", `{"seconds":3600}`)
	require.Equal(t, http.StatusOK, st, body)
	for _, id := range ids {
		st, body := call(t, "GET", p.Base+"/api/v1/artifacts/"+id, key, "")
		require.Equal(t, http.StatusOK, st, body)
		var a struct {
			Status       string  `json:"status"`
			ErrorMessage *string `json:"errorMessage"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &a), body)
		status = append(status, a.Status)
		msg := ""
		if a.ErrorMessage != nil {
			msg = *a.ErrorMessage
		}
		errs = append(errs, msg)
	}
	return status, errs
}

// 200 artifacts from a URL whose server sends a little and then stalls
// would be 200 pending downloads, without a bound. Downloads run
// 4 at once, the rest queued, and a company may have 100 pending: the next
// creation is refused with 403 (fidelity HX1).
func TestArtifactDownloadsAreBounded(t *testing.T) {
	t.Parallel()
	var now, most atomic.Int64
	hold := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := now.Add(1); n > most.Load() {
			most.Store(n)
		}
		defer now.Add(-1)
		w.Header().Set("Content-Length", "100000000")
		_, _ = w.Write(make([]byte, 64<<10))
		w.(http.Flusher).Flush()
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	}))
	p := start(t, "--time-scale", "0")
	defer slow.Close()
	defer close(hold) // before the server closes: its handlers end
	_, before := memory(t, p)

	accepted, refused := 0, ""
	for i := range 200 {
		st, body := miscArtifact(t, p, "dubsim-subscription", fmt.Sprintf("%s/big-%d.wav", slow.URL, i))
		switch st {
		case http.StatusOK, http.StatusCreated:
			accepted++
		default:
			require.Equal(t, http.StatusForbidden, st, body)
			refused = body
		}
	}
	st, body := miscArtifact(t, p, "dubsim-pro", slow.URL+"/other.wav")
	assert.Contains(t, []int{http.StatusOK, http.StatusCreated}, st, "another company has its own: %s", body)

	rss, peak := memory(t, p)
	t.Logf("%d of 200 artifact downloads accepted, at most %d fetched at once; resident memory %s at start, %s after (peak %s); refusal: %s",
		accepted, most.Load(), mb(before), mb(rss), mb(peak), strings.TrimSpace(refused))
	assert.Equal(t, 100, accepted, "downloads pending per company")
	assert.JSONEq(t, `{"error":"At most 100 artifact downloads may be pending per company; create more once some have finished (their status leaves created)"}`, refused)
	assert.LessOrEqual(t, most.Load(), int64(4), "downloads at once")
	assert.Less(t, peak, int64(200<<20), "peak resident memory")
	assert.True(t, p.Alive())
}

// An artifact from a closed loopback port and one from a port that answers
// 404 fail with the same message: the cause ("connection refused", "HTTP
// 404 Not Found") would make dubsim a port scanner (fidelity HX3).
func TestArtifactDownloadErrorsAreGeneric(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String() + "/x.wav"
	require.NoError(t, ln.Close())
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	p := start(t, "--time-scale", "0")

	urls := []string{closed, notFound.URL + "/x.wav"}
	var ids []string
	for _, u := range urls {
		st, body := miscArtifact(t, p, "dubsim-pro", u)
		require.Contains(t, []int{http.StatusOK, http.StatusCreated}, st, body)
		ids = append(ids, miscID(t, body))
	}
	status, errs := miscSettle(t, p, "dubsim-pro", ids...)
	for i, u := range urls {
		t.Logf("%s: %s %q", u, status[i], errs[i])
		assert.Equal(t, "upload_failed", status[i])
		assert.Equal(t, "download of "+u+" failed: the media could not be read (it is not reachable, not answered, or not a supported media file: WAV, MP4/MOV, WebM/Matroska, MP3, FLAC)", errs[i])
	}
}

// Downloaded artifacts count toward the storage quotas: with a 1 MB
// company quota, the third 400 KB download fails the artifact naming the
// quota (fidelity HX2).
func TestArtifactDownloadsCountTowardTheQuota(t *testing.T) {
	t.Parallel()
	const data = 400_000
	wav := append(audio.WAVHeader(16000, 1, 16, data), make([]byte, data)...)
	var mu sync.Mutex
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "audio/wav")
		_, _ = w.Write(wav)
	}))
	defer files.Close()
	p := start(t, "--time-scale", "0", "--company-blob-quota", "1000000")

	var ids []string
	for i := range 3 {
		st, body := miscArtifact(t, p, "dubsim-pro", fmt.Sprintf("%s/a-%d.wav", files.URL, i))
		require.Contains(t, []int{http.StatusOK, http.StatusCreated}, st, body)
		ids = append(ids, miscID(t, body))
		miscSettle(t, p, "dubsim-pro") // one after the other: the order is known
	}
	status, errs := miscSettle(t, p, "dubsim-pro", ids...)
	t.Logf("three downloads of %d bytes under a 1 MB company quota: %v %q", len(wav), status, errs)
	assert.Equal(t, []string{"upload_completed", "upload_completed", "upload_failed"}, status)
	assert.Equal(t, "download of "+files.URL+"/a-2.wav failed: the files of your company would exceed its storage quota of 0.001 GB", errs[2])
	assert.True(t, p.Alive())
}
