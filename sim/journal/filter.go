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
	raw, ok := v.(string)
	switch v := v.(type) {
	case nil:
		*s = ""
		return nil
	case float64:
		raw, ok = strconv.FormatFloat(v, 'f', -1, 64), true
	case bool:
		return sim.Errorf(sim.CodeValidation, msgStatusFilter, "boolean")
	case []any:
		return sim.Errorf(sim.CodeValidation, msgStatusFilter, "array")
	}
	if !ok {
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
	q, err := url.ParseQuery(raw)
	if err != nil {
		return Filter{}, sim.Errorf(sim.CodeValidation, msgMalformedQuery, err)
	}
	if err := checkParams(q, filterParams); err != nil {
		return Filter{}, err
	}
	var f Filter
	if m := q.Get("method"); m != "" {
		if !httpguts.ValidHeaderFieldName(m) {
			return Filter{}, sim.Errorf(sim.CodeValidation, msgFilterMethod, m)
		}
		f.Method = strings.ToUpper(m)
	}
	if p := q.Get("path"); p != "" {
		if p[0] != '/' && p[0] != '*' {
			return Filter{}, sim.Errorf(sim.CodeValidation, msgPathPattern, p)
		}
		f.Path = p
	}
	if f.Status, err = ParseStatus(q.Get("status")); err != nil {
		return Filter{}, err
	}
	f.APIKey = q.Get("key")
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

// checkParams refuses unknown and repeated query parameters, so a typo
// never silently widens a selection.
func checkParams(q url.Values, known []string) error {
	names := slices.Sorted(maps.Keys(q))
	for _, name := range names {
		if !slices.Contains(known, name) {
			return sim.Errorf(sim.CodeValidation, msgUnknownQueryParam, name, strings.Join(known, ", "))
		}
		if n := len(q[name]); n > 1 {
			return sim.Errorf(sim.CodeValidation, msgRepeatedQueryParam, name, n)
		}
	}
	return nil
}
