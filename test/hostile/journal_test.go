package hostile

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A request journal that keeps a clipped header value must not keep the
// whole header it was cut from: kept whole, 1,200 requests with a 900 KB
// User-Agent, without an API key, take the process from 18 MB to 3.3 GB.
// Each entry keeps a 512-byte copy; 600 such requests (540 MB of headers,
// which peak at 1.6 GB when substrings are kept) leave the peak far below
// it.
func TestHugeHeadersDoNotStayInTheJournal(t *testing.T) {
	p := start(t)
	_, before := memory(t, p)
	ua := strings.Repeat("a", 900<<10)
	client := &http.Client{}
	for i := range 600 {
		req, err := http.NewRequest(http.MethodGet, p.Base+"/api/v1/balance", nil)
		require.NoError(t, err)
		req.Header.Set("User-Agent", ua)
		resp, err := client.Do(req)
		require.NoError(t, err, "request %d", i)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "request %d", i)
	}
	rss, peak := memory(t, p)
	t.Logf("resident memory: %s at start, %s after 600 requests of 900 KB headers (peak %s)", mb(before), mb(rss), mb(peak))
	assert.True(t, p.Alive())
	assert.Less(t, peak, int64(400<<20), "peak resident memory")
}
