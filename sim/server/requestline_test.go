package server_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim/journal"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// target returns prefix padded with 'a' to n bytes.
func target(prefix string, n int) string { return prefix + strings.Repeat("a", n-len(prefix)) }

// TestRequestTargetLimit: a target (path and query) longer than 8 KiB is
// answered 414 in the envelope of the interface it is for, and recorded
// in the journal with its path and query clipped; one of exactly 8 KiB is
// served.
func TestRequestTargetLimit(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	tooLong := func(n int) string {
		return fmt.Sprintf(`The request target (path and query) is %d bytes long; dubsim accepts at most 8192 bytes`, n)
	}
	tests := []struct {
		name, method, target, body string
		status                     int
		iface                      string
		want                       string // the answer's body, without its newline
	}{
		{"platform at the limit", "GET", target("/api/v1/projects/", 8192), "", 401, server.Platform, ""},
		{"platform past the limit", "GET", target("/api/v1/projects/", 8193), "", 414, server.Platform,
			`{"error":"URITooLongError","message":"` + tooLong(8193) + `"}`},
		{"query counts", "GET", target("/api/v1/balance?q=", 9000), "", 414, server.Platform,
			`{"error":"URITooLongError","message":"` + tooLong(9000) + `"}`},
		{"studio", "GET", target("/api/v1/artifacts/", 9000), "", 414, server.Studio,
			`{"error":"` + tooLong(9000) + `"}`},
		{"control", "POST", target("/_sim/clock/advance?x=", 9000), `{"seconds":1}`, 414, server.Control,
			`{"error":"URITooLongError","message":"` + tooLong(9000) + `"}`},
		{"shared create, unread body", "POST", target("/api/v1/projects?x=", 9000), `{"name":"x"}`, 414, server.Platform,
			`{"error":"URITooLongError","message":"` + tooLong(9000) + `"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Served in the test's goroutine: the journal has recorded
			// the request when ServeHTTP returns.
			req := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			req.Host = "127.0.0.1"
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			in.srv.Handler.ServeHTTP(rec, req)
			assert.Equal(t, tc.status, rec.Code, "%s", rec.Body)
			assert.Equal(t, tc.iface, rec.Header().Get(server.HeaderInterface))
			if tc.want != "" {
				assert.Equal(t, tc.want+"\n", rec.Body.String())
			}
		})
	}
	got := in.srv.Journal.Entries(journal.Filter{Status: "414"})
	require.Len(t, got, 5)
	for _, e := range got {
		assert.LessOrEqual(t, len(e.Path), 4<<10, "the path is kept clipped")
		assert.LessOrEqual(t, len(e.RawQuery), 4<<10, "the query is kept clipped")
	}
}

// failBody fails the test when it is read.
type failBody struct{ t *testing.T }

func (b failBody) Read([]byte) (int, error) {
	b.t.Error("the body of a request refused for its target was read")
	return 0, errors.New("read")
}

// TestDecideDoesNotReadTheBodyOfATooLongTarget: the shared address's
// create is decided by its body, except when its target is too long: it
// is refused unread, so it never takes body budget, and like any create
// whose body names neither interface it is the platform's, whatever
// --shared-create says of a body with a name.
func TestDecideDoesNotReadTheBodyOfATooLongTarget(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest("POST", target("/api/v1/projects?x=", 9000), failBody{t})
	r.ContentLength = -1
	assert.Equal(t, server.Route{Interface: server.Platform, By: server.ByDefault}, server.Decide(r, server.Rules{}))
	assert.Equal(t, server.Route{Interface: server.Platform, By: server.ByDefault}, server.Decide(r, server.Rules{SharedCreate: server.Studio}))
}

// TestAccessLogClipsALongPath: the access line of a refused long target
// shows the start of its path, not the whole of it.
func TestAccessLogClipsALongPath(t *testing.T) {
	t.Parallel()
	logs := &captureLog{}
	in := start(t, func(c *server.Config) { c.Log = slog.New(logs) })
	path := target("/api/v1/projects/", 100<<10)
	// Served in the test's goroutine: the line is written when
	// ServeHTTP returns.
	w := httptest.NewRecorder()
	in.srv.Handler.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	require.Equal(t, http.StatusRequestURITooLong, w.Code)
	rec := one(t, logs.find("request", func(r logRecord) bool { return r.attrs["status"] == int64(414) }))
	assert.Equal(t, path[:1<<10]+"…", rec.attrs["path"])
	assert.Equal(t, "The request target (path and query) is 102400 bytes long; dubsim accepts at most 8192 bytes", rec.attrs["reason"])
}
