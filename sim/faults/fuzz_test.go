package faults

import (
	"encoding/json"
	"testing"

	"github.com/dubsim/dubsim/sim"
)

// FuzzDecodeRule feeds arbitrary bodies to the rule decoder and validator:
// they never panic, every refusal is a validation error, and an accepted
// rule survives a JSON round trip (and Add) unchanged.
func FuzzDecodeRule(f *testing.F) {
	for _, seed := range []string{
		`{"action":{"type":"drop"}}`,
		`{"id":"x","method":"POST","path":"/api/v1/*","api_key":"k","count":2,"probability":0.5,"ttl_seconds":1.5,"action":{"type":"latency","latency_ms":1500}}`,
		`{"action":{"type":"latency","distribution":"uniform","min_ms":0,"max_ms":10}}`,
		`{"action":{"type":"latency","distribution":"normal","mean_ms":100,"stddev_ms":10}}`,
		`{"action":{"type":"latency","distribution":"lognormal","median_ms":100,"sigma":0.5}}`,
		`{"action":{"type":"error","status":503,"error":"E","message":"m\u2028"}}`,
		`{"action":{"type":"rate_limit","retry_after_seconds":5}}`,
		`{"action":{"type":"truncate","bytes":10}}`,
		`{"ID":"A","Action":{"Type":"drop"},"TTL_SECONDS":-0}`,
		`{"probability":1e-320,"action":{"type":"drop"}}`,
		`{"action":{"type":"drop","colour":1}}`,
		`{"count":1.5}`, `{"count":2.0,"action":{"type":"latency","latency_ms":1e2}}`, `{"action":{"type":"truncate","bytes":1e30}}`, `[]`, `null`, `{`, `{} {}`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeRule(data)
		if err != nil {
			if sim.ErrorCode(err) != sim.CodeValidation {
				t.Fatalf("decode error %v has code %q", err, sim.ErrorCode(err))
			}
			return
		}
		if err := r.Validate(); err != nil {
			if sim.ErrorCode(err) != sim.CodeValidation {
				t.Fatalf("validation error %v has code %q", err, sim.ErrorCode(err))
			}
			return
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("marshal %#v: %v", r, err)
		}
		again, err := DecodeRule(b)
		if err != nil {
			t.Fatalf("re-decode %s: %v", b, err)
		}
		if err := again.Validate(); err != nil {
			t.Fatalf("re-validate %s: %v", b, err)
		}
		b2, _ := json.Marshal(again)
		if string(b) != string(b2) {
			t.Fatalf("round trip changed the rule:\n%s\n%s", b, b2)
		}
		added, err := New(Config{}).Add(again)
		if err != nil {
			t.Fatalf("Add refused a valid rule %s: %v", b, err)
		}
		if r.ID != "" && added.ID != r.ID {
			t.Fatalf("Add changed the id %q to %q", r.ID, added.ID)
		}
	})
}
