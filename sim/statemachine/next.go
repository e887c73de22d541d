package statemachine

import (
	"time"

	"github.com/dubsim/dubsim/sim"
)

// Next applies the transition of p that is due at now, if any. A project in
// progress whose DueAt has passed becomes ready (applying a pending
// re-translation) or error, as its planned Outcome says. Next is pure: it
// returns the new project (p unchanged when nothing is due) and the minutes
// to credit back to p's account: the first run of a project that fails is
// not charged.
func Next(p sim.Project, now time.Time) (_ sim.Project, refund int64) {
	if !ProjectDue(p, now) {
		return p, 0
	}
	at := p.DueAt
	p.DueAt = time.Time{}
	p.History = append(append([]sim.Event(nil), p.History...), sim.Event{})
	if p.Outcome.Error {
		p.Status = sim.StatusError
		p.ErrorMessage = p.Outcome.Message
		p.Pending = nil
		p.History[len(p.History)-1] = sim.Event{At: at, Kind: sim.EventFailed, Message: p.ErrorMessage}
		if p.OutputGen == 0 && !p.Refunded && p.CostMinutes > 0 {
			p.Refunded = true
			refund = p.CostMinutes
			p.History = append(p.History, sim.Event{At: at, Kind: sim.EventRefunded})
		}
	} else {
		p.Status = sim.StatusReady
		p.CompletedAt = at
		p.ErrorMessage = ""
		if rt := p.Pending; rt != nil {
			p.TargetScript = rt.TargetScript
			p.Speakers = rt.TargetSpeakers
			p.MixingMode = rt.MixingMode
			p.TTSVolume = rt.TTSVolume
			p.UseFixedTimings = rt.UseFixedTimings
			p.Pending = nil
		}
		p.OutputGen++
		p.History[len(p.History)-1] = sim.Event{At: at, Kind: sim.EventCompleted}
	}
	p.Outcome = sim.Outcome{}
	return p, refund
}

// ProjectDue reports whether Next has a transition of p to apply at now.
func ProjectDue(p sim.Project, now time.Time) bool {
	return p.Status == sim.StatusInProgress && !p.DueAt.IsZero() && !p.DueAt.After(now)
}
