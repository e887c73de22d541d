package faults

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrorAndRateLimit(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		action     string
		status     int
		retryAfter string // "" = no header
		body       string
	}{
		{"error with name and message", `{"type":"error","status":503,"error":"ServiceUnavailableError","message":"Try again later"}`,
			503, "", "503|ServiceUnavailableError|Try again later|/api/v1/balance"},
		{"error defaults", `{"type":"error","status":404}`,
			404, "", "404|NotFoundError|Not Found (injected by dubsim fault rule flt_1)|/api/v1/balance"},
		{"error default for a status without text", `{"type":"error","status":599}`,
			599, "", "599|ServerError|Error 599 (injected by dubsim fault rule flt_1)|/api/v1/balance"},
		{"error name without message", `{"type":"error","status":400,"error":"VideoInfoError"}`,
			400, "", "400|VideoInfoError|Bad Request (injected by dubsim fault rule flt_1)|/api/v1/balance"},
		{"rate limit defaults", `{"type":"rate_limit","retry_after_seconds":5}`,
			429, "5", "429|RateLimitError|Rate limit exceeded; retry after 5 seconds (injected by dubsim fault rule flt_1)|/api/v1/balance"},
		{"rate limit with retry-after 0", `{"type":"rate_limit"}`,
			429, "0", "429|RateLimitError|Rate limit exceeded; retry after 0 seconds (injected by dubsim fault rule flt_1)|/api/v1/balance"},
		{"rate limit with name and message", `{"type":"rate_limit","retry_after_seconds":60,"error":"TooManyRequests","message":"slow down"}`,
			429, "60", "429|TooManyRequests|slow down|/api/v1/balance"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hs := newHarness(t, 1)
			hs.add(t, `{"action":`+tc.action+`}`)
			rec, fired := hs.serve("GET", "/api/v1/balance", "Bearer k")
			assert.Equal(t, "flt_1", fired)
			assert.Equal(t, tc.status, rec.Code)
			assert.Equal(t, tc.body, rec.Body.String())
			assert.Equal(t, "text/x-envelope", rec.Header().Get("Content-Type"))
			assert.Equal(t, strconv.Itoa(len(tc.body)), rec.Header().Get("Content-Length"))
			assert.Equal(t, tc.retryAfter, rec.Header().Get("Retry-After"))
			assert.EqualValues(t, 0, hs.calls.Load(), "the API is not called")
		})
	}
}

func TestDefaultEnvelope(t *testing.T) {
	t.Parallel()
	f := New(Config{})
	_, err := f.Add(Rule{Action: Action{Type: ActionError, Status: 502, Error: "BadGateway", Message: `say "hi"`}})
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	f.Middleware(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	assert.Equal(t, 502, rec.Code)
	assert.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))
	assert.Equal(t, `{"error":"BadGateway","message":"say \"hi\""}`+"\n", rec.Body.String())
}

// Requests that Config.Exempt names (the server names the control API's)
// are never faulted, and the rules' hit counts do not move.
func TestExemptRequestsAreNeverFaulted(t *testing.T) {
	t.Parallel()
	const (
		none = iota
		dropped
		unavailable
	)
	cases := []struct {
		name, target string
		want         int
	}{
		{"exempt", "/exempt", none},
		{"exempt, deeper", "/exempt/clock/advance", none},
		{"not exempt, matched by the first rule", "/exempted", dropped},
		{"not exempt", "/api/v1/balance", unavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hs := newHarness(t, 1, func(r *http.Request) bool {
				return r.URL.Path == "/exempt" || strings.HasPrefix(r.URL.Path, "/exempt/")
			})
			// Rules that match the exempt paths, and everything.
			hs.add(t, `{"path":"/exempt*","action":{"type":"drop"}}`)
			hs.add(t, `{"action":{"type":"error","status":503}}`)
			switch tc.want {
			case dropped:
				assert.PanicsWithValue(t, http.ErrAbortHandler, func() { hs.serve("GET", tc.target, "") })
			case unavailable:
				rec, fired := hs.serve("GET", tc.target, "")
				assert.Equal(t, "flt_2", fired)
				assert.Equal(t, 503, rec.Code)
			default:
				rec, fired := hs.serve("GET", tc.target, "")
				assert.Empty(t, fired)
				assert.Equal(t, 200, rec.Code)
				assert.EqualValues(t, 1, hs.calls.Load())
				for _, v := range hs.f.List() {
					assert.Zero(t, v.Hits, v.ID)
				}
			}
		})
	}
}

func TestDropRecorder(t *testing.T) {
	t.Parallel()
	hs := newHarness(t, 1)
	hs.add(t, `{"count":1,"action":{"type":"drop"}}`)
	var fired string
	assert.PanicsWithValue(t, http.ErrAbortHandler, func() { _, fired = hs.serve("GET", "/x", "") })
	assert.EqualValues(t, 0, hs.calls.Load())
	rec, fired := hs.serve("GET", "/x", "")
	assert.Empty(t, fired, "count 1 is used up")
	assert.Equal(t, "api", rec.Body.String())
}

