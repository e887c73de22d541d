package hostile

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/dubsim/dubsim/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// budgetBody is a valid JSON create body of exactly the routes' 10 MiB
// limit: {"name":"xxx…"}.
func budgetBody() []byte {
	const size = 10 << 20
	b := make([]byte, 0, size)
	b = append(b, `{"name":"`...)
	b = append(b, bytes.Repeat([]byte("x"), size-len(b)-2)...)
	return append(b, `"}`...)
}

// budgetCase is one kind of the parallel creates: its headers and the
// status it gets, the same with the budget as without.
type budgetCase struct {
	name   string
	key    bool
	iface  string // X-Dubsim-Interface, "" for the body to decide
	status int
}

// Request bodies read whole into memory, each with its own copy, would
// let 100 parallel 10 MiB creates (valid JSON, with a key or none) take
// the process to a peak of 1.7 GB, and the connection cap (1024) allows
// ten times that. Every in-memory body read therefore takes its bytes
// from one process-wide budget (--body-memory, fidelity HY1) and waits
// for it: every request still gets its answer, the process stays alive,
// and the peak stays far below.
func TestBudgetParallelHugeJSONBodies(t *testing.T) {
	tooltest.LongOnly(t, "the peak memory of 400 parallel 10 MiB bodies")
	// Under a 256 MiB soft limit the peak follows the live heap, not the
	// collector's target (GOGC 400): with --body-memory 0 (no budget) this
	// attack peaks at 973-1,077 MB, with the default budget at 266-279 MB.
	p := start(t) // the default soft limit, 256 MiB
	body := budgetBody()
	cases := []budgetCase{
		{"no key, shared address (studio)", false, "", http.StatusBadRequest},
		{"key, shared address (studio)", true, "", http.StatusBadRequest},
		{"key, platform", true, "platform", http.StatusBadRequest},
		{"no key, platform", false, "platform", http.StatusUnauthorized},
	}
	const n = 100
	statuses := make([]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := cases[i%len(cases)]
			req, err := http.NewRequest(http.MethodPost, p.Base+"/api/v1/projects", bytes.NewReader(body))
			if err != nil {
				errs[i] = err
				return
			}
			req.Header.Set("Content-Type", "application/json")
			if c.key {
				req.Header.Set("Authorization", "Bearer dubsim-subscription")
			}
			if c.iface != "" {
				req.Header.Set("X-Dubsim-Interface", c.iface)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	for i := range n {
		c := cases[i%len(cases)]
		require.NoError(t, errs[i], "request %d (%s)", i, c.name)
		assert.Equal(t, c.status, statuses[i], "request %d (%s)", i, c.name)
	}
	rss, peak := memory(t, p)
	t.Logf("after %d parallel 10 MiB JSON creates: resident %s, peak %s", n, mb(rss), mb(peak))
	assert.True(t, p.Alive())
	assert.Less(t, peak, int64(400<<20), "peak resident memory (973-1,077 MB without the budget)")
}
