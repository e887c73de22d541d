package faults

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// Action types.
const (
	ActionLatency   = "latency"
	ActionError     = "error"
	ActionRateLimit = "rate_limit"
	ActionDrop      = "drop"
	ActionTruncate  = "truncate"
)

// Latency distributions; an empty distribution is a fixed latency_ms.
const (
	DistUniform   = "uniform"
	DistNormal    = "normal"
	DistLognormal = "lognormal"
)

// Limits of rule fields.
const (
	MaxLatencyMS         = 600_000       // ten minutes; also the cap of every distribution draw
	MaxSigma             = 10.0          // lognormal shape
	MaxCount             = 1_000_000_000 // fire at most this many times
	MaxTTLSeconds        = 31_536_000    // 365 days
	MaxRetryAfterSeconds = 86_400
	MaxTruncateBytes     = 1 << 40
	MaxIDLen             = 64
	MaxPathLen           = 1024
	MaxAPIKeyLen         = 256
	MaxMethodLen         = 20
	MaxErrorNameLen      = 100
	MaxMessageLen        = 2000
)

// Validation messages. Tests assert on them, so wording cannot drift.
const (
	MsgIDFormat           = "id must be 1 to %d characters among letters, digits, '_' and '-'; got %q"
	MsgIDTaken            = "id %s is already used by another fault rule"
	MsgTooManyRules       = "This simulator holds %d live fault rules, the most it keeps; remove some (DELETE /_sim/faults/{id}) or all (DELETE /_sim/faults)"
	MsgRulesTooLarge      = "This simulator's fault rules hold %d bytes; with this rule's %d they would pass the %d it keeps; remove some (DELETE /_sim/faults/{id}) or all (DELETE /_sim/faults)"
	MsgMethod             = "method must be an upper-case HTTP method such as GET or POST (or omitted for any method); got %q"
	MsgPathStart          = "path must start with / or * (or be omitted for any path); got %q"
	MsgTooLong            = "%s must be at most %d bytes; got %d"
	MsgText               = "%s must be valid UTF-8 without control characters"
	MsgAPIKeySpace        = "api_key must not contain spaces"
	MsgCount              = "count must be between 0 and %d (0 = unlimited); got %d"
	MsgProbability        = "probability must be in (0, 1]; got %v"
	MsgTTL                = "ttl_seconds must be between 0 and %d (0 = never expires); got %v"
	MsgActionType         = "action.type is required; valid types: latency, error, rate_limit, drop, truncate"
	MsgActionTypeUnknown  = "action.type must be one of latency, error, rate_limit, drop, truncate; got %q"
	MsgFieldNotAllowed    = "action.%s is not allowed for action type %s"
	MsgFieldNotForLatency = "action.%s is not allowed for a %s latency"
	MsgDistribution       = "action.distribution must be one of uniform, normal, lognormal (or omitted for a fixed latency_ms); got %q"
	MsgLatencyRequired    = "action.latency_ms is required for a fixed latency (or give a distribution: uniform, normal, lognormal)"
	MsgMillis             = "action.%s must be between %d and %d; got %d"
	MsgUniformOrder       = "action.max_ms must be greater than action.min_ms; got min_ms %d, max_ms %d"
	MsgSigma              = "action.sigma must be in (0, %v]; got %v"
	MsgStatus             = "action.status must be between 400 and 599; got %d"
	MsgRetryAfter         = "action.retry_after_seconds must be between 0 and %d; got %d"
	MsgBytes              = "action.bytes must be between 0 and %d; got %d"
	MsgRuleNotFound       = "Fault rule %s not found"
)

// Rule is one fault: which requests it matches, how often it fires and what
// it does. Zero values mean "any" (matching fields) or "no limit" (count,
// ttl_seconds).
type Rule struct {
	ID          string   `json:"id"`                    // generated ("flt_<n>") when empty
	Method      string   `json:"method,omitempty"`      // exact
	Path        string   `json:"path,omitempty"`        // a glob: * matches any run, also /
	APIKey      string   `json:"api_key,omitempty"`     // the bearer token; "" also matches no key
	Count       int64    `json:"count,omitempty"`       // fires at most this many times
	Probability *float64 `json:"probability,omitempty"` // in (0, 1]; nil is 1
	TTLSeconds  float64  `json:"ttl_seconds,omitempty"` // real time
	Action      Action   `json:"action"`
}

