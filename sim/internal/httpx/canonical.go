package httpx

import (
	"encoding/json"
	"errors"
	"io"
)

// maxCanonical is the largest body CanonicalJSON reads; every JSON route
// refuses a larger one anyway.
const maxCanonical = DefaultMaxBody

var errNotCanonical = errors.New("httpx: not canonical JSON")

// CanonicalJSON writes the canonical form of the one JSON value in r to w,
// so that two bodies a handler decodes alike have the same form: keys
// sorted (of duplicates the last wins, as the decoder keeps it), no
// whitespace, one spelling per number (100, 100.0 and 1e2 alike). It fails
// when r does not hold exactly one value of at most maxCanonical bytes.
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
