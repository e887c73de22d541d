package server_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dubsim/dubsim/internal/simtest"
	"github.com/dubsim/dubsim/sim/journal"
	"github.com/dubsim/dubsim/sim/server"
)

// TestProjectPageViewsAreNotJournalled: docs/control-api.md says the web
// pages are not recorded in the journal (fidelity EF3); the API calls
// around them are.
func TestProjectPageViewsAreNotJournalled(t *testing.T) {
	t.Parallel()
	const fixtureProject = "6800ed147125e1af62bc928c" // fixtures/studio.json
	tests := []struct {
		name      string
		noControl bool
		method    string
		path      string
		status    int
		recorded  bool
	}{
		{"a project page", false, "GET", "/projects/" + fixtureProject, http.StatusOK, false},
		{"its HEAD", false, "HEAD", "/projects/" + fixtureProject, http.StatusOK, false},
		{"under /studio", false, "GET", "/studio/projects/" + fixtureProject, http.StatusOK, false},
		{"an unknown project's 404 page", false, "GET", "/projects/6800ed147125e1af62bc0000", http.StatusNotFound, false},
		{"another method on the path: an API call", false, "POST", "/projects/" + fixtureProject, http.StatusNotFound, true},
		{"no pages with --no-control: an API call", true, "GET", "/projects/" + fixtureProject, http.StatusNotFound, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := simtest.New(t, t0, func(c *server.Config) { c.NoControl = tc.noControl }).Server
			hs := httptest.NewServer(s.Handler)
			t.Cleanup(hs.Close)
			get := func(method, path string) int {
				req, err := http.NewRequest(method, hs.URL+path, nil)
				require.NoError(t, err)
				req.Header.Set("Authorization", "Bearer dubsim-pro")
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				_ = resp.Body.Close()
				return resp.StatusCode
			}
			// API calls before and after: both recorded, so the journal works.
			require.Equal(t, http.StatusOK, get("GET", "/api/v1/balance"))
			assert.Equal(t, tc.status, get(tc.method, tc.path))
			require.Equal(t, http.StatusOK, get("GET", "/api/v1/balance"))

			var paths []string
			for _, e := range s.Journal.Entries(journal.Filter{}) {
				paths = append(paths, e.Method+" "+e.Path)
			}
			want := []string{"GET /api/v1/balance", "GET /api/v1/balance"}
			if tc.recorded {
				want = []string{"GET /api/v1/balance", tc.method + " " + tc.path, "GET /api/v1/balance"}
			}
			assert.ElementsMatch(t, want, paths)
		})
	}
}
