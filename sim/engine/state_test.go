package engine

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The state dump pages its projects with a cursor and keeps the first
// sim.MaxStateList of its other lists, counting them whole.
func TestStatePagesAndBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, fakeProber{"https://v/2h": {Duration: 2 * time.Hour, Origin: sim.OriginRule}})
	key := h.account(t, sim.PlanEnterprise, 1_000_000, false)
	const n = sim.MaxStateList + 150
	type made struct {
		id      string
		created time.Time
	}
	var all []made
	for i := range n {
		if i%7 == 0 { // some share a creation time, some not
			_, err := h.e.Clock.Advance(ctx, time.Second)
			require.NoError(t, err)
		}
		rc, err := h.e.Projects.CreateProject(ctx, key, newProject("https://v/2h"), nil)
		require.NoError(t, err)
		all = append(all, made{rc.ProjectID, h.e.Clock.Now()})
	}
	sort.SliceStable(all, func(i, j int) bool {
		if !all[i].created.Equal(all[j].created) {
			return all[i].created.After(all[j].created)
		}
		return all[i].id < all[j].id
	})

	t.Run("pages of 400 list every project once, in order", func(t *testing.T) {
		var got []string
		cursor := ""
		for range 10 {
			st, err := h.e.Data.State(ctx, sim.StateFilter{APIKey: key, Limit: 400, Cursor: cursor})
			require.NoError(t, err)
			for _, p := range st.Projects {
				got = append(got, p.ID)
			}
			assert.True(t, st.Truncated, "more pending transitions than shown")
			assert.Len(t, st.PendingTransitions, sim.MaxStateList, "the first pending transitions")
			assert.Equal(t, n, st.PendingTransitionsTotal)
			assert.True(t, sort.SliceIsSorted(st.PendingTransitions, func(i, j int) bool {
				return st.PendingTransitions[i].DueAt.Before(st.PendingTransitions[j].DueAt)
			}))
			if cursor = st.NextCursor; cursor == "" {
				break
			}
		}
		want := make([]string, len(all))
		for i, m := range all {
			want[i] = m.id
		}
		assert.Equal(t, want, got)
	})
	t.Run("a limit over the maximum is clamped", func(t *testing.T) {
		st, err := h.e.Data.State(ctx, sim.StateFilter{Limit: 1 << 30})
		require.NoError(t, err)
		assert.Len(t, st.Projects, sim.MaxStateLimit)
		assert.True(t, st.Truncated)
		assert.NotEmpty(t, st.NextCursor)
	})
	t.Run("a cursor the dump did not give is refused", func(t *testing.T) {
		for _, c := range []string{"nope", "bm9wZQ", "MTIzLg"} {
			_, err := h.e.Data.State(ctx, sim.StateFilter{Cursor: c})
			assert.Equal(t, sim.CodeValidation, sim.ErrorCode(err), c)
			assert.EqualError(t, err, fmt.Sprintf(sim.MsgStateCursor, c))
		}
	})
}

func TestFirstNKeepsTheFirst(t *testing.T) {
	t.Parallel()
	f := newFirstN(3, func(a, b int) bool { return a < b })
	for _, x := range []int{9, 4, 7, 1, 8, 2, 6} {
		f.add(x)
	}
	assert.Equal(t, []int{1, 2, 4}, f.sorted())
	assert.Equal(t, 7, f.total)
}
