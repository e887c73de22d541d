package httpx

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
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
	return writeCanonical(w, v)
}

func writeCanonical(w io.Writer, v any) error {
	switch v := v.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		if _, err := io.WriteString(w, "{"); err != nil {
			return err
		}
		for i, k := range keys {
			if i > 0 {
				_, _ = io.WriteString(w, ",")
			}
			if err := writeString(w, k); err != nil {
				return err
			}
			_, _ = io.WriteString(w, ":")
			if err := writeCanonical(w, v[k]); err != nil {
				return err
			}
		}
		_, err := io.WriteString(w, "}")
		return err
	case []any:
		_, _ = io.WriteString(w, "[")
		for i, e := range v {
			if i > 0 {
				_, _ = io.WriteString(w, ",")
			}
			if err := writeCanonical(w, e); err != nil {
				return err
			}
		}
		_, err := io.WriteString(w, "]")
		return err
	case string:
		return writeString(w, v)
	case json.Number:
		s := string(v)
		if d, ok := parseDecimal([]byte(v)); ok {
			s = d.canonical()
		}
		_, err := io.WriteString(w, s)
		return err
	case bool:
		_, err := io.WriteString(w, strconv.FormatBool(v))
		return err
	case nil:
		_, err := io.WriteString(w, "null")
		return err
	}
	return fmt.Errorf("httpx: canonical: unexpected %T", v)
}

// writeString writes s as a JSON string (one spelling per string).
func writeString(w io.Writer, s string) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
