package hostile

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sendMany runs n requests, from workers clients at once, that newReq makes
// (i is the request's number), and returns how many got each status and
// one body of each.
func sendMany(t *testing.T, n, workers int, newReq func(i int) *http.Request) (map[int]int, map[int]string) {
	t.Helper()
	var (
		mu     sync.Mutex
		counts = map[int]int{}
		bodies = map[int]string{}
		errs   []error
		wg     sync.WaitGroup
		next   = make(chan int, n)
	)
	for i := range n {
		next <- i
	}
	close(next)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{}
			for i := range next {
				resp, err := client.Do(newReq(i))
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				mu.Lock()
				counts[resp.StatusCode]++
				bodies[resp.StatusCode] = string(b)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Empty(t, errs)
	return counts, bodies
}

// startGOGC100 is start with Go's own collector target.
func startGOGC100(t *testing.T, args ...string) *proctest.Proc {
	t.Helper()
	base := []string{"--addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "dubsim.db"), "--log-level", "off"}
	return proctest.Start(t, proctest.Binary(t), []string{"GOGC=100"}, append(base, args...)...)
}

// A client without a key sends 300 requests whose path is 512 KB long.
// Each is refused with 414 in the platform's envelope, and nothing of the
// request lines stays in memory: the journal keeps clipped copies of the
// method and the path, not substrings of Go's request line (which kept the
// whole line alive: 300 such requests took the process from 20 MB to 470
// MB of resident memory). The process runs with GOGC=100, so that resident
// memory follows what is kept rather than the headroom dubsim's own
// collector target leaves for the lines' garbage (its figure moved between
// 75 and 106 MB from run to run).
func TestLongRequestLinesAreRefusedAndForgotten(t *testing.T) {
	t.Parallel()
	p := startGOGC100(t)
	before, _ := memory(t, p)
	path := "/api/v1/projects/" + strings.Repeat("a", 512<<10)
	counts, bodies := sendMany(t, 300, 4, func(int) *http.Request {
		req, err := http.NewRequest(http.MethodGet, p.Base+path, nil)
		require.NoError(t, err)
		return req
	})
	rss, peak := memory(t, p)
	t.Logf("resident memory: %s at start, %s after 300 requests of 512 KB paths (peak %s); answers %v", mb(before), mb(rss), mb(peak), counts)
	assert.Equal(t, map[int]int{http.StatusRequestURITooLong: 300}, counts)
	var env struct{ Error, Message string }
	require.NoError(t, json.Unmarshal([]byte(bodies[http.StatusRequestURITooLong]), &env))
	assert.Equal(t, "URITooLongError", env.Error)
	assert.Contains(t, env.Message, "at most 8192 bytes")

	// The journal keeps the refusals, clipped.
	st, body := call(t, http.MethodGet, p.Base+"/_sim/requests?limit=1", "", "")
	require.Equal(t, http.StatusOK, st, body)
	assert.Contains(t, body, `"status":414`)
	assert.Less(t, len(body), 16<<10, "the entry keeps 4 KiB of the path")

	// 300 lines of 512 KB are 150 MB: kept, they would pass the bound.
	assert.Less(t, rss, before+int64(100<<20), "resident memory after the requests")
	assert.True(t, p.Alive())
}

// Requests that fill the journals of 200 sandboxes with entries of about
// 20 KiB each (4 KB path, 4 KB query, 8 KiB body, 512-byte headers)
// leave the journals within their total bound (--journal-memory, 32 MiB
// by default) and the process within that plus what the sandboxes
// themselves cost. Kept whole, 120 entries in each journal would be 450
// MB. The process runs with GOGC=100, so that resident memory follows the
// live heap rather than the headroom dubsim's own collector target
// (defaultGCPercent) leaves for garbage.
func TestFullJournalsOfManySandboxesStayBounded(t *testing.T) {
	t.Parallel()
	const sandboxes, each = 200, 120
	p := startGOGC100(t, "--sandbox-max", fmt.Sprint(sandboxes))
	ids := createSandboxes(t, p, sandboxes)
	before, _ := memory(t, p)
	counts, _ := sendMany(t, sandboxes*each, 8, fillJournals(p.Base, ids))
	rss, peak := memory(t, p)
	t.Logf("resident memory: %s with %d idle sandboxes, %s after %d requests of ~20 KiB entries (peak %s); answers %v",
		mb(before), sandboxes, mb(rss), sandboxes*each, mb(peak), counts)

	// Each journal holds what its share allows; together at most the total.
	held := journalBytes(t, p, ids)
	t.Logf("the %d journals hold %s", sandboxes, mb(held))
	assert.LessOrEqual(t, held, int64(32<<20), "all journals together")
	assert.Less(t, rss, before+int64(200<<20), "resident memory after the requests")
	assert.True(t, p.Alive())
}
