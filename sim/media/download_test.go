package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/audio"
	"github.com/dubsim/dubsim/sim/probe"
)

// download runs r.Download into a buffer.
func download(t *testing.T, r *Resolver, ctx context.Context, url string, limit int64) ([]byte, int64, error) {
	t.Helper()
	var buf bytes.Buffer
	n, err := r.Download(ctx, url, &buf, limit)
	assert.Equal(t, int64(buf.Len()), n, "count returned vs bytes written")
	return buf.Bytes(), n, err
}

func TestMayFetchURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url   string
		allow []string
		want  bool
	}{
		{"http://127.0.0.1:1234/x.mp4", nil, true},
		{"https://localhost/x.mp4", nil, true},
		{"HTTP://[::1]:80/x.mp4", nil, true},
		{"https://cdn.example.com/x.mp4", []string{"*.example.com"}, true},
		{"https://media.partner.org/x.mp4", []string{"media.partner.org"}, true},
		{"https://example.com/x.mp4", nil, false},
		{"https://evil-example.com/x.mp4", []string{"*.example.com"}, false},
		{"http://127.0.0.1@example.com/x.mp4", nil, false},
		{"http://10.0.0.1/x.mp4", nil, false},
		{"ftp://localhost/x.mp4", nil, false},
		{"file:///etc/passwd", nil, false},
		{"file://localhost/etc/passwd", nil, false},
		{"//localhost/x.mp4", nil, false},
		{"localhost/x.mp4", nil, false},
		{"http:///x.mp4", nil, false},
		{"http://exa mple.com/%zz", nil, false},
		{"", nil, false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q %v", tc.url, tc.allow), func(t *testing.T) {
			t.Parallel()
			r := &Resolver{AllowHosts: tc.allow}
			assert.Equal(t, tc.want, r.MayFetchURL(tc.url))
		})
	}
}

func TestDownload(t *testing.T) {
	t.Parallel()
	sizes := []int{0, 1, 1000, 64 << 10, 3<<20 + 17}
	for _, size := range sizes {
		body := sourceBytes(size)
		for _, h := range []struct {
			name    string
			handler http.Handler
		}{
			{"with length", serveBytes(body)},
			{"chunked", serveIgnoringRange(body, false)},
		} {
			t.Run(fmt.Sprintf("%d bytes, %s", size, h.name), func(t *testing.T) {
				t.Parallel()
				srv, cnt := newServer(t, h.handler)
				r := &Resolver{Client: srv.Client()}
				got, n, err := download(t, r, context.Background(), srv.URL+"/a.mp4", int64(size))
				require.NoError(t, err)
				assert.Equal(t, int64(size), n)
				assert.True(t, bytes.Equal(body, got), "content differs")
				assert.Equal(t, int64(1), cnt.requests.Load(), "one plain GET")
			})
		}
	}
	t.Run("default client", func(t *testing.T) {
		t.Parallel()
		srv, _ := newServer(t, serveBytes([]byte("abc")))
		got, _, err := download(t, &Resolver{}, context.Background(), srv.URL+"/a", 10)
		require.NoError(t, err)
		assert.Equal(t, "abc", string(got))
	})
	t.Run("plain GET without Range", func(t *testing.T) {
		t.Parallel()
		var got http.Header
		srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = r.Header.Clone()
			assert.Equal(t, http.MethodGet, r.Method)
		}))
		_, _, err := download(t, &Resolver{Client: srv.Client()}, context.Background(), srv.URL+"/a", 10)
		require.NoError(t, err)
		assert.Empty(t, got.Get("Range"))
		assert.Contains(t, got.Get("User-Agent"), "dubsim")
	})
}

func TestDownloadStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code int
		want string // the reason after "failed: "
	}{
		{http.StatusNotFound, "HTTP 404 Not Found"},
		{http.StatusForbidden, "HTTP 403 Forbidden"},
		{http.StatusInternalServerError, "HTTP 500 Internal Server Error"},
		{http.StatusNotModified, "HTTP 304 Not Modified"},
		{599, "HTTP 599"}, // no standard text
	}
	for _, tc := range tests {
		t.Run(strconv.Itoa(tc.code), func(t *testing.T) {
			t.Parallel()
			srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.code)
				_, _ = io.WriteString(w, "error page")
			}))
			url := srv.URL + "/media/x.mp4?sig=abc"
			got, _, err := download(t, &Resolver{Client: srv.Client()}, context.Background(), url, 1<<20)
			require.Error(t, err)
			assert.EqualError(t, err, fmt.Sprintf(MsgDownloadFailed, url, tc.want))
			assert.Empty(t, got, "an error page is not written")
		})
	}
	t.Run("exact message", func(t *testing.T) {
		t.Parallel()
		srv, _ := newServer(t, http.NotFoundHandler())
		_, _, err := download(t, &Resolver{Client: srv.Client()}, context.Background(), srv.URL+"/x.mp4", 10)
		assert.EqualError(t, err, "download of "+srv.URL+"/x.mp4 failed: HTTP 404 Not Found")
	})
	t.Run("2xx other than 200", func(t *testing.T) {
		t.Parallel()
		srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusAccepted)
			_, _ = io.WriteString(w, "body")
		}))
		got, _, err := download(t, &Resolver{Client: srv.Client()}, context.Background(), srv.URL+"/x", 10)
		require.NoError(t, err)
		assert.Equal(t, "body", string(got))
	})
}

func TestDownloadLimit(t *testing.T) {
	t.Parallel()
	const size = 300 << 10
	body := sourceBytes(size)
	tests := []struct {
		name    string
		limit   int64
		wantErr bool
	}{
		{"under", size + 1, false},
		{"exactly at", size, false},
		{"one over", size - 1, true},
		{"far over", 1000, true},
		{"zero", 0, true},
	}
	for _, tc := range tests {
		for _, withLength := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, length sent %t", tc.name, withLength), func(t *testing.T) {
				t.Parallel()
				srv, _ := newServer(t, serveIgnoringRange(body, withLength))
				url := srv.URL + "/big.mp4"
				got, n, err := download(t, &Resolver{Client: srv.Client()}, context.Background(), url, tc.limit)
				if !tc.wantErr {
					require.NoError(t, err)
					assert.Equal(t, int64(size), n)
					assert.True(t, bytes.Equal(body, got))
					return
				}
				require.ErrorIs(t, err, ErrTooLarge)
				assert.EqualError(t, err, fmt.Sprintf(MsgDownloadFailed, url, fmt.Sprintf("the file is larger than the limit of %d bytes", tc.limit)))
				assert.LessOrEqual(t, n, tc.limit, "w gets at most limit bytes")
				if withLength {
					assert.Zero(t, n, "an announced length over the limit is refused before the body is read")
				}
			})
		}
	}
	t.Run("empty body, limit 0", func(t *testing.T) {
		t.Parallel()
		srv, _ := newServer(t, serveIgnoringRange(nil, false))
		_, n, err := download(t, &Resolver{Client: srv.Client()}, context.Background(), srv.URL+"/e", 0)
		require.NoError(t, err)
		assert.Zero(t, n)
	})
	t.Run("negative limit", func(t *testing.T) {
		t.Parallel()
		srv, cnt := newServer(t, serveBytes(body))
		_, _, err := download(t, &Resolver{Client: srv.Client()}, context.Background(), srv.URL+"/e", -1)
		require.Error(t, err)
		assert.Zero(t, cnt.requests.Load())
	})
}

// URLs dubsim may not contact are refused before any request.
func TestDownloadRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url    string
		reason string
	}{
		{"https://example.com/x.mp4", "example.com is not a host dubsim may contact (loopback, or allowed with --fetch-hosts)"},
		{"http://10.0.0.1:8080/x.mp4", "10.0.0.1 is not a host dubsim may contact (loopback, or allowed with --fetch-hosts)"},
		{"http://127.0.0.1@example.com/x.mp4", "example.com is not a host dubsim may contact (loopback, or allowed with --fetch-hosts)"},
		{"ftp://localhost/x.mp4", "only http and https URLs are fetched"},
		{"file:///etc/passwd", "only http and https URLs are fetched"},
		{"http:///x.mp4", "the URL has no host"},
		{"http://exa mple.com/%zz", "not a valid URL"},
		{"", "only http and https URLs are fetched"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q", tc.url), func(t *testing.T) {
			t.Parallel()
			client, rt := noContactClient(t)
			r := &Resolver{Client: client, AllowHosts: []string{"*.partner.org"}}
			_, n, err := download(t, r, context.Background(), tc.url, 1<<20)
			assert.EqualError(t, err, fmt.Sprintf(MsgDownloadRefused, tc.url, tc.reason))
			assert.Zero(t, n)
			assert.Empty(t, rt.hosts())
		})
	}
}

