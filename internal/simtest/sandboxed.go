package simtest

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/dubsim/dubsim/sim/sandbox"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/dubsim/dubsim/sim/store"
)

// Sandboxed is an instance with sandboxes, assembled as cmd/dubsim
// assembles them: one server.Shared for the default and every sandbox, the
// /_sim/sandboxes control extension, and the sandbox dispatcher around the
// default's handler.
type Sandboxed struct {
	*Instance
	Manager *sandbox.Manager
	Shared  *server.Shared
	// Handler serves the main listener: the default and every sandbox.
	Handler http.Handler
	// Sandbox is the manager's configuration.
	Sandbox sandbox.Config
}

// OpenSandboxed assembles a Sandboxed: the default in dir/default (o, as
// Open), sandboxes in dir/sandboxes, not fsynced. sbx, when set, changes
// the manager's configuration last; its Base is the default's
// configuration without store and clock, and its DefaultNow the default's
// clock.
func OpenSandboxed(dir string, o Options, sbx func(*sandbox.Config)) (_ *Sandboxed, err error) {
	sh, err := server.NewShared(server.Config{})
	if err != nil {
		return nil, err
	}
	s := &Sandboxed{Shared: sh}
	defer func() {
		if err != nil {
			err = errors.Join(err, sh.Close())
		}
	}()
	if err := os.MkdirAll(filepath.Join(dir, "default"), 0o755); err != nil {
		return nil, err
	}
	config := o.Config
	var mErr error
	o.Config = func(c *server.Config) {
		c.Shared = sh
		if config != nil {
			config(c)
		}
		base := *c
		base.Store, base.Clock = nil, nil
		s.Sandbox = sandbox.Config{Base: base, Shared: sh, Dir: filepath.Join(dir, "sandboxes"), DefaultNow: c.Clock.Now,
			StoreOptions: []store.Option{store.NoSync()}}
		if sbx != nil {
			sbx(&s.Sandbox)
		}
		if s.Manager, mErr = sandbox.New(s.Sandbox); mErr == nil {
			c.ControlExtensions = append(c.ControlExtensions, s.Manager.ControlExtension(""))
		}
	}
	i, err := Open(filepath.Join(dir, "default"), o)
	if err != nil || mErr != nil {
		if i != nil {
			err = errors.Join(err, i.Close())
		}
		return nil, errors.Join(err, mErr)
	}
	s.Instance = i
	s.Handler = s.Manager.Handler(i.Server.Handler, sandbox.PickMain)
	return s, nil
}

// Close closes the sandboxes (keeping their files), the default and the
// shared resources.
func (s *Sandboxed) Close() error {
	return errors.Join(s.Manager.Close(context.Background()), s.Instance.Close(), s.Shared.Close())
}

// NewSandboxed is OpenSandboxed in t.TempDir(), closed at t.Cleanup; it
// fails the test if the instance cannot start.
func NewSandboxed(t testing.TB, o Options, sbx func(*sandbox.Config)) *Sandboxed {
	t.Helper()
	s, err := OpenSandboxed(t.TempDir(), o, sbx)
	if err != nil {
		t.Fatalf("simtest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("simtest: close: %v", err)
		}
	})
	return s
}
