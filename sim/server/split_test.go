package server

import (
	"bytes"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingReader counts what is read of r.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// A create body is decided by its top-level keys wherever they are, up to
// the route's body limit: a huge first value (a 70 KB name) does not hide
// the keys after it, keys inside nested values never count, and the
// handler still reads the body as sent.
func TestDecideByTopLevelKeysAnywhere(t *testing.T) {
	huge := strings.Repeat("x", 70<<10)
	escaped := strings.Repeat(`a\"b\\`, 15<<10) // escaped quotes and backslashes, 90 KB
	cases := []struct {
		name, body string
		def        string // Rules.SharedCreate
		want       Route
	}{
		{"huge name, then a platform field", `{"name":"` + huge + `","source_lang":"en","target_lang":"fr-FR"}`, "", Route{Platform, ByBody}},
		{"huge name, then a studio field", `{"name":"` + huge + `","managerEmail":"a@b.c"}`, Platform, Route{Studio, ByBody}},
		{"huge name alone", `{"name":"` + huge + `"}`, "", Route{Studio, ByDefault}},
		{"huge name alone, platform default", `{"name":"` + huge + `"}`, Platform, Route{Platform, ByDefault}},
		{"studio field, huge name, platform field", `{"managerEmail":"a@b.c","name":"` + huge + `","tts_volume":"normal"}`, "", Route{Platform, ByBody}},
		{"escaped quotes in the name", `{"name":"` + escaped + `","source_lang":"en"}`, "", Route{Platform, ByBody}},
		{"escaped quote ending a value", `{"name":"\"","source_lang":"en"}`, "", Route{Platform, ByBody}},
		{"a key that looks like a field inside the name", `{"name":"\",\"source_lang\":\"en"}`, "", Route{Studio, ByDefault}},
		{"platform field in a nested object", `{"name":"` + huge + `","meta":{"source_lang":"en","x":[{"tts_volume":1}]}}`, "", Route{Studio, ByDefault}},
		{"platform field in a nested array", `{"name":"x","list":[{"source_lang":"en"},"source_lang"]}`, "", Route{Studio, ByDefault}},
		{"platform field in a nested object, no name", `{"meta":{"source_lang":"en"}}`, "", Route{Platform, ByDefault}},
		{"studio field in a nested object", `{"name":"x","meta":{"managerEmail":"a@b.c"}}`, Platform, Route{Platform, ByDefault}},
		{"studio field in a nested object, no name", `{"meta":{"managerEmail":"a@b.c"}}`, "", Route{Platform, ByDefault}},
		{"name in a nested object", `{"meta":{"name":"x"}}`, "", Route{Platform, ByDefault}},
		{"empty object", `{}`, "", Route{Platform, ByDefault}},
		{"unknown fields only", `{"title":"x","lang":"en"}`, "", Route{Platform, ByDefault}},
		{"no body", ``, "", Route{Platform, ByDefault}},
		{"name in an unfinished object", `{"name": "Marketing"`, "", Route{Studio, ByDefault}},
		{"platform field after a nested object", `{"meta":{"a":{"b":[1,{"c":"}"}]}},"source_lang":"en"}`, "", Route{Platform, ByBody}},
		{"a field as a value", `{"name":"source_lang","x":"managerEmail"}`, Platform, Route{Platform, ByDefault}},
		{"escaped key", `{"name":"` + huge + `","source\u005flang":"en"}`, "", Route{Platform, ByBody}},
		{"blank before the object", " \r\n\t" + `{"source_lang":"en"}`, "", Route{Platform, ByBody}},
		{"an array", `[{"source_lang":"en"}]`, "", Route{Platform, ByDefault}},
		{"an array, whatever the setting", `[{"name":"x"}]`, Studio, Route{Platform, ByDefault}},
		{"a field after the object", `{"name":"x"} {"source_lang":"en"}`, "", Route{Studio, ByDefault}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/api/v1/projects", strings.NewReader(tc.body))
			assert.Equal(t, tc.want, Decide(r, Rules{SharedCreate: tc.def, Pages: true}))
			got, err := io.ReadAll(r.Body)
			require.NoError(t, err)
			assert.True(t, string(got) == tc.body, "the handler reads the body as sent")
		})
	}
}

// Deciding reads no more than it needs: up to a platform field (at least
// 64 KiB, and in the chunks of a doubling buffer), never past the route's
// body limit.
func TestDecideReadsBoundedByTheRouteLimit(t *testing.T) {
	huge := strings.Repeat("x", 200<<10)
	body := `{"name":"` + huge + `","source_lang":"en","rest":"` + strings.Repeat("y", 1<<20) + `"}`
	c := &countingReader{r: strings.NewReader(body)}
	r := httptest.NewRequest("POST", "/api/v1/projects", c)
	assert.Equal(t, Route{Platform, ByBody}, Decide(r, Rules{}))
	// The buffer doubles as it fills: at most twice what the decision needed.
	assert.Less(t, c.n, 2*(len(huge)+sniffMin), "read before the decision")
	got, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	assert.True(t, string(got) == body, "the handler reads the body as sent")

	// Past the limit nothing more is read: the route refuses the body.
	over := `{"name":"` + strings.Repeat("x", sniffLimit) + `","source_lang":"en"}`
	c = &countingReader{r: strings.NewReader(over)}
	r = httptest.NewRequest("POST", "/api/v1/projects", c)
	assert.Equal(t, Route{Studio, ByDefault}, Decide(r, Rules{}))
	assert.Equal(t, sniffLimit, c.n, "read before the decision")
	got, err = io.ReadAll(r.Body)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(got, []byte(over)), "the handler reads the body as sent")

	// A small body is read to its end.
	c = &countingReader{r: strings.NewReader(`{"source_lang":"en"}`)}
	r = httptest.NewRequest("POST", "/api/v1/projects", c)
	assert.Equal(t, Route{Platform, ByBody}, Decide(r, Rules{}))
	assert.Equal(t, len(`{"source_lang":"en"}`), c.n)
}
