package hostile

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowrateTrickle writes one byte of the body to c every 200 ms (5 B/s,
// so never idle for the 1 s idle timeout) until a write fails or done is
// closed.
func slowrateTrickle(c net.Conn, done <-chan struct{}) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			if _, err := c.Write([]byte{'x'}); err != nil {
				return
			}
		}
	}
}

// slowrateCut starts a trickled body on a fresh connection of p and
// returns the answer and how long after the head it came.
func slowrateCut(t *testing.T, p *proctest.Proc, method, target string, header ...string) (int, string, time.Duration) {
	t.Helper()
	c := slowDial(t, p)
	slowHead(t, c, method, target, 1<<20, header...)
	start := time.Now()
	done := make(chan struct{})
	defer close(done)
	go slowrateTrickle(c, done)
	status, body := slowAnswer(t, c, 10*time.Second)
	return status, body, time.Since(start)
}

// With only the idle deadline (HW1), a body sent one byte every 200 ms at
// a 1 s idle timeout was never cut: it held its connection, a handler and
// an upload for as long as the client liked (measured: still open after
// 10 s with --body-min-rate 0, the behaviour before; the binary before had
// no such flag). With --body-min-rate 100 it must average 100 B/s once the
// 1 s grace is over: the presigned PUT gets S3's RequestTimeout and a JSON
// route its 400 about 1 s in, while a steady 32 KB/s upload is stored.
func TestTrickledBodyIsCutByTheMinimumRate(t *testing.T) {
	t.Parallel() // it mostly waits for the body timeouts
	p, _ := slowStart(t, "--body-idle-timeout", "1s", "--body-min-rate", "100")

	status, body, took := slowrateCut(t, p, http.MethodPut, slowUploadTarget(t, p))
	t.Logf("upload trickle at 5 B/s: %d after %s: %s", status, took.Round(time.Millisecond), body)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, "<Code>RequestTimeout</Code><Message>Your socket connection to the server was not read from or written to within the timeout period. Idle connections will be closed.</Message>")
	assert.Less(t, took, 4*time.Second, "cut once the 1 s grace is over")
	slowNoLeak(t, body)

	status, body, took = slowrateCut(t, p, http.MethodPost, "/api/v1/projects",
		"Authorization: Bearer dubsim-subscription", "Content-Type: application/json")
	t.Logf("JSON trickle at 5 B/s: %d after %s: %s", status, took.Round(time.Millisecond), body)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, "The request body arrived too slowly: ")
	assert.Contains(t, body, "under the minimum of 100 bytes per second after the first 1s; send the body faster")
	assert.Less(t, took, 4*time.Second)
	slowNoLeak(t, body)

	// A steady 32 KB/s upload, 3 s long, is stored.
	target := slowUploadTarget(t, p)
	c := slowDial(t, p)
	const chunks, size = 24, 4096
	slowHead(t, c, http.MethodPut, target, chunks*size)
	start := time.Now()
	for range chunks {
		time.Sleep(125 * time.Millisecond)
		_, err := c.Write(make([]byte, size))
		require.NoError(t, err)
	}
	status, body = slowAnswer(t, c, 10*time.Second)
	t.Logf("%d bytes in %s: %d %s", chunks*size, time.Since(start).Round(time.Millisecond), status, body)
	assert.Equal(t, http.StatusOK, status, body)
	assert.NotContains(t, p.Stderr(), "level=ERROR")
}
