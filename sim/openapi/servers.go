package openapi

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// DefaultServer is the address the embedded documents name for dubsim; the
// handler replaces it with the address a document is served from.
const DefaultServer = "http://localhost:8080"

type server struct {
	URL         string         `json:"url"`
	Description string         `json:"description,omitempty"`
	Variables   map[string]any `json:"variables,omitempty"`
}

// WithServers returns doc with base (such as http://127.0.0.1:41234) as its
// first server: the entry that named DefaultServer names base instead
// (in its description too) and moves first; an entry that names a path
// under DefaultServer (DefaultServer + "/platform") names the same path
// under base and follows it; the others (the real service's) come last, as
// they were. A path's servers entry that names DefaultServer names base
// instead. The rest of doc is kept byte for byte.
func WithServers(doc []byte, base string) ([]byte, error) {
	start, end, err := topLevelSpan(doc, "servers")
	if err != nil || start < 0 {
		return doc, err
	}
	var list []server
	if err := json.Unmarshal(doc[start:end], &list); err != nil {
		return nil, err
	}
	out := []server{{URL: base, Description: "dubsim"}}
	var under, others []server
	found := false
	for _, s := range list {
		rest, ours := strings.CutPrefix(s.URL, DefaultServer)
		switch {
		case ours && rest == "" && !found:
			s.URL, s.Description, found = base, strings.ReplaceAll(s.Description, DefaultServer, base), true
			out[0] = s
		case ours && strings.HasPrefix(rest, "/"):
			s.URL, s.Description = base+rest, strings.ReplaceAll(s.Description, DefaultServer, base)
			under = append(under, s)
		default:
			others = append(others, s)
		}
	}
	out = append(append(out, under...), others...)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("  ", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	b := slices.Concat(doc[:start], bytes.TrimRight(buf.Bytes(), "\n"), doc[end:])
	// The servers of a path (the output downloads, which only dubsim
	// serves) name it too.
	q, err := json.Marshal(base)
	if err != nil {
		return nil, err
	}
	return bytes.ReplaceAll(b, []byte(`"url": "`+DefaultServer+`"`), append([]byte(`"url": `), q...)), nil
}

// topLevelSpan finds the value of key in the top-level object of doc: its
// first and end offsets, or -1 when doc has no such key.
func topLevelSpan(doc []byte, key string) (start, end int, err error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if _, err := dec.Token(); err != nil {
		return -1, -1, err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return -1, -1, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return -1, -1, err
		}
		if k, _ := t.(string); k == key {
			end = int(dec.InputOffset())
			return end - len(raw), end, nil
		}
	}
	return -1, -1, nil
}
