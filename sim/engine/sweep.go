package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// sweeper applies the transitions that are due, in batches, with the settle
// rules of the services that own the records, and purges expired
// idempotency records. It skips the records it finds damaged (damage.go).
type sweeper struct {
	*core
	projects  *Projects
	artifacts *Artifacts
	videos    *Videos
	idemTTL   time.Duration
	// lastPurge is the simulated time (Unix ns) of the last purge of
	// expired idempotency records.
	lastPurge atomic.Int64
	// broken holds the records ("project/ID") the sweep skips as damaged.
	brokenMu sync.Mutex
	broken   map[string]struct{}
	// lastStack is the panic whose stack the sweep reported last.
	lastStack atomic.Value
}

// tick applies every transition due at the current simulated time.
func (e *sweeper) tick(ctx context.Context) (int, error) {
	return e.sweep(ctx, e.clock.Now())
}

// sweep applies the due transitions of platform projects, then of studio
// artifacts and videos.
func (e *sweeper) sweep(ctx context.Context, now time.Time) (int, error) {
	if idle, err := e.idle(ctx, now); err != nil || idle {
		return 0, err
	}
	n, err := e.sweepProjects(ctx, now)
	if err != nil {
		return n, err
	}
	m, err := e.sweepStudio(ctx, now)
	return n + m, err
}

// purgeEvery is how much simulated time passes between purges of expired
// idempotency records (lookups ignore expired records anyway).
const purgeEvery = time.Minute

// idle reports whether a sweep at now has nothing to do: no transition is
// due and expired idempotency records were purged less than purgeEvery
// ago. It only reads: an empty write transaction still rewrites the
// freelist and syncs the file, which the 200 ms tick did five times a
// second on an idle server (and it invalidated the read caches).
func (e *sweeper) idle(ctx context.Context, now time.Time) (bool, error) {
	if d := now.Sub(time.Unix(0, e.lastPurge.Load())); d >= purgeEvery || d < 0 {
		return false, nil
	}
	idle := true
	err := e.store.View(ctx, func(tx sim.Tx) error {
		for _, due := range []struct {
			resource string
			list     func(time.Time, int) ([]string, error)
		}{{"project", tx.DueProjects}, {"artifact", tx.DueArtifacts}, {"video", tx.DueVideos}} {
			ids, err := e.dueIDs(due.resource, due.list, now, 1)
			if err != nil || len(ids) > 0 {
				idle = false
				return err
			}
		}
		return nil
	})
	return idle, err
}

func (e *sweeper) sweepProjects(ctx context.Context, now time.Time) (int, error) {
	settle := func(tx sim.Tx, id string) error {
		p, err := tx.Project(id)
		if err != nil {
			return err
		}
		_, err = e.projects.settle(tx, p, now)
		return err
	}
	total := 0
	for {
		var ids []string
		err := Recovered(func() error {
			return e.update(ctx, func(tx sim.Tx) error {
				var err error
				if ids, err = e.dueIDs("project", tx.DueProjects, now, sweepBatch); err != nil {
					return err
				}
				for _, id := range ids {
					if err := settle(tx, id); err != nil {
						return err
					}
				}
				if len(ids) < sweepBatch {
					if _, err := tx.PurgeIdempotency(now.Add(-e.idemTTL)); err != nil {
						return err
					}
					e.lastPurge.Store(now.UnixNano())
				}
				return nil
			})
		})
		if err != nil && damaged(err) && len(ids) > 0 && ctx.Err() == nil {
			err = e.settleEach(ctx, "project", ids, settle)
		}
		total += len(ids)
		if err != nil || len(ids) < sweepBatch {
			return total, err
		}
	}
}

// sweepStudio applies due artifact and video transitions; it returns how
// many records it changed.
func (e *sweeper) sweepStudio(ctx context.Context, now time.Time) (int, error) {
	settleArtifact := func(tx sim.Tx, id string) error {
		a, err := tx.Artifact(id)
		if err != nil {
			return err
		}
		na, err := e.artifacts.settleArtifact(tx, a, now)
		if err != nil {
			return err
		}
		if na.DueAt.Equal(a.DueAt) && !na.DueAt.IsZero() {
			// Cannot progress (should not happen); unschedule so
			// the sweep cannot spin on it.
			na.DueAt = time.Time{}
			return tx.PutArtifact(na)
		}
		return nil
	}
	settleVideo := func(tx sim.Tx, id string) error {
		v, err := tx.Video(id)
		if err != nil {
			return err
		}
		_, err = e.videos.settleVideo(tx, v, now)
		return err
	}
	total := 0
	for {
		var ids, vids []string
		err := Recovered(func() error {
			return e.update(ctx, func(tx sim.Tx) error {
				var err error
				if ids, err = e.dueIDs("artifact", tx.DueArtifacts, now, studioSweep); err != nil {
					return err
				}
				for _, id := range ids {
					if err := settleArtifact(tx, id); err != nil {
						return err
					}
				}
				if vids, err = e.dueIDs("video", tx.DueVideos, now, studioSweep); err != nil {
					return err
				}
				for _, id := range vids {
					if err := settleVideo(tx, id); err != nil {
						return err
					}
				}
				return nil
			})
		})
		if err != nil && damaged(err) && ctx.Err() == nil && len(ids)+len(vids) > 0 {
			err = e.settleEach(ctx, "artifact", ids, settleArtifact)
			if err == nil {
				err = e.settleEach(ctx, "video", vids, settleVideo)
			}
		}
		// Every record due counts; another batch follows while either
		// list filled its batch.
		total += len(ids) + len(vids)
		if err != nil || (len(ids) < studioSweep && len(vids) < studioSweep) {
			return total, err
		}
	}
}
