package dubsim_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	dubsim "github.com/dubsim/dubsim/contrib/testcontainers"
)

var sandboxPath = regexp.MustCompile(`^/_sim/sandboxes/([0-9a-hjkmnp-tv-z]{16})$`)

// fakeSandboxes is a stand-in of the sandbox resource of the control API
// (the module does not depend on dubsim): PUT and DELETE
// /_sim/sandboxes/{id}, and the clock of a sandbox at /sbx/{id}/_sim/clock.
// deleteStatus, when set, answers every DELETE; conflicts answers that
// many PUTs with 409 first.
type fakeSandboxes struct {
	mu           sync.Mutex
	boxes        map[string]bool
	log          []string // "METHOD path body"
	deleteStatus int
	conflicts    int
	full         bool
}

func (f *fakeSandboxes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, _ := io.ReadAll(r.Body)
	f.log = append(f.log, strings.TrimSpace(r.Method+" "+r.URL.Path+" "+string(b)))
	if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("X-Dubsim-Control") != "1" {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":"UnauthorizedError","message":"token"}`)
		return
	}
	fail := func(status int, name string) {
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, `{"error":%q,"message":"m"}`, name)
	}
	if m := sandboxPath.FindStringSubmatch(r.URL.Path); m != nil {
		id := m[1]
		switch {
		case r.Method == "PUT" && f.conflicts > 0:
			f.conflicts--
			fail(http.StatusConflict, "ConflictError")
		case r.Method == "PUT" && f.full:
			fail(http.StatusTooManyRequests, "SandboxLimitError")
		case r.Method == "PUT":
			f.boxes[id] = true
			w.WriteHeader(http.StatusCreated)
			_, _ = fmt.Fprintf(w, `{"id":%q,"api_keys":{"dubsim-pro":"sbx_%s_dubsim-pro"},"base_url":"http://elsewhere/sbx/%s"}`, id, id, id)
		case r.Method == "DELETE" && f.deleteStatus != 0:
			fail(f.deleteStatus, "InternalError")
		case r.Method == "DELETE" && f.boxes[id]:
			delete(f.boxes, id)
			w.WriteHeader(http.StatusNoContent)
		default:
			fail(http.StatusNotFound, "NotFoundError")
		}
		return
	}
	if strings.HasPrefix(r.URL.Path, "/sbx/") && strings.HasSuffix(r.URL.Path, "/_sim/clock/advance") {
		_, _ = io.WriteString(w, `{"now":"2030-01-02T03:04:05Z","time_scale":0,"frozen":true}`)
		return
	}
	fail(http.StatusNotFound, "NotFoundError")
}

func (f *fakeSandboxes) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

func (f *fakeSandboxes) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for id := range f.boxes {
		ids = append(ids, id)
	}
	return ids
}

