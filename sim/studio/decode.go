package studio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// object is a JSON request body read field by field, so that every refusal
// names its field and which fields were present is known (PATCH semantics).
type object map[string]json.RawMessage

// readObject reads a JSON object body whose fields are the endpoint's
// fields, and decodes it.
func readObject[T any](a *API, w http.ResponseWriter, r *http.Request, decode func(object) (T, error), fields ...string) (T, error) {
	body, err := httpx.ReadJSONBody(w, r, httpx.DefaultMaxBody)
	if err != nil {
		return *new(T), err
	}
	o, err := a.parseObject(body, fields...)
	if err != nil {
		return *new(T), err
	}
	return decode(o)
}

func (a *API) parseObject(body []byte, fields ...string) (object, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if json.Valid(trimmed) {
			return nil, sim.Errorf(sim.CodeValidation, sim.MsgBodyNotObject)
		}
		return nil, sim.Errorf(sim.CodeValidation, sim.MsgMalformedJSON, "the body is not valid JSON")
	}
	var o object
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(&o); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, sim.Errorf(sim.CodeValidation, sim.MsgMalformedJSON, httpx.MsgIncompleteJSON)
		}
		return nil, sim.Errorf(sim.CodeValidation, sim.MsgMalformedJSON, strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, sim.Errorf(sim.CodeValidation, sim.MsgMalformedJSON, "unexpected data after the JSON object")
	}
	if a.rejectUnk {
		var unknown []string
		for k := range o {
			if !slices.Contains(fields, k) {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return nil, sim.Errorf(sim.CodeValidation, sim.MsgUnknownField, strings.Join(unknown, ", "))
		}
	}
	return o, nil
}

// has reports whether the field is present (null counts as present).
func (o object) has(name string) bool { _, ok := o[name]; return ok }

// isNull reports whether the field is present with the value null.
func (o object) isNull(name string) bool {
	v, ok := o[name]
	return ok && string(bytes.TrimSpace(v)) == "null"
}

// given reports whether the field is present and not null.
func (o object) given(name string) bool { return o.has(name) && !o.isNull(name) }

// str returns a string field of at most sim.MaxTextBytes (nil: absent or null).
func (o object) str(name string) (*string, error) {
	s, err := o.rawStr(name)
	if err != nil || s == nil {
		return s, err
	}
	return s, checkBytes(name, *s, sim.MaxTextBytes)
}

// rawStr returns a string field of any length (nil: absent or null).
func (o object) rawStr(name string) (*string, error) { return optional[string](o, name, msgNotString) }

// optional decodes a field (nil: absent or null); msg words a non-T.
func optional[T any](o object, name, msg string) (*T, error) {
	if !o.given(name) {
		return nil, nil
	}
	var v T
	if err := json.Unmarshal(o[name], &v); err != nil {
		return nil, invalid(msg, name, abbreviate(o[name]))
	}
	return &v, nil
}

// checkBytes refuses a string field longer than limit bytes (fidelity HB4).
func checkBytes(field, s string, limit int) error {
	if len(s) > limit {
		return invalid(msgFieldBytes, field, limit, len(s))
	}
	return nil
}

func (o object) requiredStr(name string) (string, error) {
	s, err := o.nonBlank(name, true)
	if err != nil {
		return "", err
	}
	return *s, checkBytes(name, *s, sim.MaxTextBytes)
}

// nonBlank returns a string field of any length that is not blank (nil:
// absent or null, which a required field may not be).
func (o object) nonBlank(name string, required bool) (*string, error) {
	s, err := o.rawStr(name)
	switch {
	case err != nil:
		return nil, err
	case s == nil && required:
		return nil, invalid(sim.MsgRequired, name)
	case s != nil && strings.TrimSpace(*s) == "":
		return nil, invalid(msgNotEmpty, name)
	}
	return s, nil
}

