package hostile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/dubsim/dubsim/internal/tooltest"
	"github.com/dubsim/dubsim/sim/app"
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
		// A connection kept for each worker: the default transport keeps
		// two idle, so the other workers would dial for most requests.
		client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	)
	defer client.CloseIdleConnections()
	for i := range n {
		next <- i
	}
	close(next)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
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

// A client without a key sends 600 requests whose path is 10 KB long
// (past the 8 KiB of a target, within the 12 KiB net/http reads of a
// request's line and headers). Each is refused with 414 in the platform's
// envelope, the journal keeps the refusals clipped, and memory stays
// flat. (That no entry keeps a substring of Go's request line, which
// would keep the whole line alive, is TestLongRequestLinesAreNotKept in
// sim/journal.) The process runs with GOGC=100, so that resident memory
// follows what is kept rather than the headroom dubsim's own collector
// target leaves for garbage.
func TestLongRequestLinesAreRefusedAndForgotten(t *testing.T) {
	t.Parallel()
	p := startGOGC100(t)
	before, _ := memory(t, p)
	path := "/api/v1/projects/" + strings.Repeat("a", 10<<10)
	counts, bodies := sendMany(t, 600, 4, func(int) *http.Request {
		req, err := http.NewRequest(http.MethodGet, p.Base+path, nil)
		require.NoError(t, err)
		return req
	})
	rss, peak := memory(t, p)
	t.Logf("resident memory: %s at start, %s after 600 requests of 10 KB paths (peak %s); answers %v", mb(before), mb(rss), mb(peak), counts)
	assert.Equal(t, map[int]int{http.StatusRequestURITooLong: 600}, counts)
	var env struct{ Error, Message string }
	require.NoError(t, json.Unmarshal([]byte(bodies[http.StatusRequestURITooLong]), &env))
	assert.Equal(t, "URITooLongError", env.Error)
	assert.Contains(t, env.Message, "at most 8192 bytes")

	// The journal keeps the refusals, clipped.
	st, body := call(t, http.MethodGet, p.Base+"/_sim/requests?limit=1", "", "")
	require.Equal(t, http.StatusOK, st, body)
	assert.Contains(t, body, `"status":414`)
	assert.Less(t, len(body), 16<<10, "the entry keeps 4 KiB of the path")

	assert.Less(t, rss, before+int64(30<<20), "resident memory after the requests")
	assert.True(t, p.Alive())
}

// A request line of 1 MB is refused once 12 KiB of line and headers have
// come (app.MaxHeaderBytes and net/http's 4 KiB of slack: 414 in the
// envelope of the path's interface, or the connection closed while the
// client still writes), no sooner than app.RefusalDelay: dubsim reads no more of it and nothing of
// it stays. 100 such requests, 20 at a time.
func TestMegabyteRequestLinesAreCutShort(t *testing.T) {
	t.Parallel()
	p := startGOGC100(t)
	before, _ := memory(t, p)
	host := strings.TrimPrefix(p.Base, "http://")
	line := "GET /api/v1/projects/" + strings.Repeat("a", 1<<20) + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n"
	var (
		mu       sync.Mutex
		answered int
		soonest  = time.Hour
		wg       sync.WaitGroup
	)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				began := time.Now()
				conn, err := net.Dial("tcp", host)
				if !assert.NoError(t, err) {
					return
				}
				_, _ = io.WriteString(conn, line) // may fail once dubsim has answered and closed
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err == nil {
					took := time.Since(began)
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					assert.Equal(t, http.StatusRequestURITooLong, resp.StatusCode)
					assert.Contains(t, string(body), `"error":"URITooLongError"`, "the platform's envelope")
					mu.Lock()
					answered++
					soonest = min(soonest, took)
					mu.Unlock()
				}
				conn.Close()
			}
		}()
	}
	wg.Wait()
	rss, peak := memory(t, p)
	t.Logf("resident memory: %s at start, %s after 100 request lines of 1 MB (peak %s); %d answered 414 (the soonest after %s), the others closed",
		mb(before), mb(rss), mb(peak), answered, soonest)
	if answered > 0 {
		assert.GreaterOrEqual(t, soonest, app.RefusalDelay, "the refusal waits")
	}
	assert.Less(t, peak, before+int64(30<<20), "no line was read whole")
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
//
// Outside the long run, TestManyBusySandboxesStayUnder512MBByDefault fills
// the journals of 50 sandboxes once (40 entries a sandbox) and checks the
// same total bound.
func TestFullJournalsOfManySandboxesStayBounded(t *testing.T) {
	tooltest.LongOnly(t, "the journals of 200 sandboxes filled three times over")
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
