package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// Outcomes decides how processing ends: forced outcomes of one project or
// artifact, and rules for the next matching ones.
type Outcomes struct {
	*core
	projects  *Projects
	artifacts *Artifacts
}

// ForceArtifact decides how an artifact's processing ends: "ready" (with
// optional size and duration) or "error" (with a message); with now, at once.
func (e *Outcomes) ForceArtifact(ctx context.Context, id, outcome, message string, size *int64, duration *float64, now bool) (sim.Artifact, error) {
	if err := checkOutcome(outcome); err != nil {
		return sim.Artifact{}, err
	}
	return in(ctx, e.update, func(tx sim.Tx) (sim.Artifact, error) {
		a, err := tx.Artifacts().Get(id)
		switch {
		case errors.Is(err, sim.ErrNotFound):
			return a, sim.Errorf(sim.CodeNotFound, sim.MsgArtifactNotFound, id)
		case err != nil:
			return a, err
		case a.Status == sim.ArtifactCompleted || a.Status == sim.ArtifactFailed:
			return a, sim.Errorf(sim.CodeConflict, sim.MsgArtifactFinished, id, a.Status)
		}
		at := e.clock.Now()
		res := sim.ArtifactResult{Known: true, Origin: "forced", Size: a.Result.Size, Duration: a.Result.Duration}
		if outcome == sim.ForceError {
			res.Fail = cmp.Or(message, sim.DefaultForcedError)
		}
		if size != nil {
			res.Size = *size
		}
		if duration != nil {
			res.Duration = new(*duration)
		}
		a.Result, a.Pending = res, false
		if now {
			a.StartAt, a.DoneAt = minTime(a.StartAt, at), at
		}
		schedule(&a)
		if a, err = e.artifacts.settleArtifact(tx, a, at); err != nil {
			return a, err
		}
		return a, tx.Artifacts().Put(a)
	})
}

// applyArtifactRules lets the first matching outcome rule decide how a new
// artifact ends.
func applyArtifactRules(tx sim.Tx, a *sim.Artifact) error {
	r, err := useRule(tx, func(r sim.OutcomeRule) bool { return r.MatchesArtifact(*a) })
	if r == nil || err != nil {
		return err
	}
	a.Result = sim.ArtifactResult{Known: true, Origin: "forced"}
	if r.Outcome == sim.ForceError {
		a.Result.Fail = r.ErrorMessage
	}
	return nil
}

// useRule consumes one use of the first outcome rule that matches, in the
// creating transaction; nil when none does.
func useRule(tx sim.Tx, match func(sim.OutcomeRule) bool) (*sim.OutcomeRule, error) {
	rules, err := loadOutcomeRules(tx)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(rules, match)
	if i < 0 {
		return nil, nil
	}
	r := rules[i]
	if rules[i].Remaining--; rules[i].Remaining == 0 {
		rules = slices.Delete(rules, i, i+1)
	}
	return &r, saveOutcomeRules(tx, rules)
}

const (
	metaOutcomeRules = "outcome_rules"
	seqOutcomeRules  = "outcome_rules"
)

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
// new project ends.
func applyOutcomeRules(tx sim.Tx, p *sim.Project, now time.Time) error {
	r, err := useRule(tx, func(r sim.OutcomeRule) bool { return r.Matches(p.APIKey, p.SourceVideoURL) })
	if r == nil || err != nil {
		return err
	}
	force(p, r.Outcome, r.ErrorMessage, false, now)
	p.History = append(p.History, sim.Event{At: now, Kind: "forced_outcome", Message: r.ID + ": " + r.Outcome})
	return nil
}

// force sets the planned end of p's current run: error (at its due time, or
// at) or ready at.
func force(p *sim.Project, outcome, message string, now bool, at time.Time) {
	switch outcome {
	case sim.ForceError:
		p.Outcome = sim.Outcome{Error: true, Message: cmp.Or(message, sim.DefaultForcedError)}
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
		return sim.Errorf(sim.CodeValidation, sim.MsgOutcome, sim.ForceError, sim.ForceReady, outcome)
	}
	return nil
}

