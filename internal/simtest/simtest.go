// Package simtest assembles a whole dubsim in the test's process: a store and blobs in a
// directory, the fixtures, a clock and server.New. dubsimtest and the module's own tests share it.
package simtest

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/dubsim/dubsim/sim/store"
)

// Options choose what Open assembles; the zero value is the embedded
// fixtures, seed 0 and a clock frozen at the zero time.
type Options struct {
	// Start is where simulated time starts; Clock, when set, is used
	// instead (dubsimtest's clock follows real time at a scale).
	Start time.Time
	Clock *sim.SimClock
	// FixtureFS is the fixture file set (nil: fixtures.FS).
	FixtureFS fs.FS
	// Seed seeds content, and identifiers unless RandomIDs.
	Seed uint64
	// RandomIDs keys the store's identifiers by a value from crypto/rand
	// (sim.Store.IDKey), as a simulator without an explicit seed does.
	RandomIDs bool
	// Config changes the server configuration last (it may replace the
	// store, the clock, the blob directory...).
	Config func(*server.Config)
}

// Instance is an assembled dubsim, not listening: serve Server.Handler (or
// Server.StudioHandler) with httptest, or call them in process.
type Instance struct {
	Server *server.Server
	Clock  *sim.SimClock
	Store  *store.Store
	// Config is the configuration the server was built with.
	Config server.Config
	// Dir holds the store (dubsim.db) and the blob directory (blobs).
	Dir string
}

// Open assembles an instance in dir. Close stops it.
func Open(dir string, o Options) (_ *Instance, err error) {
	fsys := o.FixtureFS
	if fsys == nil {
		fsys = fixtures.FS
	}
	fx, err := fixtures.Load(fsys)
	if err != nil {
		return nil, err
	}
	opts := []store.Option{store.NoSync()}
	if !o.RandomIDs {
		opts = append(opts, store.KeySeed(o.Seed))
	}
	st, err := store.Open(filepath.Join(dir, "dubsim.db"), opts...)
	if err != nil {
		return nil, err
	}
	clock := o.Clock
	if clock == nil {
		start := o.Start
		clock = sim.NewSimClock(func() time.Time { return start }, 0)
	}
	cfg := server.Config{
		Store: st, Clock: clock, Fixtures: fx, FixtureFS: fsys, Seed: o.Seed, Timing: sim.DefaultTiming,
		BlobDir: filepath.Join(dir, "blobs"),
	}
	if o.Config != nil {
		o.Config(&cfg)
	}
	srv, err := server.New(context.Background(), cfg)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	return &Instance{Server: srv, Clock: clock, Store: st, Config: cfg, Dir: dir}, nil
}

// Close stops the background work and closes the store Open made.
func (i *Instance) Close() error {
	return errors.Join(i.Server.Close(), i.Store.Close())
}

// New is Open in t.TempDir() with a clock frozen at start, closed at
// t.Cleanup; it fails the test if the instance cannot start.
func New(t testing.TB, start time.Time, config func(*server.Config)) *Instance {
	t.Helper()
	i, err := Open(t.TempDir(), Options{Start: start, Config: config})
	if err != nil {
		t.Fatalf("simtest: %v", err)
	}
	t.Cleanup(func() {
		if err := i.Close(); err != nil {
			t.Errorf("simtest: close: %v", err)
		}
	})
	return i
}
