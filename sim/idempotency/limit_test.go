package idempotency

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dirBytes is the size of the regular files directly in dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var n int64
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}

// A body with an Idempotency-Key is read ahead no further than the route's
// own limit (plus one byte): the route refuses a larger one as it does
// without a key, and a retry replays that refusal.
func TestIdempotencySpoolsNoMoreThanTheRouteLimit(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir) // os.CreateTemp("") writes here
	const limit = 64 << 10
	cases := []struct {
		name       string
		size       int
		wantStatus int
		replayed   bool
	}{
		{"within the limit: spooled and replayed", limit, http.StatusOK, true},
		{"one byte over: the route's own 413, replayed", limit + 1, http.StatusRequestEntityTooLarge, true},
		{"far over: the route's own 413, replayed", 16 * limit, http.StatusRequestEntityTooLarge, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := &memIdem{recs: map[string]sim.IdemRecord{}}
			render := func(err error) (int, any) {
				if sim.ErrorCode(err) == sim.CodeTooLarge {
					return http.StatusRequestEntityTooLarge, map[string]string{"error": err.Error()}
				}
				return http.StatusBadRequest, map[string]string{"error": err.Error()}
			}
			var spooled int64
			m := &Middleware{Store: store, API: httpx.API{Render: render}, MemBody: 4 << 10,
				Limit: func(*http.Request) int64 { return limit }}
			route := func(w http.ResponseWriter, r *http.Request) {
				spooled = max(spooled, dirBytes(t, dir))
				n, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, limit))
				var mb *http.MaxBytesError
				if errors.As(err, &mb) {
					httpx.WriteJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": sim.Errorf(sim.CodeTooLarge, sim.MsgBodyTooLarge, int64(limit)).Error()})
					return
				}
				httpx.WriteJSON(w, http.StatusOK, map[string]int64{"read": n})
			}
			h := m.Wrap(func(*http.Request) string { return "key-1" })(http.HandlerFunc(route))
			send := func(key string) *httptest.ResponseRecorder {
				r := httptest.NewRequest("POST", "/things", bytes.NewReader(bytes.Repeat([]byte("x"), c.size)))
				r.Header.Set("Content-Type", "application/octet-stream")
				if key != "" {
					r.Header.Set(HeaderKey, key)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				return rec
			}
			without := send("")
			first := send("k")
			again := send("k")
			assert.Equal(t, c.wantStatus, first.Code, first.Body.String())
			assert.Equal(t, without.Body.String(), first.Body.String(), "the same answer as without a key")
			assert.Equal(t, c.replayed, again.Header().Get(HeaderReplayed) == "true")
			assert.LessOrEqual(t, spooled, int64(limit+1), "no more than the limit on disk")
			assert.Zero(t, dirBytes(t, dir), "the spool is removed")
		})
	}
}

// RemoveSpools removes the spooled bodies a crash left, and nothing else.
func TestRemoveSpools(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"dubsim-idem-123", "dubsim-idem-x", "other-file", "dubsim-idem"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("body"), 0o600))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "dubsim-idem-dir"), 0o700))
	n, err := RemoveSpools(dir)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	left, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	for i := range left {
		left[i] = filepath.Base(left[i])
	}
	assert.ElementsMatch(t, []string{"other-file", "dubsim-idem", "dubsim-idem-dir"}, left)
}

// A full disk while spooling a body is the simulator's fault, not the
// client's: a 500 saying the simulator's disk is full, with no path
// (fidelity HW4).
func TestSpoolErrorBlamesTheRightSide(t *testing.T) {
	disk := fmt.Errorf("copy: %w", &os.PathError{Op: "write", Path: "/tmp/dubsim-spool-123", Err: syscall.ENOSPC})
	err := spoolError(disk)
	assert.Equal(t, sim.CodeInternal, sim.ErrorCode(err))
	assert.Equal(t, httpx.MsgNoSpace, sim.ErrorMessage(err))
	assert.Contains(t, err.Error(), "/tmp/dubsim-spool-123", "the log keeps the cause")

	other := spoolError(&os.PathError{Op: "open", Path: "/tmp/x", Err: syscall.EACCES})
	assert.Equal(t, sim.CodeInternal, sim.ErrorCode(other))
	assert.Empty(t, sim.ErrorMessage(other), "masked by WriteError")

	client := spoolError(&httpx.BodyError{Err: io.ErrUnexpectedEOF, Read: 12, Length: 100})
	assert.Equal(t, sim.CodeValidation, sim.ErrorCode(client))
	assert.Equal(t, "The request body ended early: 12 of the 100 bytes declared by Content-Length arrived before the client closed the connection", sim.ErrorMessage(client))
	assert.NotContains(t, sim.ErrorMessage(client), "EOF")
}
