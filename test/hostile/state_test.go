package hostile

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stateProjects is how many projects the state attack stores.
const stateProjects = 3000

// stateFill creates n projects with a 500-character name and an 8 KB source
// URL (the longest each accepts) on a new account, in parallel, and returns
// the account's key.
func stateFill(t *testing.T, p *proctest.Proc, n int) string {
	t.Helper()
	st, body := controlCall(t, p, "POST", "/_sim/accounts", "", map[string]string{"Content-Type": "application/json"},
		`{"plan":"enterprise","balance_minutes":100000000}`)
	require.Equal(t, http.StatusCreated, st, "%s", body)
	key := strings.Split(strings.Split(body, `"api_key":"`)[1], `"`)[0]
	url := "https://media.dubsim.test/short-" + strings.Repeat("u", 8<<10-len("https://media.dubsim.test/short-"))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				i := next.Load()
				name := fmt.Sprintf("%06d-%s", i, strings.Repeat("n", 493))
				b := `{"name":"` + name + `","source_lang":"en","target_lang":"fr-FR","source_video_url":"` + url + `"}`
				req, err := http.NewRequest(http.MethodPost, p.Base+"/api/v1/projects", strings.NewReader(b))
				if err != nil {
					failed.Add(1)
					continue
				}
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	require.Zero(t, failed.Load(), "creations that failed")
	return key
}

// 40 parallel reads of /_sim/state would take the process to 3.4 GB if
// the dump were built whole in memory (every project's head sorted, the
// page of projects copied, then encoded whole). The dump is a page
// of at most 1,000 projects read in one short transaction and written one
// project at a time, with at most a few dumps at once: 40 parallel reads
// of the largest page over 3,000 projects with the longest names and URLs
// stay far below it, every answer whole.
func TestParallelStateDumpsStayBounded(t *testing.T) {
	p := start(t)
	began := time.Now()
	stateFill(t, p, stateProjects)
	_, before := memory(t, p)
	t.Logf("%d projects stored in %s; peak %s", stateProjects, time.Since(began).Round(time.Millisecond), mb(before))

	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for range 40 {
		wg.Go(func() {
			resp, err := http.Get(p.Base + "/_sim/state?limit=1000")
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			var st struct {
				Projects []json.RawMessage `json:"projects"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
				errs <- fmt.Errorf("status %d: %w", resp.StatusCode, err)
				return
			}
			if resp.StatusCode != http.StatusOK || len(st.Projects) != 1000 {
				errs <- fmt.Errorf("status %d, %d projects", resp.StatusCode, len(st.Projects))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	rss, peak := memory(t, p)
	t.Logf("resident memory after 40 parallel dumps: %s (peak %s)", mb(rss), mb(peak))
	assert.True(t, p.Alive())
	assert.Less(t, peak, int64(400<<20), "peak resident memory")
}
