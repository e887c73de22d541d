// Command dubsim runs the dubbing API simulator.
//
//	go run ./cmd/dubsim            # :8080, embedded fixtures
//	go run ./cmd/dubsim -help      # every flag and its DUBSIM_* variable
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/engine"
	"github.com/dubsim/dubsim/sim/sandbox"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/dubsim/dubsim/sim/store"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// Compile-time check of the wiring (the rest are in sim/app).
var _ sim.Store = (*store.Store)(nil)

// defaultGCPercent is the collector's target once serving, when $GOGC is
// not set: collecting at 5x the live heap (a few megabytes) instead of 2x
// gave 13% more creations per second and a lower p99 under load (bench/).
const defaultGCPercent = 400

// settleMemory runs once the server listens: it returns the start-up
// garbage (fixtures, the store's open) to the system, then raises the
// collector's target for the load to come, unless $GOGC chose one.
func settleMemory(getenv func(string) string) {
	if getenv("GOGC") != "" {
		return
	}
	debug.FreeOSMemory()
	debug.SetGCPercent(defaultGCPercent)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, a second one stops the process at once (the
	// default action) instead of waiting out --shutdown-grace.
	go func() { <-ctx.Done(); stop() }()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "dubsim:", err)
		os.Exit(1)
	}
}

func newLogger(level, format string, w io.Writer) *slog.Logger {
	if level == "off" {
		return slog.New(slog.DiscardHandler)
	}
	var l slog.Level
	_ = l.UnmarshalText([]byte(level)) // debug, info, warn or error: config.check
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// run serves until ctx is cancelled, then shuts down.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		if cmd, ok := commands[args[0]]; ok {
			return cmd(ctx, args[1:], getenv, stdout, stderr)
		}
	}
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil || cfg.Version {
		if err == nil {
			fmt.Fprintln(stdout, "dubsim", version)
		}
		return err
	}
	log := newLogger(cfg.LogLevel, cfg.LogFormat, stderr)
	prepareProcess(cfg, getenv, log)
	fsys, err := app.FixtureFS(cfg.Fixtures)
	if err != nil {
		return err
	}
	fx, err := fixtures.Load(fsys)
	if err != nil {
		return err
	}
	data, err := openData(&cfg)
	if err != nil {
		return err
	}
	defer data.close(log)

	acfg := appConfig(cfg, data.store, sim.NewSimClock(time.Now, cfg.TimeScale), fx, fsys, log)
	a, err := app.New(ctx, acfg, sandboxConfig(cfg, log))
	if err != nil {
		return err
	}
	// Closed last (defers run last first), once the sweeps have stopped.
	defer func() {
		if err := a.Close(context.Background()); err != nil {
			log.Error("closing the simulators", "err", err)
		}
	}()
	restored := 0
	if a.Sandboxes != nil {
		if restored, err = a.Sandboxes.Open(ctx); err != nil {
			return err
		}
	}
	reports := map[string]*tickErrors{"transition sweep": {}, "save clock": {}, "sandbox sweep": {}}
	stopTicks := a.Tick(ctx, app.Ticks{Every: cfg.Tick, SaveClock: true, Report: func(ctx context.Context, task string, err error) {
		reports[task].report(ctx, log, task, err)
	}})
	defer stopTicks()

	tlsCfg, fp, err := serverTLS(cfg, time.Now(), cfg.Addr, cfg.StudioAddr, cfg.ControlAddr)
	if err != nil {
		return err
	}
	cfg.tlsFingerprint = fp
	ls, err := a.Listen(app.Listen{Addr: cfg.Addr, StudioAddr: cfg.StudioAddr, ControlAddr: cfg.ControlAddr,
		MaxConnections: cfg.MaxConnections, TLS: tlsCfg, Log: log})
	if err != nil {
		return err
	}
	banner(stdout, ls.Addrs[0], ls.Addrs[1], ls.Addrs[2], cfg, fx, func(w io.Writer) {
		dataBanner(w, data)
		sandboxBanner(w, cfg, a.Sandboxes, restored)
	})
	go settleMemory(getenv)

	select {
	case <-ctx.Done():
		// A signal: exit 0 once stopped, even when the grace cut
		// requests off; an error only when closing or saving failed.
		stopTicks()
		clock := a.Default.Engine.Clock
		err := shutdown(log, cfg.ShutdownGrace, ls, backgroundDownloads(clock.Work()), data.tempDir != "")
		return errors.Join(err, clock.SaveClock(context.Background()))
	case err := <-ls.Err():
		return err
	}
}

