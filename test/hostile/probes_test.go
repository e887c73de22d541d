package hostile

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/dubsim/dubsim/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probesZeros is an endless body of zeros, served without Range support,
// so a probe of it buffers as much of it as it may.
type probesZeros struct{}

func (probesZeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// Forty parallel creations whose source_video_url is a large loopback file
// served without Range support make forty probes each buffer 16 MiB (1.2 GB
// resident, were they all run at once). Probes run a few at a time, so the
// buffers are bounded whatever the number of creations; each creation still
// gets its answer (the zeros are no video: 400 "Unable to read video
// info").
func TestParallelProbesOfALargeFileAreBounded(t *testing.T) {
	t.Parallel()
	media := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "video/mp4")
		_, _ = io.Copy(w, io.LimitReader(probesZeros{}, 64<<20))
	}))
	t.Cleanup(media.Close)
	p := start(t)
	_, before := memory(t, p)
	sourceURL := media.URL + "/big.mp4"
	const creations = 40
	probesCreate(t, p, sourceURL, creations)
	rss, peak := memory(t, p)
	t.Logf("resident memory: %s at start, %s after %d parallel probes of a 64 MiB file without Range (peak %s)", mb(before), mb(rss), creations, mb(peak))
	require.True(t, p.Alive())
	assert.Less(t, peak, int64(300<<20), "peak resident memory")
}

// Forty creations whose source_video_url is dubsim's own /_sim/state, over
// a store of long projects, would take the process to 4 GB (2.5 GB over
// 2,000 such projects) if each probe made the server build a whole state
// dump and buffered it. Probes run a few at a time with bounded buffers,
// and state dumps are pages written a few at a time, so the loop through
// the server's own control plane is bounded too; each creation is told the
// URL is no video.
//
// The live heap stays near 100 MB (4 probe buffers of 16 MiB, 2 dump
// pages); the rest is garbage the collector lets grow to its target (GOGC
// 400) unless the soft memory limit (HM1) holds it back.
// That limit is one the runtime honours: with the default, 256 MiB, the
// attack peaks near it; without one (GOMEMLIMIT=off) it peaks near the
// collector's target (430-570 MB).
func TestProbesOfTheServersOwnStateAreBounded(t *testing.T) {
	tooltest.LongOnly(t, "the peak memory of 40 parallel probes of the server's own state, twice")
	limited := probesOwnState(t, stateStart(t))
	unlimited := probesOwnState(t, stateStart(t, "GOMEMLIMIT=off"))
	t.Logf("peak with the default limit (256 MiB): %s; with none: %s", mb(limited), mb(unlimited))
	assert.Less(t, unlimited, int64(800<<20), "peak resident memory without a soft limit")
	assert.Less(t, limited, int64(340<<20), "peak resident memory under the default 256 MiB limit")
	assert.Less(t, limited, unlimited*3/4, "the limit must lower the peak")
}

// probesOwnState makes 40 parallel creations on p, started on the long
// projects of stateData, whose source_video_url is p's own /_sim/state;
// each must be told the URL is no video. It returns the peak resident
// memory.
func probesOwnState(t *testing.T, p *proctest.Proc) int64 {
	t.Helper()
	_, before := memory(t, p)
	sourceURL := p.Base + "/_sim/state?limit=1000"
	const creations = 40
	probesCreate(t, p, sourceURL, creations)
	rss, peak := memory(t, p)
	t.Logf("resident memory: %s at start, %s after %d parallel probes of /_sim/state (peak %s)", mb(before), mb(rss), creations, mb(peak))
	require.True(t, p.Alive())
	return peak
}

// probesCreate makes n parallel creations on p whose source video is
// sourceURL, which is no video: each must get 400 "Unable to read video
// info".
func probesCreate(t *testing.T, p *proctest.Proc, sourceURL string, n int) {
	t.Helper()
	body := `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"` + sourceURL + `"}`
	statuses := make([]int, n)
	answers := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodPost, p.Base+"/api/v1/projects", strings.NewReader(body))
			if !assert.NoError(t, err) {
				return
			}
			req.Header.Set("Authorization", "Bearer dubsim-pro")
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if !assert.NoError(t, err, "creation %d", i) {
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			statuses[i], answers[i] = resp.StatusCode, string(bytes.TrimSpace(b))
		})
	}
	wg.Wait()
	for i := range n {
		assert.Equal(t, http.StatusBadRequest, statuses[i], "creation %d: %s", i, answers[i])
		assert.Contains(t, answers[i], "Unable to read video info", "creation %d", i)
	}
}
