package main

import (
	"sync/atomic"

	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	mediapkg "github.com/dubsim/dubsim/sim/media"

	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/audio"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// instance is a running dubsim started through run().
type instance struct {
	base string
	stop func() error
}

// start runs dubsim in-process on a free loopback port and waits for its
// banner.
func start(t *testing.T, args ...string) *instance {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := run(ctx, append([]string{"--addr", "127.0.0.1:0", "--log-level", "off"}, args...), func(string) string { return "" }, pw, io.Discard)
		pw.Close()
		errc <- err
	}()
	addrRe := regexp.MustCompile(`listening on (https?://\S+)`)
	sc := bufio.NewScanner(pr)
	var base string
	for sc.Scan() {
		if m := addrRe.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	if base == "" {
		cancel()
		t.Fatalf("dubsim did not start: %v", <-errc)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	inst := &instance{base: base}
	inst.stop = func() error {
		cancel()
		return <-errc
	}
	return inst
}

func (in *instance) req(t *testing.T, method, path, key, body string) (int, map[string]any, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, in.base+path, strings.NewReader(body))
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var m map[string]any
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &m), "body: %s", raw)
	}
	return resp.StatusCode, m, resp.Header
}

func TestEndToEnd(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "dubsim.db")
	in := start(t, "--data", data, "--time-scale", "0")
	const key = "dubsim-enterprise"

	status, created, _ := in.req(t, "POST", "/api/v1/projects", key,
		`{"name":"E2E","source_lang":"en","target_lang":"fr-FR","source_video_url":"https://media.dubsim.test/short.mp4"}`)
	require.Equal(t, http.StatusOK, status, "%v", created)
	id := created["project_id"].(string)
	assert.Equal(t, float64(1), created["cost_minutes"])

	_, p, _ := in.req(t, "GET", "/api/v1/projects/"+id, key, "")
	assert.Equal(t, "in_progress", p["status"])

	status, clk, _ := in.req(t, "POST", "/_sim/clock/advance", "", `{"seconds": 600}`)
	require.Equal(t, http.StatusOK, status)
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`, clk["now"])

	_, p, _ = in.req(t, "GET", "/api/v1/projects/"+id, key, "")
	require.Equal(t, "ready", p["status"])
	resp, err := http.Get(p["output_tts_audio_url"].(string))
	require.NoError(t, err)
	wav, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.InDelta(t, 12.0, float64(binary.LittleEndian.Uint32(wav[40:44]))/2/float64(binary.LittleEndian.Uint32(wav[24:28])), 0.01)

	status, rt, _ := in.req(t, "POST", "/api/v1/projects/"+id+"/translations", key,
		`{"target_script":[{"start_ms":100,"end_ms":1544,"text":"Bonjour","speaker_id":1}],"target_speakers":[{"speaker_id":1,"voice_key":"soundalike","style":"masculine"}]}`)
	require.Equal(t, http.StatusOK, status, "%v", rt)
	assert.Equal(t, float64(1), rt["translations_count"])
	status, _, _ = in.req(t, "DELETE", "/api/v1/projects/"+id, key, "")
	assert.Equal(t, http.StatusBadRequest, status, "re-translation in progress")

	_, before, _ := in.req(t, "GET", "/_sim/clock", "", "")
	require.NoError(t, in.stop())

	// Restart on the same data file: state, pending transition and clock survive.
	in2 := start(t, "--data", data, "--time-scale", "0")
	defer func() { assert.NoError(t, in2.stop()) }()
	_, after, _ := in2.req(t, "GET", "/_sim/clock", "", "")
	tb, _ := time.Parse(time.RFC3339, before["now"].(string))
	ta, _ := time.Parse(time.RFC3339, after["now"].(string))
	assert.False(t, ta.Before(tb), "clock went backwards across a restart: %v -> %v", tb, ta)
	_, p, _ = in2.req(t, "GET", "/api/v1/projects/"+id, key, "")
	assert.Equal(t, "in_progress", p["status"])
	in2.req(t, "POST", "/_sim/clock/advance", "", `{"seconds": 600}`)
	_, p, _ = in2.req(t, "GET", "/api/v1/projects/"+id, key, "")
	assert.Equal(t, "ready", p["status"])
	status, del, _ := in2.req(t, "DELETE", "/api/v1/projects/"+id, key, "")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, true, del["success"])
}

func TestEndToEndMediaDuration(t *testing.T) {
	t.Parallel()
	track := audio.Track{SampleRate: 8000, Duration: 150 * time.Second}
	media := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/clip.wav" {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "clip.wav", time.Time{}, audio.NewWAVReader(track))
	}))
	defer media.Close()
	in := start(t, "--data", filepath.Join(t.TempDir(), "d.db"), "--time-scale", "0")
	defer func() { assert.NoError(t, in.stop()) }()

	status, body, _ := in.req(t, "POST", "/api/v1/projects", "dubsim-pro",
		`{"source_lang":"en","target_lang":"de-DE","source_video_url":"`+media.URL+`/clip.wav"}`)
	require.Equal(t, http.StatusOK, status, "%v", body)
	assert.Equal(t, float64(3), body["cost_minutes"], "150 s read from the WAV header: 3 minutes")

	status, body, _ = in.req(t, "POST", "/api/v1/projects", "dubsim-pro",
		`{"source_lang":"en","target_lang":"de-DE","source_video_url":"`+media.URL+`/missing.mp4"}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "VideoInfoError", body["error"])
	assert.Equal(t, "Unable to read video info from "+media.URL+"/missing.mp4: "+mediapkg.MsgCannotRead, body["message"],
		"by default not why: a closed port, a status or a content type would make dubsim a port scanner")
}

