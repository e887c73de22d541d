package sandbox_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/simtest"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/sandbox"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeleteWaitsWhenItsClientLeaves: a deletion whose caller gives up
// goes on waiting for the request in flight; meanwhile GET shows the
// sandbox as being deleted and PUT of its id is a 409 with Retry-After,
// and the sandbox's store still serves the request; once the request ends
// the sandbox is gone and its id can be created again.
func TestDeleteWaitsWhenItsClientLeaves(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	a := e.create("")
	sb := e.m.Get(a.ID)
	release, ok := sandbox.Hold(e.m, a.ID)
	require.True(t, ok)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the client has left
	require.ErrorIs(t, e.m.Delete(ctx, a.ID), context.Canceled)

	st, v := e.json("GET", "/_sim/sandboxes/"+a.ID, "", "")
	require.Equal(t, http.StatusOK, st, "%v", v)
	assert.Equal(t, true, v["deleting"])
	st, h, raw := e.do("PUT", "/_sim/sandboxes/"+a.ID, "", "")
	assert.Equal(t, http.StatusConflict, st, "%s", raw)
	assert.Contains(t, string(raw), "is being deleted")
	assert.Equal(t, "1", h.Get("Retry-After"))
	_, err := sb.Server.Engine.Data.State(context.Background(), sim.StateFilter{})
	require.NoError(t, err, "the store is open while the request is in flight")

	release()
	<-sandbox.Gone(sb)
	st, _ = e.json("GET", "/_sim/sandboxes/"+a.ID, "", "")
	assert.Equal(t, http.StatusNotFound, st)
	st, _ = e.json("PUT", "/_sim/sandboxes/"+a.ID, "", "")
	assert.Equal(t, http.StatusCreated, st)
}

// TestDeleteEndsRequestsCleanly: a request still in flight when the drain
// ends (an upload whose body never comes) gets a clean 404 that says the
// sandbox was deleted, never a 500; the DELETE answers 204 and the id can
// be created again.
func TestDeleteEndsRequestsCleanly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *sandbox.Config) { c.DrainWait = time.Millisecond })
	for i := 0; i < 3; i++ {
		a := e.create("")
		sb := e.m.Get(a.ID)
		pr, pw := io.Pipe()
		req, err := http.NewRequest("POST", e.url+"/api/v1/projects", pr)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+a.Keys["dubsim-pro"])
		req.Header.Set("Content-Type", "application/json")
		type result struct {
			status int
			h      http.Header
			body   string
		}
		done := make(chan result, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- result{status: -1, body: err.Error()}
				return
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			done <- result{resp.StatusCode, resp.Header, string(raw)}
		}()
		_, err = pw.Write([]byte(`{"name":"never ends",`))
		require.NoError(t, err)
		sandbox.AwaitInFlight(sb, 1)

		st, _, raw := e.do("DELETE", "/_sim/sandboxes/"+a.ID, "", "")
		require.Equal(t, http.StatusNoContent, st, "%s", raw)
		r := <-done
		_ = pw.Close()
		require.Equal(t, http.StatusNotFound, r.status, "%s", r.body)
		assert.Contains(t, []string{server.Platform, server.Studio}, r.h.Get(server.HeaderInterface), "the routing's interface")
		assert.Contains(t, r.h.Get(sandbox.HeaderError), "was deleted while this request was in flight")
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.body), &m), r.body)
		assert.Contains(t, r.body, "was deleted while this request was in flight")
		st, _ = e.json("PUT", "/_sim/sandboxes/"+a.ID, "", "")
		assert.Equal(t, http.StatusCreated, st)
		st, _, _ = e.do("DELETE", "/_sim/sandboxes/"+a.ID, "", "")
		assert.Equal(t, http.StatusNoContent, st)
	}
}

// TestIdleCountsFromTheEndOfARequest: a request that lasts longer than
// the idle time leaves the sandbox a whole idle time from its end.
func TestIdleCountsFromTheEndOfARequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *sandbox.Config) { c.Idle = 30 * time.Minute })
	a := e.create("")
	release, ok := sandbox.Hold(e.m, a.ID)
	require.True(t, ok)
	e.real.add(40 * time.Minute) // a long download
	require.NoError(t, e.m.Tick(context.Background()))
	require.NotNil(t, e.m.Get(a.ID), "in flight: not expired")
	release()
	e.real.add(29 * time.Minute)
	require.NoError(t, e.m.Tick(context.Background()))
	require.NotNil(t, e.m.Get(a.ID), "29 minutes after the request ended")
	e.real.add(2 * time.Minute)
	require.NoError(t, e.m.Tick(context.Background()))
	assert.Nil(t, e.m.Get(a.ID), "31 minutes after")
}