// commands are dubsim's subcommands; anything else is the server's flags.
var commands = map[string]func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error{
	"check":       runCheck,
	"ctl":         runCtl,
	"healthcheck": runHealthcheck,
	"parity":      runParity,
	"version": func(_ context.Context, args []string, _ func(string) string, stdout, _ io.Writer) error {
		if len(args) > 0 {
			return fmt.Errorf("version: unexpected argument %q", args[0])
		}
		fmt.Fprintln(stdout, "dubsim", version)
		return nil
	},
}

// prepareProcess reports unknown DUBSIM_* variables, sets the memory
// limit and removes what ended processes left in the temporary directory.
func prepareProcess(cfg config, getenv func(string) string, log *slog.Logger) {
	warnUnknownVariables(log, cfg.UnknownVariables)
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	if n, err := server.RemoveStaleSpools(); err != nil {
		log.Warn("removing request bodies spooled by an earlier run", "dir", os.TempDir(), "err", err)
	} else if n > 0 {
		log.Info("removed request bodies spooled by an earlier run", "dir", os.TempDir(), "files", n)
	}
	if n, err := server.RemoveStaleTempDirs(); err != nil {
		log.Warn("removing temporary directories left by ended processes", "dir", os.TempDir(), "err", err)
	} else if n > 0 {
		log.Info("removed temporary directories left by ended processes", "dir", os.TempDir(), "dirs", n)
	}
}

// appConfig is the default simulator's configuration: the flags'
// values, with a flag's 0 ("off") as the configuration's negative.
func appConfig(cfg config, st sim.Store, clock *sim.SimClock, fx *sim.Fixtures, fsys fs.FS, log *slog.Logger) app.Config {
	a := cfg.Config
	a.Store, a.Clock, a.Fixtures, a.FixtureFS, a.Log = st, clock, fx, fsys, log
	a.SeparateControl, a.Version, a.NoLoopbackFetch = cfg.ControlAddr != "", version, !cfg.FetchLoopback
	a.RejectUnknownFields, a.StudioLaxEnums = cfg.UnknownFields == "reject", cfg.StudioEnums == "lax"
	a.DrainMaxBytes, a.BodyMinRate, a.BodyMemory = zeroOff(cfg.DrainMaxBytes), zeroOff(cfg.BodyMinRate), zeroOff(cfg.BodyMemory)
	a.BodyIdleTimeout = zeroOff(cfg.BodyIdleTimeout)
	return a
}

// sandboxConfig is the process's sandbox configuration (nil: --sandbox-max
// 0), beside the data file.
func sandboxConfig(cfg config, log *slog.Logger) *sandbox.Config {
	if cfg.SandboxMax == 0 {
		return nil
	}
	return &sandbox.Config{Dir: cfg.Data + ".sandboxes", Max: cfg.SandboxMax, Idle: cfg.SandboxIdle, Log: log,
		// Not fsynced (fidelity SB11): a sandbox is a test's, and a synced
		// commit cost 5-35 ms on a shared disk, its creation included.
		StoreOptions: []store.Option{store.NoSync()}}
}

func sandboxBanner(w io.Writer, cfg config, m *sandbox.Manager, restored int) {
	if m == nil {
		return
	}
	idle := "never expire"
	if cfg.SandboxIdle > 0 {
		idle = "expire after " + cfg.SandboxIdle.String() + " idle"
	}
	fmt.Fprintf(w, "  sandboxes:   POST /_sim/sandboxes (at most %d; %s); %d restored\n", cfg.SandboxMax, idle, restored)
}

// warnUnknownVariables reports each DUBSIM_* variable that names no
// setting: a typo would otherwise be ignored in silence (fidelity EV2).
func warnUnknownVariables(log *slog.Logger, unknown [][2]string) {
	for _, u := range unknown {
		if u[1] != "" {
			log.Warn("unknown environment variable, ignored; did you mean "+u[1]+"?", "variable", u[0], "closest", u[1])
		} else {
			log.Warn("unknown environment variable, ignored (dubsim -help lists the DUBSIM_* variables)", "variable", u[0])
		}
	}
}

// tickErrors reports the failures of one periodic task once until the
// error changes, and again when it succeeds: a damaged data file fails the
// same way five times a second.
type tickErrors struct{ last string }