// --fetch-error-detail tells a creation why its source video could not be
// read; --fetch-loopback=false never contacts this machine (fidelity HF1,
// HF2).
func TestEndToEndFetchOptions(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	media := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	}))
	defer media.Close()
	create := `{"source_lang":"en","target_lang":"de-DE","source_video_url":"` + media.URL + `/missing.mp4"}`

	detail := start(t, "--data", filepath.Join(t.TempDir(), "d.db"), "--time-scale", "0", "--fetch-error-detail")
	status, body, _ := detail.req(t, "POST", "/api/v1/projects", "dubsim-pro", create)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body["message"], "HTTP 404")
	assert.NoError(t, detail.stop())
	require.Positive(t, hits.Load())

	hits.Store(0)
	off := start(t, "--data", filepath.Join(t.TempDir(), "d.db"), "--time-scale", "0", "--fetch-loopback=false")
	status, body, _ = off.req(t, "POST", "/api/v1/projects", "dubsim-pro", create)
	assert.Equal(t, http.StatusOK, status, "%v", body)
	assert.Zero(t, hits.Load(), "this machine is not contacted: a duration derived from the URL")
	assert.NoError(t, off.stop())
}

func TestVersion(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	require.NoError(t, run(context.Background(), []string{"-version"}, func(string) string { return "" }, &out, io.Discard))
	assert.Equal(t, "dubsim dev\n", out.String())
}

// TestSharedCreateFlag: the docs' minimal studio create on the shared
// address is a studio create by default; --shared-create platform (or
// DUBSIM_SHARED_CREATE) gives the platform's answer instead; /studio is
// the studio whatever the flag.
func TestSharedCreateFlag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		status int
		iface  string
	}{
		{"default", nil, http.StatusOK, "studio"},
		{"platform", []string{"--shared-create", "platform"}, http.StatusBadRequest, "platform"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := start(t, append([]string{"--data", filepath.Join(t.TempDir(), "d.db"), "--time-scale", "0"}, tc.args...)...)
			defer func() { require.NoError(t, in.stop()) }()
			status, m, h := in.req(t, "POST", "/api/v1/projects", "dubsim-free", `{"name": "Marketing"}`)
			assert.Equal(t, tc.status, status, "%v", m)
			assert.Equal(t, tc.iface, h.Get("X-Dubsim-Interface"))
			if tc.iface == "platform" {
				assert.Equal(t, map[string]any{"error": "ValidationError", "message": "source_lang is required"}, m)
			}
			status, m, h = in.req(t, "POST", "/studio/api/v1/projects", "dubsim-free", `{"name": "Marketing"}`)
			assert.Equal(t, http.StatusOK, status, "%v", m)
			assert.Equal(t, "studio", h.Get("X-Dubsim-Interface"))
			assert.Equal(t, in.base+"/studio/projects/"+m["id"].(string), m["projectUrl"])
		})
	}
}

