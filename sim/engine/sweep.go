package engine

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// sweepBatch is the most records of one kind a sweep transaction settles.
const sweepBatch = 512

// sweeper applies the transitions that are due, in batches, with the settle
// rules of the services that own the records, and purges expired
// idempotency records. It skips the records it finds damaged (damage.go).
type sweeper struct {
	*core
	projects  *Projects
	artifacts *Artifacts
	videos    *Videos
	lastPurge atomic.Int64 // simulated Unix ns
	brokenMu  sync.Mutex
	broken    map[string]struct{} // "project/ID": the records skipped as damaged
	lastStack atomic.Value        // the panic whose stack was reported last
}

// sweep applies the due transitions of platform projects, purges expired
// idempotency records, then applies those of studio artifacts and videos.
// It returns how many records it settled.
func (e *sweeper) sweep(ctx context.Context, now time.Time) (int, error) {
	projects, studio := e.kinds(now)
	if idle, err := e.idle(ctx, now, append(projects, studio...)); err != nil || idle {
		return 0, err
	}
	n, err := e.sweepBatches(ctx, now, projects, func(tx sim.Tx) error {
		if _, err := tx.PurgeIdempotency(now.Add(-sim.IdempotencyWindow)); err != nil {
			return err
		}
		e.lastPurge.Store(now.UnixNano())
		return nil
	})
	if err != nil {
		return n, err
	}
	m, err := e.sweepBatches(ctx, now, studio, nil)
	return n + m, err
}

// purgeEvery is how much simulated time passes between purges of expired
// idempotency records (lookups ignore expired records anyway).
const purgeEvery = time.Minute

// dueKind is one kind of record the sweep settles.
type dueKind struct {
	resource string
	list     func(tx sim.Tx, now time.Time, limit int) ([]string, error)
	settle   func(tx sim.Tx, id string) error
}

// kinds are the kinds of record to settle at now, in order.
func (e *sweeper) kinds(now time.Time) (projects, studio []dueKind) {
	projects = []dueKind{{"project", sim.Tx.DueProjects, func(tx sim.Tx, id string) error {
		_, err := settleIn(tx, now, tx.Project, id, e.projects.settle)
		return err
	}}}
	studio = []dueKind{{"artifact", sim.Tx.DueArtifacts, func(tx sim.Tx, id string) error {
		a, err := tx.Artifacts().Get(id)
		if err != nil {
			return err
		}
		na, err := e.artifacts.settleArtifact(tx, a, now)
		if err != nil {
			return err
		}
		if na.DueAt.Equal(a.DueAt) && !na.DueAt.IsZero() {
			na.DueAt = time.Time{} // cannot progress: the sweep must not spin on it
			return tx.Artifacts().Put(na)
		}
		return nil
	}}, {"video", sim.Tx.DueVideos, func(tx sim.Tx, id string) error {
		_, err := settleIn(tx, now, tx.Videos().Get, id, e.videos.settleVideo)
		return err
	}}}
	return projects, studio
}

// idle reports whether a sweep at now has nothing to do. It only reads: an
// empty write transaction would still rewrite the freelist, sync the file
// and invalidate the read caches on every tick.
func (e *sweeper) idle(ctx context.Context, now time.Time, kinds []dueKind) (bool, error) {
	if d := now.Sub(time.Unix(0, e.lastPurge.Load())); d >= purgeEvery || d < 0 {
		return false, nil
	}
	idle := true
	err := e.store.View(ctx, func(tx sim.Tx) error {
		for _, k := range kinds {
			ids, err := e.dueIDs(tx, k, now, 1)
			if err != nil || len(ids) > 0 {
				idle = false
				return err
			}
		}
		return nil
	})
	return idle, err
}

// sweepBatches settles the due records of kinds, up to sweepBatch of each
// in one transaction, until no kind fills its batch; last runs in the
// transaction that fills none. A batch that fails on a damaged record is
// settled again one record at a time (settleEach).
func (e *sweeper) sweepBatches(ctx context.Context, now time.Time, kinds []dueKind, last func(sim.Tx) error) (int, error) {
	total := 0
	for {
		ids := make([][]string, len(kinds))
		full := func() bool { // another batch follows
			return slices.ContainsFunc(ids, func(l []string) bool { return len(l) == sweepBatch })
		}
		err := Recovered(func() error {
			return e.update(ctx, func(tx sim.Tx) error {
				for i, k := range kinds {
					var err error
					if ids[i], err = e.dueIDs(tx, k, now, sweepBatch); err != nil {
						return err
					}
					for _, id := range ids[i] {
						if err := k.settle(tx, id); err != nil {
							return err
						}
					}
				}
				if last == nil || full() {
					return nil
				}
				return last(tx)
			})
		})
		n := 0
		for _, l := range ids {
			n += len(l)
		}
		if err != nil && damaged(err) && ctx.Err() == nil && n > 0 {
			err = nil
			for i, k := range kinds {
				if err == nil {
					err = e.settleEach(ctx, k.resource, ids[i], k.settle)
				}
			}
		}
		total += n
		if err != nil || !full() {
			return total, err
		}
	}
}
