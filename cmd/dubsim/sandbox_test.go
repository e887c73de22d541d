package main

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSandboxesAcrossARestart: the binary serves sandboxes (created on the
// control API, reached by key and by prefix), keeps them beside the data
// file, and restores them with their data and their clocks.
func TestSandboxesAcrossARestart(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "keep.db")
	env := cacheEnv(t)
	env["DUBSIM_DATA"] = data
	r := startRun(t, env, "--log-level", "off")
	assert.Contains(t, r.banner, "  sandboxes:   POST /_sim/sandboxes (at most 200; expire after 30m0s idle); 0 restored\n")
	in := &instance{base: r.base}
	status, sb, _ := in.req(t, "PUT", "/_sim/sandboxes/k7q2m9x4w3p8r5t6", "", `{"start":"2031-01-01T00:00:00Z"}`)
	require.Equal(t, http.StatusCreated, status, "%v", sb)
	key := sb["api_keys"].(map[string]any)["dubsim-pro"].(string)
	assert.Equal(t, "sbx_k7q2m9x4w3p8r5t6_dubsim-pro", key)
	status, p, _ := in.req(t, "POST", "/api/v1/projects", key,
		`{"source_lang":"en","target_lang":"de-DE","source_video_url":"https://media.dubsim.test/short.mp4"}`)
	require.Equal(t, http.StatusOK, status, "%v", p)
	id := p["project_id"].(string)
	status, _, _ = in.req(t, "POST", "/sbx/k7q2m9x4w3p8r5t6/_sim/clock/advance", "", `{"seconds":30}`)
	require.Equal(t, http.StatusOK, status)
	_, err := os.Stat(data + ".sandboxes/k7q2m9x4w3p8r5t6.db")
	require.NoError(t, err, "the sandbox's file sits beside the data file")
	require.NoError(t, r.stop())

	r = startRun(t, env, "--log-level", "off")
	assert.Contains(t, r.banner, "; 1 restored\n")
	in = &instance{base: r.base}
	status, c, _ := in.req(t, "GET", "/_sim/sandboxes/k7q2m9x4w3p8r5t6/clock", "", "")
	require.Equal(t, http.StatusOK, status, "%v", c)
	assert.Equal(t, "2031-01-01T00:00:30.000Z", c["now"], "the frozen clock stood still while dubsim was stopped")
	status, p, _ = in.req(t, "GET", "/api/v1/projects/"+id, key, "")
	require.Equal(t, http.StatusOK, status, "%v", p)
	assert.Equal(t, "in_progress", p["status"])
	status, _, _ = in.req(t, "GET", "/api/v1/projects/"+id, "dubsim-pro", "")
	assert.Equal(t, http.StatusNotFound, status, "the default never had it")
	require.NoError(t, r.stop())
}

// TestSandboxesOff: --sandbox-max 0 serves no sandbox resource.
func TestSandboxesOff(t *testing.T) {
	t.Parallel()
	r := startRun(t, cacheEnv(t), "--sandbox-max", "0", "--log-level", "off")
	defer func() { assert.NoError(t, r.stop()) }()
	assert.NotContains(t, r.banner, "sandboxes:")
	in := &instance{base: r.base}
	status, body, _ := in.req(t, "POST", "/_sim/sandboxes", "", `{}`)
	assert.Equal(t, http.StatusNotFound, status, "%v", body)
}
