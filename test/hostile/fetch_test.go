package hostile

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fetchCreate creates a platform project whose source video is url and
// returns the status and body of the answer.
func fetchCreate(t *testing.T, base, url string) (int, string) {
	t.Helper()
	return call(t, http.MethodPost, base+"/api/v1/projects", "dubsim-pro",
		`{"source_lang":"en","target_lang":"fr-FR","source_video_url":"`+url+`"}`)
}

// fetchClosedPort returns the address of a port nothing listens on.
func fetchClosedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// Loopback fetching must not be a port scanner: a creation's error that
// said whether the port was closed ("connection refused"), which HTTP
// status it answered and which content type it served would map the
// machine. Every failed probe gets the same words whatever the reason;
// only the URL it quotes differs.
func TestFetchErrorsDoNotMapPorts(t *testing.T) {
	t.Parallel()
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>an admin page</body></html>"))
	}))
	t.Cleanup(html.Close)
	p := start(t)
	targets := map[string]string{
		"closed port":  "http://" + fetchClosedPort(t) + "/v.mp4",
		"HTTP 404":     notFound.URL + "/v.mp4",
		"an HTML page": html.URL + "/v.mp4",
	}
	answers := map[string]string{}
	for what, url := range targets {
		st, body := fetchCreate(t, p.Base, url)
		require.Equal(t, http.StatusBadRequest, st, "%s: %s", what, body)
		answers[what] = strings.ReplaceAll(body, url, "URL")
		for _, leak := range []string{"refused", "404", "Not Found", "text/html", "dial", "tcp"} {
			// The URL (its port may hold "404") is taken out first.
			assert.NotContains(t, answers[what], leak, "%s: the answer tells why", what)
		}
	}
	t.Logf("answers: %v", answers)
	assert.Equal(t, answers["closed port"], answers["HTTP 404"], "a closed port and a 404 must read the same")
	assert.Equal(t, answers["closed port"], answers["an HTML page"], "a closed port and an HTML page must read the same")
	require.True(t, p.Alive())
}

// --fetch-loopback=false stops dubsim from contacting this machine at all:
// a loopback source URL gets a derived duration, like any host not allowed,
// and the service behind it sees no request. By default *.localhost is
// fetched from 127.0.0.1 without asking DNS (RFC 6761).
func TestLoopbackFetchingCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	var mu sync.Mutex
	var hosts []string
	media := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		mu.Lock()
		hosts = append(hosts, r.Host)
		mu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(media.Close)
	port := media.URL[strings.LastIndex(media.URL, ":")+1:]

	off := start(t, "--fetch-loopback=false")
	for _, url := range []string{media.URL + "/v.mp4", "http://localhost:" + port + "/v.mp4", "http://media.localhost:" + port + "/v.mp4"} {
		st, body := fetchCreate(t, off.Base, url)
		assert.Equal(t, http.StatusOK, st, "%s: %s", url, body)
	}
	assert.Zero(t, hits.Load(), "requests that reached the loopback service with --fetch-loopback=false")

	on := start(t)
	st, body := fetchCreate(t, on.Base, "http://media.localhost:"+port+"/v.mp4")
	assert.Equal(t, http.StatusBadRequest, st, "%s", body)
	assert.Equal(t, int64(1), hits.Load(), "requests that reached the loopback service by default")
	mu.Lock()
	assert.Equal(t, []string{"media.localhost:" + port}, hosts, "the Host the probe sent")
	mu.Unlock()
	require.True(t, off.Alive())
	require.True(t, on.Alive())
}
