package sandbox_test

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim/sandbox"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeleteEndsEventStreams: an open event stream, by either path, is not
// work in flight: a deletion ends it at once instead of waiting out the
// drain (a minute here).
func TestDeleteEndsEventStreams(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *sandbox.Config) { c.DrainWait = time.Minute })
	for _, path := range []string{"/sbx/%s/_sim/events", "/_sim/sandboxes/%s/events"} {
		a := e.create("")
		res, err := http.Get(e.url + strings.Replace(path, "%s", a.ID, 1))
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode, path)
		first, err := bufio.NewReader(res.Body).ReadString('\n')
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(first, "retry: "), "%s: %q", path, first)

		deleted := make(chan int, 1)
		go func() {
			req, _ := http.NewRequest(http.MethodDelete, e.url+"/_sim/sandboxes/"+a.ID, nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				deleted <- 0
				return
			}
			_ = res.Body.Close()
			deleted <- res.StatusCode
		}()
		select {
		case st := <-deleted:
			assert.Equal(t, http.StatusNoContent, st, path)
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the deletion waits for the event stream", path)
		}
		_, err = io.Copy(io.Discard, res.Body)
		assert.NoError(t, err, "%s: the stream ends cleanly", path)
		_ = res.Body.Close()
	}
}
