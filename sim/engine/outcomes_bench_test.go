package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/engine"
	"github.com/stretchr/testify/require"
)

// BenchmarkAddOutcomeRules adds n rules to a simulator that has none. The
// rules are one stored value that each add reads and writes whole, so the
// cost grows with n squared, up to MaxOutcomeRules.
//
//	go test -run XXX -bench AddOutcomeRules -benchmem ./sim/engine
func BenchmarkAddOutcomeRules(b *testing.B) {
	for _, n := range []int{100, 300, engine.MaxOutcomeRules} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ctx := context.Background()
			for i := range b.N {
				b.StopTimer()
				e, st := benchEngine(b, filepath.Join(b.TempDir(), fmt.Sprintf("rules%d.db", i)))
				b.StartTimer()
				for range n {
					_, err := e.Outcomes.AddOutcomeRule(ctx, sim.OutcomeRule{Outcome: sim.ForceError, Remaining: 1, ErrorMessage: "boom"})
					require.NoError(b, err)
				}
				b.StopTimer()
				require.NoError(b, st.Close())
			}
		})
	}
}
