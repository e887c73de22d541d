package app

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShutdownStopsEveryListenerAtOnce: while a request on the main
// listener uses the grace, the control listener takes no new connections:
// every server's shutdown begins at once, within the one grace.
func TestShutdownStopsEveryListenerAtOnce(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	held := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
	})
	idle := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	a := &App{Handler: held, StudioHandler: idle, ControlHandler: idle}
	ls, err := a.Listen(Listen{Addr: "127.0.0.1:0", ControlAddr: "127.0.0.1:0"})
	require.NoError(t, err)
	require.Len(t, ls.servers, 2)
	control := make(chan struct{})
	ls.servers[1].RegisterOnShutdown(func() { close(control) }) // runs once its listener is closed

	answered := make(chan error, 1)
	go func() {
		resp, err := http.Get("http://" + ls.Addrs[0] + "/slow")
		if err == nil {
			resp.Body.Close()
		}
		answered <- err
	}()
	<-entered
	type result struct {
		cut int
		err error
	}
	done := make(chan result, 1)
	go func() {
		cut, err := ls.Shutdown(time.Hour)
		done <- result{cut, err}
	}()
	select {
	case <-control:
	case <-time.After(10 * time.Second): // a bound on failure, far below the grace
		close(release)
		t.Fatal("the control listener still took connections while the main one had its grace")
	}
	_, err = net.Dial("tcp", ls.Addrs[2])
	assert.Error(t, err, "the control listener is closed")

	close(release)
	r := <-done
	assert.NoError(t, r.err)
	assert.Zero(t, r.cut, "the held request finished within the grace")
	assert.NoError(t, <-answered)
}
