package openapi

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"html"
	"html/template"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// ReferencePaths are where Reference serves the API reference page and its
// script, under the dashboard's path (its files need no control token:
// the page holds the document and nothing of the state).
var ReferencePaths = []string{"/ui/api.html", "/ui/api.js"}

//go:embed reference.html
var referenceHTML string

//go:embed reference.js
var referenceJS []byte

var referenceTmpl = template.Must(template.New("reference").Parse(referenceHTML))

// referenceCSP keeps the page to itself: its own script, inline styles of
// its own template, nothing fetched from elsewhere.
const referenceCSP = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Reference serves the API reference: /_sim/ui/api.html renders the
// combined document (with base as its first server, as Handler) as one
// HTML page, operations grouped by interface and tag with their
// parameters, request bodies and responses, schemas collapsed;
// /_sim/ui/api.js is its small script (filter, open a linked schema).
// Nothing is fetched from elsewhere.
func Reference(base func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !getOrHead(w, r) {
			return
		}
		var body []byte
		ct := "text/html; charset=utf-8"
		if strings.HasSuffix(r.URL.Path, ".js") {
			body, ct = referenceJS, "text/javascript; charset=utf-8"
		} else {
			doc, err := Combined()
			if err == nil && base != nil {
				doc, err = WithServers(doc, base(r))
			}
			if err == nil {
				body, err = RenderReference(doc)
			}
			if err != nil {
				http.Error(w, "the API reference could not be rendered: "+err.Error(), http.StatusInternalServerError)
				return
			}
		}
		h := w.Header()
		h.Set("Content-Type", ct)
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", referenceCSP)
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = w.Write(body)
		}
	})
}

type refPage struct {
	Title, Version string
	Description    string
	Servers        []server
	Groups         []*refGroup
	Schemas        []refSchema
	Operations     int
}

type refGroup struct {
	Interface string
	Tags      []*refTag
}

type refTag struct {
	Name, Description string
	Anchor            string // the id of the tag's section: its interface and name
	Ops               []refOp
}

type refOp struct {
	ID, Method, Path, Summary, Description string
	Interfaces                             string
	Security                               string
	Params                                 []refParam
	BodyDescription                        string
	BodyRequired                           bool
	Body                                   []refMedia
	Responses                              []refResponse
}

type refParam struct {
	Name, In, Description string
	Required              bool
	Schema                template.HTML
}

type refMedia struct {
	Type   string
	Schema template.HTML
}

type refResponse struct {
	Code, Description string
	Headers           []refParam
	Content           []refMedia
}

type refSchema struct {
	Name   string
	Schema template.HTML
}

// interfaceOrder orders the groups of the page.
var interfaceOrder = map[string]int{Platform: 0, Studio: 1, Platform + " and " + Studio: 2, Control: 3}

// RenderReference renders a document (the combined one, or one
// interface's) as the API reference page.
func RenderReference(doc []byte) ([]byte, error) {
	var d refDoc
	if err := json.Unmarshal(doc, &d.doc); err != nil {
		return nil, err
	}
	d.comps, _ = d.doc["components"].(map[string]any)
	info, _ := d.doc["info"].(map[string]any)
	page := refPage{Title: str(info["title"]), Version: str(info["version"]), Description: str(info["description"])}
	if b, err := json.Marshal(d.doc["servers"]); err == nil {
		_ = json.Unmarshal(b, &page.Servers)
	}
	tagDesc := map[string]string{}
	for _, t := range asList(d.doc["tags"]) {
		tm, _ := t.(map[string]any)
		tagDesc[str(tm["name"])] = str(tm["description"])
	}
	groups := map[string]*refGroup{}
	tags := map[[2]string]*refTag{}
	paths, _ := d.doc["paths"].(map[string]any)
	for _, p := range sortedKeys(paths) {
		item, _ := paths[p].(map[string]any)
		for _, m := range methods {
			op, ok := item[m].(map[string]any)
			if !ok {
				continue
			}
			o := d.operation(p, m, item, op)
			g := groups[o.Interfaces]
			if g == nil {
				g = &refGroup{Interface: o.Interfaces}
				groups[o.Interfaces] = g
			}
			tagName := "Other"
			if ts := asList(op["tags"]); len(ts) > 0 {
				tagName = str(ts[0])
			}
			tg := tags[[2]string{o.Interfaces, tagName}]
			if tg == nil {
				tg = &refTag{Name: tagName, Description: tagDesc[tagName], Anchor: strings.NewReplacer(" ", "-", "+", "").Replace(o.Interfaces + "-" + tagName)}
				tags[[2]string{o.Interfaces, tagName}] = tg
				g.Tags = append(g.Tags, tg)
			}
			tg.Ops = append(tg.Ops, o)
			page.Operations++
		}
	}
	for _, g := range groups {
		page.Groups = append(page.Groups, g)
	}
	rank := func(g *refGroup) int { // the interfaces of interfaceOrder first
		if o, ok := interfaceOrder[g.Interface]; ok {
			return o
		}
		return len(interfaceOrder)
	}
	slices.SortFunc(page.Groups, func(a, b *refGroup) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a.Interface, b.Interface))
	})
	schemas, _ := d.comps["schemas"].(map[string]any)
	for _, n := range sortedKeys(schemas) {
		page.Schemas = append(page.Schemas, refSchema{Name: n, Schema: schemaHTML(schemas[n])})
	}
	var buf bytes.Buffer
	if err := referenceTmpl.Execute(&buf, page); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// refDoc is a decoded document and its components, for following $refs.