// Action is what a firing rule does. Only the fields of its Type (and, for
// latency, of its Distribution) may be set; a zero value counts as absent.
type Action struct {
	Type string `json:"type"`

	// latency: a fixed LatencyMS, or a Distribution with its parameters.
	LatencyMS    int64   `json:"latency_ms,omitempty"`
	Distribution string  `json:"distribution,omitempty"`
	MinMS        int64   `json:"min_ms,omitempty"`    // uniform
	MaxMS        int64   `json:"max_ms,omitempty"`    // uniform
	MeanMS       int64   `json:"mean_ms,omitempty"`   // normal
	StddevMS     int64   `json:"stddev_ms,omitempty"` // normal
	MedianMS     int64   `json:"median_ms,omitempty"` // lognormal
	Sigma        float64 `json:"sigma,omitempty"`     // lognormal

	Status  int    `json:"status,omitempty"`  // error
	Error   string `json:"error,omitempty"`   // error, rate_limit; defaulted
	Message string `json:"message,omitempty"` // error, rate_limit; defaulted

	RetryAfterSeconds int64 `json:"retry_after_seconds,omitempty"` // rate_limit
	Bytes             int64 `json:"bytes,omitempty"`               // truncate: what reaches the client

	err error // of its JSON (UnmarshalJSON)
}

// setFields lists the JSON names of the action's non-zero parameters, in
// declaration order.
func (a Action) setFields() []string {
	var out []string
	v := reflect.ValueOf(a)
	for i := 1; i < v.NumField(); i++ { // after Type
		if v.Type().Field(i).IsExported() && !v.Field(i).IsZero() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			out = append(out, name)
		}
	}
	return out
}

// allowedFields is the parameters each action type (and latency
// distribution, keyed "latency/<distribution>") accepts.
var allowedFields = map[string][]string{
	ActionLatency + "/":                 {"latency_ms"},
	ActionLatency + "/" + DistUniform:   {"distribution", "min_ms", "max_ms"},
	ActionLatency + "/" + DistNormal:    {"distribution", "mean_ms", "stddev_ms"},
	ActionLatency + "/" + DistLognormal: {"distribution", "median_ms", "sigma"},
	ActionError:                         {"status", "error", "message"},
	ActionRateLimit:                     {"retry_after_seconds", "error", "message"},
	ActionDrop:                          {},
	ActionTruncate:                      {"bytes"},
}

func validationErr(format string, args ...any) *sim.Error {
	return sim.Errorf(sim.CodeValidation, format, args...)
}

// Validate returns the first problem of the rule's fields as a validation
// error. Add checks that the id is unused.
func (r Rule) Validate() error {
	switch {
	case r.ID != "" && !validID(r.ID):
		return validationErr(MsgIDFormat, MaxIDLen, r.ID)
	case r.Method != "" && !validMethod(r.Method):
		return validationErr(MsgMethod, r.Method)
	case r.Path != "" && r.Path[0] != '/' && r.Path[0] != '*':
		return validationErr(MsgPathStart, r.Path)
	}
	if err := cmp.Or(checkText("path", r.Path, MaxPathLen), checkText("api_key", r.APIKey, MaxAPIKeyLen)); err != nil {
		return err
	}
	switch p := r.Probability; {
	case strings.ContainsFunc(r.APIKey, unicode.IsSpace):
		return validationErr(MsgAPIKeySpace)
	case r.Count < 0 || r.Count > MaxCount:
		return validationErr(MsgCount, MaxCount, r.Count)
	case p != nil && !(*p > 0 && *p <= 1):
		return validationErr(MsgProbability, *p)
	case !(r.TTLSeconds >= 0 && r.TTLSeconds <= MaxTTLSeconds):
		return validationErr(MsgTTL, MaxTTLSeconds, r.TTLSeconds)
	}
	return r.Action.validate()
}