func TestDownloadRedirects(t *testing.T) {
	t.Parallel()
	body := sourceBytes(5000)
	mux := http.NewServeMux()
	mux.Handle("/a.mp4", serveBytes(body))
	redirect := func(from, to string) { mux.Handle(from, http.RedirectHandler(to, http.StatusFound)) }
	redirect("/to-local", "/a.mp4")
	redirect("/to-remote", "http://evil.test/a.mp4")
	redirect("/to-allowed", "https://cdn.example.com/a.mp4")
	redirect("/loop", "/loop")
	srv, _ := newServer(t, mux)

	tests := []struct {
		name    string
		path    string
		wantErr string // the reason of the failure; "" for success
	}{
		{name: "to the same loopback server", path: "/to-local"},
		{name: "to an allowed host", path: "/to-allowed"},
		{name: "to a host dubsim may not contact", path: "/to-remote", wantErr: "redirect to evil.test, a host dubsim may not contact (see --fetch-hosts)"},
		{name: "endless loop", path: "/loop", wantErr: "too many redirects"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rt := &routeTransport{t: t, loopback: srv.Client().Transport,
				mem: map[string]http.Handler{"cdn.example.com": serveBytes(body)}}
			r := &Resolver{AllowHosts: []string{"*.example.com"}, Client: &http.Client{Transport: rt}}
			url := srv.URL + tc.path
			got, _, err := download(t, r, context.Background(), url, 1<<20)
			if tc.wantErr != "" {
				assert.EqualError(t, err, fmt.Sprintf(MsgDownloadFailed, url, tc.wantErr))
				assert.Empty(t, got)
				for _, h := range rt.hosts() {
					assert.True(t, IsLoopback(strings.Split(h, ":")[0]), "contacted %s", h)
				}
				return
			}
			require.NoError(t, err)
			assert.True(t, bytes.Equal(body, got))
		})
	}
}

// stallingServer sends head (headers, some bytes), then blocks until the
// request ends or the test does (after a watchdog delay, should the request
// never end: the test then fails quickly instead of hanging).
func stallingServer(t *testing.T, head func(w http.ResponseWriter)) string {
	t.Helper()
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	watchdog := time.AfterFunc(watchdogDelay, unblock)
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		head(w)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { watchdog.Stop(); unblock() }) // runs before srv.Close
	return srv.URL
}

// sendPart sends headers announcing 1 MB and the first 100 bytes.
func sendPart(w http.ResponseWriter) {
	w.Header().Set("Content-Length", "1000000")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(sourceBytes(100))
	w.(http.Flusher).Flush()
}

// cancelWriter cancels a context on its first write.
type cancelWriter struct {
	bytes.Buffer
	cancel context.CancelFunc
}

func (c *cancelWriter) Write(p []byte) (int, error) {
	c.cancel()
	return c.Buffer.Write(p)
}

