package validate

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrNoOperation means the document has no operation for the request.
var ErrNoOperation = errors.New("no documented operation")

// Validator checks responses against one document.
type Validator struct {
	ops []*operation
}

// Operation describes a documented operation.
type Operation struct {
	ID     string
	Method string // upper case
	Path   string // template, as documented
	// Responses are the documented response keys ("200", "4XX", "default").
	Responses []string
}

type operation struct {
	Operation
	segs      []string
	literals  int
	responses map[string]*response
}

type response struct {
	contents map[string]*content // media type (lower case) -> content
	headers  map[string]*header  // canonical name -> header
}

type content struct {
	schema  *jsonschema.Schema // nil: not JSON, or no schema
	xmlRoot string             // for XML media types: schema's xml.name
}

type header struct {
	name     string // as documented
	required bool
	schema   *jsonschema.Schema
}

// Result says which documented response a real one matched.
type Result struct {
	Operation string // operationId
	Method    string
	Path      string // template
	Response  string // the matched response key
}

// New compiles every schema of the document; name is used in its URL.
func New(name string, doc []byte) (*Validator, error) {
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("validate: %s: %w", name, err)
	}
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("validate: %s: %w", name, err)
	}
	base := "mem:///" + name + ".json"
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(base, parsed); err != nil {
		return nil, fmt.Errorf("validate: %s: %w", name, err)
	}
	compile := func(ptr ...string) (*jsonschema.Schema, error) {
		return c.Compile(base + "#" + pointer(ptr...))
	}
	v := &Validator{}
	for _, p := range slices.Sorted(maps.Keys(d.Paths)) {
		for _, m := range []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"} {
			raw, ok := d.Paths[p][m]
			if !ok {
				continue
			}
			o, err := newOperation(fmt.Sprintf("validate: %s %s %s", name, m, p), p, m, raw, compile)
			if err != nil {
				return nil, err
			}
			v.ops = append(v.ops, o)
		}
	}
	return v, nil
}

// docOperation is what New reads of an operation.
type docOperation struct {
	ID        string `json:"operationId"`
	Responses map[string]struct {
		Ref     string `json:"$ref"`
		Headers map[string]struct {
			Required bool            `json:"required"`
			Schema   json.RawMessage `json:"schema"`
		} `json:"headers"`
		Content map[string]struct {
			Schema *struct {
				XML *struct {
					Name string `json:"name"`
				} `json:"xml"`
			} `json:"schema"`
		} `json:"content"`
	} `json:"responses"`
}

// newOperation reads the operation m of the path p and compiles the
// schemas of its responses; where starts its errors.
func newOperation(where, p, m string, raw json.RawMessage, compile func(ptr ...string) (*jsonschema.Schema, error)) (*operation, error) {
	var op docOperation
	if err := json.Unmarshal(raw, &op); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	o := &operation{Operation: Operation{ID: op.ID, Method: strings.ToUpper(m), Path: p}, responses: map[string]*response{}}
	o.segs = strings.Split(strings.Trim(p, "/"), "/")
	for _, s := range o.segs {
		if !isParam(s) {
			o.literals++
		}
	}
	for code, r := range op.Responses {
		if r.Ref != "" {
			return nil, fmt.Errorf("%s %s: response $ref is not supported; inline the response and $ref its schema", where, code)
		}
		o.Responses = append(o.Responses, code)
		rs := &response{contents: map[string]*content{}, headers: map[string]*header{}}
		for mt, ct := range r.Content {
			cc := &content{}
			if ct.Schema != nil {
				if IsJSON(mt) {
					s, err := compile("paths", p, m, "responses", code, "content", mt, "schema")
					if err != nil {
						return nil, fmt.Errorf("%s %s: %w", where, code, err)
					}
					cc.schema = s
				}
				if ct.Schema.XML != nil {
					cc.xmlRoot = ct.Schema.XML.Name
				}
			}
			rs.contents[strings.ToLower(mt)] = cc
		}
		for hn, h := range r.Headers {
			hh := &header{name: hn, required: h.Required}
			if len(h.Schema) > 0 {
				s, err := compile("paths", p, m, "responses", code, "headers", hn, "schema")
				if err != nil {
					return nil, fmt.Errorf("%s %s header %s: %w", where, code, hn, err)
				}
				hh.schema = s
			}
			rs.headers[http.CanonicalHeaderKey(hn)] = hh
		}
		o.responses[code] = rs
	}
	sort.Strings(o.Responses)
	return o, nil
}

// Operations lists the documented operations, by path and then method
// (get, put, post, delete, options, head, patch, trace).
func (v *Validator) Operations() []Operation {
	out := make([]Operation, len(v.ops))
	for i, o := range v.ops {
		out[i] = o.Operation
	}
	return out
}

