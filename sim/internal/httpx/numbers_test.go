package httpx

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIntegralNumbers(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"plain integers untouched", `{"a":100,"b":-7,"c":0}`, `{"a":100,"b":-7,"c":0}`},
		{"fraction of zeros", `{"a":100.0,"b":100.000}`, `{"a":100,"b":100}`},
		{"exponent", `{"a":1e2,"b":1E2,"c":1e+2,"d":10000e-2}`, `{"a":100,"b":100,"c":100,"d":100}`},
		{"fraction and exponent", `{"a":1.5e1,"b":-2.50e2}`, `{"a":15,"b":-250}`},
		{"negative zero", `{"a":-0.0,"b":0e5,"c":-0}`, `{"a":0,"b":0,"c":-0}`},
		{"fractions stay", `{"a":100.5,"b":15e-1,"c":1e-400}`, `{"a":100.5,"b":15e-1,"c":1e-400}`},
		{"out of int64 stays", `{"a":1e19,"b":1e400,"c":9.3e18,"d":1e9999999999}`, `{"a":1e19,"b":1e400,"c":9.3e18,"d":1e9999999999}`},
		{"int64 bounds", `{"a":9.223372036854775807e18,"b":-9.223372036854775808e18}`, `{"a":9223372036854775807,"b":-9223372036854775808}`},
		{"2^53+1 exactly", `{"a":9007199254740993.0}`, `{"a":9007199254740993}`},
		{"strings untouched", `{"1e2":"1e2","a":"x\"1.0\"","b":[1.0,"2.0",{"c":3e0}]}`, `{"1e2":"1e2","a":"x\"1.0\"","b":[1,"2.0",{"c":3}]}`},
		{"whitespace kept", "{ \"a\" :\t1.0 }\n", "{ \"a\" :\t1 }\n"},
		{"invalid JSON untouched (syntax offsets stay)", `{"a":1.0,,}`, `{"a":1.0,,}`},
		{"nothing to do", `{"a":"b"}`, `{"a":"b"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, string(IntegralNumbers([]byte(tc.in))))
		})
	}
}

func TestDecodeBytesIntegers(t *testing.T) {
	t.Parallel()
	type body struct {
		N   *int64 `json:"n"`
		I   int    `json:"i"`
		I8  int8   `json:"i8"`
		U   uint32 `json:"u"`
		F   float64
		Arr []struct {
			X int64 `json:"x"`
		} `json:"arr"`
	}
	tests := []struct{ name, in, err string }{
		{"integral spellings", `{"n":1e2,"i":100.0,"i8":-1.28e2,"u":4.294967295e9,"arr":[{"x":2E1}]}`, ""},
		{"fraction", `{"n":100.5}`, "n must be an integer; got number 100.5"},
		{"nested fraction", `{"arr":[{"x":0.5}]}`, "arr.x must be an integer; got number 0.5"},
		{"int64 overflow", `{"n":1e30}`, "n must be an integer from -9223372036854775808 to 9223372036854775807; got 1e30"},
		{"int8 overflow", `{"i8":128}`, "i8 must be an integer from -128 to 127; got 128"},
		{"int8 overflow written as a float", `{"i8":1.28e2}`, "i8 must be an integer from -128 to 127; got 128"},
		{"uint negative", `{"u":-1}`, "u must be an integer from 0 to 4294967295; got -1"},
		{"1e400", `{"i":1e400}`, "i must be an integer from -9223372036854775808 to 9223372036854775807; got 1e400"},
		{"string", `{"n":"1"}`, "n must be an integer; got string"},
		{"syntax error offset as sent", `{"n":1.0,}`, "Malformed JSON body: invalid character '}' looking for beginning of object key string (at byte 10)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b body
			err := Decoder{}.DecodeBytes([]byte(tc.in), &b)
			if tc.err == "" {
				require.NoError(t, err)
				assert.Equal(t, int64(100), *b.N)
				assert.Equal(t, 100, b.I)
				assert.Equal(t, int8(-128), b.I8)
				assert.Equal(t, uint32(4294967295), b.U)
				assert.Equal(t, int64(20), b.Arr[0].X)
				return
			}
			assert.EqualError(t, err, tc.err)
			assert.Equal(t, sim.CodeValidation, sim.ErrorCode(err))
		})
	}
}

func canonical(t *testing.T, s string) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, CanonicalJSON(&buf, strings.NewReader(s)), s)
	return buf.String()
}

func TestCanonicalJSON(t *testing.T) {
	t.Parallel()
	same := [][]string{
		{`{"a":1,"b":[1,2]}`, "{ \"b\" : [ 1 , 2.0 ] ,\n \"a\" : 1e0 }", `{"b":[1e0,20e-1],"a":0.1e1}`},
		{`{"n":100}`, `{"n":100.0}`, `{"n":1e2}`, `{"n":1E+2}`, `{"n":100.000}`},
		{`{"n":0}`, `{"n":-0}`, `{"n":0.0e7}`, `{"n":-0.0}`},
		{`{"n":1.5}`, `{"n":15e-1}`, `{"n":1.50}`},
		{`{"n":1e400}`, `{"n":10e399}`},
		{`{"s":"A\u00e9"}`, `{"s":"\u0041é"}`},
		{`{"a":2}`, `{"a":1,"a":2}`}, // the last of duplicate keys, as the decoder keeps it
		{`{"o":{"y":1,"x":{"b":null,"a":true}}}`, `{"o":{"x":{"a":true,"b":null},"y":1}}`},
	}
	for _, group := range same {
		want := canonical(t, group[0])
		for _, s := range group[1:] {
			assert.Equal(t, want, canonical(t, s), "%s and %s", group[0], s)
		}
	}
	differ := [][2]string{
		{`{"n":100}`, `{"n":100.5}`},
		{`{"n":100}`, `{"n":"100"}`},
		{`{"n":1}`, `{"n":-1}`},
		{`{"s":"a "}`, `{"s":"a"}`},
		{`{"a":[1,2]}`, `{"a":[2,1]}`},
		{`{"a":null}`, `{}`},
		{`{"n":9007199254740993}`, `{"n":9007199254740992}`},
	}
	for _, p := range differ {
		assert.NotEqual(t, canonical(t, p[0]), canonical(t, p[1]), "%s and %s", p[0], p[1])
	}
	for _, bad := range []string{``, `{"a":`, `{} {}`, `{"a":1}x`} {
		assert.Error(t, CanonicalJSON(&bytes.Buffer{}, strings.NewReader(bad)), "%q", bad)
	}
}

// FuzzIntegralNumbers: the rewrite never panics, keeps validity, and keeps
// the value: the canonical forms of the body before and after are equal.
func FuzzIntegralNumbers(f *testing.F) {
	for _, s := range []string{
		`{"a":100}`, `{"a":100.0}`, `{"a":1e2}`, `{"a":1.5}`, `{"a":-0.0}`, `{"a":1e400}`, `{"a":1e-400}`,
		`{"a":9007199254740993.0}`, `{"a":"1.0","b":[1.0,{"c":2E+0}]}`, `{"a":1.0,,}`, `"\"1.0"`, `[1.0e`,
		`{"a":9.223372036854775808e18}`, `{"a":1e9999999999}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		out := IntegralNumbers(body)
		if json.Valid(body) != json.Valid(out) {
			t.Fatalf("validity changed: %q -> %q", body, out)
		}
		if !json.Valid(body) {
			if !bytes.Equal(body, out) {
				t.Fatalf("invalid JSON rewritten: %q -> %q", body, out)
			}
			return
		}
		var a, b bytes.Buffer
		errA, errB := CanonicalJSON(&a, bytes.NewReader(body)), CanonicalJSON(&b, bytes.NewReader(out))
		if (errA == nil) != (errB == nil) || a.String() != b.String() {
			t.Fatalf("value changed: %q -> %q (%s / %s)", body, out, a.String(), b.String())
		}
		if errA == nil {
			var c bytes.Buffer
			if err := CanonicalJSON(&c, bytes.NewReader(a.Bytes())); err != nil || c.String() != a.String() {
				t.Fatalf("canonical form not stable: %s -> %s (%v)", a.String(), c.String(), err)
			}
		}
	})
}
