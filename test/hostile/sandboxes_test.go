package hostile

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSandboxFloodIsCapped: 300 creations from 40 clients at once against
// --sandbox-max 50: exactly 50 sandboxes, the rest 429 naming the limit;
// file descriptors and memory grow by what 50 sandboxes hold, and come back
// when they are deleted, with no file left.
func TestSandboxFloodIsCapped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "dubsim.db")
	p := start(t, "--sandbox-max", "50", "--data", data)
	fdBefore, err := p.OpenFiles()
	require.NoError(t, err)
	_, peakBefore := memory(t, p)

	var (
		mu       sync.Mutex
		created  []string
		refused  int
		others   []string
		wg       sync.WaitGroup
		attempts = make(chan struct{}, 300)
	)
	for range 300 {
		attempts <- struct{}{}
	}
	close(attempts)
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range attempts {
				st, body := call(t, "POST", p.Base+"/_sim/sandboxes", "", "{}")
				mu.Lock()
				switch st {
				case http.StatusCreated:
					var v struct{ ID string }
					if json.Unmarshal([]byte(body), &v) == nil {
						created = append(created, v.ID)
					}
				case http.StatusTooManyRequests:
					if strings.Contains(body, `"error":"SandboxLimitError"`) && strings.Contains(body, "holds 50 sandboxes") {
						refused++
					} else {
						others = append(others, body)
					}
				default:
					others = append(others, body)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	assert.Len(t, created, 50)
	assert.Equal(t, 250, refused)
	assert.Empty(t, others)
	fdFull, err := p.OpenFiles()
	require.NoError(t, err)
	_, peak := memory(t, p)
	t.Logf("50 sandboxes: fds %d -> %d; peak memory %s -> %s", fdBefore, fdFull, mb(peakBefore), mb(peak))
	assert.LessOrEqual(t, fdFull-fdBefore, 50*2+10, "about one descriptor per sandbox (its bbolt file)")
	assert.Less(t, peak, int64(256<<20), "50 sandboxes do not cost hundreds of megabytes")

	for _, id := range created {
		req, err := http.NewRequest("DELETE", p.Base+"/_sim/sandboxes/"+id, nil)
		require.NoError(t, err)
		req.Header.Set("X-Dubsim-Control", "1")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusNoContent, resp.StatusCode)
	}
	fdAfter, err := p.OpenFiles()
	require.NoError(t, err)
	assert.LessOrEqual(t, fdAfter, fdBefore+5, "descriptors given back: %d -> %d", fdBefore, fdAfter)
	entries, err := os.ReadDir(data + ".sandboxes")
	require.NoError(t, err)
	assert.Empty(t, entries, "no sandbox file left")
	st, _ := call(t, "POST", p.Base+"/_sim/sandboxes", "", "{}")
	assert.Equal(t, http.StatusCreated, st, "room again")
	assert.True(t, p.Alive())
}
