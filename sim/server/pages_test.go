package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// page fetches a path with a browser's Accept header, without following
// redirects.
func page(t *testing.T, h http.Handler, method, path string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://dubsim.test"+path, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Header(), rec.Body.String()
}

func getJSON(t *testing.T, url, key string, out any) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NoError(t, json.NewDecoder(res.Body).Decode(out))
}

// TestWebPages: the projectUrl page on both addresses, the root redirect,
// fault rules not applied to the page, and nothing of it with --no-control.
func TestWebPages(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	var projects []struct{ ID, Name, ProjectURL string }
	getJSON(t, in.url+"/api/v1/projects", "dubsim-pro", &projects)
	require.NotEmpty(t, projects)
	p := projects[0]
	require.True(t, strings.HasSuffix(p.ProjectURL, "/projects/"+p.ID), p.ProjectURL)

	for name, h := range map[string]http.Handler{"main": in.srv.Handler, "studio address": in.srv.StudioHandler} {
		status, hdr, body := page(t, h, "GET", "/projects/"+p.ID)
		assert.Equal(t, http.StatusOK, status, name)
		assert.Equal(t, "text/html; charset=utf-8", hdr.Get("Content-Type"), name)
		assert.Contains(t, body, "<h1 id=\"project-name\">", name)
		status, _, _ = page(t, h, "GET", "/projects/000000000000000000000000")
		assert.Equal(t, http.StatusNotFound, status, name)
	}
	_, _, body := page(t, in.srv.StudioHandler, "GET", "/projects/"+p.ID)
	assert.NotContains(t, body, "/_sim/ui/", "the studio address has no dashboard to link to")

	status, hdr, _ := page(t, in.srv.Handler, "GET", "/")
	assert.Equal(t, http.StatusFound, status)
	assert.Equal(t, "/_sim/ui/", hdr.Get("Location"))
	st, m := in.call("GET", "/", "", "")
	assert.Equal(t, http.StatusNotFound, st, "an API client's GET / is not redirected")
	assert.Equal(t, "NotFoundError", m["error"])
	st, m = in.call("POST", "/projects/"+p.ID, "", "{}")
	assert.NotEqual(t, http.StatusOK, st, "only GET and HEAD are the page: %v", m)

	st, _ = in.call("POST", "/_sim/faults", "", `{"path":"/*","action":{"type":"error","status":503,"error":"ServiceUnavailableError","message":"down"}}`)
	require.Equal(t, http.StatusCreated, st)
	status, _, _ = page(t, in.srv.Handler, "GET", "/projects/"+p.ID)
	assert.Equal(t, http.StatusOK, status, "fault rules are for the API, not the page")
	st, _ = in.call("GET", "/api/v1/balance", "dubsim-pro", "")
	assert.Equal(t, http.StatusServiceUnavailable, st, "the rule is active")
}

func TestWebPagesOffWithNoControl(t *testing.T) {
	t.Parallel()
	in := start(t, func(c *app.Config) { c.NoControl = true })
	var projects []struct{ ID string }
	getJSON(t, in.url+"/api/v1/projects", "dubsim-pro", &projects)
	require.NotEmpty(t, projects)
	for _, path := range []string{"/projects/" + projects[0].ID, "/_sim/ui/", "/_sim/studio", "/"} {
		status, hdr, _ := page(t, in.srv.Handler, "GET", path)
		assert.Equal(t, http.StatusNotFound, status, path)
		assert.Contains(t, hdr.Get("Content-Type"), "application/json", path)
	}
}

// TestWebPagesUnderBasePath: served below a path prefix (a sandbox's
// /sbx/{id}, recorded with httpx.WithBasePath by whatever removed it), the
// root redirect, the project page's dashboard link and the dashboard's own
// redirect and base stay below it.
func TestWebPagesUnderBasePath(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	var projects []struct{ ID string }
	getJSON(t, in.url+"/api/v1/projects", "dubsim-pro", &projects)
	require.NotEmpty(t, projects)
	const base = "/sbx/k7q2m9x4w3p8r5t6"
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in.srv.Handler.ServeHTTP(w, r.WithContext(httpx.WithBasePath(r.Context(), base)))
	})
	status, hdr, _ := page(t, h, "GET", "/")
	assert.Equal(t, http.StatusFound, status)
	assert.Equal(t, base+"/_sim/ui/", hdr.Get("Location"))
	_, _, body := page(t, h, "GET", "/projects/"+projects[0].ID)
	assert.Contains(t, body, `href="`+base+`/_sim/ui/"`)
	assert.NotContains(t, body, `"/_sim`)
	status, hdr, _ = page(t, h, "GET", "/_sim/ui")
	assert.Equal(t, http.StatusMovedPermanently, status)
	assert.Equal(t, base+"/_sim/ui/", hdr.Get("Location"))
	_, _, body = page(t, h, "GET", "/_sim/ui/")
	assert.Contains(t, body, `<meta name="dubsim-base" content="`+base+`">`)
}
