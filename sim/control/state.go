package control

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
)

type resetBody struct {
	APIKey string `json:"api_key"`
}

// handleReset serves POST /_sim/reset: with no body, fixtures restored and
// everything else emptied; with {"api_key": k}, only that account reset.
func (a *API) handleReset(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var b resetBody
	if r.ContentLength != 0 {
		if err := a.dec.Decode(w, r, &b); err != nil && !(r.ContentLength < 0 && sim.ErrorMessage(err) == sim.MsgBodyNotObject) {
			return 0, nil, err
		}
	}
	if b.APIKey != "" {
		err := a.ctl.ResetAccount(r.Context(), b.APIKey)
		return http.StatusOK, map[string]any{"reset": true, "api_key": b.APIKey}, err
	}
	return http.StatusOK, map[string]bool{"reset": true}, a.ctl.Reset(r.Context())
}

// handleState serves GET /_sim/state?api_key=&limit=&cursor=: one page of
// the dump, read in one transaction and then written one project at a
// time, so a slow client never holds a read transaction open (it would
// stall every writer) and the whole answer is never encoded at once.
func (a *API) handleState(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := sim.StateFilter{APIKey: q.Get("api_key"), Cursor: q.Get("cursor")}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			return sim.Errorf(sim.CodeValidation, msgStateLimit, l)
		}
		f.Limit = n
	}
	if err := a.dumps.Enter(r.Context()); err != nil {
		return err
	}
	defer a.dumps.Leave()
	st, err := a.ctl.State(r.Context(), f)
	if err != nil {
		return err
	}
	return writeState(w, &st)
}

// stateHead and stateTail are the fields of sim.State before and after its
// projects: the answer is the bytes httpx.WriteJSON writes of the State.
type stateHead struct {
	Now       string        `json:"now"`
	TimeScale float64       `json:"time_scale"`
	Frozen    bool          `json:"frozen"`
	Accounts  []sim.Account `json:"accounts"`
}

type stateTail struct {
	PendingTransitions      []sim.Transition  `json:"pending_transitions"`
	OutcomeRules            []sim.OutcomeRule `json:"outcome_rules"`
	IdempotencyKeys         int               `json:"idempotency_keys"`
	Fixtures                map[string]int    `json:"fixtures"`
	Studio                  map[string]int    `json:"studio"`
	Truncated               bool              `json:"truncated,omitempty"`
	NextCursor              string            `json:"next_cursor,omitempty"`
	AccountsTotal           int               `json:"accounts_total,omitempty"`
	PendingTransitionsTotal int               `json:"pending_transitions_total,omitempty"`
}

// writeState writes st one project at a time, dropping each once written.
func writeState(w http.ResponseWriter, st *sim.State) error {
	head, err := httpx.Marshal(stateHead{st.Now, st.TimeScale, st.Frozen, st.Accounts})
	if err != nil {
		return err
	}
	tail, err := httpx.Marshal(stateTail{st.PendingTransitions, st.OutcomeRules, st.IdempotencyKeys, st.Fixtures, st.Studio,
		st.Truncated, st.NextCursor, st.AccountsTotal, st.PendingTransitionsTotal})
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", httpx.ContentTypeJSON)
	w.WriteHeader(http.StatusOK)
	parts := [][]byte{head[:len(head)-1], []byte(`,"projects":[`)}
	for i := range st.Projects {
		b, err := httpx.Marshal(st.Projects[i])
		if err != nil {
			// Headers are sent: a broken answer, rather than a short list.
			return nil //nolint:nilerr // nothing more can be said to the client
		}
		st.Projects[i] = sim.ProjectState{}
		if i > 0 {
			parts = append(parts, []byte{','})
		}
		parts = append(parts, b)
		if _, err := w.Write(bytes.Join(parts, nil)); err != nil {
			return nil //nolint:nilerr // the client is gone
		}
		parts = parts[:0]
	}
	parts = append(parts, []byte("],"), tail[1:], []byte{'\n'})
	_, _ = w.Write(bytes.Join(parts, nil))
	return nil
}

type fixturesBody struct {
	Accounts   json.RawMessage `json:"accounts"`
	Options    json.RawMessage `json:"options"`
	Voices     json.RawMessage `json:"voices"`
	MediaRules json.RawMessage `json:"media_rules"`
	Studio     json.RawMessage `json:"studio"`
	// FromStartup lays the content over the startup set, not the set in use.
	FromStartup bool `json:"from_startup"`
}

// loadFixtures serves POST /_sim/fixtures: each part in the shape of its
// fixture file's content, laid entry by entry over the fixture set.
func (a *API) loadFixtures(r *http.Request, b fixturesBody) (int, any, error) {
	files := map[string][]byte{}
	wrap := func(name, key string, raw json.RawMessage) {
		if len(raw) == 0 {
			return
		}
		if key == "" {
			files[name] = raw
			return
		}
		files[name] = append(append([]byte(`{"`+key+`":`), raw...), '}')
	}
	wrap(sim.FixtureAccounts, "accounts", b.Accounts)
	wrap(sim.FixtureOptions, "", b.Options)
	wrap(sim.FixtureVoices, "voices", b.Voices)
	wrap(sim.FixtureMedia, "rules", b.MediaRules)
	wrap(sim.FixtureStudio, "", b.Studio)
	if len(files) == 0 && !b.FromStartup {
		return 0, nil, sim.Errorf(sim.CodeValidation, msgFixturesEmpty)
	}
	fx, err := a.ctl.LoadFixtureFiles(r.Context(), files, b.FromStartup)
	if err != nil {
		return 0, nil, err
	}
	voices := 0
	for _, vs := range fx.Catalog.Voices {
		voices += len(vs)
	}
	return http.StatusOK, map[string]any{"loaded": map[string]int{
		"accounts": len(fx.Accounts), "source_langs": len(fx.Catalog.SourceLangs), "target_langs": len(fx.Catalog.TargetLangs),
		"voices": voices, "media_rules": len(fx.MediaRules)}}, nil
}