func newFake(t *testing.T) (*fakeSandboxes, *dubsim.Client) {
	f := &fakeSandboxes{boxes: map[string]bool{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, &dubsim.Client{BaseURL: srv.URL + "/", Token: "tok"}
}

// recTB records the cleanups and errors of Sandbox; the test runs the
// cleanups itself.
type recTB struct {
	testing.TB
	errs     []string
	cleanups []func()
}

func (r *recTB) Errorf(format string, a ...any) { r.errs = append(r.errs, fmt.Sprintf(format, a...)) }
func (r *recTB) Cleanup(f func())               { r.cleanups = append(r.cleanups, f) }
func (r *recTB) runCleanups() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// TestSandbox: the wire form of Client.Sandbox (PUT with a fresh id, the
// token), the sandbox's client on /sbx/<id>, and the DELETE at cleanup.
func TestSandbox(t *testing.T) {
	t.Parallel()
	f, c := newFake(t)
	ctx := t.Context()
	rec := &recTB{TB: t}
	sb, err := c.Sandbox(ctx, rec)
	require.NoError(t, err)
	base := strings.TrimRight(c.BaseURL, "/")
	assert.Regexp(t, `^[0-9a-hjkmnp-tv-z]{16}$`, sb.ID)
	assert.Equal(t, base+"/sbx/"+sb.ID, sb.BaseURL, "the sandbox as this client reaches the dubsim")
	assert.Equal(t, sb.BaseURL+"/platform", sb.PlatformURL)
	assert.Equal(t, sb.BaseURL+"/studio", sb.StudioURL)
	assert.Equal(t, "sbx_"+sb.ID+"_dubsim-pro", sb.Key("dubsim-pro"))
	assert.Empty(t, sb.Key("nobody"))
	assert.Equal(t, []string{"PUT /_sim/sandboxes/" + sb.ID + " {}"}, f.calls())
	assert.Equal(t, []string{sb.ID}, f.ids())

	now, err := sb.Client.Advance(ctx, time.Minute)
	require.NoError(t, err, "the sandbox's client sends the token")
	assert.Equal(t, time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), now)
	assert.Equal(t, `POST /sbx/`+sb.ID+`/_sim/clock/advance {"seconds":60}`, f.calls()[1])

	require.Len(t, rec.cleanups, 1)
	rec.runCleanups()
	assert.Empty(t, rec.errs)
	assert.Empty(t, f.ids(), "deleted at cleanup")
	assert.Equal(t, "DELETE /_sim/sandboxes/"+sb.ID, f.calls()[2])
	rec.runCleanups()
	assert.Empty(t, rec.errs, "a sandbox gone already is no error at cleanup")

	// Two sandboxes, two ids.
	other, err := c.Sandbox(ctx, t)
	require.NoError(t, err)
	assert.NotEqual(t, sb.ID, other.ID)
}

func TestSandboxErrors(t *testing.T) {
	t.Parallel()
	ctx := t.Context()

	t.Run("cleanup fails", func(t *testing.T) {
		f, c := newFake(t)
		rec := &recTB{TB: t}
		sb, err := c.Sandbox(ctx, rec)
		require.NoError(t, err)
		f.mu.Lock()
		f.deleteStatus = http.StatusInternalServerError
		f.mu.Unlock()
		rec.runCleanups()
		require.Len(t, rec.errs, 1)
		assert.Contains(t, rec.errs[0], "deleting sandbox "+sb.ID)
		assert.Contains(t, rec.errs[0], "500 InternalError")
	})

	t.Run("id taken", func(t *testing.T) {
		f, c := newFake(t)
		f.conflicts = 1
		sb, err := c.CreateSandbox(ctx, dubsim.SandboxSpec{})
		require.NoError(t, err)
		calls := f.calls()
		require.Len(t, calls, 2)
		assert.NotEqual(t, calls[0], calls[1], "another id")
		assert.Equal(t, "PUT /_sim/sandboxes/"+sb.ID+" {}", calls[1])
		require.NoError(t, sb.Delete(ctx))
	})

	t.Run("cap", func(t *testing.T) {
		f, c := newFake(t)
		f.full = true
		rec := &recTB{TB: t}
		sb, err := c.Sandbox(ctx, rec)
		assert.Nil(t, sb)
		var ce *dubsim.ControlError
		require.True(t, errors.As(err, &ce), "%v", err)
		assert.Equal(t, http.StatusTooManyRequests, ce.Status)
		assert.Equal(t, "SandboxLimitError", ce.Name)
		assert.Empty(t, rec.cleanups)
	})

	t.Run("token", func(t *testing.T) {
		_, c := newFake(t)
		c.Token = ""
		_, err := c.Sandbox(ctx, t)
		var ce *dubsim.ControlError
		require.True(t, errors.As(err, &ce), "%v", err)
		assert.Equal(t, http.StatusUnauthorized, ce.Status)
	})
}

// TestCreateSandboxSpec: the body of the PUT.
func TestCreateSandboxSpec(t *testing.T) {
	t.Parallel()
	f, c := newFake(t)
	seed := uint64(0)
	start := time.Date(2030, 1, 2, 3, 4, 5, 600_000_000, time.FixedZone("CET", 3600))
	sb, err := c.CreateSandbox(t.Context(), dubsim.SandboxSpec{Start: start, TimeScale: 60, Seed: &seed})
	require.NoError(t, err)
	call := f.calls()[0]
	body := strings.TrimPrefix(call, "PUT /_sim/sandboxes/"+sb.ID+" ")
	require.NotEqual(t, call, body)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	assert.Equal(t, map[string]any{"start": "2030-01-02T02:04:05.6Z", "time_scale": float64(60), "seed": float64(0)}, got,
		"UTC, and a zero seed is sent")
}
