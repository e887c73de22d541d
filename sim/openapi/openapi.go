package openapi

import (
	"embed"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// The interfaces, in the order of the combined document.
const (
	Platform = "platform"
	Studio   = "studio"
	Control  = "control"
)

// Names lists the per-interface documents.
var Names = []string{Platform, Studio, Control}

//go:embed platform.json studio.json control.json
var files embed.FS

// Document returns the document of one interface.
func Document(name string) ([]byte, error) {
	b, err := files.ReadFile(name + ".json")
	if err != nil {
		return nil, fmt.Errorf("openapi: no document %q", name)
	}
	return b, nil
}

var combined = sync.OnceValues(func() ([]byte, error) {
	docs := make([][]byte, len(Names))
	for i, n := range Names {
		docs[i], _ = Document(n)
	}
	return Merge(Names, docs)
})

// Combined returns the document of dubsim's shared address: the three
// documents merged (see Merge).
func Combined() ([]byte, error) { return combined() }

// Handler serves the documents under /_sim: /_sim/openapi.json (combined)
// and /_sim/openapi/{platform,studio,control}.json (".json" optional), with
// GET or HEAD. Errors are in the control API's envelope. base, when not
// nil, gives the address a request reached dubsim at (the --public-url, or
// the request's scheme and host): each document names it first in its
// servers (see WithServers).
func Handler(base func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b []byte
		var err error
		switch name, ok := strings.CutPrefix(r.URL.Path, "/_sim/openapi/"); {
		case r.URL.Path == "/_sim/openapi.json":
			b, err = Combined()
		case ok && !strings.Contains(name, "/"):
			b, err = Document(strings.TrimSuffix(name, ".json"))
		default:
			err = fmt.Errorf("no document")
		}
		if err != nil {
			writeError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("No OpenAPI document at %s; the documents are /_sim/openapi.json (combined) and /_sim/openapi/{%s}.json", r.URL.Path, strings.Join(Names, ",")))
			return
		}
		if !getOrHead(w, r) {
			return
		}
		if base != nil {
			if b, err = WithServers(b, base(r)); err != nil {
				writeError(w, http.StatusInternalServerError, "InternalServerError", "The document could not be served: "+err.Error())
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(b)
	})
}

// getOrHead answers 405 to a request that is not GET or HEAD.
func getOrHead(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowedError", "Method "+r.Method+" is not allowed on "+r.URL.Path+"; use GET or HEAD")
	return false
}

// writeError writes an error in the control API's envelope.
func writeError(w http.ResponseWriter, status int, name, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"error": name, "message": msg})
	_, _ = w.Write(append(b, '\n'))
}

// componentKinds are the sections of components whose names the merge
// prefixes with the interface.
var componentKinds = []string{"schemas", "responses", "parameters", "examples", "requestBodies", "headers"}