// find returns the operation for a method and an escaped path: the one
// whose template matches with the most literal segments.
func (v *Validator) find(method, path string) *operation {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var best *operation
	for _, o := range v.ops {
		if o.Method != strings.ToUpper(method) || len(o.segs) != len(segs) {
			continue
		}
		ok := true
		for i, s := range o.segs {
			ok = ok && (s == segs[i] || (isParam(s) && segs[i] != ""))
		}
		if ok && (best == nil || o.literals > best.literals) {
			best = o
		}
	}
	return best
}

// Check validates one response to method and path (the escaped path,
// without the query). For HEAD requests the body is not checked.
func (v *Validator) Check(method, path string, status int, h http.Header, body []byte) (Result, error) {
	o := v.find(method, path)
	if o == nil {
		return Result{}, fmt.Errorf("%w for %s %s", ErrNoOperation, method, path)
	}
	res := Result{Operation: o.ID, Method: o.Method, Path: o.Path}
	code := strconv.Itoa(status)
	var r *response
	var key string
	for _, key = range []string{code, code[:1] + "XX", "default"} {
		if r = o.responses[key]; r != nil {
			break
		}
	}
	if r == nil {
		return res, fmt.Errorf("%s (%s %s): status %d is not documented (documented: %s); body: %s",
			o.ID, o.Method, o.Path, status, strings.Join(o.Responses, ", "), clip(body))
	}
	res.Response = key
	var errs []string
	for _, hd := range r.headers {
		name := hd.name
		val := h.Get(name)
		if val == "" {
			if hd.required {
				errs = append(errs, "required header "+name+" is missing")
			}
			continue
		}
		if hd.schema != nil {
			if err := hd.schema.Validate(headerValue(val)); err != nil {
				errs = append(errs, fmt.Sprintf("header %s %q: %v", name, val, err))
			}
		}
	}
	if method == http.MethodHead {
		return res, joinErrs(res, key, errs)
	}
	if len(r.contents) == 0 {
		if len(body) > 0 {
			errs = append(errs, fmt.Sprintf("no body is documented, got %d bytes: %s", len(body), clip(body)))
		}
		return res, joinErrs(res, key, errs)
	}
	ct := h.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		errs = append(errs, fmt.Sprintf("Content-Type %q: %v", ct, err))
		return res, joinErrs(res, key, errs)
	}
	var c *content
	for _, k := range []string{mt, mt[:strings.Index(mt, "/")+1] + "*", "*/*"} {
		if c = r.contents[k]; c != nil {
			break
		}
	}
	if c == nil {
		docd := slices.Sorted(maps.Keys(r.contents))
		errs = append(errs, fmt.Sprintf("Content-Type %s is not documented (documented: %s)", mt, strings.Join(docd, ", ")))
		return res, joinErrs(res, key, errs)
	}
	switch {
	case c.schema != nil:
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err != nil {
			errs = append(errs, fmt.Sprintf("body is not JSON: %v: %s", err, clip(body)))
			break
		}
		if err := c.schema.Validate(inst); err != nil {
			errs = append(errs, fmt.Sprintf("body does not match the schema: %v\nbody: %s", err, clip(body)))
		}
	case IsXML(mt):
		root, err := xmlRoot(body)
		if err != nil {
			errs = append(errs, fmt.Sprintf("body is not XML: %v: %s", err, clip(body)))
		} else if c.xmlRoot != "" && root != c.xmlRoot {
			errs = append(errs, fmt.Sprintf("XML root element is %s, documented %s", root, c.xmlRoot))
		}
	}
	return res, joinErrs(res, key, errs)
}

func joinErrs(r Result, key string, errs []string) error {
	if len(errs) == 0 {
		return nil
	}
	sort.Strings(errs)
	return fmt.Errorf("%s (%s %s) response %s: %s", r.Operation, r.Method, r.Path, key, strings.Join(errs, "; "))
}

// headerValue gives a header to its schema as a number when it is one (a
// Retry-After of "30" against {"type":"integer"}), else as a string.
func headerValue(s string) any {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return json.Number(strconv.FormatInt(n, 10))
	}
	return s
}

func xmlRoot(b []byte) (string, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if root == "" {
				return "", errors.New("no element")
			}
			return root, nil
		}
		if err != nil {
			return "", err
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
}

func isParam(s string) bool { return strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") }

// IsJSON reports whether a media type (without parameters) is JSON.
func IsJSON(mt string) bool {
	mt = strings.ToLower(mt)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// IsXML reports whether a lower-case media type (without parameters) is XML.
func IsXML(mt string) bool {
	return mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml")
}

// pointer builds a JSON pointer from unescaped tokens.
func pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}
