package app

import (
	"context"
	"sync"
	"time"

	"github.com/dubsim/dubsim/sim/engine"
)

// Ticks says how the process's periodic work runs (App.Tick).
type Ticks struct {
	Every time.Duration // real time between sweeps
	// SaveClock saves the default simulator's clock about every second.
	SaveClock bool
	// SkipFrozen skips the default's sweep while its clock is frozen: only
	// the control API moves time then, and an advance sweeps itself.
	SkipFrozen bool
	// Report receives the result of each run of a task ("transition
	// sweep", "save clock", "sandbox sweep"), a panic as an
	// *engine.PanicError; each task from one goroutine.
	Report func(ctx context.Context, task string, err error)
}

// Tick runs the periodic work until ctx ends or stop returns: the
// sandboxes' sweep on a goroutine of its own, so that 200 running
// sandboxes do not delay the default's.
func (a *App) Tick(ctx context.Context, t Ticks) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	report := func(ctx context.Context, task string, fn func() error) {
		err := engine.Recovered(fn)
		if t.Report != nil {
			t.Report(ctx, task, err)
		}
	}
	clock := a.Default.Engine.Clock
	lastSave := time.Now()
	wg.Go(func() {
		every(ctx, t.Every, func(ctx context.Context) {
			if !t.SkipFrozen || !clock.Frozen() {
				report(ctx, "transition sweep", func() error { _, err := clock.Tick(ctx); return err })
			}
			if t.SaveClock && time.Since(lastSave) >= time.Second {
				lastSave = time.Now()
				report(ctx, "save clock", func() error { return clock.SaveClock(ctx) })
			}
		})
	})
	if m := a.Sandboxes; m != nil {
		wg.Go(func() {
			every(ctx, t.Every, func(ctx context.Context) {
				report(ctx, "sandbox sweep", func() error { return m.Tick(ctx) })
			})
		})
	}
	return func() { cancel(); wg.Wait() }
}

func every(ctx context.Context, period time.Duration, fn func(context.Context)) {
	tk := time.NewTicker(period)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
			fn(ctx)
		}
	}
}
