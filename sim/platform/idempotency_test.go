package platform_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/idempotency"
	"github.com/dubsim/dubsim/sim/platform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func idem(key string) map[string]string { return map[string]string{"Idempotency-Key": key} }

func balance(t *testing.T, e *env, key string) float64 {
	t.Helper()
	return e.do(call{method: "GET", path: "/api/v1/balance", key: key}).json(t)["balance_minutes"].(float64)
}

func TestIdempotentReplay(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newAccount(`{"plan":"pro","balance_minutes":100}`)
	first := e.do(call{method: "POST", path: "/api/v1/projects", key: key, body: docsExample, header: idem("k1")})
	require.Equal(t, http.StatusOK, first.status)
	assert.Empty(t, first.header.Get(idempotency.HeaderReplayed))

	again := e.do(call{method: "POST", path: "/api/v1/projects", key: key, body: docsExample, header: idem("k1")})
	assert.Equal(t, first.status, again.status)
	assert.Equal(t, string(first.body), string(again.body), "the first response, byte for byte")
	assert.Equal(t, "true", again.header.Get(idempotency.HeaderReplayed))
	assert.Equal(t, float64(90), balance(t, e, key), "no second charge")

	// Same key, another request: 422 in the platform envelope.
	other := e.do(call{method: "POST", path: "/api/v1/projects", key: key, body: `{"source_lang":"en","target_lang":"de-DE","source_video_url":"https://example.com/video.mp4"}`, header: idem("k1")})
	assert.Equal(t, http.StatusUnprocessableEntity, other.status)
	assert.JSONEq(t, `{"error":"IdempotencyError","message":"Idempotency-Key \"k1\" was already used with a different request (method, path or body); use a new key"}`, string(other.body))

	// Keys are scoped to the API key.
	otherAcct := e.newAccount(`{"plan":"pro","balance_minutes":100}`)
	r := e.do(call{method: "POST", path: "/api/v1/projects", key: otherAcct, body: docsExample, header: idem("k1")})
	assert.Equal(t, http.StatusOK, r.status)
	assert.Empty(t, r.header.Get(idempotency.HeaderReplayed))

	// Errors are replayed too (no second attempt with another outcome).
	broke := e.newAccount(`{"plan":"pro","balance_minutes":0}`)
	r1 := e.do(call{method: "POST", path: "/api/v1/projects", key: broke, body: docsExample, header: idem("k2")})
	assert.Equal(t, http.StatusPaymentRequired, r1.status)
	r2 := e.do(call{method: "POST", path: "/api/v1/projects", key: broke, body: docsExample, header: idem("k2")})
	assert.Equal(t, http.StatusPaymentRequired, r2.status)
	assert.Equal(t, "true", r2.header.Get(idempotency.HeaderReplayed))

	// After 24 hours of simulated time the key is forgotten.
	e.advance(24 * 3600)
	r = e.do(call{method: "POST", path: "/api/v1/projects", key: key, body: docsExample, header: idem("k1")})
	assert.Equal(t, http.StatusOK, r.status)
	assert.Empty(t, r.header.Get(idempotency.HeaderReplayed))
	assert.Equal(t, float64(80), balance(t, e, key))
}

func TestIdempotencyKeyTooLong(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	long := make([]byte, 256)
	for i := range long {
		long[i] = 'a'
	}
	r := e.do(call{method: "POST", path: "/api/v1/projects", key: "dubsim-pro", body: docsExample, header: idem(string(long))})
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.JSONEq(t, `{"error":"ValidationError","message":"Idempotency-Key must be at most 255 characters"}`, string(r.body))
}

func TestParallelIdenticalIdempotentRequestsCreateOneProject(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newAccount(`{"plan":"pro","balance_minutes":1000}`)
	var wg sync.WaitGroup
	results := make([]reply, 24)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.do(call{method: "POST", path: "/api/v1/projects", key: key, body: docsExample, header: idem("same")})
		}()
	}
	wg.Wait()
	var created string
	for _, r := range results {
		switch r.status {
		case http.StatusOK:
			id := r.json(t)["project_id"].(string)
			if created == "" {
				created = id
			}
			assert.Equal(t, created, id, "every success is the one project")
		case http.StatusConflict:
			assert.Equal(t, "ConflictError", r.json(t)["error"])
		default:
			t.Errorf("unexpected %d: %s", r.status, r.body)
		}
	}
	require.NotEmpty(t, created)
	assert.Equal(t, float64(990), balance(t, e, key), "charged once")
}

// blockingService holds CreateProject until released, to observe a request
// in flight.
type blockingService struct {
	platform.Service
	entered chan struct{}
	release chan struct{}
}

func (b *blockingService) CreateProject(ctx context.Context, key string, np sim.NewProject, idem *sim.IdemWrite[sim.Receipt]) (sim.Receipt, error) {
	b.entered <- struct{}{}
	<-b.release
	return b.Service.CreateProject(ctx, key, np, idem)
}

func TestIdempotencyInFlightConflict(t *testing.T) {
	t.Parallel()
	bs := &blockingService{entered: make(chan struct{}), release: make(chan struct{})}
	e := newEnv(t, func(c *platform.Config) { bs.Service = c.Service; c.Service = bs })
	done := make(chan reply)
	go func() {
		done <- e.do(call{method: "POST", path: "/api/v1/projects", key: "dubsim-pro", body: docsExample, header: idem("slow")})
	}()
	<-bs.entered
	r := e.do(call{method: "POST", path: "/api/v1/projects", key: "dubsim-pro", body: docsExample, header: idem("slow")})
	assert.Equal(t, http.StatusConflict, r.status)
	assert.JSONEq(t, `{"error":"ConflictError","message":"A request with Idempotency-Key \"slow\" is still being processed; retry after it completes"}`, string(r.body))
	close(bs.release)
	first := <-done
	assert.Equal(t, http.StatusOK, first.status)
	replay := e.do(call{method: "POST", path: "/api/v1/projects", key: "dubsim-pro", body: docsExample, header: idem("slow")})
	assert.Equal(t, string(first.body), string(replay.body))
}
