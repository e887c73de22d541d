package faults

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireValidation asserts that err is a *sim.Error with CodeValidation
// and exactly msg.
func requireValidation(t *testing.T, err error, msg string) {
	t.Helper()
	var e *sim.Error
	require.True(t, errors.As(err, &e), "want a *sim.Error, got %T %v", err, err)
	assert.Equal(t, sim.CodeValidation, e.Code)
	assert.Equal(t, msg, e.Message)
}

func TestValidate(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("a", n) }
	cases := []struct {
		name string
		json string
		want string // "" = valid
	}{
		// valid rules
		{"minimal drop", `{"action":{"type":"drop"}}`, ""},
		{"every rule field", `{"id":"slow-1_A","method":"POST","path":"/api/v1/*","api_key":"dubsim-pro","count":3,"probability":0.25,"ttl_seconds":1.5,"action":{"type":"latency","latency_ms":1500}}`, ""},
		{"path may start with *", `{"path":"*/balance","action":{"type":"drop"}}`, ""},
		{"id of 64 characters", `{"id":"` + long(64) + `","action":{"type":"drop"}}`, ""},
		{"probability 1", `{"probability":1,"action":{"type":"drop"}}`, ""},
		{"probability null is 1", `{"probability":null,"action":{"type":"drop"}}`, ""},
		{"largest count and ttl", `{"count":1000000000,"ttl_seconds":31536000,"action":{"type":"drop"}}`, ""},
		{"latency at the limits", `{"action":{"type":"latency","latency_ms":600000}}`, ""},
		{"uniform from 0", `{"action":{"type":"latency","distribution":"uniform","min_ms":0,"max_ms":1}}`, ""},
		{"normal with mean 0", `{"action":{"type":"latency","distribution":"normal","stddev_ms":10}}`, ""},
		{"lognormal", `{"action":{"type":"latency","distribution":"lognormal","median_ms":200,"sigma":10}}`, ""},
		{"error with defaults", `{"action":{"type":"error","status":599}}`, ""},
		{"error with name and message", `{"action":{"type":"error","status":400,"error":"ValidationError","message":"nope\nnope"}}`, ""},
		{"rate limit without retry-after", `{"action":{"type":"rate_limit"}}`, ""},
		{"rate limit at the limit", `{"action":{"type":"rate_limit","retry_after_seconds":86400,"error":"Slow","message":"down"}}`, ""},
		{"truncate at 0", `{"action":{"type":"truncate"}}`, ""},
		{"truncate at the limit", `{"action":{"type":"truncate","bytes":1099511627776}}`, ""},

		// id, method, path, api_key
		{"id with a space", `{"id":"a b","action":{"type":"drop"}}`, `id must be 1 to 64 characters among letters, digits, '_' and '-'; got "a b"`},
		{"id with a slash", `{"id":"a/b","action":{"type":"drop"}}`, `id must be 1 to 64 characters among letters, digits, '_' and '-'; got "a/b"`},
		{"id too long", `{"id":"` + long(65) + `","action":{"type":"drop"}}`, `id must be 1 to 64 characters among letters, digits, '_' and '-'; got "` + long(65) + `"`},
		{"lower-case method", `{"method":"get","action":{"type":"drop"}}`, `method must be an upper-case HTTP method such as GET or POST (or omitted for any method); got "get"`},
		{"method with a space", `{"method":"GET ","action":{"type":"drop"}}`, `method must be an upper-case HTTP method such as GET or POST (or omitted for any method); got "GET "`},
		{"method too long", `{"method":"` + strings.Repeat("A", 21) + `","action":{"type":"drop"}}`, `method must be an upper-case HTTP method such as GET or POST (or omitted for any method); got "` + strings.Repeat("A", 21) + `"`},
		{"relative path", `{"path":"api/v1/*","action":{"type":"drop"}}`, `path must start with / or * (or be omitted for any path); got "api/v1/*"`},
		{"path too long", `{"path":"/` + long(1024) + `","action":{"type":"drop"}}`, "path must be at most 1024 bytes; got 1025"},
		{"path with a control character", `{"path":"/a\u0001","action":{"type":"drop"}}`, "path must be valid UTF-8 without control characters"},
		{"api key too long", `{"api_key":"` + long(257) + `","action":{"type":"drop"}}`, "api_key must be at most 256 bytes; got 257"},
		{"api key with a space", `{"api_key":"a b","action":{"type":"drop"}}`, "api_key must not contain spaces"},
		{"api key with a tab", `{"api_key":"a\tb","action":{"type":"drop"}}`, "api_key must be valid UTF-8 without control characters"},

		// count, probability, ttl
		{"negative count", `{"count":-1,"action":{"type":"drop"}}`, "count must be between 0 and 1000000000 (0 = unlimited); got -1"},
		{"count too large", `{"count":1000000001,"action":{"type":"drop"}}`, "count must be between 0 and 1000000000 (0 = unlimited); got 1000000001"},
		{"probability 0", `{"probability":0,"action":{"type":"drop"}}`, "probability must be in (0, 1]; got 0"},
		{"probability above 1", `{"probability":1.5,"action":{"type":"drop"}}`, "probability must be in (0, 1]; got 1.5"},
		{"negative probability", `{"probability":-0.1,"action":{"type":"drop"}}`, "probability must be in (0, 1]; got -0.1"},
		{"negative ttl", `{"ttl_seconds":-1,"action":{"type":"drop"}}`, "ttl_seconds must be between 0 and 31536000 (0 = never expires); got -1"},
		{"ttl too long", `{"ttl_seconds":31536000.5,"action":{"type":"drop"}}`, "ttl_seconds must be between 0 and 31536000 (0 = never expires); got 3.15360005e+07"},

		// action type
		{"no action", `{}`, "action.type is required; valid types: latency, error, rate_limit, drop, truncate"},
		{"action without type", `{"action":{"status":500}}`, "action.type is required; valid types: latency, error, rate_limit, drop, truncate"},
		{"unknown action type", `{"action":{"type":"teapot"}}`, `action.type must be one of latency, error, rate_limit, drop, truncate; got "teapot"`},
		{"action type is case-sensitive", `{"action":{"type":"Drop"}}`, `action.type must be one of latency, error, rate_limit, drop, truncate; got "Drop"`},

		// latency
		{"unknown distribution", `{"action":{"type":"latency","distribution":"poisson"}}`, `action.distribution must be one of uniform, normal, lognormal (or omitted for a fixed latency_ms); got "poisson"`},
		{"fixed latency missing", `{"action":{"type":"latency"}}`, "action.latency_ms is required for a fixed latency (or give a distribution: uniform, normal, lognormal)"},
		{"negative latency", `{"action":{"type":"latency","latency_ms":-5}}`, "action.latency_ms must be between 1 and 600000; got -5"},
		{"latency too long", `{"action":{"type":"latency","latency_ms":600001}}`, "action.latency_ms must be between 1 and 600000; got 600001"},
		{"fixed latency with min_ms", `{"action":{"type":"latency","latency_ms":5,"min_ms":1}}`, "action.min_ms is not allowed for a fixed latency"},
		{"latency with a status", `{"action":{"type":"latency","latency_ms":5,"status":500}}`, "action.status is not allowed for a fixed latency"},
		{"uniform with latency_ms", `{"action":{"type":"latency","distribution":"uniform","latency_ms":5,"min_ms":1,"max_ms":9}}`, "action.latency_ms is not allowed for a uniform latency"},
		{"uniform with mean_ms", `{"action":{"type":"latency","distribution":"uniform","min_ms":1,"max_ms":9,"mean_ms":4}}`, "action.mean_ms is not allowed for a uniform latency"},
		{"uniform negative min", `{"action":{"type":"latency","distribution":"uniform","min_ms":-1,"max_ms":9}}`, "action.min_ms must be between 0 and 600000; got -1"},
		{"uniform without max", `{"action":{"type":"latency","distribution":"uniform","min_ms":10}}`, "action.max_ms must be between 1 and 600000; got 0"},
		{"uniform max too large", `{"action":{"type":"latency","distribution":"uniform","max_ms":600001}}`, "action.max_ms must be between 1 and 600000; got 600001"},
		{"uniform max below min", `{"action":{"type":"latency","distribution":"uniform","min_ms":100,"max_ms":50}}`, "action.max_ms must be greater than action.min_ms; got min_ms 100, max_ms 50"},
		{"uniform max equal to min", `{"action":{"type":"latency","distribution":"uniform","min_ms":50,"max_ms":50}}`, "action.max_ms must be greater than action.min_ms; got min_ms 50, max_ms 50"},
		{"normal negative mean", `{"action":{"type":"latency","distribution":"normal","mean_ms":-1,"stddev_ms":5}}`, "action.mean_ms must be between 0 and 600000; got -1"},
		{"normal without stddev", `{"action":{"type":"latency","distribution":"normal","mean_ms":100}}`, "action.stddev_ms must be between 1 and 600000; got 0"},
		{"normal with sigma", `{"action":{"type":"latency","distribution":"normal","mean_ms":100,"stddev_ms":5,"sigma":1}}`, "action.sigma is not allowed for a normal latency"},
		{"lognormal without median", `{"action":{"type":"latency","distribution":"lognormal","sigma":1}}`, "action.median_ms must be between 1 and 600000; got 0"},
		{"lognormal without sigma", `{"action":{"type":"latency","distribution":"lognormal","median_ms":100}}`, "action.sigma must be in (0, 10]; got 0"},
		{"lognormal sigma too large", `{"action":{"type":"latency","distribution":"lognormal","median_ms":100,"sigma":10.5}}`, "action.sigma must be in (0, 10]; got 10.5"},
		{"lognormal negative sigma", `{"action":{"type":"latency","distribution":"lognormal","median_ms":100,"sigma":-1}}`, "action.sigma must be in (0, 10]; got -1"},
		{"lognormal with stddev", `{"action":{"type":"latency","distribution":"lognormal","median_ms":100,"sigma":1,"stddev_ms":3}}`, "action.stddev_ms is not allowed for a lognormal latency"},

		// error
		{"error status 200", `{"action":{"type":"error","status":200}}`, "action.status must be between 400 and 599; got 200"},
		{"error without status", `{"action":{"type":"error"}}`, "action.status must be between 400 and 599; got 0"},
		{"error status 600", `{"action":{"type":"error","status":600}}`, "action.status must be between 400 and 599; got 600"},
		{"error with bytes", `{"action":{"type":"error","status":500,"bytes":3}}`, "action.bytes is not allowed for action type error"},
		{"error with retry-after", `{"action":{"type":"error","status":500,"retry_after_seconds":3}}`, "action.retry_after_seconds is not allowed for action type error"},
		{"error name too long", `{"action":{"type":"error","status":500,"error":"` + long(101) + `"}}`, "action.error must be at most 100 bytes; got 101"},
		{"error name with a newline", `{"action":{"type":"error","status":500,"error":"A\nB"}}`, "action.error must be valid UTF-8 without control characters"},
		{"message too long", `{"action":{"type":"error","status":500,"message":"` + long(2001) + `"}}`, "action.message must be at most 2000 bytes; got 2001"},

		// rate_limit, drop, truncate
		{"negative retry-after", `{"action":{"type":"rate_limit","retry_after_seconds":-1}}`, "action.retry_after_seconds must be between 0 and 86400; got -1"},
		{"retry-after too long", `{"action":{"type":"rate_limit","retry_after_seconds":86401}}`, "action.retry_after_seconds must be between 0 and 86400; got 86401"},
		{"rate limit with a status", `{"action":{"type":"rate_limit","status":503}}`, "action.status is not allowed for action type rate_limit"},
		{"rate limit name too long", `{"action":{"type":"rate_limit","error":"` + long(101) + `"}}`, "action.error must be at most 100 bytes; got 101"},
		{"drop with latency", `{"action":{"type":"drop","latency_ms":100}}`, "action.latency_ms is not allowed for action type drop"},
		{"drop with a message", `{"action":{"type":"drop","message":"bye"}}`, "action.message is not allowed for action type drop"},
		{"negative bytes", `{"action":{"type":"truncate","bytes":-1}}`, "action.bytes must be between 0 and 1099511627776; got -1"},
		{"too many bytes", `{"action":{"type":"truncate","bytes":1099511627777}}`, "action.bytes must be between 0 and 1099511627776; got 1099511627777"},
		{"truncate with a message", `{"action":{"type":"truncate","bytes":1,"message":"x"}}`, "action.message is not allowed for action type truncate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := DecodeRule([]byte(tc.json))
			require.NoError(t, err)
			err = r.Validate()
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			requireValidation(t, err, tc.want)
		})
	}
}

