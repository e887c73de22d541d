package journal

import (
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/dubsim/dubsim/sim"
	"golang.org/x/net/http/httpguts"
)

// Status selects response statuses: "" any, "404" exactly that status, "4xx"
// a class (1xx to 5xx). "0" selects aborted requests.
type Status string

// ParseStatus checks and normalises a status selector ("4XX" becomes "4xx").
func ParseStatus(s string) (Status, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if len(s) == 3 && s[0] >= '1' && s[0] <= '5' && strings.EqualFold(s[1:], "xx") {
		return Status(s[:1] + "xx"), nil
	}
	if n, err := strconv.Atoi(s); err == nil && (n == 0 || (n >= 100 && n <= 599)) && strconv.Itoa(n) == s {
		return Status(s), nil
	}
	return "", sim.Errorf(sim.CodeValidation, msgBadStatus, s)
}

// Match reports whether code is selected. An invalid selector selects nothing.
func (s Status) Match(code int) bool {
	switch {
	case s == "":
		return true
	case strings.HasSuffix(string(s), "xx"):
		return len(s) == 3 && code/100 == int(s[0]-'0') && code > 0
	default:
		return string(s) == strconv.Itoa(code)
	}
}

// UnmarshalJSON accepts a number (404) or a string ("404", "4xx").
func (s *Status) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	var raw string
	switch v := v.(type) {
	case nil:
		*s = ""
		return nil
	case string:
		raw = v
	case float64:
		raw = strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return sim.Errorf(sim.CodeValidation, msgStatusFilter, "boolean")
	case []any:
		return sim.Errorf(sim.CodeValidation, msgStatusFilter, "array")
	default:
		return sim.Errorf(sim.CodeValidation, msgStatusFilter, "object")
	}
	st, err := ParseStatus(raw)
	if err == nil {
		*s = st
	}
	return err
}

// Query parameters of GET /requests.
var filterParams = []string{"method", "path", "status", "key", "since", "limit"}

// parseFilterQuery parses the query string of GET /requests.
func parseFilterQuery(raw string) (Filter, error) {
	q, err := parseQuery(raw, filterParams)
	if err != nil {
		return Filter{}, err
	}
	f := Filter{Method: strings.ToUpper(q.Get("method")), Path: q.Get("path"), APIKey: q.Get("key")}
	if err := checkMethodPath(q.Get("method"), f.Path, msgFilterMethod); err != nil {
		return Filter{}, err
	}
	if f.Status, err = ParseStatus(q.Get("status")); err != nil {
		return Filter{}, err
	}
	if s := q.Get("since"); s != "" {
		if f.Since, err = strconv.ParseUint(s, 10, 64); err != nil {
			return Filter{}, sim.Errorf(sim.CodeValidation, msgSince, s)
		}
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.ParseUint(s, 10, 31)
		if err != nil {
			return Filter{}, sim.Errorf(sim.CodeValidation, msgLimit, s)
		}
		f.Limit = int(n)
	}
	return f, nil
}

// checkMethodPath checks the method and path pattern of a filter or a
// matcher; msgMethod words a bad method.
func checkMethodPath(method, path, msgMethod string) error {
	if method != "" && !httpguts.ValidHeaderFieldName(method) {
		return sim.Errorf(sim.CodeValidation, msgMethod, method)
	}
	if path != "" && path[0] != '/' && path[0] != '*' {
		return sim.Errorf(sim.CodeValidation, msgPathPattern, path)
	}
	return nil
}

// parseQuery parses a query string, refusing unknown and repeated
// parameters, so a typo never silently widens a selection.
func parseQuery(raw string, known []string) (url.Values, error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, sim.Errorf(sim.CodeValidation, msgMalformedQuery, err)
	}
	for _, name := range slices.Sorted(maps.Keys(q)) {
		if !slices.Contains(known, name) {
			return nil, sim.Errorf(sim.CodeValidation, msgUnknownQueryParam, name, strings.Join(known, ", "))
		}
		if n := len(q[name]); n > 1 {
			return nil, sim.Errorf(sim.CodeValidation, msgRepeatedQueryParam, name, n)
		}
	}
	return q, nil
}
