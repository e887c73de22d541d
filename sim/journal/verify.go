package journal

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// Matcher selects requests and states how many are expected (default: at
// least one). Empty fields match anything.
type Matcher struct {
	Method       string            `json:"method,omitempty"`
	Path         string            `json:"path,omitempty"` // exact, or a glob with *
	APIKey       string            `json:"api_key,omitempty"`
	Status       Status            `json:"status,omitempty"`
	BodyContains string            `json:"body_contains,omitempty"` // in the kept request body
	Headers      map[string]string `json:"headers,omitempty"`       // exact values; "" means absent
	Count        *int              `json:"count,omitempty"`
	AtLeast      *int              `json:"at_least,omitempty"`
	AtMost       *int              `json:"at_most,omitempty"`
}

// NearMiss is a request that matched a Matcher's method and path only.
type NearMiss struct {
	Entry  Entry  `json:"entry"`
	Reason string `json:"reason"`
}

// VerifyResult is the outcome of Verify.
type VerifyResult struct {
	Matched    int        `json:"matched"`
	OK         bool       `json:"ok"`
	Expected   string     `json:"expected"`
	NearMisses []NearMiss `json:"near_misses"`       // when not OK, newest first
	Warning    string     `json:"warning,omitempty"` // the journal dropped requests: the count may be short
}

const maxNearMisses = 3

// Validate checks the matcher's values.
func (m Matcher) Validate() error {
	if err := checkMethodPath(m.Method, m.Path, msgVerifyMethod); err != nil {
		return err
	}
	if _, err := ParseStatus(string(m.Status)); err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(m.Headers))
	seen := map[string]bool{}
	for _, name := range names {
		canon := http.CanonicalHeaderKey(name)
		if seen[canon] {
			return sim.Errorf(sim.CodeValidation, msgHeaderTwice, canon)
		}
		seen[canon] = true
		if !slices.Contains(recordedHeaders, canon) {
			return sim.Errorf(sim.CodeValidation, msgHeaderNotRecorded, name, strings.Join(recordedHeaders, ", "))
		}
	}
	for _, c := range []struct {
		name string
		v    *int
	}{{"count", m.Count}, {"at_least", m.AtLeast}, {"at_most", m.AtMost}} {
		if c.v != nil && *c.v < 0 {
			return sim.Errorf(sim.CodeValidation, msgNegativeCount, c.name, *c.v)
		}
	}
	if m.Count != nil && (m.AtLeast != nil || m.AtMost != nil) {
		return sim.Errorf(sim.CodeValidation, msgCountCombined)
	}
	if m.AtLeast != nil && m.AtMost != nil && *m.AtLeast > *m.AtMost {
		return sim.Errorf(sim.CodeValidation, msgAtLeastAtMost, *m.AtLeast, *m.AtMost)
	}
	return nil
}

// bounds returns the expected number of requests; hi < 0 means no bound.
func (m Matcher) bounds() (lo, hi int) {
	switch {
	case m.Count != nil:
		return *m.Count, *m.Count
	case m.AtLeast == nil && m.AtMost == nil:
		return 1, -1
	}
	lo, hi = 0, -1
	if m.AtLeast != nil {
		lo = *m.AtLeast
	}
	if m.AtMost != nil {
		hi = *m.AtMost
	}
	return lo, hi
}

// expected describes the expectation ("exactly 2 requests matching POST
// /api/v1/projects, api_key \"k\"").
func (m Matcher) expected() string {
	lo, hi := m.bounds()
	var s string
	switch {
	case m.Count != nil:
		s = "exactly " + plural(lo, "request", "requests")
	case hi < 0:
		s = "at least " + plural(lo, "request", "requests")
	case m.AtLeast == nil:
		s = "at most " + plural(hi, "request", "requests")
	default:
		s = fmt.Sprintf("between %d and %s", lo, plural(hi, "request", "requests"))
	}
	method, path := cmp.Or(strings.ToUpper(m.Method), "any method"), cmp.Or(m.Path, "any path")
	parts := []string{fmt.Sprintf("%s matching %s %s", s, method, path)}
	if m.APIKey != "" {
		parts = append(parts, fmt.Sprintf("api_key %q", m.APIKey))
	}
	if m.Status != "" {
		parts = append(parts, "status "+string(m.Status))
	}
	if m.BodyContains != "" {
		parts = append(parts, fmt.Sprintf("body containing %q", m.BodyContains))
	}
	for _, name := range slices.Sorted(maps.Keys(m.Headers)) {
		if v := m.Headers[name]; v == "" {
			parts = append(parts, "no "+http.CanonicalHeaderKey(name))
		} else {
			parts = append(parts, fmt.Sprintf("%s %q", http.CanonicalHeaderKey(name), v))
		}
	}
	return strings.Join(parts, ", ")
}

