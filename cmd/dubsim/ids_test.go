package main

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// createdID creates a project with key and returns its id.
func (in *instance) createdID(t *testing.T, key string) string {
	t.Helper()
	st, m, _ := in.req(t, "POST", "/api/v1/projects", key,
		`{"name":"ids","source_lang":"en","target_lang":"fr-FR","source_video_url":"https://media.dubsim.test/short.mp4"}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	return m["project_id"].(string)
}

// TestIDsUniqueAcrossTenantsAndRuns: without --seed two fresh runs, and
// the default and the sandboxes of one run, give their first projects
// different ids; a restart on the same data file goes on with its own
// sequence; --seed (and a sandbox's seed) makes them reproducible.
func TestIDsUniqueAcrossTenantsAndRuns(t *testing.T) {
	t.Parallel()
	const key = "dubsim-enterprise"
	data := filepath.Join(t.TempDir(), "dubsim.db")
	a := start(t, "--data", data, "--time-scale", "0")
	seen := map[string]string{}
	unique := func(who, id string) {
		t.Helper()
		if other, ok := seen[id]; ok {
			t.Errorf("%s and %s share project id %s", who, other, id)
		}
		seen[id] = who
	}
	unique("run a", a.createdID(t, key))
	for _, name := range []string{"sandbox 1", "sandbox 2"} {
		st, m, _ := a.req(t, "POST", "/_sim/sandboxes", "", `{}`)
		require.Equal(t, http.StatusCreated, st, "%v", m)
		unique(name, a.createdID(t, m["api_keys"].(map[string]any)[key].(string)))
	}
	var seeded []string
	for range 2 {
		st, m, _ := a.req(t, "POST", "/_sim/sandboxes", "", `{"seed":9}`)
		require.Equal(t, http.StatusCreated, st, "%v", m)
		seeded = append(seeded, a.createdID(t, m["api_keys"].(map[string]any)[key].(string)))
	}
	assert.Equal(t, seeded[0], seeded[1], "two sandboxes of the same explicit seed")
	require.NoError(t, a.stop())

	again := start(t, "--data", data, "--time-scale", "0")
	unique("run a, restarted", again.createdID(t, key))
	require.NoError(t, again.stop())

	b := start(t, "--time-scale", "0")
	unique("run b", b.createdID(t, key))
	require.NoError(t, b.stop())

	var fixed []string
	for range 2 {
		in := start(t, "--time-scale", "0", "--seed", "0")
		fixed = append(fixed, in.createdID(t, key))
		require.NoError(t, in.stop())
	}
	assert.Equal(t, fixed[0], fixed[1], "--seed: the same first id")
}