func (t *tickErrors) report(ctx context.Context, log *slog.Logger, task string, err error) {
	switch {
	case err == nil && t.last != "":
		log.Info(task+" works again", "after", t.last)
		t.last = ""
	case err == nil || ctx.Err() != nil || err.Error() == t.last:
	default:
		t.last = err.Error()
		attrs := []any{"err", err}
		var pe *engine.PanicError
		if errors.As(err, &pe) {
			attrs = append(attrs, "stack", string(pe.Stack))
		}
		log.Error(task+" failed (reported once until it changes; run `dubsim check` on the data file if it persists)", attrs...)
	}
}

// zeroOff maps a flag whose 0 means off to a configuration field where 0
// means the default and negative off.
func zeroOff[T int64 | time.Duration](flag T) T {
	if flag == 0 {
		return -1
	}
	return flag
}

func displayAddr(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	return err == nil && (host == "localhost" || ip != nil && ip.IsLoopback())
}

// controlBanner says where the control API is served and which protection
// is on, with a warning when other machines reach it without a token.
func controlBanner(w io.Writer, addr, controlAddr string, cfg config) {
	if cfg.NoControl {
		fmt.Fprintf(w, "  control API: off (--no-control)\n")
		return
	}
	where, own := addr, ""
	if controlAddr != "" {
		where, own = controlAddr, " (its own address; the main address serves only /_sim/health)"
	}
	fmt.Fprintf(w, "  control API: %s://%s/_sim%s\n", cfg.scheme(), displayAddr(where), own)
	fmt.Fprintf(w, "  dashboard:   %s://%s/_sim/ui/\n", cfg.scheme(), displayAddr(where))
	if cfg.ControlToken != "" {
		fmt.Fprintf(w, "  control API protection: token (Authorization: Bearer TOKEN or %s: TOKEN)\n", server.HeaderControlToken)
		return
	}
	hosts := "localhost, *.localhost, IP addresses"
	if len(cfg.ControlHosts) > 0 {
		hosts += ", " + strings.Join(cfg.ControlHosts, ", ")
	}
	fmt.Fprintf(w, "  control API protection: no token; Host must be %s; no other site's Origin\n", hosts)
	if !isLoopback(where) {
		fmt.Fprintf(w, "  WARNING: the control API listens beyond loopback (%s) without a token: anyone who can reach it by IP address\n"+
			"           can reset the simulator and read every API key. Set --control-token (DUBSIM_CONTROL_TOKEN) or listen on 127.0.0.1.\n", where)
	}
}

func tlsBanner(w io.Writer, cfg config) {
	switch {
	case cfg.TLSSelfSigned:
		fmt.Fprintf(w, "  TLS: self-signed certificate made at start (clients must trust it or skip verification)\n")
		fmt.Fprintf(w, "  TLS certificate SHA-256 fingerprint: %s\n", cfg.tlsFingerprint)
	case cfg.TLSCert != "":
		fmt.Fprintf(w, "  TLS: certificate %s (SHA-256 fingerprint %s)\n", cfg.TLSCert, cfg.tlsFingerprint)
	}
}

func banner(w io.Writer, addr, studioAddr, controlAddr string, cfg config, fx *sim.Fixtures, dataLine func(io.Writer)) {
	fmt.Fprintf(w, "dubsim %s listening on %s://%s (platform and studio interfaces)\n", version, cfg.scheme(), displayAddr(addr))
	fmt.Fprintf(w, "  platform only: %s://%s%s\n", cfg.scheme(), displayAddr(addr), server.PlatformPrefix)
	fmt.Fprintf(w, "  studio only: %s://%s%s\n", cfg.scheme(), displayAddr(addr), server.StudioPrefix)
	if studioAddr != "" {
		fmt.Fprintf(w, "  studio only: %s://%s\n", cfg.scheme(), displayAddr(studioAddr))
	}
	tlsBanner(w, cfg)
	controlBanner(w, addr, controlAddr, cfg)
	dataLine(w)
	fmt.Fprintf(w, "  time scale:  %g\n", cfg.TimeScale)
	fmt.Fprintf(w, "  API keys:\n")
	for _, a := range fx.Accounts {
		fmt.Fprintf(w, "    %-22s plan=%-12s balance=%-5d retranslation=%-5t cloning=%t\n", a.APIKey, a.Plan, a.BalanceMinutes, a.RetranslationEnabled, a.CloningEnabled)
	}
}
