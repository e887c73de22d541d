package media

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sourceBytes is n deterministic pseudo-random bytes.
func sourceBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{1, 2, 3}).Read(b)
	return b
}

// hideTotal rewrites "Content-Range: bytes a-b/N" to "bytes a-b/*", as a
// server that does not know the total length does.
func hideTotal(h http.Handler) http.Handler {
	re := regexp.MustCompile(`/\d+$`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&hideTotalWriter{ResponseWriter: w, re: re}, r)
	})
}

type hideTotalWriter struct {
	http.ResponseWriter
	re *regexp.Regexp
}

func (w *hideTotalWriter) WriteHeader(code int) {
	if cr := w.Header().Get("Content-Range"); cr != "" && code == http.StatusPartialContent {
		w.Header().Set("Content-Range", w.re.ReplaceAllString(cr, "/*"))
	}
	w.ResponseWriter.WriteHeader(code)
}

func openRangeReader(t *testing.T, h http.Handler) (*rangeReader, *counter) {
	t.Helper()
	srv, cnt := newServer(t, h)
	rr := &rangeReader{ctx: context.Background(), client: srv.Client(), url: srv.URL + "/blob"}
	require.NoError(t, rr.open())
	return rr, cnt
}

func TestRangeReaderReadAt(t *testing.T) {
	t.Parallel()
	src := sourceBytes(5*blockSize + 1234)
	size := int64(len(src))

	servers := []struct {
		name     string
		handler  http.Handler
		ranged   bool
		wantSize int64
	}{
		{"Range supported", serveBytes(src), true, size},
		{"Range supported, total length unknown", hideTotal(serveBytes(src)), true, -1},
		{"Range ignored", serveIgnoringRange(src, true), false, size},
		{"Range ignored, no Content-Length", serveIgnoringRange(src, false), false, size},
	}
	reads := []struct {
		name string
		off  int64
		n    int
		// want is the number of bytes returned; wantEOF whether io.EOF must
		// be returned (when want == n, nil or io.EOF are both accepted).
		want    int
		wantEOF bool
	}{
		{name: "start", off: 0, n: 100, want: 100},
		{name: "inside the first block", off: 1000, n: 5000, want: 5000},
		{name: "across one block boundary", off: blockSize - 10, n: 20, want: 20},
		{name: "exactly the second block", off: blockSize, n: blockSize, want: blockSize},
		{name: "across several blocks", off: blockSize - 1, n: 3*blockSize + 2, want: 3*blockSize + 2},
		{name: "up to the end", off: size - 500, n: 500, want: 500},
		{name: "from the last block across the end", off: size - 10, n: 100, want: 10, wantEOF: true},
		{name: "from an earlier block across the end", off: size - blockSize - 10, n: 2 * blockSize, want: blockSize + 10, wantEOF: true},
		{name: "at the end", off: size, n: 10, want: 0, wantEOF: true},
		{name: "after the end", off: size + 3*blockSize, n: 10, want: 0, wantEOF: true},
	}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			rr, _ := openRangeReader(t, s.handler)
			assert.Equal(t, s.ranged, rr.ranged)
			assert.Equal(t, s.wantSize, rr.size)
			// The reads share one reader (and its cache), in order.
			for _, rd := range reads {
				p := make([]byte, rd.n)
				n, err := rr.ReadAt(p, rd.off)
				assert.Equal(t, rd.want, n, "%s: bytes read", rd.name)
				if rd.wantEOF {
					assert.ErrorIs(t, err, io.EOF, "%s", rd.name)
				} else if err != nil {
					assert.ErrorIs(t, err, io.EOF, "%s: only io.EOF may come with a full read", rd.name)
				}
				if n > 0 && rd.off < size {
					assert.Equal(t, src[rd.off:rd.off+int64(n)], p[:n], "%s: bytes", rd.name)
				}
			}
			_, err := rr.ReadAt(make([]byte, 1), -1)
			assert.Error(t, err, "negative offset")
		})
	}
}

func TestRangeReaderCachesBlocks(t *testing.T) {
	t.Parallel()
	src := sourceBytes(4*blockSize + 77)
	rr, cnt := openRangeReader(t, serveBytes(src))
	require.True(t, rr.ranged)
	require.EqualValues(t, 1, cnt.requests.Load(), "open reads the first block")

	steps := []struct {
		name         string
		off          int64
		n            int
		wantRequests int64 // total so far
	}{
		{"first block, already read by open", 10, 1000, 1},
		{"first block again", blockSize - 100, 100, 1},
		{"third block", 2*blockSize + 5, 10, 2},
		{"third block again", 2 * blockSize, blockSize, 2},
		{"first and second blocks", blockSize - 50, 100, 3},
		{"second and third blocks", 2*blockSize - 50, 100, 3},
		{"last, partial block", 4 * blockSize, 77, 4},
		{"last block again", 4*blockSize + 70, 7, 4},
	}
	for _, st := range steps {
		p := make([]byte, st.n)
		n, err := rr.ReadAt(p, st.off)
		if err != nil {
			require.ErrorIs(t, err, io.EOF, st.name)
		}
		require.Equal(t, st.n, n, st.name)
		assert.Equal(t, src[st.off:st.off+int64(n)], p, st.name)
		assert.Equal(t, st.wantRequests, cnt.requests.Load(), "%s: requests so far", st.name)
	}
	// A whole block per request, not the whole file.
	assert.LessOrEqual(t, cnt.bytes.Load(), int64(len(src)))
}

// When the server ignores Range, only the first maxBuffered bytes are kept;
// reads past them must fail, and must not report io.EOF (the file goes on).
func TestRangeReaderBeyondBufferedPrefix(t *testing.T) {
	t.Parallel()
	src := sourceBytes(maxBuffered + blockSize)
	size := int64(len(src))
	tests := []struct {
		name       string
		withLength bool
		wantSize   int64
	}{
		{"with Content-Length", true, size},
		{"without Content-Length", false, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rr, cnt := openRangeReader(t, serveIgnoringRange(src, tc.withLength))
			require.False(t, rr.ranged)
			assert.Equal(t, tc.wantSize, rr.size)
			assert.Len(t, rr.buffered, maxBuffered)

			p := make([]byte, 20)
			n, err := rr.ReadAt(p, maxBuffered-20)
			assert.Equal(t, 20, n, "inside the prefix")
			if err != nil {
				assert.ErrorIs(t, err, io.EOF)
			}
			assert.Equal(t, src[maxBuffered-20:maxBuffered], p)

			n, err = rr.ReadAt(p, maxBuffered-10)
			assert.Equal(t, 10, n, "straddling the end of the prefix")
			assert.Equal(t, src[maxBuffered-10:maxBuffered], p[:10])
			assert.Error(t, err)
			assert.NotErrorIs(t, err, io.EOF, "the file does not end at the prefix")

			n, err = rr.ReadAt(p, maxBuffered+5)
			assert.Zero(t, n, "after the prefix")
			assert.Error(t, err)
			assert.NotErrorIs(t, err, io.EOF, "the file does not end at the prefix")

			assert.EqualValues(t, 1, cnt.requests.Load(), "reads are served from the prefix")
		})
	}
}
