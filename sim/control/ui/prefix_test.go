package ui_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// under serves next below prefix as a sandbox's dispatcher does: the prefix
// is removed from the path and recorded with httpx.WithBasePath; any other
// path is a 404.
func under(prefix string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok || !strings.HasPrefix(rest, "/") {
			http.NotFound(w, r)
			return
		}
		r2 := r.Clone(httpx.WithBasePath(r.Context(), prefix))
		r2.URL.Path, r2.URL.RawPath = rest, ""
		next.ServeHTTP(w, r2)
	})
}

// rooted finds the absolute paths an answer holds: quoted strings (HTML
// attributes, JSON values) that start with one slash; a placeholder is
// text for the reader, not an address.
var rooted = regexp.MustCompile(`(placeholder=)?"(/[^"/][^"]*|/)"`)

// escapes returns the absolute paths of body (and of a Location) that are
// not below prefix.
func escapes(prefix string, a answer) []string {
	var out []string
	found := rooted.FindAllStringSubmatch(a.body, -1)
	if loc := a.header.Get("Location"); loc != "" {
		found = append(found, []string{"", "", loc})
	}
	for _, m := range found {
		if m[1] == "" && m[2] != prefix && !strings.HasPrefix(m[2], prefix+"/") {
			out = append(out, m[2])
		}
	}
	return out
}

// TestDashboardUnderPrefix serves the whole web application below a path
// prefix (a sandbox's /sbx/{id}, and one below another, as prefixes
// compose) and checks that no link, redirect or address of its pages and
// views leaves the prefix; the same requests without a prefix give the
// paths of before.
func TestDashboardUnderPrefix(t *testing.T) {
	t.Parallel()
	inner := handler(fixture())
	for _, prefix := range []string{"", "/sbx/k7q2m9x4w3p8r5t6", "/outer/sbx/abc"} {
		h := inner
		switch prefix {
		case "/sbx/k7q2m9x4w3p8r5t6":
			h = under(prefix, inner)
		case "/outer/sbx/abc":
			h = under("/outer", under("/sbx/abc", inner))
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		t.Run("prefix "+prefix, func(t *testing.T) {
			pages := []struct {
				path   string
				status int
			}{
				{"/_sim/ui", http.StatusMovedPermanently},
				{"/_sim/ui/", 200},
				{"/_sim/ui/index.html", 200},
				{"/_sim/ui/app.js", 200},
				{"/_sim/ui/app.css", 200},
				{"/projects/p1", 200},
				{"/projects/nope", 404},
				{"/_sim/projects/802323387", 200},
				{"/_sim/projects/802323388", 200},
			}
			for _, p := range pages {
				a := get(t, srv, "GET", prefix+p.path)
				require.Equal(t, p.status, a.status, p.path+": "+a.body)
				assert.Empty(t, escapes(prefix, a), "%s: absolute paths outside %q", p.path, prefix)
			}

			redirect := get(t, srv, "GET", prefix+"/_sim/ui")
			assert.Equal(t, prefix+"/_sim/ui/", redirect.header.Get("Location"))

			page := get(t, srv, "GET", prefix+"/_sim/ui/")
			assert.Contains(t, page.body, `<meta name="dubsim-base" content="`+prefix+`">`, "the page carries its base for app.js")

			project := get(t, srv, "GET", prefix+"/projects/p1")
			assert.Contains(t, project.body, `<a href="`+prefix+`/_sim/ui/">Open the dashboard</a>`)

			var d struct {
				AudioURL string `json:"audio_url"`
			}
			require.NoError(t, json.Unmarshal([]byte(get(t, srv, "GET", prefix+"/_sim/projects/802323387").body), &d))
			assert.Equal(t, prefix+"/_sim/projects/802323387/audio.wav", d.AudioURL)
			wav := get(t, srv, "GET", d.AudioURL)
			require.Equal(t, 200, wav.status, "the audio_url answers as given")
			assert.Equal(t, "RIFF", wav.body[:4])

		})
	}
}

// TestEscapesFindsAbsolutePaths: the check above sees a path that leaves
// the prefix.
func TestEscapesFindsAbsolutePaths(t *testing.T) {
	t.Parallel()
	p := "/sbx/abc"
	assert.Equal(t, []string{"/_sim/ui/"}, escapes(p, answer{body: `<a href="/_sim/ui/">`, header: http.Header{}}))
	assert.Equal(t, []string{"/_sim/projects/1/audio.wav"}, escapes(p, answer{body: `{"audio_url":"/_sim/projects/1/audio.wav"}`, header: http.Header{}}))
	assert.Equal(t, []string{"/_sim/ui/"}, escapes(p, answer{header: http.Header{"Location": {"/_sim/ui/"}}}))
	assert.Equal(t, []string{"/sbx/abcd/x"}, escapes(p, answer{body: `"/sbx/abcd/x"`, header: http.Header{}}))
	assert.Empty(t, escapes(p, answer{body: `<a href="/sbx/abc/_sim/ui/"> <meta content="/sbx/abc"> <a href="app.css"> "//" "a/b" placeholder="/api/v1/x"`, header: http.Header{}}))
}

// scriptEscapes finds where a dashboard script names a server path on its
// own instead of building it from the page's base: a string literal that
// starts with a path of the simulator's (/_sim, /projects, /sbx, the APIs)
// and is neither appended to ROOT, SERVED or BASE nor the path argument of
// api() (which appends it to BASE); a fetch( of anything but
// BASE + ... or the audio src built from it; an EventSource; an href that
// is a literal path.
func scriptEscapes(js string) []string {
	var out []string
	var code []string
	for _, line := range strings.Split(js, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "//") {
			code = append(code, line)
		}
	}
	src := strings.Join(code, "\n")
	literal := regexp.MustCompile("([A-Za-z]+ \\+ |api\\('[A-Z]+', )?['\"`](/(?:_sim|projects|sbx|api/|v1/|studio|_uploads|healthz|openapi)[^'\"`]*)")
	for _, m := range literal.FindAllStringSubmatch(src, -1) {
		if m[1] != "ROOT + " && m[1] != "SERVED + " && m[1] != "BASE + " && !strings.HasPrefix(m[1], "api(") {
			out = append(out, m[0])
		}
	}
	fetch := regexp.MustCompile(`fetch\(([^,)]*)`)
	for _, m := range fetch.FindAllStringSubmatch(src, -1) {
		if !strings.HasPrefix(m[1], "BASE + ") && m[1] != "src" {
			out = append(out, m[0])
		}
	}
	direct := regexp.MustCompile("new EventSource\\(|href: ['\"`]/|location\\.(?:assign|replace)\\(['\"`]/")
	out = append(out, direct.FindAllString(src, -1)...)
	return out
}