// TestValidateGoValues covers values JSON cannot carry but a Go caller of
// Add can.
func TestValidateGoValues(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	drop := Action{Type: ActionDrop}
	cases := []struct {
		name string
		rule Rule
		want string
	}{
		{"NaN probability", Rule{Probability: &nan, Action: drop}, "probability must be in (0, 1]; got NaN"},
		{"NaN ttl", Rule{TTLSeconds: nan, Action: drop}, "ttl_seconds must be between 0 and 31536000 (0 = never expires); got NaN"},
		{"infinite ttl", Rule{TTLSeconds: math.Inf(1), Action: drop}, "ttl_seconds must be between 0 and 31536000 (0 = never expires); got +Inf"},
		{"NaN sigma", Rule{Action: Action{Type: ActionLatency, Distribution: DistLognormal, MedianMS: 5, Sigma: nan}}, "action.sigma must be in (0, 10]; got NaN"},
		{"invalid UTF-8 message", Rule{Action: Action{Type: ActionError, Status: 500, Message: "a\xffb"}}, "action.message must be valid UTF-8 without control characters"},
		{"invalid UTF-8 path", Rule{Path: "/\xff", Action: drop}, "path must be valid UTF-8 without control characters"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requireValidation(t, tc.rule.Validate(), tc.want)
		})
	}
}

