package httpx

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type decodeInner struct {
	Name string `json:"name"`
}

type decodeTarget struct {
	Name    string            `json:"name"`
	Count   *int              `json:"count"`
	Enabled bool              `json:"enabled"`
	Tags    []string          `json:"tags"`
	Headers map[string]string `json:"headers"`
	Inner   decodeInner       `json:"inner"`
	Custom  refusing          `json:"custom"`
}

// refusing is a field whose own UnmarshalJSON refuses every value with a
// *sim.Error, as the journal's Status does.
type refusing struct{}

func (*refusing) UnmarshalJSON([]byte) error {
	return sim.Errorf(sim.CodeValidation, "custom must be left out")
}

var _ json.Unmarshaler = (*refusing)(nil)

// The one decoder words every failure with the named messages; the control
// routes' hook (TypeMessages) changes only its own cases.
func TestDecodeBytesMessages(t *testing.T) {
	t.Parallel()
	strict := Decoder{RejectUnknown: true}
	hooked := Decoder{RejectUnknown: true,
		TypeMessages: map[string]string{"headers": "headers must be an object of names and values; got %s"}}
	tests := []struct {
		name string
		dec  Decoder
		body string
		want string
	}{
		{"empty body", strict, ``, sim.MsgBodyNotObject},
		{"an array", strict, `[1]`, sim.MsgBodyNotObject},
		{"syntax error", strict, `{"name":}`, "Malformed JSON body: invalid character '}' looking for beginning of value (at byte 9)"},
		{"cut short", strict, `{"name":"a"`, "Malformed JSON body: the JSON ends early: the body stops before the value is complete (truncated?)"},
		{"trailing data", strict, `{} {}`, "Malformed JSON body: unexpected data after the JSON object"},
		{"a string for a boolean", strict, `{"enabled":"yes"}`, "enabled must be a boolean; got string"},
		{"a number for an array", strict, `{"tags":3}`, "tags must be an array; got number"},
		{"a fraction for an integer", strict, `{"count":1.5}`, "count must be an integer; got number 1.5"},
		{"an array for an object", strict, `{"headers":[]}`, "headers must be an object; got array"},
		{"a field's own refusal is kept", strict, `{"custom":1}`, "custom must be left out"},
		{"unknown field", strict, `{"extra":1}`, `Unknown field "extra"`},
		{"unknown field ignored when allowed", Decoder{}, `{"extra":1}`, ""},
		{"a type message of the route", hooked, `{"headers":[]}`, "headers must be an object of names and values; got array"},
		{"other fields keep the generic wording", hooked, `{"tags":3}`, "tags must be an array; got number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var dst decodeTarget
			err := tc.dec.DecodeBytes([]byte(tc.body), &dst)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tc.want)
			assert.Equal(t, sim.CodeValidation, sim.ErrorCode(err))
		})
	}
}

// A small body of unknown length (chunked) to a route with a large limit
// takes memory for its bytes, not for the limit: ten 20-byte bodies under a
// 64 MiB limit allocate far less than one limit's worth.
func TestReadJSONBodyOfUnknownLengthTakesItsSize(t *testing.T) {
	const limit = 64 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		r := httptest.NewRequest(http.MethodPost, "/", io.NopCloser(strings.NewReader(`{"name":"a chunked body"}`)))
		r.ContentLength = -1
		r.Header.Set("Content-Type", "application/json")
		body, err := ReadJSONBody(httptest.NewRecorder(), r, limit)
		require.NoError(t, err)
		assert.JSONEq(t, `{"name":"a chunked body"}`, string(body))
	}
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(limit/8), "bytes allocated by ten small chunked bodies")
}

// A body past the limit is refused with CodeTooLarge whether its length is
// declared or not.
func TestReadJSONBodyPastTheLimit(t *testing.T) {
	const limit = 64 << 10
	big := `{"name":"` + strings.Repeat("x", 4*limit) + `"}`
	for _, length := range []int64{int64(len(big)), -1} {
		r := httptest.NewRequest(http.MethodPost, "/", io.NopCloser(strings.NewReader(big)))
		r.ContentLength = length
		r.Header.Set("Content-Type", "application/json")
		_, err := ReadJSONBody(httptest.NewRecorder(), r, limit)
		var e *sim.Error
		require.ErrorAs(t, err, &e, "Content-Length %d", length)
		assert.Equal(t, sim.CodeTooLarge, e.Code, "Content-Length %d", length)
	}
}
