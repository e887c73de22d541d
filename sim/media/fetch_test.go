package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/audio"
)

func TestProbeFetchesMedia(t *testing.T) {
	t.Parallel()
	wav := wavBytes(t, smallWAVDuration)
	mov := movBytes(t, smallMOVDuration)
	require.Greater(t, len(wav), blockSize, "the WAV should span several blocks")

	tests := []struct {
		name    string
		handler http.Handler
		want    time.Duration
		// maxRequests bounds the requests the server receives (0: no bound).
		maxRequests int64
	}{
		{
			name:    "WAV with Range",
			handler: serveReader(func() io.ReadSeeker { return audio.NewWAVReader(wavTrack(smallWAVDuration)) }),
			want:    smallWAVDuration,
		},
		{
			name:    "MOV with Range",
			handler: serveReader(func() io.ReadSeeker { return audio.NewMOVReader(wavTrack(smallMOVDuration)) }),
			want:    smallMOVDuration,
		},
		{
			name:        "WAV, server ignores Range",
			handler:     serveIgnoringRange(wav, true),
			want:        smallWAVDuration,
			maxRequests: 1,
		},
		{
			name:        "WAV, server ignores Range and sends no length",
			handler:     serveIgnoringRange(wav, false),
			want:        smallWAVDuration,
			maxRequests: 1,
		},
		{
			name:        "MOV, server ignores Range",
			handler:     serveIgnoringRange(mov, true),
			want:        smallMOVDuration,
			maxRequests: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, cnt := newServer(t, tc.handler)
			r := &Resolver{IDs: sim.NewIDs(1), Client: srv.Client()}
			info, err := r.Probe(context.Background(), srv.URL+"/media/file")
			require.NoError(t, err)
			assert.Equal(t, sim.OriginMedia, info.Origin)
			assert.Empty(t, info.Fail)
			assertDuration(t, tc.want, info.Duration)
			assert.NotZero(t, cnt.requests.Load())
			if tc.maxRequests > 0 {
				assert.LessOrEqual(t, cnt.requests.Load(), tc.maxRequests)
			}
		})
	}
}

// Probing long media reads the header only, not the payload.
func TestProbeLongMediaTransfersLittle(t *testing.T) {
	t.Parallel()
	const long = 10 * time.Minute
	track := wavTrack(long)
	// A movie that is not "fast start": the header follows the payload, so
	// the probe must skip the payload by size and read the end of the file.
	moovLast := moveAtomLast(t, movBytes(t, long), "moov")
	movSize, err := audio.NewMOVReader(track).Seek(0, io.SeekEnd)
	require.NoError(t, err)
	tests := []struct {
		name      string
		size      int64
		newReader func() io.ReadSeeker
	}{
		{"WAV", audio.WAVSize(track), func() io.ReadSeeker { return audio.NewWAVReader(track) }},
		{"MOV", movSize, func() io.ReadSeeker { return audio.NewMOVReader(track) }},
		{"MOV with moov after mdat", int64(len(moovLast)), func() io.ReadSeeker { return bytes.NewReader(moovLast) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Greater(t, tc.size, int64(20<<20), "the file should be tens of MB")
			srv, cnt := newServer(t, serveReader(tc.newReader))
			r := &Resolver{IDs: sim.NewIDs(1), Client: srv.Client()}
			info, err := r.Probe(context.Background(), srv.URL+"/long")
			require.NoError(t, err)
			assert.Equal(t, sim.OriginMedia, info.Origin)
			assertDuration(t, long, info.Duration)
			assert.Less(t, cnt.bytes.Load(), int64(1<<20), "bytes sent by the server for a %d-byte file", tc.size)
		})
	}
	// Without Range, a header beyond the prefix kept cannot be reached: a
	// refusal, not a hang or a wrong duration.
	t.Run("MOV with moov after mdat, server ignores Range", func(t *testing.T) {
		t.Parallel()
		srv, _ := newServer(t, serveIgnoringRange(moovLast, true))
		r := &Resolver{IDs: sim.NewIDs(1), Client: srv.Client()}
		_, err := r.Probe(context.Background(), srv.URL+"/long")
		assert.Contains(t, requireVideoInfo(t, err), "Range")
	})
}

func TestProbeUnreadableMedia(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler http.Handler
		wantMsg string // a substring of the refusal's message
	}{
		{
			name:    "not found",
			handler: http.NotFoundHandler(),
			wantMsg: "404",
		},
		{
			name: "forbidden",
			handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "no", http.StatusForbidden)
			}),
			wantMsg: "403",
		},
		{
			name: "server error",
			handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "boom", http.StatusInternalServerError)
			}),
			wantMsg: "500",
		},
		{
			name:    "HTML page",
			handler: serveBytes([]byte("<!DOCTYPE html><html><head><title>Watch</title></head><body>video player</body></html>")),
			wantMsg: "not a supported media file",
		},
		{
			name:    "HTML page, server ignores Range",
			handler: serveIgnoringRange([]byte("<!DOCTYPE html><html><body>video player</body></html>"), true),
			wantMsg: "not a supported media file",
		},
		{
			name:    "binary that is not media",
			handler: serveBytes(bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 50000)),
			wantMsg: "not a supported media file",
		},
		{
			name:    "empty body, served with Range support",
			handler: serveBytes(nil),
		},
		{
			name:    "empty body, server ignores Range",
			handler: serveIgnoringRange(nil, true),
		},
		{
			name: "range not satisfiable",
			handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Range", "bytes */0")
				w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			}),
			wantMsg: "empty",
		},
		{
			name:    "WAV header without samples",
			handler: serveBytes(audio.WAVHeader(22050, 1, 16, 0)),
			wantMsg: "no duration",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := newServer(t, tc.handler)
			url := srv.URL + "/watch?v=abc"
			r := &Resolver{IDs: sim.NewIDs(1), Client: srv.Client()}
			info, err := r.Probe(context.Background(), url)
			msg := requireVideoInfo(t, err)
			assert.Contains(t, msg, url, "the message names the URL")
			assert.Contains(t, msg, tc.wantMsg)
			assert.Zero(t, info.Duration)
		})
	}
}

