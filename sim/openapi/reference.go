package openapi

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"maps"
	"net/http"
	"path"
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

var referenceTmpl = template.Must(template.New("reference").Funcs(template.FuncMap{"schema": schemaHTML}).Parse(referenceHTML))

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

// refDocument is what the page shows of a document, decoded as written.
type refDocument struct {
	Info       struct{ Title, Version, Description string }
	Servers    []server
	Tags       []struct{ Name, Description string }
	Paths      map[string]map[string]json.RawMessage
	Security   []map[string]any
	Components struct {
		Schemas                  map[string]any
		Parameters, Headers      map[string]refParam
		RequestBodies, Responses map[string]refBody
	}
}

type refPage struct {
	*refDocument
	Groups     []*refGroup
	Operations int
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
	OperationID, Summary, Description string
	Tags                              []string
	Interface                         any `json:"x-dubsim-interface"`
	Security                          []map[string]any
	Parameters                        []refParam
	RequestBody                       *refBody
	Responses                         map[string]refBody
	// Method, Path, Interfaces and Access (the schemes it accepts, in
	// words) are the page's.
	Method, Path, Interfaces, Access string `json:"-"`
}

// refParam is a parameter or a header.
type refParam struct {
	Ref                   string `json:"$ref"`
	Name, In, Description string
	Required              bool
	Schema                any
}

// refBody is a request body or a response.
type refBody struct {
	Ref         string `json:"$ref"`
	Description string
	Required    bool
	Content     map[string]struct{ Schema any }
	Headers     map[string]refParam
}

func (p refParam) ref() string { return p.Ref }
func (b refBody) ref() string  { return b.Ref }

// resolve follows the $ref chain of v (8 links at most) into sec, the
// components of its kind.
func resolve[T interface{ ref() string }](v T, sec map[string]T) T {
	for i := 0; i < 8 && v.ref() != ""; i++ {
		v = sec[path.Base(v.ref())]
	}
	return v
}

// interfaceOrder orders the groups of the page.
var interfaceOrder = map[string]int{Platform: 0, Studio: 1, Platform + " and " + Studio: 2, Control: 3}

// RenderReference renders a document (the combined one, or one
// interface's) as the API reference page.
func RenderReference(doc []byte) ([]byte, error) {
	page := refPage{refDocument: &refDocument{}}
	if err := json.Unmarshal(doc, page.refDocument); err != nil {
		return nil, err
	}
	tagDesc := map[string]string{}
	for _, t := range page.Tags {
		tagDesc[t.Name] = t.Description
	}
	groups := map[string]*refGroup{}
	tags := map[[2]string]*refTag{}
	for _, p := range slices.Sorted(maps.Keys(page.Paths)) {
		for _, m := range methods {
			raw, ok := page.Paths[p][m]
			if !ok {
				continue
			}
			o, err := page.operation(p, m, raw)
			if err != nil {
				return nil, err
			}
			g := groups[o.Interfaces]
			if g == nil {
				g = &refGroup{Interface: o.Interfaces}
				groups[o.Interfaces] = g
			}
			tagName := "Other"
			if len(o.Tags) > 0 {
				tagName = o.Tags[0]
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
	var buf bytes.Buffer
	if err := referenceTmpl.Execute(&buf, page); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// operation decodes the operation of method m of the path p, with its
// references resolved and the path's parameters first.
func (d *refDocument) operation(p, m string, raw json.RawMessage) (refOp, error) {
	var o refOp
	var shared []refParam
	if err := json.Unmarshal(raw, &o); err != nil {
		return o, err
	}
	if raw, ok := d.Paths[p]["parameters"]; ok {
		if err := json.Unmarshal(raw, &shared); err != nil {
			return o, err
		}
	}
	if o.Security == nil {
		o.Security = d.Security
	}
	o.Method, o.Path, o.Access = strings.ToUpper(m), p, security(o.Security)
	switch x := o.Interface.(type) {
	case string:
		o.Interfaces = x
	case []any:
		names := make([]string, len(x))
		for i, n := range x {
			names[i] = fmt.Sprint(n)
		}
		o.Interfaces = strings.Join(names, " and ")
	}
	o.Parameters = append(shared, o.Parameters...)
	for i, prm := range o.Parameters {
		o.Parameters[i] = resolve(prm, d.Components.Parameters)
	}
	if o.RequestBody != nil {
		*o.RequestBody = resolve(*o.RequestBody, d.Components.RequestBodies)
	}
	for code, r := range o.Responses {
		r = resolve(r, d.Components.Responses)
		for n, h := range r.Headers {
			r.Headers[n] = resolve(h, d.Components.Headers)
		}
		o.Responses[code] = r
	}
	return o, nil
}

// security says in words which schemes an operation accepts.
func security(reqs []map[string]any) string {
	var alts []string
	open := len(reqs) == 0
	for _, r := range reqs {
		if len(r) == 0 {
			open = true
			continue
		}
		alts = append(alts, strings.Join(slices.Sorted(maps.Keys(r)), " + "))
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
