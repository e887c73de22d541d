package media

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// At most MaxProbes probes read media at once; the others wait for a slot
// and all get their answer.
func TestProbesRunAFewAtATime(t *testing.T) {
	t.Parallel()
	srv, arrived, release, most := holdingHost(t, 64)
	r := &Resolver{}
	const probes = 3 * MaxProbes
	var wg sync.WaitGroup
	errs := make([]error, probes)
	for i := range probes {
		wg.Go(func() { _, errs[i] = r.Probe(context.Background(), srv.URL+"/v.mp4") })
	}
	for range MaxProbes {
		<-arrived // the first MaxProbes reach the host...
	}
	select {
	case <-arrived:
		t.Fatal("a probe beyond MaxProbes reached the host while the slots were taken")
	default:
	}
	close(release) // ...and the rest follow as slots free
	wg.Wait()
	assert.Equal(t, int32(MaxProbes), most.Load())
	for i, err := range errs {
		assert.ErrorContains(t, err, "HTTP 404", "probe %d", i)
	}
}

// Resolvers sharing ProbeSlots (the simulators of a process) read media at
// most that many at once together, each within its own MaxProbes.
func TestProbesShareTheProcess(t *testing.T) {
	t.Parallel()
	srv, arrived, release, most := holdingHost(t, 8)
	slots := make(ProbeSlots, 1)
	a, b := &Resolver{Process: slots}, &Resolver{Process: slots}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer func() { free(); wg.Wait() }() // a failing test ends its probes too
	wg.Go(func() { _, errs[0] = a.Probe(context.Background(), srv.URL+"/a.mp4") })
	<-arrived
	wg.Go(func() { _, errs[1] = b.Probe(context.Background(), srv.URL+"/b.mp4") })
	select {
	case <-arrived:
		t.Fatal("b's probe reached the host while a's held the process's slot")
	case <-time.After(200 * time.Millisecond):
	}
	free()
	wg.Wait()
	assert.Equal(t, int32(1), most.Load())
	for i, err := range errs {
		assert.ErrorContains(t, err, "HTTP 404", "probe %d", i)
	}
}

// holdingHost is a media host that holds every request until release is
// closed, then answers 404; arrived gets one value per request as it
// comes (buffer of them), most is the largest number held at once.
func holdingHost(t *testing.T, buffer int) (srv *httptest.Server, arrived chan struct{}, release chan struct{}, most *atomic.Int32) {
	t.Helper()
	var inFlight atomic.Int32
	most = new(atomic.Int32)
	arrived, release = make(chan struct{}, buffer), make(chan struct{})
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		arrived <- struct{}{}
		<-release
		http.Error(w, "gone", http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	return srv, arrived, release, most
}