var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// Merge combines per-interface documents into one. Component names gain the
// interface as a prefix ("platform.Project"), every operation is tagged
// x-dubsim-interface, and two operations on the same method and templated
// path (whatever their parameter names) become one: its parameters are the
// first's, its request and response bodies oneOf both, its operationId the
// two joined with "_or_".
func Merge(names []string, docs [][]byte) ([]byte, error) {
	out := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   "dubsim: platform, studio and control interfaces",
			"version": "1",
			"description": "The combined document of dubsim's shared address. The per-interface documents " +
				"(/_sim/openapi/platform.json, studio.json, control.json) are exact for each interface; here, the " +
				"operations both interfaces define on the same path are merged: dubsim routes GET /api/v1/projects/{id} " +
				"by the id's shape and POST /api/v1/projects by the body's fields (see the README).",
		},
		"servers": []any{map[string]any{"url": "http://localhost:8080", "description": "dubsim"}},
	}
	paths := map[string]map[string]any{} // normalised template -> path item
	keys := map[string]string{}          // normalised template -> first spelling
	comps := map[string]any{}
	var tags []any
	for i, raw := range docs {
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("openapi: %s: %w", names[i], err)
		}
		prefix := names[i] + "."
		doc = rewriteRefs(doc, prefix).(map[string]any)
		c, _ := doc["components"].(map[string]any)
		for _, kind := range append(componentKinds, "securitySchemes") {
			m, _ := c[kind].(map[string]any)
			for n, v := range m {
				if kind != "securitySchemes" { // shared by the interfaces: not prefixed
					n = prefix + n
				}
				if comps[kind] == nil {
					comps[kind] = map[string]any{}
				}
				comps[kind].(map[string]any)[n] = v
			}
		}
		if t, ok := doc["tags"].([]any); ok {
			tags = append(tags, t...)
		}
		ps, _ := doc["paths"].(map[string]any)
		for p, item := range ps {
			it, _ := item.(map[string]any)
			for _, m := range methods {
				if op, ok := it[m].(map[string]any); ok {
					op["x-dubsim-interface"] = names[i]
					if _, ok := op["security"]; !ok && doc["security"] != nil {
						op["security"] = doc["security"]
					}
				}
			}
			norm := normalise(p)
			first, dup := keys[norm]
			if !dup {
				keys[norm] = p
				paths[norm] = it
				continue
			}
			renamePathParams(it, p, first)
			target := paths[norm]
			for k, v := range it {
				prev, exists := target[k]
				if !exists {
					target[k] = v
					continue
				}
				if slices.Contains(methods, k) {
					target[k] = mergeOps(prev.(map[string]any), v.(map[string]any))
				}
			}
		}
	}
	outPaths := map[string]any{}
	for norm, it := range paths {
		outPaths[keys[norm]] = it
	}
	out["paths"] = outPaths
	if len(tags) > 0 {
		out["tags"] = tags
	}
	out["components"] = comps
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// normalise blanks the parameter names of a path template.
func normalise(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segs[i] = "{}"
		}
	}
	return strings.Join(segs, "/")
}

// renamePathParams renames the path parameters of item (spelled as in from)
// to the names of to.
func renamePathParams(item map[string]any, from, to string) {
	fs, ts := strings.Split(from, "/"), strings.Split(to, "/")
	ren := map[string]string{}
	for i := range fs {
		if fs[i] != ts[i] {
			ren[strings.Trim(fs[i], "{}")] = strings.Trim(ts[i], "{}")
		}
	}
	fix := func(params any) {
		list, _ := params.([]any)
		for _, p := range list {
			pm, _ := p.(map[string]any)
			if pm["in"] == "path" {
				if n, ok := ren[fmt.Sprint(pm["name"])]; ok {
					pm["name"] = n
				}
			}
		}
	}
	fix(item["parameters"])
	for _, m := range methods {
		if op, ok := item[m].(map[string]any); ok {
			fix(op["parameters"])
		}
	}
}

func mergeOps(a, b map[string]any) map[string]any {
	out := maps.Clone(a)
	out["operationId"] = fmt.Sprint(a["operationId"]) + "_or_" + fmt.Sprint(b["operationId"])
	out["summary"] = fmt.Sprint(a["summary"]) + " / " + fmt.Sprint(b["summary"])
	out["description"] = fmt.Sprintf("On dubsim's shared address this path belongs to two interfaces.\n\n%s: %v\n\n%s: %v",
		a["x-dubsim-interface"], a["description"], b["x-dubsim-interface"], b["description"])
	out["x-dubsim-interface"] = []any{a["x-dubsim-interface"], b["x-dubsim-interface"]}
	out["tags"] = append(asList(a["tags"]), asList(b["tags"])...)
	// Parameters are united by location and name; one both define takes
	// either's schema (a platform id or a studio ObjectId).
	seen := map[string]map[string]any{}
	var params []any
	for _, p := range append(asList(a["parameters"]), asList(b["parameters"])...) {
		pm, _ := p.(map[string]any)
		k := fmt.Sprint(pm["in"], ":", pm["name"], pm["$ref"])
		prev, dup := seen[k]
		if !dup {
			cp := maps.Clone(pm)
			seen[k] = cp
			params = append(params, cp)
			continue
		}
		if sa, sb := prev["schema"], pm["schema"]; sb != nil && fmt.Sprint(sa) != fmt.Sprint(sb) {
			prev["schema"] = map[string]any{"anyOf": []any{sa, sb}}
			delete(prev, "description")
			delete(prev, "example")
			delete(prev, "examples")
		}
	}
	if params != nil {
		out["parameters"] = params
	}
	ra, _ := a["requestBody"].(map[string]any)
	rb, _ := b["requestBody"].(map[string]any)
	if ra != nil || rb != nil {
		out["requestBody"] = mergeBodies(ra, rb)
	}
	resp := map[string]any{}
	resA, _ := a["responses"].(map[string]any)
	resB, _ := b["responses"].(map[string]any)
	for _, code := range unionKeys(resA, resB) {
		x, _ := resA[code].(map[string]any)
		y, _ := resB[code].(map[string]any)
		resp[code] = mergeBodies(x, y)
	}
	out["responses"] = resp
	return out
}