// TestOwnKeyOnTheSandboxesResource: a sandbox's own key sent to
// /_sim/sandboxes/<id> reaches the default control API, which answers it.
func TestOwnKeyOnTheSandboxesResource(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	a := e.create("")
	for _, path := range []string{"/_sim/sandboxes/" + a.ID, "/_sim/sandboxes/" + a.ID + "/", "/_sim/sandboxes"} {
		st, _, raw := e.do("GET", path, a.Keys["dubsim-pro"], "")
		assert.Equal(t, http.StatusOK, st, "%s: %s", path, raw)
		assert.True(t, strings.Contains(string(raw), a.ID), path)
	}
}

// send sends a request with exactly the headers given (no control header,
// no Content-Type unless named) and returns the status and body.
func send(t *testing.T, method, url, body string, header ...string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(raw)
}

// TestSandboxesWithPlainCurl: the README's sandbox example as curl sends
// it (the control header with a JSON body that curl's -d calls a form),
// and PUT and DELETE with no header at all.
func TestSandboxesWithPlainCurl(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	const id = "k7q2m9x4w3p8r5t6"
	form := "application/x-www-form-urlencoded"
	st, raw := send(t, "PUT", e.url+"/_sim/sandboxes/"+id, "")
	require.Equal(t, http.StatusCreated, st, raw)
	st, raw = send(t, "POST", e.url+"/sbx/"+id+"/_sim/clock/advance", `{"seconds":600}`, server.HeaderControl, "1", "Content-Type", form)
	require.Equal(t, http.StatusOK, st, raw)
	assert.Contains(t, raw, `"now":"2026-02-04T12:10:00.000Z"`)
	st, raw = send(t, "POST", e.url+"/sbx/"+id+"/_sim/clock/advance", `{"seconds":600}`, "Content-Type", form)
	assert.Equal(t, http.StatusUnsupportedMediaType, st, "a POST a form can send: %s", raw)
	st, raw = send(t, "DELETE", e.url+"/_sim/sandboxes/"+id, "")
	require.Equal(t, http.StatusNoContent, st, raw)
	st, raw = send(t, "POST", e.url+"/_sim/sandboxes", `{"time_scale":2}`, server.HeaderControl, "1", "Content-Type", form)
	require.Equal(t, http.StatusCreated, st, raw)
}

// TestSandboxPagesNeedTheToken: with a control token, a sandbox's project
// page needs it, as the default's does.
func TestSandboxPagesNeedTheToken(t *testing.T) {
	t.Parallel()
	const token = "page-token"
	s := simtest.NewSandboxed(t, simtest.Options{Start: t0, Config: func(c *app.Config) { c.ControlToken = token }}, nil)
	hs := httptest.NewServer(s.Handler)
	t.Cleanup(hs.Close)
	st, raw := send(t, "POST", hs.URL+"/_sim/sandboxes", "", server.HeaderControl, "1", "Authorization", "Bearer "+token)
	require.Equal(t, http.StatusCreated, st, raw)
	var v struct{ ID string }
	require.NoError(t, json.Unmarshal([]byte(raw), &v))
	const page = "/projects/6800ed147125e1af62bc928c"
	for _, path := range []string{page, "/sbx/" + v.ID + page} {
		st, raw = send(t, "GET", hs.URL+path, "")
		assert.Equal(t, http.StatusUnauthorized, st, "%s: %s", path, raw)
		assert.Contains(t, raw, "control token", path)
		st, raw = send(t, "GET", hs.URL+path, "", "Authorization", "Bearer "+token)
		assert.Equal(t, http.StatusOK, st, "%s: %s", path, raw)
		assert.Contains(t, raw, "Summer Campaign 2025", path)
	}
	st, _ = send(t, "GET", hs.URL+"/_sim/sandboxes/"+v.ID, "", "Authorization", "Bearer sbx_"+v.ID+"_dubsim-pro")
	assert.Equal(t, http.StatusUnauthorized, st, "the sandbox's own key is not the token: the control API says so")
}