func TestDownloadContext(t *testing.T) {
	t.Parallel()
	t.Run("cancelled mid-body", func(t *testing.T) {
		t.Parallel()
		url := stallingServer(t, sendPart) + "/slow.mp4"
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w := &cancelWriter{cancel: cancel}
		start := time.Now()
		n, err := (&Resolver{}).Download(ctx, url, w, 1<<30)
		require.ErrorIs(t, err, context.Canceled)
		assert.EqualError(t, err, fmt.Sprintf(MsgDownloadFailed, url, "context canceled"))
		assert.Equal(t, int64(100), n)
		assert.Less(t, time.Since(start), watchdogDelay)
	})
	t.Run("deadline before headers", func(t *testing.T) {
		t.Parallel()
		url := stallingServer(t, func(http.ResponseWriter) {}) + "/slow.mp4"
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, _, err := download(t, &Resolver{}, ctx, url, 1<<30)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.EqualError(t, err, fmt.Sprintf(MsgDownloadFailed, url, "context deadline exceeded"))
	})
	t.Run("already cancelled", func(t *testing.T) {
		t.Parallel()
		srv, _ := newServer(t, serveBytes([]byte("x")))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, _, err := download(t, &Resolver{Client: srv.Client()}, ctx, srv.URL+"/x", 10)
		require.ErrorIs(t, err, context.Canceled)
	})
}

func TestDownloadStalls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		head func(w http.ResponseWriter)
	}{
		{"no response headers", func(http.ResponseWriter) {}},
		{"body stalls", sendPart},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := stallingServer(t, tc.head) + "/slow.mp4"
			r := &Resolver{stall: 150 * time.Millisecond}
			start := time.Now()
			_, _, err := download(t, r, context.Background(), url, 1<<30)
			assert.EqualError(t, err, fmt.Sprintf(MsgDownloadFailed, url, "no data received for 150ms"))
			assert.Less(t, time.Since(start), watchdogDelay)
		})
	}
}

func TestDownloadTruncated(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		_, _ = w.Write(sourceBytes(100))
	}))
	url := srv.URL + "/cut.mp4"
	_, n, err := download(t, &Resolver{Client: srv.Client()}, context.Background(), url, 1<<20)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.EqualError(t, err, fmt.Sprintf(MsgDownloadFailed, url, "the connection closed after 100 of 1000 bytes"))
	assert.Equal(t, int64(100), n)
}

// failWriter accepts n bytes, then fails.
type failWriter struct {
	n   int
	err error
}

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, f.err
	}
	f.n -= len(p)
	return len(p), nil
}

func TestDownloadWriterFails(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, serveBytes(sourceBytes(200<<10)))
	url := srv.URL + "/a.mp4"
	diskFull := errors.New("no space left on device")
	n, err := (&Resolver{Client: srv.Client()}).Download(context.Background(), url, &failWriter{n: 50000, err: diskFull}, 1<<20)
	require.ErrorIs(t, err, diskFull)
	assert.EqualError(t, err, fmt.Sprintf(MsgDownloadFailed, url, "storing the file: no space left on device"))
	assert.Equal(t, int64(50000), n)
}

func TestInspect(t *testing.T) {
	t.Parallel()
	wavMedia := sim.MediaFormat{AudioCodec: "pcm_s16le", SampleRate: 22050, Channels: 1}
	tests := []struct {
		name       string
		data       []byte
		size       int64 // 0: len(data)
		wantFormat string
		wantDur    time.Duration
		wantMedia  sim.MediaFormat
		wantMsg    string // non-empty: the error's message
		wantIs     error
	}{
		{name: "WAV", data: wavBytes(t, smallWAVDuration), wantFormat: probe.FormatWAV, wantDur: smallWAVDuration, wantMedia: wavMedia},
		{name: "WAV, size unknown", data: wavBytes(t, smallWAVDuration), size: -1, wantFormat: probe.FormatWAV, wantDur: smallWAVDuration, wantMedia: wavMedia},
		// One video sample spans the movie: 1000/7500 fps.
		{name: "MOV", data: movBytes(t, smallMOVDuration), wantFormat: probe.FormatMP4, wantDur: smallMOVDuration,
			wantMedia: sim.MediaFormat{VideoCodec: "mjpeg", Width: 320, Height: 180, FrameRate: 133, AudioCodec: "pcm_s16le", SampleRate: 22050, Channels: 1}},
		{name: "HTML page", data: []byte("<!DOCTYPE html><html><body>player</body></html>"), wantMsg: MsgUnknownFormat, wantIs: probe.ErrUnknownFormat},
		{name: "empty", data: nil, wantMsg: MsgUnknownFormat, wantIs: probe.ErrUnknownFormat},
		{name: "WAV header without samples", data: audio.WAVHeader(22050, 1, 16, 0), wantFormat: probe.FormatWAV, wantMsg: MsgNoDuration, wantIs: probe.ErrNoDuration},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			size := tc.size
			if size == 0 {
				size = int64(len(tc.data))
			}
			format, d, mf, err := Inspect(bytes.NewReader(tc.data), size)
			assert.Equal(t, tc.wantFormat, format)
			assert.Equal(t, tc.wantMedia, mf)
			if tc.wantMsg != "" {
				assert.EqualError(t, err, tc.wantMsg)
				assert.ErrorIs(t, err, tc.wantIs)
				assert.Zero(t, d)
				return
			}
			require.NoError(t, err)
			assertDuration(t, tc.wantDur, d)
		})
	}
}