// mergeBodies merges two request bodies or responses: descriptions joined,
// headers united, each media type's schema oneOf both (or the one present).
func mergeBodies(a, b map[string]any) map[string]any {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	out := maps.Clone(a)
	if a["description"] != b["description"] {
		out["description"] = fmt.Sprintf("%v / %v", a["description"], b["description"])
	}
	ha, _ := a["headers"].(map[string]any)
	hb, _ := b["headers"].(map[string]any)
	if ha != nil || hb != nil {
		h := map[string]any{}
		maps.Copy(h, hb)
		maps.Copy(h, ha)
		for k, v := range h {
			// A header one interface always sends may be absent in the other's answer.
			hv, _ := v.(map[string]any)
			hv = maps.Clone(hv)
			delete(hv, "required")
			h[k] = hv
		}
		out["headers"] = h
	}
	ca, _ := a["content"].(map[string]any)
	cb, _ := b["content"].(map[string]any)
	if ca != nil || cb != nil {
		c := map[string]any{}
		for _, mt := range unionKeys(ca, cb) {
			x, _ := ca[mt].(map[string]any)
			y, _ := cb[mt].(map[string]any)
			switch {
			case x == nil:
				c[mt] = y
			case y == nil:
				c[mt] = x
			default:
				c[mt] = map[string]any{"schema": map[string]any{"oneOf": []any{x["schema"], y["schema"]}}}
			}
		}
		out["content"] = c
	}
	if a["required"] == true && b["required"] == true {
		out["required"] = true
	} else {
		delete(out, "required")
	}
	return out
}

func unionKeys(a, b map[string]any) []string {
	set := map[string]any{}
	maps.Copy(set, a)
	maps.Copy(set, b)
	return slices.Sorted(maps.Keys(set))
}

func asList(v any) []any {
	l, _ := v.([]any)
	return append([]any(nil), l...)
}

// rewriteRefs prefixes the component names that local $refs point at, and
// those that discriminator mappings name (a reference or a bare schema
// name, OpenAPI 3.1 section 4.8.25).
func rewriteRefs(v any, prefix string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "$ref" {
				if s, ok := e.(string); ok {
					x[k] = prefixRef(s, prefix)
				}
				continue
			}
			if k == "discriminator" {
				if d, ok := e.(map[string]any); ok {
					if m, ok := d["mapping"].(map[string]any); ok {
						for val, target := range m {
							if s, ok := target.(string); ok {
								m[val] = prefixMapping(s, prefix)
							}
						}
					}
				}
				continue
			}
			x[k] = rewriteRefs(e, prefix)
		}
	case []any:
		for i, e := range x {
			x[i] = rewriteRefs(e, prefix)
		}
	}
	return v
}

func prefixRef(s, prefix string) string {
	for _, kind := range componentKinds {
		p := "#/components/" + kind + "/"
		if strings.HasPrefix(s, p) {
			return p + prefix + strings.TrimPrefix(s, p)
		}
	}
	return s
}

// prefixMapping rewrites one discriminator mapping value: a local reference
// like a $ref, a bare schema name as the prefixed name.
func prefixMapping(s, prefix string) string {
	if strings.Contains(s, "#") || strings.Contains(s, "/") {
		return prefixRef(s, prefix)
	}
	return prefix + s
}