func TestProbeRedirects(t *testing.T) {
	t.Parallel()
	wav := wavBytes(t, smallWAVDuration)
	tests := []struct {
		name    string
		path    string
		allow   []string
		wantErr string // non-empty: a refusal whose message contains this
		remote  string // a remote host the transport must (or, on error, must not) be asked for
	}{
		{name: "to the same loopback server", path: "/to-local"},
		{name: "to a non-allowed host", path: "/to-remote", wantErr: "redirect", remote: "evil.test"},
		{name: "to a host similar to an allowed one", path: "/to-similar", allow: []string{"*.example.com"}, wantErr: "redirect", remote: "evil-example.com"},
		{name: "to an allowed host", path: "/to-allowed", allow: []string{"*.example.com"}, remote: "cdn.example.com"},
		{name: "endless loop", path: "/loop", wantErr: "redirect"},
	}
	mux := http.NewServeMux()
	mux.Handle("/a.wav", serveBytes(wav))
	redirect := func(from, to string) {
		mux.Handle(from, http.RedirectHandler(to, http.StatusFound))
	}
	redirect("/to-local", "/a.wav")
	redirect("/to-remote", "http://evil.test/a.wav")
	redirect("/to-similar", "http://evil-example.com/a.wav")
	redirect("/to-allowed", "https://cdn.example.com/a.wav")
	redirect("/loop", "/loop")
	srv, _ := newServer(t, mux)

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rt := &routeTransport{t: t, loopback: srv.Client().Transport}
			if tc.wantErr == "" && tc.remote != "" {
				rt.mem = map[string]http.Handler{tc.remote: serveBytes(wav)}
			}
			r := &Resolver{AllowHosts: tc.allow, IDs: sim.NewIDs(1), Client: &http.Client{Transport: rt}}
			info, err := r.Probe(context.Background(), srv.URL+tc.path)
			if tc.wantErr != "" {
				assert.Contains(t, requireVideoInfo(t, err), tc.wantErr)
				for _, h := range rt.hosts() {
					assert.True(t, IsLoopback(strings.Split(h, ":")[0]), "contacted %s", h)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, sim.OriginMedia, info.Origin)
			assertDuration(t, smallWAVDuration, info.Duration)
			if tc.remote != "" {
				assert.Contains(t, rt.hosts(), tc.remote)
			}
		})
	}
}

// A server that never answers is bounded by the caller's context.
const watchdogDelay = 5 * time.Second

func TestProbeHangingServerHonoursContext(t *testing.T) {
	t.Parallel()
	wav := wavBytes(t, smallWAVDuration)
	tests := []struct {
		name string
		// before runs before the handler blocks.
		before func(w http.ResponseWriter)
	}{
		{name: "no response headers", before: func(http.ResponseWriter) {}},
		{name: "body stalls", before: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "audio/wav")
			w.Header().Set("Content-Length", "1000000")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(wav[:100])
			w.(http.Flusher).Flush()
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// release unblocks the handler at cleanup, or after a watchdog
			// delay should the context be ignored (then the test fails
			// quickly instead of hanging).
			release := make(chan struct{})
			var once sync.Once
			unblock := func() { once.Do(func() { close(release) }) }
			watchdog := time.AfterFunc(watchdogDelay, unblock)
			srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				tc.before(w)
				select {
				case <-r.Context().Done():
				case <-release:
				}
			}))
			t.Cleanup(func() { watchdog.Stop(); unblock() }) // runs before srv.Close

			// A client without its own timeout: only the context bounds it.
			client := &http.Client{Transport: srv.Client().Transport}
			r := &Resolver{IDs: sim.NewIDs(1), Client: client}
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := r.Probe(ctx, srv.URL+"/slow.wav")
			assert.Contains(t, requireVideoInfo(t, err), context.DeadlineExceeded.Error())
			assert.Less(t, time.Since(start), watchdogDelay)
		})
	}
}

// moveAtomLast returns the QuickTime file b with its top-level atom of type
// typ moved to the end (chunk offsets are left stale; the duration does not
// depend on them).
func moveAtomLast(t *testing.T, b []byte, typ string) []byte {
	t.Helper()
	var rest, moved []byte
	wasLast := false
	for off := 0; off < len(b); {
		require.GreaterOrEqual(t, len(b)-off, 8, "truncated atom header at %d", off)
		size := int(binary.BigEndian.Uint32(b[off:]))
		switch size {
		case 0:
			size = len(b) - off
		case 1:
			size = int(binary.BigEndian.Uint64(b[off+8:]))
		}
		require.GreaterOrEqual(t, size, 8, "atom at %d", off)
		require.LessOrEqual(t, off+size, len(b), "atom at %d", off)
		if string(b[off+4:off+8]) == typ {
			moved = b[off : off+size]
			wasLast = off+size == len(b)
		} else {
			rest = append(rest, b[off:off+size]...)
		}
		off += size
	}
	require.NotEmpty(t, moved, "no %s atom", typ)
	require.False(t, wasLast, "the %s atom is already last", typ)
	return append(rest, moved...)
}
