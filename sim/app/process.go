package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim/control"
	"github.com/dubsim/dubsim/sim/sandbox"
	"github.com/dubsim/dubsim/sim/server"
)

// App is the simulators of a process: the default one and its sandboxes.
type App struct {
	Shared    *Shared
	Default   *server.Server
	Sandboxes *sandbox.Manager // nil without sandboxes
	// Handler serves the main listener, StudioHandler the studio one and
	// ControlHandler the control one (nil without a separate control
	// address): the default simulator and every sandbox.
	Handler, StudioHandler, ControlHandler http.Handler

	ownShared bool
}

// New builds the default simulator over cfg and, with sbx, the sandbox
// manager (NewSandboxes), whose routes join the default's control API. The
// sandboxes of sbx.Dir are restored by Sandboxes.Open.
func New(ctx context.Context, cfg Config, sbx *sandbox.Config) (_ *App, err error) {
	a := &App{Shared: cfg.Shared}
	if a.Shared == nil {
		if a.Shared, err = NewShared(cfg); err != nil {
			return nil, err
		}
		cfg.Shared, a.ownShared = a.Shared, true
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, a.Close(context.Background()))
		}
	}()
	var exts []control.Extension
	if sbx != nil && !cfg.NoControl {
		if a.Sandboxes, err = NewSandboxes(cfg, *sbx); err != nil {
			return a, err
		}
		exts = append(exts, a.Sandboxes.ControlExtension(cfg.PublicURL))
	}
	if a.Default, err = NewServer(ctx, cfg, exts...); err != nil {
		return a, err
	}
	a.Handler, a.StudioHandler, a.ControlHandler = a.Default.Handler, a.Default.StudioHandler, a.Default.ControlHandler
	if m := a.Sandboxes; m != nil {
		a.Handler, a.StudioHandler = m.Handler(a.Handler, sandbox.PickMain), m.Handler(a.StudioHandler, sandbox.PickStudio)
		if a.ControlHandler != nil {
			a.ControlHandler = m.Handler(a.ControlHandler, sandbox.PickControl)
		}
	}
	return a, nil
}

// NewSandboxes makes a sandbox manager whose sandboxes are NewServer of
// base over their own store, clock and blob directory, sharing base.Shared
// (required). sc.DefaultNow and sc.Log default to base's clock and log.
func NewSandboxes(base Config, sc sandbox.Config) (*sandbox.Manager, error) {
	if base.Shared == nil {
		return nil, errors.New("app: sandboxes need Config.Shared")
	}
	if sc.DefaultNow == nil && base.Clock != nil {
		sc.DefaultNow = base.Clock.Now
	}
	sc.Log = cmp.Or(sc.Log, base.Log)
	base.Store, base.Clock = nil, nil
	sc.New = func(ctx context.Context, in sandbox.Instance) (*server.Server, error) {
		c := base
		c.Store, c.Clock, c.BlobDir, c.Log = in.Store, in.Clock, in.BlobDir, in.Log
		c.APIKeys, c.StoredClock = sandbox.Keys(in.KeyPrefix), true
		if in.Seed != nil {
			c.Seed = *in.Seed
		}
		return NewServer(ctx, c)
	}
	return sandbox.New(sc)
}

// Close closes the sandboxes (keeping their files; ctx bounds the wait for
// their requests), the default simulator and the shared resources New
// made; not the store.
func (a *App) Close(ctx context.Context) error {
	var err error
	if a.Sandboxes != nil {
		err = a.Sandboxes.Close(ctx)
	}
	if a.Default != nil {
		err = errors.Join(err, a.Default.Close())
	}
	if a.ownShared {
		err = errors.Join(err, a.Shared.Close())
	}
	return err
}

// FixtureFS is the embedded fixture files with those of dir over them, as
// --fixtures gives them.
func FixtureFS(dir string) (fs.FS, error) {
	if dir == "" {
		return fixtures.FS, nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("fixtures: %s is not a directory", dir)
	}
	return fixtures.Overlay{Top: os.DirFS(dir), Base: fixtures.FS}, nil
}
