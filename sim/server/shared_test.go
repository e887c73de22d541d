package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pair starts two instances, over one app.Shared made from base when
// shared, else each with its own resources.
func pair(t *testing.T, shared bool, base app.Config) (a, b *inst, sh *app.Shared) {
	t.Helper()
	mod := func(c *app.Config) {
		c.BodyMemory, c.Quota, c.OutputCacheBytes = base.BodyMemory, base.Quota, base.OutputCacheBytes
	}
	if shared {
		var err error
		sh, err = app.NewShared(base)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, sh.Close()) }) // after the instances' Close (cleanups run last first)
		inner := mod
		mod = func(c *app.Config) { inner(c); c.Shared = sh }
	}
	return start(t, mod), start(t, mod), sh
}

// TestSharedBodyBudget: a request body held by one instance counts in the
// shared bound, but takes at most the instance's share of it: another
// instance's request is answered while it holds it, and the same
// instance's next request waits for it.
func TestSharedBodyBudget(t *testing.T) {
	t.Parallel()
	for _, shared := range []bool{true, false} {
		t.Run(map[bool]string{true: "shared", false: "own"}[shared], func(t *testing.T) {
			t.Parallel()
			a, b, sh := pair(t, shared, app.Config{BodyMemory: 64})
			// A body announced as 1000 bytes of which only the first arrive:
			// its request holds its instance's whole share (a quarter of
			// 64) while it waits for the rest.
			pr, pw := io.Pipe()
			req, err := http.NewRequest(http.MethodPost, a.url+"/api/v1/projects", pr)
			require.NoError(t, err)
			req.ContentLength = 1000
			req.Header.Set("Authorization", "Bearer dubsim-pro")
			req.Header.Set("Content-Type", "application/json")
			held := make(chan *http.Response, 1)
			go func() {
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					held <- resp
				}
				close(held)
			}()
			_, err = pw.Write([]byte(`{"`))
			require.NoError(t, err)
			deadline := time.Now().Add(20 * time.Second)
			for a.srv.BodyMemoryUsed() != 16 {
				require.True(t, time.Now().Before(deadline), "a never took its share")
				time.Sleep(time.Millisecond)
			}
			if shared {
				assert.Equal(t, int64(16), sh.BodyMemoryUsed(), "a's bytes count in the shared bound")
			}

			st, _ := b.call(http.MethodPost, "/api/v1/projects", "dubsim-pro", `{}`)
			assert.NotZero(t, st, "b is answered while a holds its share")

			answered := make(chan int, 1)
			go func() {
				st, _ := a.call(http.MethodPost, "/api/v1/projects", "dubsim-pro", `{}`)
				answered <- st
			}()
			select {
			case st := <-answered:
				t.Fatalf("a answered %d while its first request held a's share", st)
			case <-time.After(300 * time.Millisecond):
			}
			require.NoError(t, pw.CloseWithError(io.ErrUnexpectedEOF))
			if resp, ok := <-held; ok {
				resp.Body.Close()
			}
			select {
			case st := <-answered:
				assert.NotZero(t, st, "a is answered once its first body is gone")
			case <-time.After(20 * time.Second):
				t.Fatal("a still waits after its first request ended")
			}
		})
	}
}

// uploadOf presigns an upload on in and PUTs size bytes to it.
func uploadOf(t *testing.T, in *inst, size int) int {
	t.Helper()
	st, p := in.call("GET", "/api/v1/artifacts/create?fileName=a.wav", "dubsim-free", "")
	require.Equal(t, http.StatusOK, st, "%v", p)
	resp := doPut(t, p["presignedUploadUrl"].(string), []byte(strings.Repeat("x", size)))
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestSharedQuota: the total storage quota counts the files of both
// instances when they share it; each has its own otherwise.
func TestSharedQuota(t *testing.T) {
	t.Parallel()
	for _, shared := range []bool{true, false} {
		t.Run(map[bool]string{true: "shared", false: "own"}[shared], func(t *testing.T) {
			t.Parallel()
			a, b, _ := pair(t, shared, app.Config{Quota: sim.BlobQuota{Total: 1000}})
			require.Equal(t, http.StatusOK, uploadOf(t, a, 600))
			st := uploadOf(t, b, 600)
			if shared {
				assert.NotEqual(t, http.StatusOK, st, "600 + 600 bytes pass the shared 1000")
				require.Equal(t, http.StatusOK, uploadOf(t, b, 300), "600 + 300 fit")
			} else {
				assert.Equal(t, http.StatusOK, st, "b's 600 bytes fit its own quota")
			}
		})
	}
}