// server serves api behind the middleware of a harness on a real listener.
// The client opens a new connection per request, so a failed request is
// never retried on another one.
func server(t *testing.T, hs *harness, api http.HandlerFunc) (*httptest.Server, *http.Client) {
	t.Helper()
	srv := httptest.NewServer(hs.f.Middleware(api))
	t.Cleanup(srv.Close)
	return srv, &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
}

func TestDropOverTheNetwork(t *testing.T) {
	t.Parallel()
	hs := newHarness(t, 1)
	var fired []string
	var mu sync.Mutex
	hs.f.cfg.OnFire = func(_ *http.Request, id string) { mu.Lock(); fired = append(fired, id); mu.Unlock() }
	var calls atomic.Int64
	srv, client := server(t, hs, func(w http.ResponseWriter, r *http.Request) { calls.Add(1); _, _ = w.Write([]byte("api")) })
	hs.add(t, `{"method":"POST","count":1,"action":{"type":"drop"}}`)

	resp, err := client.Post(srv.URL+"/api/v1/projects", "application/json", bytes.NewBufferString(`{}`))
	if resp != nil {
		resp.Body.Close()
	}
	require.Error(t, err, "the connection is closed without an answer")
	assert.ErrorIs(t, err, io.EOF)
	assert.Zero(t, calls.Load())
	mu.Lock()
	assert.Equal(t, []string{"flt_1"}, fired)
	mu.Unlock()

	resp, err = client.Post(srv.URL+"/api/v1/projects", "application/json", bytes.NewBufferString(`{}`))
	require.NoError(t, err, "the rule is used up")
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, "api", string(body))
}

func TestTruncateOverTheNetwork(t *testing.T) {
	t.Parallel()
	full := bytes.Repeat([]byte("0123456789"), 1000) // 10,000 bytes
	cases := []struct {
		name          string
		bytes         int
		setLength     bool // the API sets Content-Length (streamed) or not (buffered)
		chunk         int  // the API writes in chunks of this size
		bufLimit      int  // 0 = default
		wantLength    int64
		wantBody      int // bytes that arrive
		wantEOF       bool
		wantWriteFail bool // the API's writes past the cut fail
	}{
		{"buffered body", 100, false, 1000, 0, 10000, 100, true, false},
		{"buffered body cut at 0", 0, false, 1000, 0, 10000, 0, true, false},
		{"streamed body", 2500, true, 1000, 0, 10000, 2500, true, true},
		{"streamed body cut inside the first write", 10, true, 10000, 0, 10000, 10, true, true},
		{"body too long to buffer goes chunked", 300, false, 1000, 2048, -1, 300, true, true},
		{"body shorter than the cut arrives whole", 20000, false, 1000, 0, 10000, 10000, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hs := newHarness(t, 1)
			if tc.bufLimit > 0 {
				hs.f.truncBuffer = tc.bufLimit
			}
			handlerErr := make(chan error, 1) // the first write error the API saw
			srv, client := server(t, hs, func(w http.ResponseWriter, r *http.Request) {
				var err error
				defer func() { handlerErr <- err }()
				if tc.setLength {
					w.Header().Set("Content-Length", strconv.Itoa(len(full)))
				}
				w.Header().Set("X-Api", "yes")
				w.WriteHeader(http.StatusOK)
				for off := 0; off < len(full); off += tc.chunk {
					if _, err = w.Write(full[off:min(off+tc.chunk, len(full))]); err != nil {
						return
					}
				}
			})
			hs.add(t, `{"path":"/files/*","action":{"type":"truncate","bytes":`+strconv.Itoa(tc.bytes)+`}}`)

			resp, err := client.Get(srv.URL + "/files/projects/1/0/dubbed_audio.wav")
			require.NoError(t, err, "the headers arrive")
			defer resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, "yes", resp.Header.Get("X-Api"))
			assert.Equal(t, tc.wantLength, resp.ContentLength)
			body, err := io.ReadAll(resp.Body)
			if tc.wantEOF {
				assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, full[:tc.wantBody], body, "the first bytes arrive, and only they")
			werr := <-handlerErr
			assert.Equal(t, tc.wantWriteFail, errors.Is(werr, errTruncated), "API write error: %v", werr)
		})
	}
}

func TestTruncateEmptyHandler(t *testing.T) {
	t.Parallel()
	hs := newHarness(t, 1)
	srv, client := server(t, hs, func(w http.ResponseWriter, r *http.Request) {})
	hs.add(t, `{"action":{"type":"truncate","bytes":5}}`)
	resp, err := client.Get(srv.URL + "/x")
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.EqualValues(t, 0, resp.ContentLength)
	body, err := io.ReadAll(resp.Body)
	assert.NoError(t, err)
	assert.Empty(t, body)
}
