package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// This file holds the operations of the simulator's control API: clock
// control, forced outcomes, per-account reset, run-time fixtures and the
// state dump.

const (
	metaOutcomeRules = "outcome_rules"
	seqOutcomeRules  = "outcome_rules"
)

// Freeze stops simulated time; Resume restarts it at the scale it had.
func (e *Engine) Freeze(ctx context.Context) error {
	e.clockMu.Lock()
	if !e.frozen {
		e.frozen, e.frozenScale = true, e.clock.Scale()
		e.clock.SetScale(0)
	}
	e.clockMu.Unlock()
	return e.SaveClock(ctx)
}

// Resume restarts a frozen clock at the scale it had before Freeze; a
// clock that would still stand still (--time-scale 0, a scale of 0 set
// through the control API) runs in real time (scale 1) after it.
func (e *Engine) Resume(ctx context.Context) error {
	e.clockMu.Lock()
	if e.frozen {
		e.frozen = false
		e.clock.SetScale(e.frozenScale)
	}
	if e.clock.Scale() == 0 {
		e.clock.SetScale(1)
	}
	e.clockMu.Unlock()
	return e.SaveClock(ctx)
}

// Frozen reports whether simulated time stands still: frozen by Freeze or
// running at scale 0. The control API and the dashboard show this one fact
// (fidelity K8).
func (e *Engine) Frozen() bool {
	e.clockMu.Lock()
	defer e.clockMu.Unlock()
	return e.frozen || e.clock.Scale() == 0
}

// SetTimeScale changes the speed of simulated time (0 freezes it) and
// persists the clock. It ends a Freeze.
func (e *Engine) SetTimeScale(ctx context.Context, scale float64) error {
	e.clockMu.Lock()
	e.frozen = false
	e.clock.SetScale(scale)
	e.clockMu.Unlock()
	return e.SaveClock(ctx)
}

