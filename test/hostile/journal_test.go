package hostile

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A request journal that keeps a clipped header value must not keep the
// whole header it was cut from. Each entry keeps a 512-byte copy of a
// 10 KB User-Agent (line and headers may take 12 KiB: app.MaxHeaderBytes
// and net/http's slack): 3,000 such requests without an API key are 30 MB
// of headers, of which the journal's 4 MiB would keep the last 3,000 or
// so if it kept substrings. The process runs with GOGC=100, so that its
// peak follows what is kept rather than the garbage the binary's own
// collector target lets grow.
func TestHugeHeadersDoNotStayInTheJournal(t *testing.T) {
	t.Parallel()
	p := startGOGC100(t)
	_, before := memory(t, p)
	ua := strings.Repeat("a", 10<<10)
	client := &http.Client{}
	for i := range 3000 {
		req, err := http.NewRequest(http.MethodGet, p.Base+"/api/v1/balance", nil)
		require.NoError(t, err)
		req.Header.Set("User-Agent", ua)
		resp, err := client.Do(req)
		require.NoError(t, err, "request %d", i)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "request %d", i)
	}
	rss, peak := memory(t, p)
	t.Logf("resident memory: %s at start, %s after 3,000 requests of 10 KB headers (peak %s)", mb(before), mb(rss), mb(peak))
	assert.True(t, p.Alive())
	// Kept substrings would be about 30 MB more, live.
	assert.Less(t, peak, before+int64(24<<20), "peak resident memory")
}