// TestDashboardScriptAddresses: every address app.js calls or links is
// built from its base, so the dashboard works below any prefix.
func TestDashboardScriptAddresses(t *testing.T) {
	t.Parallel()
	js, err := os.ReadFile("static/app.js")
	require.NoError(t, err)
	assert.Empty(t, scriptEscapes(string(js)), "static/app.js names server paths without its base")
	assert.Contains(t, string(js), `document.querySelector('meta[name="dubsim-base"]')`, "app.js reads the page's base")
	html, err := os.ReadFile("static/index.html")
	require.NoError(t, err)
	assert.Empty(t, escapes("/none", answer{body: string(html), header: http.Header{}}), "index.html links only relative paths")

	for _, bad := range []string{
		`fetch('/_sim/state')`,
		"api('GET', x).then(() => fetch(`/_sim/events`))",
		`const u = '/_sim/sandboxes';`,
		"h('a', { href: `/sbx/${id}/_sim/ui/` })",
		`h('a', { href: '/projects/1' })`,
		`h('a', { href: '/openapi.json' })`,
		"location.assign(`/x`)",
		`new EventSource(BASE + '/events')`,
		`fetch(url)`,
	} {
		assert.NotEmpty(t, scriptEscapes(bad), "not seen: %s", bad)
	}
	assert.Empty(t, scriptEscapes("fetch(BASE + '/events'); const BASE = ROOT + '/_sim'; api('GET', '/faults'); h('a', { href: `${ROOT}/projects/1` })"))
}
