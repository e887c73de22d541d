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
// 60 KB User-Agent (line and headers may take 64 KiB): 3,000 such requests
// without an API key are 180 MB of headers, which would stay if the
// journal kept substrings; the peak stays far below that.
func TestHugeHeadersDoNotStayInTheJournal(t *testing.T) {
	p := start(t)
	_, before := memory(t, p)
	ua := strings.Repeat("a", 60<<10)
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
	t.Logf("resident memory: %s at start, %s after 3,000 requests of 60 KB headers (peak %s)", mb(before), mb(rss), mb(peak))
	assert.True(t, p.Alive())
	assert.Less(t, peak, before+int64(120<<20), "peak resident memory")
}
