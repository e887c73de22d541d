package engine

import (
	"context"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/script"
	"github.com/dubsim/dubsim/sim/statemachine"
)

// Retranslate checks a re-translation request and, unless dryRun, puts the
// project back through processing. dryRun answers what the real request
// would, without changing the project.
func (e *Projects) Retranslate(ctx context.Context, apiKey, id string, in sim.RetranslationInput, dryRun bool, idem *sim.IdemWrite[sim.Receipt]) (sim.Receipt, error) {
	var rc sim.Receipt
	err := e.update(ctx, func(tx sim.Tx) error {
		now := e.clock.Now()
		acct, err := accountIn(tx, apiKey)
		if err != nil {
			return err
		}
		if !acct.RetranslationEnabled {
			return sim.Errorf(sim.CodeForbidden, sim.MsgRetranslationDisabled)
		}
		p, err := e.ownedProject(tx, apiKey, id, now)
		if err != nil {
			return err
		}
		if p.Status != sim.StatusReady {
			return sim.Errorf(sim.CodeValidation, sim.MsgRetranslationNotReady, p.ID, p.Status)
		}
		rt, err := statemachine.ValidateRetranslation(e.fixtures.catalog(), acct, p, in)
		if err != nil || dryRun {
			return err
		}
		if !rt.UseFixedTimings {
			rt.TargetScript = script.Realign(rt.TargetScript, p.Duration())
		}
		p.Pending = &rt
		p.Status = sim.StatusInProgress
		p.DueAt = ceilSecond(now.Add(e.timing.Retranslation(p.Duration())))
		p.Outcome = sim.Outcome{}
		p.TranslationsCount++
		p.History = append(p.History, sim.Event{At: now, Kind: sim.EventRetranslation, EstimatedCompletion: p.DueAt})
		if err := tx.PutProject(p); err != nil {
			return err
		}
		rc = sim.Receipt{ProjectID: p.ID, EstimatedCompletion: p.DueAt, BalanceMinutes: acct.BalanceMinutes, TranslationsCount: p.TranslationsCount}
		return saveIdem(tx, idem, rc, now)
	})
	return rc, err
}
