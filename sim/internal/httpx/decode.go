package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/dubsim/dubsim/sim"
)

// DefaultMaxBody is the default limit of a JSON request body.
const DefaultMaxBody = 10 << 20

// Decoder is the one JSON decoder of request bodies: the body must carry a
// JSON Content-Type, fit the size limit, be one JSON object and match the
// field types; unknown fields are ignored unless RejectUnknown is set.
type Decoder struct {
	MaxBytes      int64
	RejectUnknown bool
	// TypeMessages words a wrong type of the named top-level fields: a
	// template with one %s, the JSON kind received.
	TypeMessages map[string]string
}

// Decode reads r's body into dst (a pointer to a struct).
func (d Decoder) Decode(w http.ResponseWriter, r *http.Request, dst any) error {
	limit := d.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	body, err := ReadJSONBody(w, r, limit)
	if err != nil {
		return err
	}
	return d.DecodeBytes(body, dst)
}

// ReadJSONBody reads a JSON request body with the documented checks, in
// order: the size limit (CodeTooLarge), a non-empty body, and a JSON
// Content-Type. Its bytes come out of the body budget (ReserveBody).
func ReadJSONBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if err := ReserveBody(r, ReserveSize(r, limit)); err != nil {
		// The request ended while it waited for the budget.
		return nil, sim.Errorf(sim.CodeValidation, sim.MsgMalformedJSON, "the body could not be read")
	}
	src := http.MaxBytesReader(w, r.Body, limit)
	var body []byte
	var err error
	if r.ContentLength > limit {
		// Too large by its own length: read to the limit for the 413,
		// keeping none of it.
		_, err = io.Copy(io.Discard, src)
	} else {
		body, err = readAllSized(src, r.ContentLength)
	}
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, sim.Errorf(sim.CodeTooLarge, sim.MsgBodyTooLarge, limit)
		}
		if ferr := BodyFailure(err); ferr != nil {
			return nil, ferr
		}
		return nil, sim.Errorf(sim.CodeValidation, sim.MsgMalformedJSON, "the body could not be read")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, sim.Errorf(sim.CodeValidation, sim.MsgBodyNotObject)
	}
	if !IsJSONContentType(r.Header.Get("Content-Type")) && !anyBodyType(r.Context()) {
		return nil, sim.Errorf(sim.CodeValidation, sim.MsgContentType)
	}
	return body, nil
}

type anyBodyTypeKey struct{}

// WithAnyBodyType marks a request whose JSON body is read whatever its
// Content-Type says: a control call no browser sends without a preflight,
// such as curl's -d, which names a form.
func WithAnyBodyType(ctx context.Context) context.Context {
	return context.WithValue(ctx, anyBodyTypeKey{}, true)
}

func anyBodyType(ctx context.Context) bool {
	v, _ := ctx.Value(anyBodyTypeKey{}).(bool)
	return v
}

// IsJSONContentType reports whether a Content-Type header names JSON.
func IsJSONContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// DecodeBytes decodes a JSON object from body into dst; an integral number
// is an integer whatever its spelling (IntegralNumbers).
func (d Decoder) DecodeBytes(body []byte, dst any) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if len(trimmed) == 0 || json.Valid(trimmed) {
			return sim.Errorf(sim.CodeValidation, sim.MsgBodyNotObject)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(IntegralNumbers(body)))
	if d.RejectUnknown {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(dst); err != nil {
		return d.WordError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return sim.Errorf(sim.CodeValidation, sim.MsgMalformedJSON, "unexpected data after the JSON object")
	}
	return nil
}

// WordError words a decoding error as a validation error naming the
// problem. A *sim.Error from a field's own UnmarshalJSON is kept.
func (d Decoder) WordError(err error) error {
	var se *sim.Error
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return se
	case errors.As(err, &syn):
		return sim.Errorf(sim.CodeValidation, sim.MsgMalformedJSON, fmt.Sprintf("%s (at byte %d)", strings.TrimPrefix(syn.Error(), "json: "), syn.Offset))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return sim.Errorf(sim.CodeValidation, sim.MsgMalformedJSON, MsgIncompleteJSON)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return sim.Errorf(sim.CodeValidation, sim.MsgBodyNotObject)
		}
		if tmpl, ok := d.TypeMessages[field]; ok {
			return sim.Errorf(sim.CodeValidation, tmpl, typ.Value)
		}
		return typeError(typ)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return sim.Errorf(sim.CodeValidation, sim.MsgUnknownField, strings.TrimPrefix(err.Error(), "json: unknown field "))
	default:
		return sim.Errorf(sim.CodeValidation, sim.MsgMalformedJSON, strings.TrimPrefix(err.Error(), "json: "))
	}
}

// typeError words a value of the wrong JSON type for its field. A number
// refused by an integer field is a fraction, or an integral value out of
// the field's range (1e30 in an int64).
func typeError(typ *json.UnmarshalTypeError) error {
	t := typ.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var lo, hi string
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		top := int64(math.MaxInt64 >> (64 - t.Bits()))
		lo, hi = strconv.FormatInt(-top-1, 10), strconv.FormatInt(top, 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		lo, hi = "0", strconv.FormatUint(uint64(math.MaxUint64)>>(64-t.Bits()), 10)
	}
	if lit, isNumber := strings.CutPrefix(typ.Value, "number "); isNumber && hi != "" {
		if d, ok := parseDecimal([]byte(lit)); !ok || d.exp >= 0 {
			return sim.Errorf(sim.CodeValidation, "%s must be an integer from %s to %s; got %s", typ.Field, lo, hi, lit)
		}
		return sim.Errorf(sim.CodeValidation, "%s must be an integer; got %s", typ.Field, typ.Value)
	}
	return sim.Errorf(sim.CodeValidation, sim.MsgWrongType, typ.Field, jsonTypeName(t), typ.Value)
}

func jsonTypeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "of another type"
}
