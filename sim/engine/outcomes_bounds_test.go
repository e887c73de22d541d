package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOutcomeRuleBounds: a simulator keeps at most MaxOutcomeRules outcome
// rules and MaxOutcomeRuleBytes of them; past either, a rule is refused
// with a conflict and nothing is stored.
func TestOutcomeRuleBounds(t *testing.T) {
	t.Parallel()
	small := sim.OutcomeRule{Outcome: sim.ForceError, Remaining: 1, ErrorMessage: "x"}
	long := sim.OutcomeRule{Outcome: sim.ForceError, Remaining: 1, ErrorMessage: strings.Repeat("m", 8<<10)}
	tests := []struct {
		name string
		rule sim.OutcomeRule
		want string
	}{
		{"count", small, fmt.Sprintf(sim.MsgOutcomeRules, MaxOutcomeRules)},
		{"bytes", long, "past the 262144 this simulator keeps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			h := newArtHarness(t, artOptions{})
			var err error
			n := 0
			for ; err == nil; n++ {
				_, err = h.e.Outcomes.AddOutcomeRule(ctx, tt.rule)
				require.LessOrEqual(t, n, MaxOutcomeRules, "never refused")
			}
			assert.Equal(t, sim.CodeConflict, sim.ErrorCode(err))
			assert.Contains(t, err.Error(), tt.want)
			rules, err := h.e.Outcomes.OutcomeRules(ctx)
			require.NoError(t, err)
			assert.Len(t, rules, n-1, "the refused rule is not stored")
		})
	}
}
