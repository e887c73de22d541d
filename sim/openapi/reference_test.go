package openapi_test

import (
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim/openapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	opRe     = regexp.MustCompile(`<details class="op" id="op-[^"]*" data-operation-id="([^"]*)" data-method="([A-Z]+)" data-path="([^"]*)">`)
	schemaRe = regexp.MustCompile(`<details class="schema" id="schema-([^"]*)">`)
	linkRe   = regexp.MustCompile(`href="#schema-([^"]*)"`)
	fetchRe  = regexp.MustCompile(`(?i)(src|href)="(https?:)?//`)
)

// TestReferenceListsEveryOperation: the API reference page holds one entry
// per operation of the combined document (method, path, operationId) and
// per schema, every schema link leads to an entry, and it loads nothing
// from elsewhere.
func TestReferenceListsEveryOperation(t *testing.T) {
	t.Parallel()
	h := openapi.Reference(func(r *http.Request) string { return "http://" + r.Host })
	req := httptest.NewRequest("GET", "/_sim/ui/api.html", nil)
	req.Host = "sim.test:8123"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"))
	assert.Contains(t, rec.Header().Get("Content-Security-Policy"), "script-src 'self'")
	page := rec.Body.String()

	b, err := openapi.Combined()
	require.NoError(t, err)
	var doc struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct{ Schemas map[string]json.RawMessage }
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	var want []string
	for p, item := range doc.Paths {
		for m, raw := range item {
			var op struct{ OperationID string }
			if m == "parameters" || m == "servers" || json.Unmarshal(raw, &op) != nil || op.OperationID == "" {
				continue
			}
			want = append(want, strings.ToUpper(m)+" "+p+" "+op.OperationID)
		}
	}
	var got []string
	for _, m := range opRe.FindAllStringSubmatch(page, -1) {
		got = append(got, m[2]+" "+html.UnescapeString(m[3])+" "+m[1])
	}
	sort.Strings(want)
	sort.Strings(got)
	require.Greater(t, len(want), 50, "the combined document has all three interfaces")
	assert.Equal(t, want, got)

	schemas := map[string]bool{}
	for _, m := range schemaRe.FindAllStringSubmatch(page, -1) {
		schemas[m[1]] = true
	}
	assert.Len(t, schemas, len(doc.Components.Schemas))
	links := linkRe.FindAllStringSubmatch(page, -1)
	require.NotEmpty(t, links)
	for _, m := range links {
		assert.True(t, schemas[m[1]], "a link to schema %s, which the page lacks", m[1])
	}
	assert.Empty(t, fetchRe.FindAllString(page, -1), "nothing is loaded from another host")
	assert.Contains(t, page, "<code>http://sim.test:8123</code>", "the server it was served from")
	for _, g := range []string{"<h2>platform</h2>", "<h2>studio</h2>", "<h2>platform and studio</h2>", "<h2>control</h2>"} {
		assert.Contains(t, page, g)
	}

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/_sim/ui/api.js", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/javascript; charset=utf-8", rec.Header().Get("Content-Type"))
	assert.Contains(t, rec.Body.String(), "openTarget")

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/_sim/ui/api.html", nil))
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	assert.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
}