// ForceProject decides how the current run of an in-progress project ends:
// "error" (with message, at its due time or now) or "ready" (now).
func (e *Outcomes) ForceProject(ctx context.Context, id, outcome, message string, now bool) (sim.Project, error) {
	if err := checkOutcome(outcome); err != nil {
		return sim.Project{}, err
	}
	return in(ctx, e.update, func(tx sim.Tx) (sim.Project, error) {
		at := e.clock.Now()
		p, err := settleIn(tx, at, func(id string) (sim.Project, error) { return get(tx.Project, id, nil, notFound) }, id, e.projects.settle)
		if err != nil {
			return p, err
		}
		if p.Status != sim.StatusInProgress {
			return p, sim.Errorf(sim.CodeConflict, sim.MsgOutcomeNotInProgress, id, p.Status)
		}
		force(&p, outcome, message, now, at)
		p.History = append(p.History, sim.Event{At: at, Kind: "forced_outcome", Message: outcome})
		if p, err = e.projects.settle(tx, p, at); err != nil {
			return p, err
		}
		return p, tx.PutProject(p)
	})
}

// Bounds of one simulator's outcome rules, which each project or artifact
// created reads all of. Past either, a rule is refused with a conflict.
const (
	MaxOutcomeRules     = 1000
	MaxOutcomeRuleBytes = 256 << 10 // the rules as stored (JSON)
)

// AddOutcomeRule forces the outcome of the next Remaining matching projects.
func (e *Outcomes) AddOutcomeRule(ctx context.Context, r sim.OutcomeRule) (sim.OutcomeRule, error) {
	if err := checkOutcome(r.Outcome); err != nil {
		return r, err
	}
	if r.Remaining <= 0 {
		return r, sim.Errorf(sim.CodeValidation, sim.MsgOutcomeCount, r.Remaining)
	}
	switch r.Resource {
	case "", sim.RuleProject, sim.RuleArtifact:
	default:
		return r, sim.Errorf(sim.CodeValidation, sim.MsgOutcomeResource, sim.RuleProject, sim.RuleArtifact, r.Resource)
	}
	if r.Outcome == sim.ForceReady && r.ErrorMessage != "" {
		return r, sim.Errorf(sim.CodeValidation, sim.MsgOutcomeErrorMessage, sim.ForceError)
	}
	err := e.update(ctx, func(tx sim.Tx) error {
		if r.APIKey != "" {
			if _, err := get(tx.Accounts().Get, r.APIKey, nil, func() error { return sim.Errorf(sim.CodeValidation, sim.MsgOutcomeAPIKey, r.APIKey) }); err != nil {
				return err
			}
		}
		rules, err := loadOutcomeRules(tx)
		if err != nil {
			return err
		}
		if len(rules) >= MaxOutcomeRules {
			return sim.Errorf(sim.CodeConflict, sim.MsgOutcomeRules, len(rules))
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
		rules = append(rules, r)
		if b, err := json.Marshal(rules); err == nil && len(b) > MaxOutcomeRuleBytes {
			return sim.Errorf(sim.CodeConflict, sim.MsgOutcomeRuleBytes, len(b), MaxOutcomeRuleBytes)
		}
		return saveOutcomeRules(tx, rules)
	})
	return r, err
}

// OutcomeRules lists the forced-outcome rules with uses left.
func (e *Outcomes) OutcomeRules(ctx context.Context) ([]sim.OutcomeRule, error) {
	rules, err := in(ctx, e.store.View, loadOutcomeRules)
	if rules == nil {
		rules = []sim.OutcomeRule{}
	}
	return rules, err
}

// RemoveOutcomeRule deletes a forced-outcome rule.
func (e *Outcomes) RemoveOutcomeRule(ctx context.Context, id string) error {
	return e.update(ctx, func(tx sim.Tx) error {
		rules, err := loadOutcomeRules(tx)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(rules, func(r sim.OutcomeRule) bool { return r.ID == id })
		if i < 0 {
			return sim.Errorf(sim.CodeNotFound, sim.MsgOutcomeRuleNotFound, id)
		}
		return saveOutcomeRules(tx, slices.Delete(rules, i, i+1))
	})
}