func (o object) name(field string, required bool) (*string, error) {
	s, err := o.nonBlank(field, required)
	if err != nil || s == nil {
		return nil, err
	}
	if n := utf8.RuneCountInString(*s); n > sim.MaxNameLength {
		return nil, invalid(msgNameLength, field, sim.MaxNameLength, n)
	}
	return s, nil
}

func (o object) boolean(name string) (*bool, error) { return optional[bool](o, name, msgNotBoolean) }

func (o object) strings(name string) ([]string, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(o[name], &raw); err != nil || raw == nil {
		return nil, invalid(msgNotStringArray, name, abbreviate(o[name]))
	}
	out := make([]string, 0, len(raw))
	for i, v := range raw {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, invalid(msgItemNotString, name, i, abbreviate(v))
		}
		out = append(out, s)
	}
	return out, nil
}

func (o object) sub(name string) (object, error) {
	var sub object
	if err := json.Unmarshal(o[name], &sub); err != nil || sub == nil {
		return nil, invalid(msgNotObject, name, abbreviate(o[name]))
	}
	return sub, nil
}

func abbreviate(v json.RawMessage) string {
	s := strings.TrimSpace(string(v))
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

var (
	iso6391 = regexp.MustCompile(`^[a-z]{2}$`)
	bcp47   = regexp.MustCompile(`^[a-z]{2,3}-[A-Z]{2}$`)
	langTag = regexp.MustCompile(`^[a-z]{2,3}(-[A-Z]{2})?$`)
)

func (o object) langs(name string, re *regexp.Regexp, example string) ([]string, error) {
	list, err := o.strings(name)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, invalid(msgNoLanguages, name)
	}
	if len(list) > 100 {
		return nil, invalid(msgTooManyLanguages, name, len(list))
	}
	seen := map[string]bool{}
	for i, l := range list {
		if !re.MatchString(l) {
			return nil, invalid(msgLanguageCode, name, i, example, l)
		}
		if seen[l] {
			return nil, invalid(msgLanguageTwice, name, i, l)
		}
		seen[l] = true
	}
	return list, nil
}

// stringVariables decodes the metadata array; null clears it.
func (o object) stringVariables(name string) ([]sim.StringVariable, error) {
	if o.isNull(name) {
		return nil, nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(o[name], &raw); err != nil || raw == nil {
		return nil, invalid(msgStringVariables, name, abbreviate(o[name]))
	}
	if len(raw) > 100 {
		return nil, invalid(msgTooManyStringVariables, name, len(raw))
	}
	out := make([]sim.StringVariable, 0, len(raw))
	for i, v := range raw {
		item, err := object{"x": v}.sub("x")
		if err != nil {
			return nil, invalid(msgStringVariable, name, i, abbreviate(v))
		}
		key, err := item.rawStr("key")
		if err != nil || key == nil || *key == "" {
			return nil, invalid(msgStringVariableKey, name, i)
		}
		val, err := item.rawStr("value")
		if err != nil || val == nil {
			return nil, invalid(msgStringVariableValue, name, i)
		}
		if err := checkBytes(fmt.Sprintf("%s[%d].key", name, i), *key, sim.MaxTextBytes); err != nil {
			return nil, err
		}
		if err := checkBytes(fmt.Sprintf("%s[%d].value", name, i), *val, sim.MaxTextBytes); err != nil {
			return nil, err
		}
		out = append(out, sim.StringVariable{Key: *key, Value: *val})
	}
	return out, nil
}

func httpURL(field, s string) error {
	if err := checkBytes(field, s, sim.MaxURLBytes); err != nil {
		return err
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid(msgHTTPURL, field, s)
	}
	return nil
}

// s3Path checks an s3://bucket/key path.
func s3Path(field, s string) error {
	if err := checkBytes(field, s, sim.MaxURLBytes); err != nil {
		return err
	}
	rest, ok := strings.CutPrefix(s, "s3://")
	bucket, key, _ := strings.Cut(rest, "/")
	if !ok || bucket == "" || key == "" || strings.HasSuffix(key, "/") {
		return invalid(msgS3Path, field, s)
	}
	return nil
}
