package hostile

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/dubsim/dubsim/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// createSandboxes makes n sandboxes with POST /_sim/sandboxes and returns
// their ids.
func createSandboxes(t *testing.T, p *proctest.Proc, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		st, body := call(t, http.MethodPost, p.Base+"/_sim/sandboxes", "", "{}")
		require.Equal(t, http.StatusCreated, st, body)
		var v struct{ ID string }
		require.NoError(t, json.Unmarshal([]byte(body), &v))
		ids[i] = v.ID
	}
	return ids
}

// fillJournals makes request i of sendMany for the sandbox ids[i%len(ids)]:
// one whose journal entry is about 20 KiB (4,000-byte path segment,
// 4,000-byte query, 8 KiB body, 512-byte key, User-Agent and
// Idempotency-Key), near the largest an entry keeps.
func fillJournals(base string, ids []string) func(i int) *http.Request {
	seg, query := strings.Repeat("p", 4000), "q="+strings.Repeat("v", 4000)
	body := `{"name":"` + strings.Repeat("b", 8<<10) + `"}`
	header := strings.Repeat("h", 512)
	return func(i int) *http.Request {
		req, err := http.NewRequest(http.MethodPost, base+"/sbx/"+ids[i%len(ids)]+"/api/v1/"+seg+"?"+query, strings.NewReader(body))
		if err != nil {
			panic(err) // the URL is built above: a bad one is the test's error
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+header)
		req.Header.Set("User-Agent", header)
		req.Header.Set("Idempotency-Key", header)
		return req
	}
}

// journalBytes is what the journals of the sandboxes ids hold together, as
// each reports it (GET /_sim/requests: stats.bytes).
func journalBytes(t *testing.T, p *proctest.Proc, ids []string) int64 {
	t.Helper()
	var held int64
	for _, id := range ids {
		st, body := call(t, http.MethodGet, p.Base+"/sbx/"+id+"/_sim/requests?limit=1", "", "")
		require.Equal(t, http.StatusOK, st, body)
		var v struct {
			Stats struct {
				Bytes int64 `json:"bytes"`
			} `json:"stats"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &v))
		held += v.Stats.Bytes
	}
	return held
}

// A dubsim shared by many test suites, with its default settings: as many
// sandboxes as --sandbox-max allows (200), each busy enough that the
// journals together reach their bound (--journal-memory, 32 MiB: about
// 160 KiB, 8 such entries, a sandbox). The live heap is then about 85 MB;
// what keeps the process's resident memory well below 512 MB is the
// default soft memory limit (256 MiB, HM1), which makes the collector
// run before garbage fills the headroom its target of 400 % would allow
// (five times the live heap). The environment's GOGC and GOMEMLIMIT are
// cleared, so the binary's own defaults apply. Kept whole, the 8,000
// entries would be 170 MB: over five times the journals' bound.
//
// Outside the long run there are 50 sandboxes, each as busy: the 2,000
// entries (43 MB kept whole) still overflow the journals' bound, which is
// the process's and not a sandbox's, and creating them takes a quarter of
// the time (creations are paced, half the processors at most).
func TestManyBusySandboxesStayUnder512MBByDefault(t *testing.T) {
	t.Parallel()
	sandboxes, each := 50, 40
	if tooltest.Long() {
		sandboxes = 200
	}
	p := proctest.Start(t, proctest.Binary(t), []string{"GOGC=", "GOMEMLIMIT="},
		"--addr", "127.0.0.1:0", "--data", t.TempDir()+"/dubsim.db", "--log-level", "off")
	start, _ := memory(t, p)
	ids := createSandboxes(t, p, sandboxes)
	idle, _ := memory(t, p)
	counts, _ := sendMany(t, sandboxes*each, 8, fillJournals(p.Base, ids))
	rss, peak := memory(t, p)
	held := journalBytes(t, p, ids)
	t.Logf("resident memory: %s at start, %s with %d idle sandboxes, %s after %d requests of ~20 KiB entries (peak %s); the journals hold %s; answers %v",
		mb(start), mb(idle), sandboxes, mb(rss), sandboxes*each, mb(peak), mb(held), counts)
	assert.Equal(t, map[int]int{http.StatusNotFound: sandboxes * each}, counts)
	assert.Greater(t, held, int64(30<<20), "the journals are full")
	assert.LessOrEqual(t, held, int64(32<<20), "all journals together, within --journal-memory")
	assert.Less(t, peak, int64(512<<20), "peak resident memory")
	assert.True(t, p.Alive())
}
