package faults

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRuleBounds: a simulator holds at most MaxLive live rules and
// MaxRuleBytes of rules; past either a rule is refused with a 409
// ConflictError, and the oldest ended rules give way first.
func TestRuleBounds(t *testing.T) {
	t.Parallel()
	big := func(id string) Rule {
		return Rule{ID: id, Action: Action{Type: ActionError, Status: 500, Message: strings.Repeat("m", MaxMessageLen)}}
	}
	tests := []struct {
		name    string
		fill    func(t *testing.T, f *Faults)
		next    Rule
		wantErr string // "" : added
	}{
		{"live rules up to the cap", func(t *testing.T, f *Faults) {
			for range MaxLive - 1 {
				_, err := f.Add(Rule{Action: Action{Type: ActionDrop}})
				require.NoError(t, err)
			}
		}, Rule{Action: Action{Type: ActionDrop}}, ""},
		{"one live rule past the cap", func(t *testing.T, f *Faults) {
			for range MaxLive {
				_, err := f.Add(Rule{Action: Action{Type: ActionDrop}})
				require.NoError(t, err)
			}
		}, Rule{Action: Action{Type: ActionDrop}}, fmt.Sprintf(MsgTooManyRules, MaxLive)},
		{"live bytes past the bound", func(t *testing.T, f *Faults) {
			for i := 0; ; i++ { // until the first refusal
				if _, err := f.Add(big(fmt.Sprint("r", i))); err != nil {
					require.Greater(t, i, MaxRuleBytes/(2*MaxMessageLen), "refused before the bound: %v", err)
					return
				}
			}
		}, big("over"), "with this rule's"},
		{"ended rules give way", func(t *testing.T, f *Faults) {
			for i := 0; ; i++ { // until the first refusal
				r := big(fmt.Sprint("r", i))
				r.Count = 1
				if _, err := f.Add(r); err != nil {
					break
				}
			}
			// Every rule fires once and ends.
			for range f.rules {
				_, _, _, ok := f.pick(httptest.NewRequest(http.MethodGet, "/", nil))
				require.True(t, ok)
			}
		}, big("next"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := New(Config{})
			tt.fill(t, f)
			before := len(f.rules)
			_, err := f.Add(tt.next)
			if tt.wantErr == "" {
				require.NoError(t, err)
				assert.LessOrEqual(t, f.bytes, MaxRuleBytes)
				return
			}
			require.Error(t, err)
			assert.Equal(t, sim.CodeConflict, sim.ErrorCode(err))
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.Len(t, f.rules, before, "nothing added")
		})
	}
}

// TestRuleBoundsAnswer: the refusal in the control envelope.
func TestRuleBoundsAnswer(t *testing.T) {
	t.Parallel()
	f := New(Config{})
	for range MaxLive {
		_, err := f.Add(Rule{Action: Action{Type: ActionDrop}})
		require.NoError(t, err)
	}
	root := chi.NewRouter()
	root.Mount("/_sim", f.Routes())
	req := httptest.NewRequest(http.MethodPost, "/_sim/faults", strings.NewReader(`{"action":{"type":"drop"}}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	root.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusConflict, rec.Code)
	assert.JSONEq(t, `{"error":"ConflictError","message":"This simulator holds 1000 live fault rules, the most it keeps; remove some (DELETE /_sim/faults/{id}) or all (DELETE /_sim/faults)"}`, rec.Body.String())
}
