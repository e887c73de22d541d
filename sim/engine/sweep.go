package engine

import (
	"context"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// sweep applies the due transitions of platform projects, then of studio
// artifacts and videos.
func (e *core) sweep(ctx context.Context, now time.Time) (int, error) {
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
func (e *core) idle(ctx context.Context, now time.Time) (bool, error) {
	if d := now.Sub(time.Unix(0, e.lastPurge.Load())); d >= purgeEvery || d < 0 {
		return false, nil
	}
	idle := true
	err := e.store.View(ctx, func(tx sim.Tx) error {
		for _, due := range []func(time.Time, int) ([]string, error){tx.DueProjects, tx.DueArtifacts, tx.DueVideos} {
			ids, err := due(now, 1)
			if err != nil || len(ids) > 0 {
				idle = false
				return err
			}
		}
		return nil
	})
	return idle, err
}

func (e *core) sweepProjects(ctx context.Context, now time.Time) (int, error) {
	total := 0
	for {
		n := 0
		err := e.update(ctx, func(tx sim.Tx) error {
			ids, err := tx.DueProjects(now, sweepBatch)
			if err != nil {
				return err
			}
			for _, id := range ids {
				p, err := tx.Project(id)
				if err != nil {
					return err
				}
				if _, err := e.settle(tx, p, now); err != nil {
					return err
				}
			}
			n = len(ids)
			if n < sweepBatch {
				if _, err := tx.PurgeIdempotency(now.Add(-e.idemTTL)); err != nil {
					return err
				}
				e.lastPurge.Store(now.UnixNano())
			}
			return nil
		})
		total += n
		if err != nil || n < sweepBatch {
			return total, err
		}
	}
}

// sweepStudio applies due artifact and video transitions; it returns how
// many records it changed.
func (e *core) sweepStudio(ctx context.Context, now time.Time) (int, error) {
	total := 0
	for {
		n, full := 0, false
		err := e.update(ctx, func(tx sim.Tx) error {
			ids, err := tx.DueArtifacts(now, studioSweep)
			if err != nil {
				return err
			}
			for _, id := range ids {
				a, err := tx.Artifact(id)
				if err != nil {
					return err
				}
				na, err := e.settleArtifact(tx, a, now)
				if err != nil {
					return err
				}
				if na.DueAt.Equal(a.DueAt) && !na.DueAt.IsZero() {
					// Cannot progress (should not happen); unschedule so
					// the sweep cannot spin on it.
					na.DueAt = time.Time{}
					if err := tx.PutArtifact(na); err != nil {
						return err
					}
				}
			}
			vids, err := tx.DueVideos(now, studioSweep)
			if err != nil {
				return err
			}
			for _, id := range vids {
				v, err := tx.Video(id)
				if err != nil {
					return err
				}
				if _, err := e.settleVideo(tx, v, now); err != nil {
					return err
				}
			}
			// Every record due counts; another batch follows while either
			// list filled its batch.
			n, full = len(ids)+len(vids), len(ids) == studioSweep || len(vids) == studioSweep
			return nil
		})
		total += n
		if err != nil || !full {
			return total, err
		}
	}
}
