// Package statemachine holds the lifecycle rules as pure functions of (resource, now): Next and due
// times of projects, artifacts and videos, re-translation and access checks; it imports sim only.
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

// NextArtifact applies the artifact transitions due at now:
//
//	created        --StartAt-->                           upload_started
//	upload_started --DoneAt, result known, no failure-->  upload_completed (size, duration)
//	upload_started --DoneAt, result known, failure-->     upload_failed (errorMessage)
//
// While a real download runs (Pending) or the result is not known yet, the
// artifact stays upload_started and DueAt is zero; the engine sets the
// result and DueAt when the download ends. Both transitions can apply in one
// call when now is past DoneAt.
func NextArtifact(a sim.Artifact, now time.Time) sim.Artifact {
	if a.Status == sim.ArtifactCreated && !now.Before(a.StartAt) {
		a.Status = sim.ArtifactStarted
		a.UpdatedAt = a.StartAt
		a.DueAt = time.Time{}
		if !a.Pending {
			a.DueAt = a.DoneAt
		}
	}
	if a.Status == sim.ArtifactStarted && a.Result.Known && !a.Pending && !now.Before(a.DoneAt) {
		a.UpdatedAt = a.DoneAt
		if a.UpdatedAt.Before(a.StartAt) {
			a.UpdatedAt = a.StartAt
		}
		a.DueAt = time.Time{}
		if a.Result.Fail != "" {
			a.Status = sim.ArtifactFailed
			a.ErrorMessage = a.Result.Fail
			return a
		}
		a.Status = sim.ArtifactCompleted
		a.Size = new(a.Result.Size)
		if a.Type != sim.ArtifactScript && a.Result.Duration != nil {
			a.Duration = new(*a.Result.Duration)
		}
	}
	return a
}

// NextVideo applies the automatic video lifecycle due at now: new moves to
// in_progress at DueAt, which is then rescheduled by processing time, and
// in_progress moves to completed. A video whose status a client wrote has a
// zero DueAt and stays where it is.
func NextVideo(v sim.Video, now time.Time, t sim.StudioTiming) sim.Video {
	for VideoDue(v, now) {
		at := v.DueAt
		switch v.Status {
		case sim.VideoNew:
			v.Status = sim.VideoInProgress
			v.DueAt = VideoDueAfter(v, sim.VideoInProgress, at, t)
		case sim.VideoInProgress:
			v.Status = sim.VideoCompleted
			v.DueAt = time.Time{}
		default:
			v.DueAt = time.Time{}
		}
		v.UpdatedAt = at
	}
	return v
}

// ArtifactDue reports whether an artifact has a transition due at now.
func ArtifactDue(a sim.Artifact, now time.Time) bool {
	return !a.DueAt.IsZero() && !now.Before(a.DueAt)
}

// VideoDue reports whether NextVideo has a transition of v to apply at now.
func VideoDue(v sim.Video, now time.Time) bool {
	return !v.DueAt.IsZero() && !now.Before(v.DueAt)
}

// VideoDueAfter is when a video that enters status at at moves on by
// itself: new waits VideoStart, in_progress the processing time of its
// duration; completed (and any other status) does not move (zero).
func VideoDueAfter(v sim.Video, status string, at time.Time, t sim.StudioTiming) time.Time {
	switch status {
	case sim.VideoNew:
		return at.Add(t.VideoStart)
	case sim.VideoInProgress:
		return at.Add(t.VideoProcessing(v.Duration()))
	}
	return time.Time{}
}
