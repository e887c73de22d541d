package idempotency

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bytesFingerprint is the rule of a body compared by its bytes: method,
// path, query, Content-Type and the raw body.
func bytesFingerprint(method, path, query, ct, body string) string {
	h := sha256.New()
	for _, p := range []string{method, path, query, ct} {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	raw := sha256.Sum256([]byte(body))
	h.Write(raw[:])
	return hex.EncodeToString(h.Sum(nil))
}

func TestIdempotencyComparesJSONByValue(t *testing.T) {
	t.Parallel()
	const first = `{"name":"a","start_ms":100,"tags":["x","y"]}`
	tests := []struct {
		name     string
		stored   func(fp string) string // the fingerprint of the stored record
		ct, body string
		replayed bool
	}{
		{"same bytes", nil, "application/json", first, true},
		{"keys reordered, spaces, 1e2", nil, "application/json", "{ \"tags\": [\"x\", \"y\"],\n \"start_ms\": 1e2, \"name\": \"a\" }", true},
		{"charset parameter", nil, "application/json; charset=utf-8", first, true},
		{"another value", nil, "application/json", `{"name":"a","start_ms":101,"tags":["x","y"]}`, false},
		{"array order matters", nil, "application/json", `{"name":"a","start_ms":100,"tags":["y","x"]}`, false},
		{"not JSON is compared by bytes", nil, "application/json", `{"name":"a",`, false},
		{"record of a JSON body by its bytes, same bytes: a mismatch, never a replay", func(string) string {
			return bytesFingerprint("POST", "/things", "", "application/json", first)
		}, "application/json", first, false},
		{"record of a JSON body by its bytes, respelled: a mismatch", func(string) string {
			return bytesFingerprint("POST", "/things", "", "application/json", first)
		}, "application/json", `{"start_ms":100,"name":"a","tags":["x","y"]}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := &memIdem{recs: map[string]sim.IdemRecord{}}
			render := func(err error) (int, any) {
				return http.StatusUnprocessableEntity, map[string]string{"error": err.Error()}
			}
			m := &Middleware{Store: store, API: httpx.API{Render: render}}
			runs := 0
			h := m.Wrap(func(*http.Request) string { return "scope" })(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				runs++
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"id":"1"}`))
			}))
			send := func(ct, body string) *httptest.ResponseRecorder {
				r := httptest.NewRequest("POST", "/things", strings.NewReader(body))
				r.Header.Set("Content-Type", ct)
				r.Header.Set(HeaderKey, "k")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				return w
			}
			require.Equal(t, 200, send("application/json", first).Code)
			if tc.stored != nil {
				rec := store.recs["scope/k"]
				rec.Fingerprint = tc.stored(rec.Fingerprint)
				store.recs["scope/k"] = rec
			} else {
				assert.True(t, strings.HasPrefix(store.recs["scope/k"].Fingerprint, fpCanonicalJSON))
			}
			w := send(tc.ct, tc.body)
			assert.Equal(t, 1, runs, "no second run")
			if tc.replayed {
				assert.Equal(t, 200, w.Code, "%s", w.Body)
				assert.Equal(t, "true", w.Header().Get(HeaderReplayed))
				assert.Equal(t, `{"id":"1"}`, w.Body.String())
			} else {
				assert.Equal(t, http.StatusUnprocessableEntity, w.Code, "%s", w.Body)
				assert.Contains(t, w.Body.String(), "was already used with a different request")
			}
		})
	}
}

// A non-JSON body keeps the byte (or multipart part) rule: its fingerprint
// has no canonical prefix.
func TestIdempotencyFingerprintOfOtherBodies(t *testing.T) {
	t.Parallel()
	m := &Middleware{}
	r := httptest.NewRequest("POST", "/x", strings.NewReader(`{"a":1}`))
	r.Header.Set("Content-Type", "text/plain")
	sb, fp, err := m.spool(r)
	require.NoError(t, err)
	defer sb.Close()
	assert.Equal(t, bytesFingerprint("POST", "/x", "", "text/plain", `{"a":1}`), fp)
}
