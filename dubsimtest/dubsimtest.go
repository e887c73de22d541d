// Package dubsimtest runs dubsim inside a Go test and drives its control
// API as Go methods.
//
// Start assembles a whole simulator in the test process, with no container
// and no fixed port: the platform, studio and control APIs on one loopback
// address (127.0.0.1, a random port), a store and a blob directory in
// t.TempDir(), the embedded fixture accounts. t.Cleanup stops it and
// removes its files.
//
//	func TestCheckout(t *testing.T) {
//		s := dubsimtest.Start(t)
//		ctx := t.Context()
//		app := myapp.New(s.PlatformURL, dubsimtest.KeyPro) // the code under test
//		id := app.SubmitDubbing(ctx, "https://media.dubsim.test/short.mp4")
//		dubsimtest.Must(s.Clock.Advance(ctx, time.Hour))(t)
//		require.Equal(t, "ready", app.Status(ctx, id))
//	}
//
// # Time
//
// By default simulated time is frozen (time scale 0) at the real time of
// Start, cut to the second: nothing happens until the test moves it with
// Clock.Advance or Clock.AdvanceTo, which apply every transition that
// became due, each at its own due time. Tests so never wait for real time
// and give the same result on a slow machine. WithStart sets the initial
// time; WithTimeScale makes the clock run (60: a simulated minute per real
// second), for tests of polling loops; a background sweep then applies due
// transitions every 100 ms of real time, as cmd/dubsim does (reads apply
// them too).
//
// # Control API
//
// Sim embeds a *Client: every control call is a method of Sim or of one of
// its groups (Clock, Accounts, Outcomes, Faults, Journal):
//
//	s.Reset(ctx)
//	s.Clock.Advance(ctx, time.Hour)
//	s.Accounts.Create(ctx, dubsimtest.AccountSpec{Plan: "pro"})
//	s.Outcomes.ForceProject(ctx, id, dubsimtest.Outcome{Outcome: dubsimtest.OutcomeError})
//	s.Faults.Add(ctx, dubsimtest.FaultRule{...})
//	s.Journal.Verify(ctx, dubsimtest.Match{Method: "POST", Times: dubsimtest.Exactly(1)})
//
// Client alone (NewClient) drives any other dubsim, such as a container.
// Must turns a call that must succeed into a one-liner. Errors of the
// control API are *APIError.
//
// New and Close do the same as Start without a testing.TB, for a TestMain
// that shares one simulator between tests (call Reset between them).
//
// # Sandboxes
//
// Connect gives a test a sandbox of its own on a dubsim that runs
// elsewhere (a container, a CI service, one process for the whole suite):
// its own clock, accounts, data, rules and journal, deleted at t.Cleanup.
// Tests that each call Connect can run with t.Parallel():
//
//	func TestRefund(t *testing.T) {
//		t.Parallel()
//		sb := dubsimtest.Connect(t, os.Getenv("DUBSIM_URL"))
//		app := myapp.New(sb.BaseURL, sb.Key(dubsimtest.KeyPro))
//		...
//		dubsimtest.Must(sb.Clock.Advance(t.Context(), time.Hour))(t) // this test's clock only
//	}
package dubsimtest

import (
	"cmp"
	"context"
	"errors"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/simtest"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/server"
)

// API keys of the embedded fixture accounts (fixtures/accounts.json).
const (
	KeyFree         = "dubsim-free"         // plan none, 30 minutes
	KeySubscription = "dubsim-subscription" // subscription, 100 minutes
	KeyPro          = "dubsim-pro"          // pro, 600 minutes, cloning
	KeyEnterprise   = "dubsim-enterprise"   // enterprise, 6000 minutes, re-translation and cloning
	KeyBroke        = "dubsim-broke"        // enterprise with no balance: creations are refused with 402
)

// tickInterval is how often a running clock is swept.
const tickInterval = 100 * time.Millisecond

// Option configures Start and New.
type Option func(*options)

type options struct {
	scale    float64
	fixtures string
	seed     uint64
	seedSet  bool
	start    time.Time
	addr     string
	token    string
}

// WithTimeScale sets the speed of simulated time: 0 (the default) freezes
// it, 1 is real time, 60 a simulated minute per real second.
func WithTimeScale(scale float64) Option { return func(o *options) { o.scale = scale } }

// WithFixtures lays the fixture files of dir (accounts.json, options.json,
// voices.json, media.json, studio.json; any subset) over the embedded ones,
// like dubsim's --fixtures flag.
func WithFixtures(dir string) Option { return func(o *options) { o.fixtures = dir } }

// WithSeed sets the seed of generated ids and content: the same seed gives
// the same ids on a fresh simulator. Without it content is that of seed 0
// and ids are keyed by a random value, so that no two simulators make the
// same ids.
func WithSeed(seed uint64) Option { return func(o *options) { o.seed, o.seedSet = seed, true } }

// WithStart sets the initial simulated time.
func WithStart(t time.Time) Option { return func(o *options) { o.start = t } }

