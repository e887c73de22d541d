package faults

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 2, 4, 12, 0, 0, 0, time.UTC)

// clock is a manual clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// sleeper records the waits it is asked for and returns at once (or with
// the context's error when it is already done).
type sleeper struct {
	mu  sync.Mutex
	got []time.Duration
}

func (s *sleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.got = append(s.got, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeper) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.got...)
}

// testEnvelope renders "status|name|message|path" as text/x-envelope, so
// tests see every argument the middleware passed.
func testEnvelope(r *http.Request, status int, name, msg string) (string, []byte) {
	return "text/x-envelope", []byte(fmt.Sprintf("%d|%s|%s|%s", status, name, msg, r.URL.Path))
}

type firedKey struct{}

// harness is a Faults with a manual clock, a recording sleeper, a test
// envelope and an API handler that answers 200 "api".
type harness struct {
	f     *Faults
	h     http.Handler
	clock *clock
	sleep *sleeper
	calls atomic.Int64 // API handler calls
}

func newHarness(t *testing.T, seed uint64, exempt ...func(*http.Request) bool) *harness {
	t.Helper()
	hs := &harness{clock: &clock{t: t0}, sleep: &sleeper{}}
	hs.f = New(Config{
		Envelope: testEnvelope,
		Now:      hs.clock.Now,
		Sleep:    hs.sleep.Sleep,
		Seed:     seed,
		OnFire: func(r *http.Request, id string) {
			if p, ok := r.Context().Value(firedKey{}).(*string); ok {
				*p = id
			}
		},
	})
	if len(exempt) > 0 {
		hs.f.cfg.Exempt = exempt[0]
	}
	hs.h = hs.f.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hs.calls.Add(1)
		_, _ = w.Write([]byte("api"))
	}))
	return hs
}

func (hs *harness) add(t *testing.T, js string) Rule {
	t.Helper()
	r, err := DecodeRule([]byte(js))
	require.NoError(t, err)
	v, err := hs.f.Add(r)
	require.NoError(t, err, js)
	return v.Rule
}

// serve runs one request; fired is the id OnFire reported ("" = none).
func (hs *harness) serve(method, target, auth string) (rec *httptest.ResponseRecorder, fired string) {
	req := httptest.NewRequest(method, target, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req = req.WithContext(context.WithValue(req.Context(), firedKey{}, &fired))
	rec = httptest.NewRecorder()
	hs.h.ServeHTTP(rec, req)
	return rec, fired
}
