package httpx

import (
	"encoding/json"
	"errors"
	"io"
)

// maxCanonical is the largest body CanonicalJSON reads; larger bodies are
// fingerprinted by their bytes (every JSON route refuses them anyway).
const maxCanonical = DefaultMaxBody

// errNotCanonical: the body is not one valid JSON value of bounded size.
var errNotCanonical = errors.New("httpx: not canonical JSON")

// CanonicalJSON writes the canonical form of the single JSON value read from
// r to w: object keys sorted (recursively; of duplicate keys the last wins,
// as the decoder keeps it), no insignificant whitespace, strings as the
// decoder reads them, numbers in one spelling per value (100, 100.0 and 1e2
// alike). Two bodies a handler decodes alike have the same canonical form.
// It fails when r does not hold exactly one JSON value or holds more than
// maxCanonical bytes.
func CanonicalJSON(w io.Writer, r io.Reader) error {
	lr := &io.LimitedReader{R: r, N: maxCanonical + 1}
	dec := json.NewDecoder(lr)
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return errNotCanonical
	}
	if _, err := dec.Token(); err != io.EOF || lr.N <= 0 {
		return errNotCanonical
	}
	b, err := json.Marshal(canonicalNumbers(v))
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// canonicalNumbers respells every number of v in one spelling per value;
// json.Marshal then sorts the object keys and writes no whitespace.
func canonicalNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = canonicalNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = canonicalNumbers(e)
		}
	case json.Number:
		if d, ok := parseDecimal([]byte(v)); ok {
			return json.Number(d.canonical())
		}
	}
	return v
}
