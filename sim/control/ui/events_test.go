package ui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim/control/ui"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// eventsServer serves one UI's event stream, its process bound shared.
func eventsServer(t *testing.T, process *httpx.Gate) string {
	t.Helper()
	u := ui.New(ui.Config{Source: &source{}, Track: track, Streams: process})
	ctl := chi.NewRouter()
	for _, p := range ui.ControlPaths {
		ctl.Handle(p, u.ControlRoutes())
	}
	r := chi.NewRouter()
	r.Mount("/_sim", ctl)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv.URL
}

// openStream opens an event stream; an open one is held until cancel or
// the test's end.
func openStream(t *testing.T, url string) (status int, body map[string]any, retry string, closeIt func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/_sim/events", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req) // returns with the headers
	require.NoError(t, err)
	if resp.StatusCode == http.StatusOK {
		return resp.StatusCode, nil, "", func() { cancel(); _ = resp.Body.Close() }
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &body), "%s", raw)
	return resp.StatusCode, body, resp.Header.Get("Retry-After"), cancel
}

// TestEventStreamShares: each UI (a tenant) holds at most MaxEventStreams
// streams, answered 429 past them; all UIs of a process together hold at
// most the process bound's places, answered 503 past them.
func TestEventStreamShares(t *testing.T) {
	t.Parallel()
	const bound = ui.MaxEventStreams + 4
	process := httpx.NewGate(bound)
	a, b := eventsServer(t, process), eventsServer(t, process)

	var aStreams []func()
	for range ui.MaxEventStreams {
		st, _, _, cancel := openStream(t, a)
		require.Equal(t, http.StatusOK, st)
		aStreams = append(aStreams, cancel)
	}
	st, body, retry, _ := openStream(t, a)
	assert.Equal(t, http.StatusTooManyRequests, st)
	assert.Equal(t, "TooManyRequestsError", body["error"])
	assert.Equal(t, "Too many event streams open on this simulator (at most 16); retry when one closes", body["message"])
	assert.Equal(t, "2", retry)

	for range bound - ui.MaxEventStreams {
		st, _, _, _ := openStream(t, b)
		require.Equal(t, http.StatusOK, st, "b has its own share")
	}
	st, body, retry, _ = openStream(t, b)
	assert.Equal(t, http.StatusServiceUnavailable, st)
	assert.Equal(t, "ServiceUnavailableError", body["error"])
	assert.Equal(t, "Too many event streams open in this process (at most 20 across its simulators); retry when one closes", body["message"])
	assert.Equal(t, "2", retry)

	// A stream of a that closes gives its place to b. The server sees the
	// close when the stream's next write fails: wait for the place.
	aStreams[0]()
	require.Eventually(t, func() bool {
		st, _, _, _ := openStream(t, b)
		return st == http.StatusOK
	}, 10*time.Second, 10*time.Millisecond)
}
