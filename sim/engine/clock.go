package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// Clock is the simulated clock as the control API and the studio rate limits
// see it, and the sweep of due transitions.
type Clock struct {
	*core
	storedClock bool // Config.StoredClock
	sweeper     *sweeper
	work        *workSet // the artifacts'
}

// restore sets the clock to its stored state, if any.
func (e *Clock) restore(tx sim.Tx) error {
	raw, err := tx.Meta(metaClock)
	if errors.Is(err, sim.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var stored storedClock
	if err := json.Unmarshal(raw, &stored); err != nil {
		return fmt.Errorf("engine: stored clock: %w", err)
	}
	st := stored.ClockState
	if e.storedClock && st.Scale == 0 {
		st = sim.StandingAt(st.Last) // no downtime passes
	}
	e.clock.Restore(st)
	if e.storedClock {
		e.clock.SetScale(st.Scale)
		e.frozen, e.frozenScale = stored.Frozen, stored.ResumeScale
	}
	return nil
}

// Now is the current simulated time.
func (e *Clock) Now() time.Time { return e.clock.Now() }

// Wall is real time plus every manual advance of the clock, on which
// rate-limit windows pass (fidelity ST5).
func (e *Clock) Wall() time.Time { return e.clock.Wall() }

// SaveClock persists the clock state (periodically and at shutdown); it is
// not a change Data.Changes counts.
func (e *Clock) SaveClock(ctx context.Context) error {
	return e.write(ctx, func(sim.Tx) error { return nil })
}

func (e *Clock) saveClockNow(ctx context.Context) error {
	return e.update(ctx, func(sim.Tx) error { return nil })
}

// Tick applies every transition due now, earliest first, and purges expired
// idempotency keys. It returns how many transitions it applied.
func (e *Clock) Tick(ctx context.Context) (int, error) { return e.sweeper.sweep(ctx, e.clock.Now()) }

// Advance moves simulated time forward by d, waits for the background work
// the new time depends on, applies every transition that became due and
// persists the clock. Work still running after the bound is returned as a
// *sim.PendingError; the clock has moved and what was due without it applied.
func (e *Clock) Advance(ctx context.Context, d time.Duration) (time.Time, error) {
	now := e.clock.Advance(d)
	pending := e.work.waitFor(ctx, now, "")
	if _, err := e.sweeper.sweep(ctx, now); err != nil {
		return now, err
	}
	if err := e.saveClockNow(ctx); err != nil {
		return now, err
	}
	if pending != nil {
		return now, pending
	}
	return now, nil
}

// TimeScale returns the clock's scale.
func (e *Clock) TimeScale() float64 { return e.clock.Scale() }

// Freeze stops simulated time; Resume restarts it at the scale it had.
func (e *Clock) Freeze(ctx context.Context) error {
	e.clockMu.Lock()
	if !e.frozen {
		e.frozen, e.frozenScale = true, e.clock.Scale()
		e.clock.SetScale(0)
	}
	e.clockMu.Unlock()
	return e.saveClockNow(ctx)
}

// Resume restarts a frozen clock at the scale it had before Freeze; a clock
// that would still stand still (scale 0) runs in real time after it.
func (e *Clock) Resume(ctx context.Context) error {
	e.clockMu.Lock()
	if e.frozen {
		e.frozen = false
		e.clock.SetScale(e.frozenScale)
	}
	if e.clock.Scale() == 0 {
		e.clock.SetScale(1)
	}
	e.clockMu.Unlock()
	return e.saveClockNow(ctx)
}

// Frozen reports whether simulated time stands still: frozen by Freeze or
// running at scale 0 (fidelity K8).
func (e *Clock) Frozen() bool { return e.frozenNow() }

func (e *core) frozenNow() bool {
	e.clockMu.Lock()
	defer e.clockMu.Unlock()
	return e.frozen || e.clock.Scale() == 0
}

// SetTimeScale changes the speed of simulated time (0 freezes it) and
// persists the clock. It ends a Freeze.
func (e *Clock) SetTimeScale(ctx context.Context, scale float64) error {
	e.clockMu.Lock()
	e.frozen = false
	e.clock.SetScale(scale)
	e.clockMu.Unlock()
	return e.saveClockNow(ctx)
}

// farFuture is later than any due time the clock can reach.
var farFuture = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// NextDue returns the earliest pending transition of any resource; false
// when nothing is due, ever. Downloads in flight decide when their artifacts
// complete, so NextDue first waits for all of them (bounded).
func (e *Clock) NextDue(ctx context.Context) (sim.Transition, bool, error) {
	if pe := e.work.waitFor(ctx, farFuture, ""); pe != nil {
		pe.At = time.Time{}
		return sim.Transition{}, false, pe
	}
	var next sim.Transition
	found := false
	consider := func(t sim.Transition) {
		if !found || t.DueAt.Before(next.DueAt) {
			next, found = t, true
		}
	}
	err := e.store.View(ctx, func(tx sim.Tx) error {
		return errors.Join(firstDue(tx.DueProjects, tx.ProjectHead, projectTransition, consider),
			firstDue(tx.DueVideos, tx.Videos().Get, videoTransition, consider),
			firstDue(tx.DueArtifacts, tx.Artifacts().Get, artifactTransition, consider))
	})
	return next, found, err
}

// firstDue considers the pending transition of the first record list gives.
func firstDue[T any](list func(time.Time, int) ([]string, error), get func(string) (T, error), tr func(T) sim.Transition, consider func(sim.Transition)) error {
	ids, err := list(farFuture, 1)
	if err != nil || len(ids) == 0 {
		return err
	}
	r, err := get(ids[0])
	if err == nil {
		consider(tr(r))
	}
	return err
}

// projectTransition, videoTransition and artifactTransition describe the
// pending transition of a resource whose DueAt is set.
func projectTransition(p sim.Project) sim.Transition {
	to := sim.StatusReady
	if p.Outcome.Error {
		to = sim.StatusError
	}
	return sim.Transition{Resource: "project", ID: p.ID, From: string(p.Status), To: string(to), DueAt: p.DueAt}
}

func videoTransition(v sim.Video) sim.Transition {
	to := sim.VideoInProgress
	if v.Status == sim.VideoInProgress {
		to = sim.VideoCompleted
	}
	return sim.Transition{Resource: "video", ID: v.ID, From: v.Status, To: to, DueAt: v.DueAt}
}

func artifactTransition(a sim.Artifact) sim.Transition {
	to := sim.ArtifactStarted
	if a.Status == sim.ArtifactStarted {
		to = sim.ArtifactCompleted
		if a.Result.Fail != "" {
			to = sim.ArtifactFailed
		}
	}
	return sim.Transition{Resource: "artifact", ID: a.ID, From: a.Status, To: to, DueAt: a.DueAt}
}