func TestDecodeRule(t *testing.T) {
	t.Parallel()
	t.Run("fields", func(t *testing.T) {
		t.Parallel()
		r, err := DecodeRule([]byte(`{"id":"x","method":"GET","path":"/a*","api_key":"k","count":2,"probability":0.5,"ttl_seconds":3,
			"action":{"type":"latency","distribution":"lognormal","median_ms":7,"sigma":0.5}}`))
		require.NoError(t, err)
		p := 0.5
		assert.Equal(t, Rule{ID: "x", Method: "GET", Path: "/a*", APIKey: "k", Count: 2, Probability: &p, TTLSeconds: 3,
			Action: Action{Type: ActionLatency, Distribution: DistLognormal, MedianMS: 7, Sigma: 0.5}}, r)
	})
	cases := []struct {
		name, json, want string
	}{
		{"unknown field", `{"action":{"type":"drop"},"colour":1}`, `Unknown field "colour"`},
		{"unknown action field", `{"action":{"type":"drop","colour":1}}`, `Unknown field "action.colour"`},
		{"unknown action field after known ones", `{"id":"a","action":{"type":"latency","latency_ms":1,"jitter_ms":2}}`, `Unknown field "action.jitter_ms"`},
		{"first unknown field wins", `{"zz":1,"action":{"type":"drop","yy":2}}`, `Unknown field "zz"`},
		{"the rule's own fields before the action's", `{"action":{"type":5,"yy":1},"id":7}`, "id must be a string; got number"},
		{"unknown action field with other key case", `{"Action":{"Type":"drop","Colour":1}}`, `Unknown field "action.Colour"`},
		{"string count", `{"count":"3"}`, "count must be an integer; got string"},
		{"fractional count", `{"count":1.5}`, "count must be an integer; got number 1.5"},
		{"string probability", `{"probability":"0.5"}`, "probability must be a number; got string"},
		{"action as a string", `{"action":"drop"}`, "action must be an object; got string"},
		{"string status", `{"action":{"type":"error","status":"500"}}`, "action.status must be an integer; got string"},
		{"numeric type", `{"action":{"type":1}}`, "action.type must be a string; got number"},
		{"fractional latency", `{"action":{"type":"latency","latency_ms":1.5}}`, "action.latency_ms must be an integer; got number 1.5"},
		{"integral latency spelled as a fraction", `{"action":{"type":"latency","latency_ms":1.5e1,"x":1}}`, `Unknown field "action.x"`},
		{"array", `[]`, "Request body must be a JSON object"},
		{"null", `null`, "Request body must be a JSON object"},
		{"empty", ``, "Request body must be a JSON object"},
		{"blank", " \n", "Request body must be a JSON object"},
		{"truncated", `{"action":`, "Malformed JSON body: the JSON ends early: the body stops before the value is complete (truncated?)"},
		{"syntax error", `{"count":}`, "Malformed JSON body: invalid character '}' looking for beginning of value (at byte 10)"},
		{"trailing data", `{"action":{"type":"drop"}} {}`, "Malformed JSON body: unexpected data after the JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := DecodeRule([]byte(tc.json))
			requireValidation(t, err, tc.want)
		})
	}
}

func TestDefaultErrorName(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		want   string
	}{
		{400, "ValidationError"}, {401, "UnauthorizedError"}, {402, "PaymentRequiredError"}, {403, "ForbiddenError"},
		{404, "NotFoundError"}, {405, "MethodNotAllowedError"}, {409, "ConflictError"}, {418, "ImATeapotError"},
		{429, "RateLimitError"}, {499, "ClientError"}, {500, "InternalServerError"}, {503, "ServiceUnavailableError"},
		{505, "HTTPVersionNotSupportedError"}, {599, "ServerError"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, DefaultErrorName(tc.status))
		})
	}
}