// mismatches lists why e (whose method and path match) is not selected.
func (m Matcher) mismatches(e *Entry) []string {
	var why []string
	if m.APIKey != "" && m.APIKey != e.APIKey {
		if e.APIKey == "" {
			why = append(why, fmt.Sprintf("no api_key, expected %q", m.APIKey))
		} else {
			why = append(why, fmt.Sprintf("api_key %q, expected %q", e.APIKey, m.APIKey))
		}
	}
	if !m.Status.Match(e.Status) {
		why = append(why, fmt.Sprintf("status %d, expected %s", e.Status, m.Status))
	}
	if m.BodyContains != "" && !strings.Contains(e.RequestBody, m.BodyContains) {
		r := fmt.Sprintf("request body does not contain %q", m.BodyContains)
		if e.RequestBodyTruncated {
			r += fmt.Sprintf(" (only its first %d bytes are kept)", len(e.RequestBody))
		}
		why = append(why, r)
	}
	for _, name := range slices.Sorted(maps.Keys(m.Headers)) {
		want, canon := m.Headers[name], http.CanonicalHeaderKey(name)
		got, ok := e.Headers[canon]
		switch {
		case want == "" && ok:
			why = append(why, fmt.Sprintf("%s is %q, expected none", canon, got))
		case want != "" && !ok:
			why = append(why, fmt.Sprintf("%s is absent, expected %q", canon, want))
		case want != got:
			why = append(why, fmt.Sprintf("%s is %q, expected %q", canon, got, want))
		}
	}
	return why
}

// Verify counts the stored requests m selects against its expectation; it
// does not validate m.
func (j *Journal) Verify(m Matcher) VerifyResult {
	entries, stats := j.entries(Filter{Method: m.Method, Path: m.Path})
	res := VerifyResult{Expected: m.expected(), NearMisses: []NearMiss{}}
	for i := range entries {
		why := m.mismatches(&entries[i])
		if len(why) == 0 {
			res.Matched++
		} else if len(res.NearMisses) < maxNearMisses {
			res.NearMisses = append(res.NearMisses, NearMiss{Entry: entries[i], Reason: strings.Join(why, "; ")})
		}
	}
	lo, hi := m.bounds()
	res.OK = res.Matched >= lo && (hi < 0 || res.Matched <= hi)
	if res.OK {
		res.NearMisses = []NearMiss{} // they explain a failure only
	}
	if stats.Dropped > 0 {
		res.Warning = fmt.Sprintf("the journal has dropped %d older requests (it keeps at most %d bytes, less when the journals of the process together reach their bound); the count covers the %d it holds", stats.Dropped, stats.MaxBytes, stats.Stored)
	}
	return res
}

// decodeMatcher decodes and validates the JSON body of POST /requests/verify.
func decodeMatcher(body []byte) (Matcher, error) {
	var m Matcher
	if err := matcherDecoder.DecodeBytes(body, &m); err != nil {
		return Matcher{}, err
	}
	if err := m.Validate(); err != nil {
		return Matcher{}, err
	}
	m.Method = strings.ToUpper(m.Method)
	h := make(map[string]string, len(m.Headers))
	for k, v := range m.Headers {
		h[http.CanonicalHeaderKey(k)] = v
	}
	m.Headers = h
	return m, nil
}

var matcherDecoder = httpx.Decoder{RejectUnknown: true, TypeMessages: map[string]string{
	"headers": "headers must be an object of header names and exact string values; got %s",
}}
