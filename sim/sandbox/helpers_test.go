package sandbox_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/require"
)

// caller sends requests to a test's dubsim with its own HTTP client and
// reports failures to its own require.TestingT: env.do for the test's
// goroutine, goT for the other goroutines of a test.
type caller struct {
	t   require.TestingT
	hc  *http.Client
	url string // the server's root, http://127.0.0.1:port
}

// do sends a request and returns the status, the headers and the body. A
// path starting with http is a whole URL; a /_sim path gets the control
// header, a body the JSON content type.
func (c caller) do(method, path, key, body string) (int, http.Header, []byte) {
	u := path
	if !strings.HasPrefix(path, "http") {
		u = c.url + path
	}
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	require.NoError(c.t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if strings.Contains(path, "/_sim") {
		req.Header.Set(server.HeaderControl, "1")
	}
	resp, err := c.hc.Do(req)
	require.NoError(c.t, err, "%s %s", method, path)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return resp.StatusCode, resp.Header, raw
}

// json sends a request and decodes its JSON answer (nil when empty).
func (c caller) json(method, path, key, body string) (int, map[string]any) {
	st, _, raw := c.do(method, path, key, body)
	var m map[string]any
	if len(raw) > 0 {
		require.NoError(c.t, json.Unmarshal(raw, &m), "%s %s: %s", method, path, raw)
	}
	return st, m
}

// goT is a require.TestingT for a goroutine a test starts: a failure is
// reported on the test, prefixed with the goroutine's name, and ends the
// goroutine (its deferred calls run), never the test's own goroutine.
type goT struct {
	t    *testing.T
	name string
}

func (g goT) Errorf(format string, args ...any) {
	g.t.Errorf("%s: %s", g.name, fmt.Sprintf(format, args...))
}

func (g goT) FailNow() {
	g.t.Fail()
	runtime.Goexit()
}