func (a Action) validate() error {
	key := a.Type
	switch a.Type {
	case "":
		return validationErr(MsgActionType)
	case ActionLatency:
		switch a.Distribution {
		case "", DistUniform, DistNormal, DistLognormal:
			key = ActionLatency + "/" + a.Distribution
		default:
			return validationErr(MsgDistribution, a.Distribution)
		}
	case ActionError, ActionRateLimit, ActionDrop, ActionTruncate:
	default:
		return validationErr(MsgActionTypeUnknown, a.Type)
	}
	allowed := allowedFields[key]
	for _, f := range a.setFields() {
		if !slices.Contains(allowed, f) {
			if a.Type == ActionLatency {
				return validationErr(MsgFieldNotForLatency, f, cmp.Or(a.Distribution, "fixed"))
			}
			return validationErr(MsgFieldNotAllowed, f, a.Type)
		}
	}
	switch key {
	case ActionLatency + "/":
		if a.LatencyMS == 0 {
			return validationErr(MsgLatencyRequired)
		}
		return checkMillis("latency_ms", a.LatencyMS, 1)
	case ActionLatency + "/" + DistUniform:
		if err := cmp.Or(checkMillis("min_ms", a.MinMS, 0), checkMillis("max_ms", a.MaxMS, 1)); err != nil || a.MaxMS > a.MinMS {
			return err
		}
		return validationErr(MsgUniformOrder, a.MinMS, a.MaxMS)
	case ActionLatency + "/" + DistNormal:
		return cmp.Or(checkMillis("mean_ms", a.MeanMS, 0), checkMillis("stddev_ms", a.StddevMS, 1))
	case ActionLatency + "/" + DistLognormal:
		if err := checkMillis("median_ms", a.MedianMS, 1); err != nil || (a.Sigma > 0 && a.Sigma <= MaxSigma) {
			return err
		}
		return validationErr(MsgSigma, MaxSigma, a.Sigma)
	case ActionError:
		if a.Status < 400 || a.Status > 599 {
			return validationErr(MsgStatus, a.Status)
		}
		return a.checkEnvelopeText()
	case ActionRateLimit:
		if a.RetryAfterSeconds < 0 || a.RetryAfterSeconds > MaxRetryAfterSeconds {
			return validationErr(MsgRetryAfter, MaxRetryAfterSeconds, a.RetryAfterSeconds)
		}
		return a.checkEnvelopeText()
	case ActionTruncate:
		if a.Bytes < 0 || a.Bytes > MaxTruncateBytes {
			return validationErr(MsgBytes, int64(MaxTruncateBytes), a.Bytes)
		}
	}
	return nil
}

func (a Action) checkEnvelopeText() error {
	switch err := checkText("action.error", a.Error, MaxErrorNameLen); {
	case err != nil:
		return err
	case len(a.Message) > MaxMessageLen:
		return validationErr(MsgTooLong, "action.message", MaxMessageLen, len(a.Message))
	case !utf8.ValidString(a.Message):
		return validationErr(MsgText, "action.message")
	}
	return nil
}

func checkMillis(field string, v, lo int64) error {
	if v < lo || v > MaxLatencyMS {
		return validationErr(MsgMillis, field, lo, MaxLatencyMS, v)
	}
	return nil
}

// checkText bounds a single-line text field: valid UTF-8, no control characters.
func checkText(field, s string, max int) error {
	if len(s) > max {
		return validationErr(MsgTooLong, field, max, len(s))
	}
	if !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
		return validationErr(MsgText, field)
	}
	return nil
}

var (
	validID     = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`).MatchString // MaxIDLen
	validMethod = regexp.MustCompile(`^[A-Z]{1,20}$`).MatchString         // MaxMethodLen
)

// DecodeRule decodes one rule from a JSON object. Unknown fields (also
// inside action), wrong types, trailing data and non-objects are refused
// with a *sim.Error (sim.CodeValidation) naming the problem: of several,
// the first among the rule's own fields, else the first inside action. It
// does not validate values; call Validate (Add does).
func DecodeRule(data []byte) (Rule, error) {
	var r Rule
	dec := httpx.Decoder{RejectUnknown: true}
	if err := dec.DecodeBytes(data, &r); err != nil {
		return Rule{}, err
	}
	if r.Action.err != nil {
		return Rule{}, dec.WordError(r.Action.err)
	}
	return r, nil
}

// UnmarshalJSON refuses unknown fields, which the rule's decoder does not
// look for inside a field's own UnmarshalJSON. The problem is kept for
// DecodeRule to report after the rule's own, named "action.<name>".
func (a *Action) UnmarshalJSON(data []byte) error {
	type plain Action
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode((*plain)(a))
	var typ *json.UnmarshalTypeError
	if name, ok := strings.CutPrefix(fmt.Sprint(err), "json: unknown field "); ok {
		name, _ = strconv.Unquote(name)
		err = sim.Errorf(sim.CodeValidation, sim.MsgUnknownField, strconv.Quote("action."+name))
	} else if errors.As(err, &typ) {
		typ.Field = strings.TrimSuffix("action."+typ.Field, ".")
	}
	a.err = err
	return nil
}