// The banner names the control plane's protection and warns when it is
// reachable from other machines without a token (fidelity HC4).
func TestControlBanner(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		addr, controlAddr string
		srv               server.Config
		want              []string
		warn              bool
	}{
		{name: "loopback, no token", addr: "127.0.0.1:8080", want: []string{"protection: no token; Host must be localhost, *.localhost, IP addresses; no other site's Origin"}},
		{name: "localhost, no token", addr: "localhost:8080", want: []string{"protection: no token;"}},
		{name: "a host name, no token", addr: "dubsim:8080", want: []string{"WARNING: the control API listens beyond loopback (dubsim:8080)"}, warn: true},
		{name: "all interfaces, no token", addr: "[::]:8080", srv: server.Config{ControlHosts: []string{"dubsim"}},
			want: []string{"IP addresses, dubsim;", "WARNING: the control API listens beyond loopback ([::]:8080) without a token"}, warn: true},
		{name: "all interfaces, token", addr: "0.0.0.0:8080", srv: server.Config{ControlToken: "t"}, want: []string{"protection: token (Authorization: Bearer TOKEN or X-Dubsim-Control-Token: TOKEN)"}},
		{name: "own loopback address", addr: "0.0.0.0:8080", controlAddr: "127.0.0.1:9090",
			want: []string{"control API: http://127.0.0.1:9090/_sim (its own address; the main address serves only /_sim/health)"}},
		{name: "off", addr: "0.0.0.0:8080", srv: server.Config{NoControl: true}, want: []string{"control API: off (--no-control)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			controlBanner(&b, tc.addr, tc.controlAddr, config{Config: app.Config{Config: tc.srv}})
			for _, w := range tc.want {
				assert.Contains(t, b.String(), w)
			}
			assert.Equal(t, tc.warn, strings.Contains(b.String(), "WARNING"), b.String())
		})
	}
}

// --control-addr and --control-token end to end: the control API on its own
// listener, guarded by the token, and dubsim ctl passing it (fidelity HC4,
// HC5).
func TestControlAddrAndToken(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	args := []string{"--addr", "127.0.0.1:0", "--control-addr", "127.0.0.1:0", "--log-level", "off",
		"--data", filepath.Join(t.TempDir(), "d.db"), "--control-token", "e2e-token"}
	go func() {
		err := run(ctx, args, func(string) string { return "" }, pw, io.Discard)
		pw.Close()
		errc <- err
	}()
	t.Cleanup(func() { cancel(); assert.NoError(t, <-errc) })
	mainRe, ctlRe := regexp.MustCompile(`listening on (http://\S+)`), regexp.MustCompile(`control API: (http://\S+)/_sim `)
	var mainURL, ctlURL string
	sc := bufio.NewScanner(pr)
	for (mainURL == "" || ctlURL == "") && sc.Scan() {
		if m := mainRe.FindStringSubmatch(sc.Text()); m != nil {
			mainURL = m[1]
		}
		if m := ctlRe.FindStringSubmatch(sc.Text()); m != nil {
			ctlURL = m[1]
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	require.NotEmpty(t, mainURL)
	require.NotEmpty(t, ctlURL)

	get := func(url string, header ...string) int {
		req, err := http.NewRequest("GET", url, nil)
		require.NoError(t, err)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusNotFound, get(mainURL+"/_sim/state", "Authorization", "Bearer e2e-token"), "no control API on the main address")
	assert.Equal(t, http.StatusOK, get(mainURL+"/_sim/health"))
	assert.Equal(t, http.StatusUnauthorized, get(ctlURL+"/_sim/state"))
	assert.Equal(t, http.StatusOK, get(ctlURL+"/_sim/state", "Authorization", "Bearer e2e-token"))
	assert.Equal(t, http.StatusOK, get(ctlURL+"/_sim/health"))

	env := map[string]string{"DUBSIM_URL": ctlURL, "DUBSIM_CONTROL_TOKEN": "e2e-token"}
	var out strings.Builder
	require.NoError(t, run(t.Context(), []string{"ctl", "freeze"}, func(k string) string { return env[k] }, &out, io.Discard), "ctl sends the token and X-Dubsim-Control")
	assert.Contains(t, out.String(), `"frozen":true`)
	out.Reset()
	err := run(t.Context(), []string{"ctl", "--control-token", "wrong", "reset"}, func(k string) string { return env[k] }, &out, io.Discard)
	assert.EqualError(t, err, "POST /_sim/reset: HTTP 401")
}
