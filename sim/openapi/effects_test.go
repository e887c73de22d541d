package openapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim/openapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// effectsHeading is the section of docs/fidelity.md that says, for every
// request field of both interfaces, what in the output changes with it.
const effectsHeading = "## Inputs and what they change"

// TestEffectsTableCoversEveryRequestField fails when a request field of the
// platform or studio document (a body field, nested ones as a.b and a[].b,
// or a query parameter of an /api/ operation) has no row in the effects
// table, or when a row names a field the documents do not have.
func TestEffectsTableCoversEveryRequestField(t *testing.T) {
	t.Parallel()
	documented, allowed := map[string]bool{}, map[string]bool{}
	for _, name := range []string{openapi.Platform, openapi.Studio} {
		b, err := openapi.Document(name)
		require.NoError(t, err)
		for op, f := range requestFields(t, b) {
			for _, field := range f.required {
				documented[op+" "+field] = true
				allowed[op+" "+field] = true
			}
			for _, field := range f.optional {
				allowed[op+" "+field] = true
			}
		}
	}
	require.Greater(t, len(documented), 50, "the walk finds the request fields")

	rows := effectsRows(t, filepath.Join("..", "..", "docs", "fidelity.md"))
	var missing, unknown []string
	for k := range documented {
		if !rows[k] {
			missing = append(missing, k)
		}
	}
	for k := range rows {
		if !allowed[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(unknown)
	assert.Empty(t, missing, "request fields without a row in %q of docs/fidelity.md", effectsHeading)
	assert.Empty(t, unknown, "rows of %q naming no field of the OpenAPI documents", effectsHeading)
}

type opFields struct{ required, optional []string }

// requestFields lists, per "METHOD path", the fields a row must cover
// (body fields, query parameters of /api/ operations) and those it may
// (header parameters).
func requestFields(t *testing.T, doc []byte) map[string]*opFields {
	t.Helper()
	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas    map[string]map[string]any `json:"schemas"`
			Parameters map[string]map[string]any `json:"parameters"`
			Bodies     map[string]map[string]any `json:"requestBodies"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(doc, &d))
	resolve := func(m map[string]any, in map[string]map[string]any) map[string]any {
		for i := 0; i < 10; i++ {
			ref, ok := m["$ref"].(string)
			if !ok {
				return m
			}
			m = in[ref[strings.LastIndex(ref, "/")+1:]]
		}
		return m
	}
	var walk func(s map[string]any, prefix string, out *[]string)
	walk = func(s map[string]any, prefix string, out *[]string) {
		s = resolve(s, d.Components.Schemas)
		for _, k := range []string{"oneOf", "anyOf", "allOf"} {
			list, _ := s[k].([]any)
			for _, sub := range list {
				if m, ok := sub.(map[string]any); ok {
					walk(m, prefix, out)
				}
			}
		}
		props, _ := s["properties"].(map[string]any)
		for name, v := range props {
			*out = append(*out, prefix+name)
			p, _ := v.(map[string]any)
			p = resolve(p, d.Components.Schemas)
			walk(p, prefix+name+".", out)
			if items, ok := p["items"].(map[string]any); ok {
				walk(items, prefix+name+"[].", out)
			}
		}
	}
	ops := map[string]*opFields{}
	for path, item := range d.Paths {
		var common []map[string]any
		if raw, ok := item["parameters"]; ok {
			require.NoError(t, json.Unmarshal(raw, &common))
		}
		for method, raw := range item {
			if !slices.Contains([]string{"get", "put", "post", "delete", "patch"}, method) {
				continue
			}
			var op struct {
				Parameters  []map[string]any `json:"parameters"`
				RequestBody map[string]any   `json:"requestBody"`
			}
			require.NoError(t, json.Unmarshal(raw, &op))
			f := &opFields{}
			for _, p := range append(slices.Clone(common), op.Parameters...) {
				p = resolve(p, d.Components.Parameters)
				name, _ := p["name"].(string)
				switch p["in"] {
				case "query":
					if strings.HasPrefix(path, "/api/") {
						f.required = append(f.required, name)
					}
				case "header":
					f.optional = append(f.optional, name)
				}
			}
			if op.RequestBody != nil {
				body := resolve(op.RequestBody, d.Components.Bodies)
				content, _ := body["content"].(map[string]any)
				for ct, c := range content {
					if ct != "application/json" && ct != "multipart/form-data" {
						continue
					}
					m, _ := c.(map[string]any)
					schema, _ := m["schema"].(map[string]any)
					walk(schema, "", &f.required)
				}
			}
			if len(f.required)+len(f.optional) > 0 {
				ops[strings.ToUpper(method)+" "+path] = f
			}
		}
	}
	return ops
}

var (
	rowOperation = regexp.MustCompile("^`((?:GET|PUT|POST|PATCH|DELETE) /[^`]*)`$")
	rowField     = regexp.MustCompile("`([^`]+)`")
)

// effectsRows reads the effects section: each table row's first cell is
// an operation in backquotes, its second cell one or more fields in
// backquotes. It returns "METHOD path field" for each.
func effectsRows(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	rows := map[string]bool{}
	in, found := false, false
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == effectsHeading
			found = found || in
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, " | ")
		require.GreaterOrEqual(t, len(cells), 3, "row %q", line)
		op := rowOperation.FindStringSubmatch(strings.TrimPrefix(cells[0], "| "))
		require.NotNil(t, op, "the first cell of %q is an operation such as `POST /api/v1/projects`", line)
		fields := rowField.FindAllStringSubmatch(cells[1], -1)
		require.NotEmpty(t, fields, "the second cell of %q names fields in backquotes", line)
		for _, f := range fields {
			rows[op[1]+" "+f[1]] = true
		}
	}
	require.NoError(t, sc.Err())
	require.True(t, found, "docs/fidelity.md has the section %q", effectsHeading)
	return rows
}
