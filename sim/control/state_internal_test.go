package control

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The state dump written one project at a time is the bytes of the whole
// State encoded at once, for every shape of page.
func TestWriteStateIsTheWholeEncoding(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	base := func() sim.State {
		return sim.State{Now: "2026-03-01T12:00:00.000Z", TimeScale: 1, Accounts: []sim.Account{{APIKey: "k<&>"}},
			Projects: []sim.ProjectState{}, PendingTransitions: []sim.Transition{}, OutcomeRules: []sim.OutcomeRule{},
			Fixtures: map[string]int{"accounts": 1}, Studio: map[string]int{}}
	}
	cases := map[string]func(*sim.State){
		"no project": func(*sim.State) {},
		"one project": func(st *sim.State) {
			st.Projects = []sim.ProjectState{{ID: "1", Name: `a "<b>"`, CreatedAt: created, History: []sim.Event{}}}
		},
		"a cut page": func(st *sim.State) {
			st.Projects = []sim.ProjectState{{ID: "1", CreatedAt: created}, {ID: "2", CreatedAt: created}}
			st.Truncated, st.NextCursor, st.AccountsTotal, st.PendingTransitionsTotal = true, "abc", 1001, 2000
		},
	}
	for name, shape := range cases {
		t.Run(name, func(t *testing.T) {
			st := base()
			shape(&st)
			want, err := httpx.Marshal(st)
			require.NoError(t, err)
			rec := httptest.NewRecorder()
			require.NoError(t, writeState(rec, &st))
			assert.Equal(t, string(want)+"\n", rec.Body.String())
			assert.Equal(t, httpx.ContentTypeJSON, rec.Header().Get("Content-Type"))
		})
	}
}
