package hostile

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/dubsim/dubsim/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stateProjects is how many projects the state attacks store.
const stateProjects = 3000

// The data file holding stateProjects long projects (stateFill), made once
// by the first test that asks for it (filling it is seconds of CPU); each
// attack starts a dubsim of its own on a fresh copy.
var (
	stateOnce   sync.Once
	stateDir    string // made and removed by TestMain
	stateFilled string // the data file, "" when filling it failed
)

// stateData returns the path of a fresh copy of the filled data file.
func stateData(t *testing.T) string {
	t.Helper()
	stateOnce.Do(func() {
		data := filepath.Join(stateDir, "dubsim.db")
		p := proctest.Start(t, proctest.Binary(t), nil, "--addr", "127.0.0.1:0", "--data", data, "--log-level", "off")
		began := time.Now()
		stateFill(t, p)
		p.Terminate(t)
		t.Logf("%d projects stored in %s", stateProjects, time.Since(began).Round(time.Millisecond))
		stateFilled = data
	})
	if stateFilled == "" {
		t.Fatal("filling the data file failed (see the first test that asked for it)")
	}
	b, err := os.ReadFile(stateFilled)
	require.NoError(t, err)
	data := filepath.Join(t.TempDir(), "dubsim.db")
	require.NoError(t, os.WriteFile(data, b, 0o600))
	return data
}

// stateStart runs dubsim on a fresh copy of the filled data file, with env
// added to its environment.
func stateStart(t *testing.T, env ...string) *proctest.Proc {
	t.Helper()
	return proctest.Start(t, proctest.Binary(t), env, "--addr", "127.0.0.1:0", "--data", stateData(t), "--log-level", "off")
}

// stateFill creates stateProjects projects with a 500-character name and an
// 8 KB source URL (the longest each accepts) on a new account, in parallel.
func stateFill(t *testing.T, p *proctest.Proc) {
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
			for next.Add(1) <= stateProjects {
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
}

// 40 parallel reads of /_sim/state would take the process to 3.4 GB if
// the dump were built whole in memory (every project's head sorted, the
// page of projects copied, then encoded whole). The dump is a page
// of at most 1,000 projects read in one short transaction and written one
// project at a time, with at most a few dumps at once: 40 parallel reads
// of the largest page over 3,000 projects with the longest names and URLs
// stay far below it, every answer whole.
func TestParallelStateDumpsStayBounded(t *testing.T) {
	tooltest.LongOnly(t, "the peak memory of 40 parallel state dumps of 3,000 projects")
	p := stateStart(t)
	_, before := memory(t, p)
	t.Logf("peak at start on %d projects: %s", stateProjects, mb(before))

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