// Probe reports Inspect's messages for fetched media.
func TestProbeUsesInspectMessages(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, serveBytes([]byte("<html></html>")))
	url := srv.URL + "/page"
	_, err := (&Resolver{Client: srv.Client()}).Probe(context.Background(), url)
	assert.Equal(t, fmt.Sprintf(sim.MsgVideoUnreadable, url, MsgUnknownFormat), requireVideoInfo(t, err))
}

func TestRule(t *testing.T) {
	t.Parallel()
	r := &Resolver{Rules: rules(
		sim.MediaRule{Pattern: "*/other/*", DurationSeconds: 1},
		sim.MediaRule{Pattern: "*/talks/*", Refuse: "private"},
		sim.MediaRule{Pattern: "*", DurationSeconds: 5},
	)}
	rule, ok := r.Rule("https://videos.example.com/talks/a.mp4")
	require.True(t, ok)
	assert.Equal(t, "*/talks/*", rule.Pattern, "first match")
	rule, ok = r.Rule("https://videos.example.com/x.mp4")
	require.True(t, ok)
	assert.Equal(t, "*", rule.Pattern)

	r = &Resolver{Rules: rules(sim.MediaRule{Pattern: "*.webm", Refuse: "no"})}
	_, ok = r.Rule("https://videos.example.com/x.mp4")
	assert.False(t, ok)
	_, ok = (&Resolver{}).Rule("https://videos.example.com/x.mp4")
	assert.False(t, ok, "no rules")
}

// Derived is the duration Probe gives URLs it neither matches nor fetches.
func TestDerivedMatchesProbe(t *testing.T) {
	t.Parallel()
	client, _ := noContactClient(t)
	r := &Resolver{IDs: sim.NewIDs(9), Client: client}
	for i := range 20 {
		url := fmt.Sprintf("https://cdn.example.com/%d.mp4", i)
		info, err := r.Probe(context.Background(), url)
		require.NoError(t, err)
		require.Equal(t, sim.OriginDerived, info.Origin)
		assert.Equal(t, info.Duration, r.Derived(url), url)
		assert.Equal(t, r.Derived(url), r.Derived(url), "deterministic")
	}
}

// With GenericErrors, a failed download names no reason (fidelity HX3): an
// HTTP status and a closed port read alike; the cause stays wrapped and is
// logged. A refusal still says why: nothing was contacted.
func TestDownloadGenericErrors(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, http.NotFoundHandler())
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL + "/x.mp4"
	closed.Close()
	var logged strings.Builder
	r := &Resolver{Client: srv.Client(), GenericErrors: true, Log: slog.New(slog.NewTextHandler(&logged, nil))}
	for _, url := range []string{srv.URL + "/x.mp4", closedURL} {
		_, _, err := download(t, r, context.Background(), url, 10)
		assert.EqualError(t, err, fmt.Sprintf(sim.MsgDownloadUnreadable, url))
	}
	assert.Contains(t, logged.String(), "HTTP 404 Not Found")
	assert.Contains(t, logged.String(), "refused")

	_, _, err := download(t, r, context.Background(), "https://example.com/x.mp4", 10)
	assert.EqualError(t, err, fmt.Sprintf(MsgDownloadRefused, "https://example.com/x.mp4", "example.com is not a host dubsim may contact (loopback, or allowed with --fetch-hosts)"))
}
