package parity

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"mime"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim/openapi/validate"
)

// Type classes of a JSON value. Strings are classified further, so that
// identifiers and timestamps compare by kind, not by value.
const (
	ClassNull     = "null"
	ClassBoolean  = "boolean"
	ClassInteger  = "integer"
	ClassNumber   = "number"
	ClassString   = "string"
	ClassObject   = "object"
	ClassArray    = "array"
	ClassUUID     = "uuid"
	ClassObjectID = "objectid"  // 24 hex digits, a MongoDB ObjectId
	ClassDateTime = "date-time" // RFC 3339
	ClassURI      = "uri"       // absolute, with a scheme and a host
)

// Body kinds of a Shape.
const (
	BodyNone        = "none" // no answer (transport error, skipped step)
	BodyEmpty       = "empty"
	BodyJSON        = "json"
	BodyInvalidJSON = "invalid-json" // a JSON media type whose body does not parse
	BodyXML         = "xml"
	BodyText        = "text"
	BodyBinary      = "binary"
)

// LangKey is the pointer token that stands for an object key that is a
// language-locale code ("fr-FR", "zh-Hant-TW"): the voices catalogue and a
// video's byLang guidance are keyed by language, and the set of languages
// is data, not shape.
const LangKey = "{lang}"

// Shape is what the kit records of a response: its status, its media type
// (without parameters), the kind of its body and, for JSON bodies, the class
// of every value by JSON pointer. Array elements collapse to "/*" (a pointer
// whose elements differ in class lists every class, "null|string"); the
// root is the pointer "".
type Shape struct {
	Status      int               `json:"status"`
	ContentType string            `json:"content_type,omitempty"`
	Body        string            `json:"body"`
	Fields      map[string]string `json:"fields,omitempty"`
}

// ShapeOf records the shape of one response.
func ShapeOf(status int, contentType string, body []byte) Shape {
	s := Shape{Status: status, ContentType: mediaType(contentType)}
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		s.Body = BodyEmpty
	case validate.IsJSON(s.ContentType):
		v, err := decodeJSON(body)
		if err != nil {
			s.Body = BodyInvalidJSON
			break
		}
		s.Body = BodyJSON
		s.Fields = fields(v)
	case validate.IsXML(s.ContentType):
		s.Body = BodyXML
	case strings.HasPrefix(s.ContentType, "text/"):
		s.Body = BodyText
	default:
		s.Body = BodyBinary
	}
	return s
}

// decodeJSON decodes one JSON value, numbers as json.Number; trailing data
// is an error.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errTrailing
	}
	return v, nil
}

var errTrailing = errors.New("trailing data after the JSON value")

// fields maps every JSON pointer of v (decoded with json.Number) to its
// class; pointers reached through arrays use "*" for the index.
func fields(v any) map[string]string {
	sets := map[string]map[string]bool{}
	walk(sets, "", v)
	out := make(map[string]string, len(sets))
	for p, set := range sets {
		out[p] = joinClasses(set)
	}
	return out
}

func walk(sets map[string]map[string]bool, ptr string, v any) {
	add := func(c string) {
		if sets[ptr] == nil {
			sets[ptr] = map[string]bool{}
		}
		sets[ptr][c] = true
	}
	switch x := v.(type) {
	case nil:
		add(ClassNull)
	case bool:
		add(ClassBoolean)
	case json.Number:
		add(numberClass(x.String()))
	case string:
		add(ClassifyString(x))
	case []any:
		add(ClassArray)
		for _, e := range x {
			walk(sets, ptr+"/*", e)
		}
	case map[string]any:
		add(ClassObject)
		for k, e := range x {
			walk(sets, ptr+"/"+token(k), e)
		}
	}
}

func numberClass(lit string) string {
	if strings.ContainsAny(lit, ".eE") {
		return ClassNumber
	}
	return ClassInteger
}

var langKeyRe = regexp.MustCompile(`^[a-z]{2,3}(-[A-Z][a-z]{3})?-([A-Z]{2}|[0-9]{3})$`)

// token escapes an object key as a JSON pointer token (RFC 6901), language
// codes collapsed to LangKey.
func token(k string) string {
	if langKeyRe.MatchString(k) {
		return LangKey
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}

func joinClasses(set map[string]bool) string {
	return strings.Join(slices.Sorted(maps.Keys(set)), "|")
}

var (
	uuidRe     = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	objectIDRe = regexp.MustCompile(`^[0-9a-fA-F]{24}$`)
	schemeRe   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*://`)
)

// ClassifyString gives the class of a string: uuid, objectid (24 hex),
// date-time (RFC 3339), uri (absolute, scheme://host...), else string.
func ClassifyString(s string) string {
	switch {
	case uuidRe.MatchString(s):
		return ClassUUID
	case objectIDRe.MatchString(s):
		return ClassObjectID
	case isDateTime(s):
		return ClassDateTime
	case isURI(s):
		return ClassURI
	}
	return ClassString
}

func isDateTime(s string) bool {
	if len(s) < len("2006-01-02T15:04:05Z") || (s[10] != 'T' && s[10] != 't') {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

func isURI(s string) bool {
	if !schemeRe.MatchString(s) || strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Host != ""
}

// mediaType is the lower-case media type of a Content-Type, without
// parameters; "" when absent.
func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, _, _ = strings.Cut(ct, ";")
		mt = strings.TrimSpace(mt)
	}
	return strings.ToLower(mt)
}
