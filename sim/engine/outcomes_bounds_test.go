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
// with a conflict and nothing is stored. The count case stores all but the
// last of its rules in one transaction (seeded) first: each AddOutcomeRule
// reads and writes them all, and a thousand of them would cost seconds.
func TestOutcomeRuleBounds(t *testing.T) {
	t.Parallel()
	small := sim.OutcomeRule{Outcome: sim.ForceError, Remaining: 1, ErrorMessage: "x"}
	long := sim.OutcomeRule{Outcome: sim.ForceError, Remaining: 1, ErrorMessage: strings.Repeat("m", 8<<10)}
	tests := []struct {
		name   string
		rule   sim.OutcomeRule
		seeded int
		want   string
	}{
		{"count", small, MaxOutcomeRules - 1, fmt.Sprintf(sim.MsgOutcomeRules, MaxOutcomeRules)},
		{"bytes", long, 0, "past the 262144 this simulator keeps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			h := newArtHarness(t, artOptions{})
			seedOutcomeRules(t, h.e, tt.rule, tt.seeded)
			var err error
			n := tt.seeded
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

// seedOutcomeRules stores n copies of r as AddOutcomeRule would have, in
// one transaction, each with an id of the rules' sequence.
func seedOutcomeRules(t *testing.T, e *Engine, r sim.OutcomeRule, n int) {
	t.Helper()
	if n == 0 {
		return
	}
	require.NoError(t, e.Outcomes.update(context.Background(), func(tx sim.Tx) error {
		rules := make([]sim.OutcomeRule, n)
		for i := range rules {
			seq, err := tx.NextSequence(seqOutcomeRules)
			if err != nil {
				return err
			}
			rules[i] = r
			rules[i].ID, rules[i].CreatedAt = fmt.Sprintf("out_%d", seq), e.Outcomes.clock.Now()
		}
		return saveOutcomeRules(tx, rules)
	}))
	rules, err := e.Outcomes.OutcomeRules(context.Background())
	require.NoError(t, err)
	require.Len(t, rules, n)
}
