package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// FuzzDecide: deciding a POST /api/v1/projects from its body never panics,
// always names an interface and a reason, gives the handler the whole body
// back, and for a valid JSON object within the sniff limit (the route's
// body limit) decides by its top-level keys alone: platform exactly when one
// is a platform create field, else studio when one is a studio create
// field, else the setting when one is "name", else platform, wherever the
// keys are in the body.
func FuzzDecide(f *testing.F) {
	for _, s := range []string{
		`{"name": "Marketing"}`, `{}`, ``, `{"name":`, `[{"source_lang":"en"}]`, `"x"`,
		`{"source_lang":"en","target_lang":"de-DE","source_video_url":"https://cdn.test/a.mp4"}`,
		`{"name":"x","managerEmail":"a@b.c"}`, `{"a":{"source_lang":1},"b":[1,2,{"c":null}]}`,
		`{"source\u005flang":"en"}`, `{"name":"x","name":"y","tts_volume":"normal"}`, ` {"glossary_content" : ""} `,
		`{"name":"\"","source_lang":"en"}`, `{"name":"\",\"source_lang\":1"}`, `{"a":{"managerEmail":1},"b":"}"}`,
		`{"managerEmail":"a","x":[{"y":"]"}],"mixing_mode":"x"}`,
		`{"name":"` + strings.Repeat("x", 70<<10) + `","source_lang":"en"}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, platformDefault bool) {
		rules := Rules{Pages: true}
		if platformDefault {
			rules.SharedCreate = Platform
		}
		r := httptest.NewRequest("POST", "/api/v1/projects", bytes.NewReader(body))
		rt := Decide(r, rules)
		if rt.Interface != Platform && rt.Interface != Studio {
			t.Fatalf("interface %q", rt.Interface)
		}
		if !slices.Contains([]string{ByBody, ByDefault}, rt.By) {
			t.Fatalf("reason %q", rt.By)
		}
		got, err := io.ReadAll(r.Body)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("the handler reads %q (%v), not the body %q", got, err, body)
		}
		var obj map[string]json.RawMessage
		if len(body) > sniffLimit || json.Unmarshal(body, &obj) != nil || obj == nil {
			return
		}
		platform, studio, name := false, false, false
		for k := range obj {
			platform = platform || slices.Contains(platformCreateFields, k)
			studio = studio || slices.Contains(studioCreateFields, k)
			name = name || k == "name"
		}
		want := Route{Platform, ByDefault}
		switch {
		case platform:
			want = Route{Platform, ByBody}
		case studio:
			want = Route{Studio, ByBody}
		case name && !platformDefault:
			want = Route{Studio, ByDefault}
		}
		if rt != want {
			t.Fatalf("%.200q: decided %+v, not %+v", body, rt, want)
		}
	})
}