// WithAddr sets the TCP address the simulator listens on, such as
// "127.0.0.1:8089" (a fixed port, for a client whose base URL cannot be
// set at run time) or ":0" (every interface, a random port). The default
// is "127.0.0.1:0": loopback only, a random port. Sim.URL names the
// address bound; when the host is unspecified ("", "0.0.0.0", "::") it
// names the loopback address instead.
func WithAddr(addr string) Option { return func(o *options) { o.addr = addr } }

// WithControlToken starts the simulator with a control token, like
// dubsim's --control-token: every control call must carry it. Sim's client
// sends it.
func WithControlToken(token string) Option { return func(o *options) { o.token = token } }

// Sim is a running in-process simulator.
type Sim struct {
	*Client

	// URL is the base URL of every interface and /_sim, such as
	// "http://127.0.0.1:41234". PlatformURL is URL plus "/platform" and
	// StudioURL URL plus "/studio": each interface alone.
	URL, PlatformURL, StudioURL string

	// Dir holds the store (dubsim.db) and the blobs.
	Dir string

	closeOnce sync.Once
	closeErr  error
	stop      func() error
}

// Start starts a simulator for the test and stops it at t.Cleanup; it
// fails the test if the simulator cannot start.
func Start(t testing.TB, opts ...Option) *Sim {
	t.Helper()
	s, err := start(t.TempDir(), opts)
	if err != nil {
		t.Fatalf("dubsimtest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("dubsimtest: close: %v", err)
		}
	})
	return s
}

// New starts a simulator in a new temporary directory, which Close
// removes. Use it where there is no testing.TB, such as TestMain; in a test
// Start is simpler.
func New(opts ...Option) (*Sim, error) {
	dir, err := os.MkdirTemp("", "dubsimtest-")
	if err != nil {
		return nil, err
	}
	s, err := start(dir, opts)
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	inner := s.stop
	s.stop = func() error { return errors.Join(inner(), os.RemoveAll(dir)) }
	return s, nil
}

// Close stops the simulator: the listener (after the requests in flight,
// 30 s at most), the sweep, background work, then the store. Later calls
// return the first call's result.
func (s *Sim) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.stop() })
	return s.closeErr
}

func start(dir string, opts []Option) (*Sim, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	fsys, err := app.FixtureFS(o.fixtures)
	if err != nil {
		return nil, err
	}
	t0 := o.start
	if t0.IsZero() {
		t0 = time.Now().Truncate(time.Second)
	}
	// Real time reads t0 when the clock is made, then the time elapsed
	// since: simulated time starts at exactly t0, whatever the scale.
	var once sync.Once
	var base time.Time
	clock := sim.NewSimClock(func() time.Time {
		once.Do(func() { base = time.Now() })
		return t0.Add(time.Since(base))
	}, o.scale)
	inst, err := simtest.Open(dir, simtest.Options{Clock: clock, FixtureFS: fsys, Seed: o.seed, RandomIDs: !o.seedSet, Config: func(c *app.Config) {
		c.ControlToken = o.token
	}})
	if err != nil {
		return nil, err
	}
	ls, err := inst.App.Listen(app.Listen{Addr: cmp.Or(o.addr, "127.0.0.1:0")})
	if err != nil {
		return nil, errors.Join(err, inst.Close())
	}
	// A frozen clock moves only through the control API, which sweeps.
	stopTicks := inst.App.Tick(context.Background(), app.Ticks{Every: tickInterval, SkipFrozen: true})
	u := baseURL(ls.Addrs[0])
	client := NewClient(u)
	client.Token = o.token
	return &Sim{
		Client: client, URL: u, PlatformURL: u + server.PlatformPrefix, StudioURL: u + server.StudioPrefix,
		Dir: dir, stop: func() error {
			_, err := ls.Shutdown(closeGrace)
			stopTicks()
			return errors.Join(err, inst.Close())
		},
	}, nil
}

// closeGrace bounds how long Close waits for the requests in flight.
const closeGrace = 30 * time.Second

// baseURL is the URL of a bound address, 127.0.0.1 for an unspecified
// host (a "tcp" listener on "::" takes IPv4 too).
func baseURL(addr string) string {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return "http://" + addr
	}
	ip := ap.Addr()
	if ip.IsUnspecified() {
		ip = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	return "http://" + netip.AddrPortFrom(ip, ap.Port()).String()
}

// Must makes a control call that must succeed a one-liner: it takes the
// results of a call, a value and an error or an error alone, and returns
// a function that fails the test (t.Fatal) if the error is not nil, else
// returns the value:
//
//	now := dubsimtest.Must(s.Clock.Advance(ctx, time.Hour))(t)
//	acct := dubsimtest.Must(s.Accounts.Create(ctx, dubsimtest.AccountSpec{Plan: "pro"}))(t)
//	dubsimtest.Must(s.Reset(ctx))(t)
//
// For a call that returns only an error, the function returns that error,
// which is nil when the test goes on: errcheck reports it as unchecked,
// so where errcheck runs on tests, require.NoError(t, s.Reset(ctx)) reads
// as well.
func Must[T any](v T, errs ...error) func(t testing.TB) T {
	err := errors.Join(errs...)
	if len(errs) == 0 {
		if e, ok := any(v).(error); ok {
			err = e
		}
	}
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%v", err)
		}
		return v
	}
}