type refDoc struct {
	doc, comps map[string]any
}

// resolve follows the $ref chain of v (8 links at most) into the
// components.
func (d refDoc) resolve(v any) map[string]any {
	m, _ := v.(map[string]any)
	for i := 0; i < 8 && m != nil; i++ {
		ref, ok := m["$ref"].(string)
		if !ok {
			break
		}
		parts := strings.Split(strings.TrimPrefix(ref, "#/components/"), "/")
		if len(parts) != 2 {
			break
		}
		sec, _ := d.comps[parts[0]].(map[string]any)
		m, _ = sec[parts[1]].(map[string]any)
	}
	return m
}

// operation describes the operation op, method m of the path item at p.
func (d refDoc) operation(p, m string, item, op map[string]any) refOp {
	o := refOp{ID: str(op["operationId"]), Method: strings.ToUpper(m), Path: p, Summary: str(op["summary"]), Description: str(op["description"])}
	switch x := op["x-dubsim-interface"].(type) {
	case string:
		o.Interfaces = x
	case []any:
		var names []string
		for _, n := range x {
			names = append(names, str(n))
		}
		o.Interfaces = strings.Join(names, " and ")
	}
	o.Security = security(op["security"], d.doc["security"])
	for _, prm := range append(asList(item["parameters"]), asList(op["parameters"])...) {
		pm := d.resolve(prm)
		o.Params = append(o.Params, refParam{Name: str(pm["name"]), In: str(pm["in"]), Description: str(pm["description"]), Required: pm["required"] == true, Schema: schemaHTML(pm["schema"])})
	}
	if rb := d.resolve(op["requestBody"]); rb != nil {
		o.BodyDescription, o.BodyRequired, o.Body = str(rb["description"]), rb["required"] == true, media(rb["content"])
	}
	resps, _ := op["responses"].(map[string]any)
	for _, code := range sortedKeys(resps) {
		rm := d.resolve(resps[code])
		resp := refResponse{Code: code, Description: str(rm["description"]), Content: media(rm["content"])}
		hs, _ := rm["headers"].(map[string]any)
		for _, hn := range sortedKeys(hs) {
			hm := d.resolve(hs[hn])
			resp.Headers = append(resp.Headers, refParam{Name: hn, Description: str(hm["description"]), Required: hm["required"] == true, Schema: schemaHTML(hm["schema"])})
		}
		o.Responses = append(o.Responses, resp)
	}
	return o
}

func media(v any) []refMedia {
	c, _ := v.(map[string]any)
	var out []refMedia
	for _, mt := range sortedKeys(c) {
		m, _ := c[mt].(map[string]any)
		out = append(out, refMedia{Type: mt, Schema: schemaHTML(m["schema"])})
	}
	return out
}

// security says in words which schemes an operation accepts.
func security(op, global any) string {
	reqs, ok := op.([]any)
	if !ok {
		reqs, _ = global.([]any)
	}
	var alts []string
	open := len(reqs) == 0
	for _, r := range reqs {
		rm, _ := r.(map[string]any)
		if len(rm) == 0 {
			open = true
			continue
		}
		alts = append(alts, strings.Join(sortedKeys(rm), " + "))
	}
	switch {
	case open && len(alts) == 0:
		return "none"
	case open:
		return "none, or " + strings.Join(alts, " or ")
	}
	return strings.Join(alts, " or ")
}

var refLink = regexp.MustCompile(`&#34;#/components/schemas/([^&]+)&#34;`)

// schemaHTML is v as indented JSON, escaped, with every schema reference a
// link to the schema's entry on the page.
func schemaHTML(v any) template.HTML {
	if v == nil {
		return ""
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return ""
	}
	s := html.EscapeString(strings.TrimSpace(buf.String()))
	return template.HTML(refLink.ReplaceAllString(s, `&#34;<a href="#schema-$1">#/components/schemas/$1</a>&#34;`)) //nolint:gosec // escaped above; only the links are markup
}

func str(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}
