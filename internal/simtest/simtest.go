// Package simtest assembles a whole dubsim in the test's process through
// sim/app: a store and blobs in a directory, the fixtures, a clock and, for
// Sandboxed, the sandboxes. dubsimtest and the module's own tests share it.
package simtest

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/sandbox"
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
	// Memory holds the store in memory (store.OpenMemory) instead of
	// dir/dubsim.db: for an instance nobody reopens, it seeds the fixtures
	// in about a quarter of the time.
	Memory bool
	// Config changes the configuration last (it may replace the store,
	// the clock, the blob directory...).
	Config func(*app.Config)
}

// Instance is an assembled dubsim, not listening: serve Server.Handler (or
// Server.StudioHandler) with httptest, or call them in process.
type Instance struct {
	// App is the assembly; Server its default simulator.
	App    *app.App
	Server *server.Server
	Clock  *sim.SimClock
	Store  *store.Store
}

// Open assembles an instance in dir. Close stops it.
func Open(dir string, o Options) (*Instance, error) {
	return open(dir, o, nil)
}

// open assembles an instance in dir, with sandboxes when sbx is set.
func open(dir string, o Options, sbx *sandbox.Config) (*Instance, error) {
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
	var st *store.Store
	if o.Memory {
		st, err = store.OpenMemory(opts...)
	} else {
		st, err = store.Open(filepath.Join(dir, "dubsim.db"), opts...)
	}
	if err != nil {
		return nil, err
	}
	clock := o.Clock
	if clock == nil {
		start := o.Start
		clock = sim.NewSimClock(func() time.Time { return start }, 0)
	}
	cfg := app.Config{
		Store: st, Clock: clock, Fixtures: fx, FixtureFS: fsys, Seed: o.Seed, Timing: sim.DefaultTiming,
		BlobDir: filepath.Join(dir, "blobs"),
	}
	if o.Config != nil {
		o.Config(&cfg)
	}
	if sbx != nil && sbx.DefaultNow == nil {
		sbx.DefaultNow = cfg.Clock.Now
	}
	a, err := app.New(context.Background(), cfg, sbx)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	return &Instance{App: a, Server: a.Default, Clock: clock, Store: st}, nil
}

// Close stops the background work, the sandboxes and the store Open made.
func (i *Instance) Close() error {
	return errors.Join(i.App.Close(context.Background()), i.Store.Close())
}

// New is Open in t.TempDir() with the store in memory and a clock frozen
// at start, closed at t.Cleanup; it fails the test if the instance cannot
// start.
func New(t testing.TB, start time.Time, config func(*app.Config)) *Instance {
	t.Helper()
	i, err := Open(t.TempDir(), Options{Start: start, Memory: true, Config: config})
	if err != nil {
		t.Fatalf("simtest: %v", err)
	}
	cleanup(t, i)
	return i
}

func cleanup(t testing.TB, c interface{ Close() error }) {
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("simtest: close: %v", err)
		}
	})
}

// Sandboxed is an instance with sandboxes, assembled as cmd/dubsim
// assembles them (app.New).
type Sandboxed struct {
	*Instance
	Manager *sandbox.Manager
	// Handler serves the main listener: the default and every sandbox.
	Handler http.Handler
	// Sandbox is the manager's configuration.
	Sandbox sandbox.Config
}

// NewSandboxed assembles a Sandboxed in t.TempDir() (the default as Open
// does, the sandboxes not fsynced), closed at t.Cleanup; it fails the test
// if it cannot start. sbx, when set, changes the manager's configuration
// last; its DefaultNow is the default's clock.
func NewSandboxed(t testing.TB, o Options, sbx func(*sandbox.Config)) *Sandboxed {
	t.Helper()
	dir := t.TempDir()
	def := filepath.Join(dir, "default")
	if err := os.MkdirAll(def, 0o755); err != nil {
		t.Fatalf("simtest: %v", err)
	}
	s := &Sandboxed{Sandbox: sandbox.Config{Dir: filepath.Join(dir, "sandboxes"), StoreOptions: []store.Option{store.NoSync()}}}
	if sbx != nil {
		sbx(&s.Sandbox)
	}
	i, err := open(def, o, &s.Sandbox)
	if err != nil {
		t.Fatalf("simtest: %v", err)
	}
	s.Instance, s.Manager, s.Handler = i, i.App.Sandboxes, i.App.Handler
	cleanup(t, s)
	return s
}