func loadOutcomeRules(tx sim.Tx) ([]sim.OutcomeRule, error) {
	raw, err := tx.Meta(metaOutcomeRules)
	if errors.Is(err, sim.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rules []sim.OutcomeRule
	return rules, json.Unmarshal(raw, &rules)
}

func saveOutcomeRules(tx sim.Tx, rules []sim.OutcomeRule) error {
	b, err := json.Marshal(rules)
	if err != nil {
		return err
	}
	return tx.PutMeta(metaOutcomeRules, b)
}

// applyOutcomeRules lets the first matching forced-outcome rule decide how a
// new project ends, consuming one of its uses in the creating transaction.
func applyOutcomeRules(tx sim.Tx, p *sim.Project, now time.Time) error {
	rules, err := loadOutcomeRules(tx)
	if err != nil || len(rules) == 0 {
		return err
	}
	for i, r := range rules {
		if !r.Matches(p.APIKey, p.SourceVideoURL) {
			continue
		}
		force(p, r.Outcome, r.ErrorMessage, false, now)
		p.History = append(p.History, sim.Event{At: now, Kind: "forced_outcome", Message: r.ID + ": " + r.Outcome})
		rules[i].Remaining--
		if rules[i].Remaining == 0 {
			rules = slices.Delete(rules, i, i+1)
		}
		return saveOutcomeRules(tx, rules)
	}
	return nil
}

// force sets the planned end of p's current run: error (at its due time, or
// now) or ready now.
func force(p *sim.Project, outcome, message string, now bool, at time.Time) {
	switch outcome {
	case sim.ForceError:
		if message == "" {
			message = sim.DefaultForcedError
		}
		p.Outcome = sim.Outcome{Error: true, Message: message}
		if now {
			p.DueAt = at
		}
	case sim.ForceReady:
		p.Outcome = sim.Outcome{}
		p.DueAt = at
	}
}

func checkOutcome(outcome string) error {
	if outcome != sim.ForceError && outcome != sim.ForceReady {
		return sim.Errorf(sim.CodeValidation, "outcome must be %q or %q; got %q", sim.ForceError, sim.ForceReady, outcome)
	}
	return nil
}

// ForceProject decides how the current run of an in-progress project ends:
// outcome "error" (with message, at its due time or now) or "ready" (now).
func (e *Engine) ForceProject(ctx context.Context, id, outcome, message string, now bool) (sim.Project, error) {
	var p sim.Project
	if err := checkOutcome(outcome); err != nil {
		return p, err
	}
	err := e.update(ctx, func(tx sim.Tx) error {
		at := e.clock.Now()
		var err error
		p, err = tx.Project(id)
		if errors.Is(err, sim.ErrNotFound) {
			return notFound()
		}
		if err != nil {
			return err
		}
		if p, err = e.settle(tx, p, at); err != nil {
			return err
		}
		if p.Status != sim.StatusInProgress {
			return sim.Errorf(sim.CodeConflict, "Project %s is %s, not in_progress: a forced outcome applies to a run that is still processing (re-translate it first)", id, p.Status)
		}
		force(&p, outcome, message, now, at)
		p.History = append(p.History, sim.Event{At: at, Kind: "forced_outcome", Message: outcome})
		if p, err = e.settle(tx, p, at); err != nil {
			return err
		}
		return tx.PutProject(p)
	})
	return p, err
}

// AddOutcomeRule forces the outcome of the next Remaining matching projects.
func (e *Engine) AddOutcomeRule(ctx context.Context, r sim.OutcomeRule) (sim.OutcomeRule, error) {
	if err := checkOutcome(r.Outcome); err != nil {
		return r, err
	}
	if r.Remaining <= 0 {
		return r, sim.Errorf(sim.CodeValidation, "count must be at least 1; got %d", r.Remaining)
	}
	switch r.Resource {
	case "", sim.RuleProject, sim.RuleArtifact:
	default:
		return r, sim.Errorf(sim.CodeValidation, "resource must be %q or %q; got %q", sim.RuleProject, sim.RuleArtifact, r.Resource)
	}
	if r.Outcome == sim.ForceReady && r.ErrorMessage != "" {
		return r, sim.Errorf(sim.CodeValidation, "error_message applies only to outcome %q", sim.ForceError)
	}
	err := e.update(ctx, func(tx sim.Tx) error {
		if r.APIKey != "" {
			if _, err := tx.Account(r.APIKey); errors.Is(err, sim.ErrNotFound) {
				return sim.Errorf(sim.CodeValidation, "api_key %q is not an account", r.APIKey)
			} else if err != nil {
				return err
			}
		}
		rules, err := loadOutcomeRules(tx)
		if err != nil {
			return err
		}
		seq, err := tx.NextSequence(seqOutcomeRules)
		if err != nil {
			return err
		}
		r.ID = fmt.Sprintf("out_%d", seq)
		r.CreatedAt = e.clock.Now()
		if r.Outcome == sim.ForceError && r.ErrorMessage == "" {
			r.ErrorMessage = sim.DefaultForcedError
		}
		return saveOutcomeRules(tx, append(rules, r))
	})
	return r, err
}

// OutcomeRules lists the forced-outcome rules with uses left.
func (e *Engine) OutcomeRules(ctx context.Context) ([]sim.OutcomeRule, error) {
	var rules []sim.OutcomeRule
	err := e.store.View(ctx, func(tx sim.Tx) error {
		var err error
		rules, err = loadOutcomeRules(tx)
		return err
	})
	if rules == nil {
		rules = []sim.OutcomeRule{}
	}
	return rules, err
}

// RemoveOutcomeRule deletes a forced-outcome rule.
func (e *Engine) RemoveOutcomeRule(ctx context.Context, id string) error {
	return e.update(ctx, func(tx sim.Tx) error {
		rules, err := loadOutcomeRules(tx)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(rules, func(r sim.OutcomeRule) bool { return r.ID == id })
		if i < 0 {
			return sim.Errorf(sim.CodeNotFound, "No outcome rule %q", id)
		}
		return saveOutcomeRules(tx, slices.Delete(rules, i, i+1))
	})
}

// ResetAccount deletes an account's projects and idempotency keys and gives
// it back its initial balance (its fixture balance for a fixture account).
func (e *Engine) ResetAccount(ctx context.Context, apiKey string) error {
	return e.update(ctx, func(tx sim.Tx) error {
		a, err := tx.Account(apiKey)
		if errors.Is(err, sim.ErrNotFound) {
			return sim.Errorf(sim.CodeNotFound, "No account with api_key %q", apiKey)
		}
		if err != nil {
			return err
		}
		var ids []string
		if err := tx.ForEachProjectHead(func(p sim.Project) error {
			if p.APIKey == apiKey {
				ids = append(ids, p.ID)
			}
			return nil
		}); err != nil {
			return err
		}
		for _, id := range ids {
			if err := tx.DeleteProject(id); err != nil {
				return err
			}
		}
		if _, err := tx.DeleteIdempotencyScope(apiKey); err != nil {
			return err
		}
		a.BalanceMinutes = a.InitialBalance
		for _, spec := range e.Fixtures().Accounts {
			if spec.APIKey == apiKey {
				a = accountFrom(spec, e.clock.Now(), true)
			}
		}
		return tx.PutAccount(a)
	})
}

// SetFixtures replaces the fixture set in use: catalogue and media rules
// take effect at once; the set's accounts are created, or reset to their
// fixture state when they exist.
func (e *Engine) SetFixtures(ctx context.Context, fx *sim.Fixtures) error {
	return e.update(ctx, func(tx sim.Tx) error {
		now := e.clock.Now()
		prev := e.fixtures.Load()
		e.fixtures.Store(fx)
		// Studio records of the new set are added (existing ones keep their
		// state), before the accounts that name its users.
		if err := e.seedStudio(tx, now); err != nil {
			e.fixtures.Store(prev)
			return err
		}
		for _, spec := range fx.Accounts {
			if err := tx.PutAccount(accountFrom(spec, now, true)); err != nil {
				e.fixtures.Store(prev)
				return err
			}
		}
		if err := e.ensureUsers(tx, now); err != nil {
			e.fixtures.Store(prev)
			return err
		}
		return nil
	})
}

// LoadFixtureFiles loads fixture files (accounts.json, options.json,
// voices.json, media.json, studio.json; any subset) over the startup fixture set and
// applies the result with SetFixtures.
func (e *Engine) LoadFixtureFiles(ctx context.Context, files map[string][]byte) (*sim.Fixtures, error) {
	if e.fixtureFS == nil {
		return nil, errors.New("engine: no fixture file set configured")
	}
	fx, err := sim.LoadFixtures(sim.Overlay{Top: sim.MemFS(files), Base: e.fixtureFS})
	if err != nil {
		return nil, sim.Errorf(sim.CodeValidation, "%v", err)
	}
	return fx, e.SetFixtures(ctx, fx)
}

// State returns the dump, projects newest first.
func (e *Engine) State(ctx context.Context, f sim.StateFilter) (sim.State, error) {
	if _, err := e.Tick(ctx); err != nil { // show settled state: every due transition applied
		return sim.State{}, err
	}
	now := e.clock.Now()
	limit := f.Limit
	if limit <= 0 {
		limit = 1000
	}
	st := sim.State{Now: now.UTC().Format("2006-01-02T15:04:05.000Z"), TimeScale: e.clock.Scale(), Frozen: e.Frozen(),
		Accounts: []sim.Account{}, Projects: []sim.ProjectState{}, PendingTransitions: []sim.Transition{}}
	fx := e.Fixtures()
	st.Fixtures = map[string]int{"accounts": len(fx.Accounts), "source_langs": len(fx.Catalog.SourceLangs),
		"target_langs": len(fx.Catalog.TargetLangs), "media_rules": len(fx.MediaRules)}
	for _, vs := range fx.Catalog.Voices {
		st.Fixtures["voices"] += len(vs)
	}
	err := e.store.View(ctx, func(tx sim.Tx) error {
		if err := tx.ForEachAccount(func(a sim.Account) error {
			if f.APIKey == "" || a.APIKey == f.APIKey {
				st.Accounts = append(st.Accounts, a)
			}
			return nil
		}); err != nil {
			return err
		}
		// Filter and order on the project heads; read the bodies (history)
		// of the projects shown only.
		var heads []sim.Project
		if err := tx.ForEachProjectHead(func(p sim.Project) error {
			if f.APIKey != "" && p.APIKey != f.APIKey {
				return nil
			}
			heads = append(heads, p)
			return nil
		}); err != nil {
			return err
		}
		sort.SliceStable(heads, func(i, j int) bool { return heads[i].CreatedAt.After(heads[j].CreatedAt) })
		for i, p := range heads {
			if !p.DueAt.IsZero() {
				st.PendingTransitions = append(st.PendingTransitions, projectTransition(p))
			}
			if i >= limit {
				st.Truncated = true
				continue
			}
			full, err := tx.Project(p.ID)
			if err != nil {
				return err
			}
			st.Projects = append(st.Projects, projectState(full))
		}
		rules, err := loadOutcomeRules(tx)
		if err != nil {
			return err
		}
		st.OutcomeRules = append([]sim.OutcomeRule{}, rules...)
		st.IdempotencyKeys = tx.CountIdempotency()
		return studioState(tx, &st)
	})
	sort.SliceStable(st.PendingTransitions, func(i, j int) bool { return st.PendingTransitions[i].DueAt.Before(st.PendingTransitions[j].DueAt) })
	sort.Slice(st.Accounts, func(i, j int) bool { return st.Accounts[i].APIKey < st.Accounts[j].APIKey })
	return st, err
}

// projectState is a project as the state dump shows it.
func projectState(p sim.Project) sim.ProjectState {
	ps := sim.ProjectState{ID: p.ID, APIKey: p.APIKey, Name: p.Name, Status: string(p.Status), SourceVideoURL: p.SourceVideoURL,
		SourceLang: p.SourceLang, TargetLang: p.TargetLang, DurationMS: p.DurationMS, DurationSource: p.DurationSource,
		CostMinutes: p.CostMinutes, Refunded: p.Refunded, CreatedAt: p.CreatedAt, ErrorMessage: p.ErrorMessage,
		TranslationsCount: p.TranslationsCount, OutputGeneration: p.OutputGen, RetranslationRun: p.Pending != nil, History: p.History}
	if !p.DueAt.IsZero() {
		d := p.DueAt
		ps.DueAt = &d
		ps.PlannedOutcome, ps.PlannedError = p.PlannedOutcome()
	}
	if !p.CompletedAt.IsZero() {
		c := p.CompletedAt
		ps.CompletedAt = &c
	}
	return ps
}

// studioState adds the studio counts and pending studio transitions.
func studioState(tx sim.Tx, st *sim.State) error {
	st.Studio = map[string]int{}
	count := func(name string) func() { return func() { st.Studio[name]++ } }
	steps := []error{
		tx.ForEachCompany(func(sim.Company) error { count("companies")(); return nil }),
		tx.ForEachUser(func(sim.User) error { count("users")(); return nil }),
		tx.ForEachGlossary(func(sim.Glossary) error { count("glossaries")(); return nil }),
		tx.ForEachFolder(func(sim.Folder) error { count("folders")(); return nil }),
		tx.ForEachStudioProject("", func(sim.StudioProject) error { count("studio_projects")(); return nil }),
		tx.ForEachUpload(func(sim.Upload) error { count("uploads")(); return nil }),
		tx.ForEachVideo("", func(v sim.Video) error {
			count("videos")()
			if !v.DueAt.IsZero() {
				st.PendingTransitions = append(st.PendingTransitions, videoTransition(v))
			}
			return nil
		}),
		tx.ForEachArtifact(func(a sim.Artifact) error {
			count("artifacts")()
			if !a.DueAt.IsZero() {
				st.PendingTransitions = append(st.PendingTransitions, artifactTransition(a))
			}
			return nil
		}),
	}
	return errors.Join(steps...)
}
