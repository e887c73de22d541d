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
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/engine"
	"github.com/dubsim/dubsim/sim/sandbox"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/dubsim/dubsim/sim/store"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// Compile-time checks of the wiring (the rest are in sim/server).
var (
	_ sim.Store         = (*store.Store)(nil)
	_ engine.TimeSource = (*sim.SimClock)(nil)
)

// defaultGCPercent is the collector's target once serving, when $GOGC is
// not set: a request allocates a few kilobytes and the live heap is a few
// megabytes, so collecting at 5x the live heap instead of 2x costs little
// memory and gave 13% more creations per second and a lower p99 under load
// (bench/).
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

// newLogger writes the lines of level and above to w, as text (key=value)
// or as JSON (format "json": an object a line).
func newLogger(level, format string, w io.Writer) *slog.Logger {
	var l slog.Level
	switch level {
	case "off":
		return slog.New(slog.DiscardHandler)
	case "debug":
		l = slog.LevelDebug
	case "warn":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// maxHeaderBytes bounds a request's line and headers together.
const maxHeaderBytes = 64 << 10

// run is dubsim: it serves until ctx is cancelled, then shuts down cleanly.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "check":
			return runCheck(args[1:], getenv, stdout, stderr)
		case "ctl":
			return runCtl(args[1:], getenv, stdout, stderr)
		case "healthcheck":
			return runHealthcheck(ctx, args[1:], getenv, stdout, stderr)
		case "parity":
			return runParity(ctx, args[1:], getenv, stdout, stderr)
		case "version":
			if len(args) > 1 {
				return fmt.Errorf("version: unexpected argument %q", args[1])
			}
			fmt.Fprintln(stdout, "dubsim", version)
			return nil
		}
	}
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	if cfg.Version {
		fmt.Fprintln(stdout, "dubsim", version)
		return nil
	}
	log := newLogger(cfg.LogLevel, cfg.LogFormat, stderr)
	warnUnknownVariables(log, cfg.UnknownVariables)
	if cfg.MemoryLimit > 0 && getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(cfg.MemoryLimit)
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

	var fsys fs.FS = fixtures.FS
	if cfg.Fixtures != "" {
		if st, err := os.Stat(cfg.Fixtures); err != nil || !st.IsDir() {
			return fmt.Errorf("fixtures: %s is not a directory", cfg.Fixtures)
		}
		fsys = fixtures.Overlay{Top: os.DirFS(cfg.Fixtures), Base: fixtures.FS}
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
	st := data.store

	clock := sim.NewSimClock(time.Now, cfg.TimeScale)
	scfg := server.Config{
		Store: st, Clock: clock, Fixtures: fx, FixtureFS: fsys, Seed: cfg.Seed, Timing: cfg.Timing, Log: log,
		FetchHosts: cfg.FetchHosts, PublicURL: cfg.PublicURL,
		NoLoopbackFetch: !cfg.FetchLoopback, FetchErrorDetail: cfg.FetchErrorDetail,
		RejectUnknownFields: cfg.UnknownFields == "reject", CreateStatus: cfg.CreateStatus,
		NoControl: cfg.NoControl, ControlToken: cfg.ControlToken, ControlHosts: cfg.ControlHosts, SeparateControl: cfg.ControlAddr != "",
		CORSOrigins:  cfg.CORS,
		JournalBytes: cfg.JournalBytes, JournalMemory: cfg.JournalMemory, MinPollInterval: cfg.MinPollInterval,
		AdvanceWait: cfg.AdvanceWait, DateHeader: cfg.DateHeader,
		BlobDir: cfg.BlobDir, StudioTiming: cfg.StudioTiming, StudioLaxEnums: cfg.StudioEnums == "lax",
		StudioRateLimit: cfg.StudioRateLimit, SharedCreate: cfg.SharedCreate, Version: version,
		Quota:         cfg.Quota,
		DrainMaxBytes: drainMaxBytes(cfg.DrainMaxBytes), DrainIdleTimeout: cfg.DrainIdleTimeout, DrainTimeout: cfg.DrainTimeout,
		BodyIdleTimeout: bodyIdleTimeout(cfg.BodyIdleTimeout), BodyMinRate: bodyMinRate(cfg.BodyMinRate), BodyMemory: zeroOff(cfg.BodyMemory),
	}
	// One body budget, total quota and output cache for the default
	// simulator and every sandbox.
	shared, err := server.NewShared(scfg)
	if err != nil {
		return err
	}
	defer shared.Close()
	scfg.Shared = shared
	sandboxes, err := newSandboxes(cfg, scfg, clock, log)
	if err != nil {
		return err
	}
	if sandboxes != nil {
		scfg.ControlExtensions = append(scfg.ControlExtensions, sandboxes.ControlExtension(cfg.PublicURL))
	}
	srvParts, err := server.New(ctx, scfg)
	if err != nil {
		return err
	}
	defer srvParts.Close()
	engine := srvParts.Engine
	restoredSandboxes := 0
	if sandboxes != nil {
		if restoredSandboxes, err = sandboxes.Open(ctx); err != nil {
			_ = sandboxes.Close(context.Background())
			return err
		}
		// The sandboxes' sweep has a goroutine of its own, on the same
		// period: 200 running sandboxes must not delay the default's.
		sweepCtx, stopSweep := context.WithCancel(ctx)
		swept := make(chan struct{})
		go func() {
			defer close(swept)
			ticker := time.NewTicker(cfg.Tick)
			defer ticker.Stop()
			var sandboxErr tickErrors
			for {
				select {
				case <-sweepCtx.Done():
					return
				case <-ticker.C:
					sandboxErr.report(sweepCtx, log, "sandbox sweep", engineRecovered(func() error { return sandboxes.Tick(sweepCtx) }))
				}
			}
		}()
		// Closed before the default server (defers run last first), once
		// the sweep has stopped.
		defer func() {
			stopSweep()
			<-swept
			if err := sandboxes.Close(context.Background()); err != nil {
				log.Error("closing the sandboxes", "err", err)
			}
		}()
		srvParts.Handler = sandboxes.Handler(srvParts.Handler, sandbox.PickMain)
		srvParts.StudioHandler = sandboxes.Handler(srvParts.StudioHandler, sandbox.PickStudio)
		if srvParts.ControlHandler != nil {
			srvParts.ControlHandler = sandboxes.Handler(srvParts.ControlHandler, sandbox.PickControl)
		}
	}

	tlsCfg, fp, err := serverTLS(cfg, time.Now(), cfg.Addr, cfg.StudioAddr, cfg.ControlAddr)
	if err != nil {
		return err
	}
	cfg.tlsFingerprint = fp
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	ln = limitListener(ln, cfg.MaxConnections)
	// No ReadTimeout: a whole-request deadline cut a 5 GB upload slower
	// than 17 MB/s. Request bodies have an idle deadline instead, moved as
	// bytes arrive (Config.BodyIdleTimeout, fidelity HW1).
	open := &inflight{}
	srv := &http.Server{
		Handler:           open.wrap(srvParts.Handler),
		ReadHeaderTimeout: 10 * time.Second,
		// A request line and headers past 64 KiB are refused by net/http
		// (431) before it reads the rest: a client sending megabyte lines
		// then costs the process a 64 KiB read each, not a megabyte each
		// (TestNoisyNeighbours). Targets past 8 KiB get the envelope's 414.
		MaxHeaderBytes: maxHeaderBytes,
		WriteTimeout:   30 * time.Minute, // output files can be long downloads
		IdleTimeout:    2 * time.Minute,
		// Each server its own copy: serving adds HTTP/2 to its NextProtos.
		TLSConfig: tlsCfg.Clone(),
	}
	if tlsCfg != nil {
		// A client that refuses the certificate (a browser, before its
		// user accepts a self-signed one) is no server problem.
		srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelDebug)
	}
	serveErr := make(chan error, 3)
	go func() { serveErr <- serve(srv, ln) }()
	var studioSrv *http.Server
	studioAddr := ""
	if cfg.StudioAddr != "" {
		sln, err := net.Listen("tcp", cfg.StudioAddr)
		if err != nil {
			_ = srv.Close()
			return fmt.Errorf("studio-addr: %w", err)
		}
		studioAddr = sln.Addr().String()
		sln = limitListener(sln, cfg.MaxConnections)
		studioSrv = &http.Server{Handler: open.wrap(srvParts.StudioHandler), ReadHeaderTimeout: srv.ReadHeaderTimeout, MaxHeaderBytes: maxHeaderBytes,
			WriteTimeout: srv.WriteTimeout, IdleTimeout: srv.IdleTimeout, TLSConfig: tlsCfg.Clone(), ErrorLog: srv.ErrorLog}
		go func() { serveErr <- serve(studioSrv, sln) }()
	}

	var controlSrv *http.Server
	controlAddr := ""
	if cfg.ControlAddr != "" {
		cln, err := net.Listen("tcp", cfg.ControlAddr)
		if err != nil {
			_ = srv.Close()
			if studioSrv != nil {
				_ = studioSrv.Close()
			}
			return fmt.Errorf("control-addr: %w", err)
		}
		controlAddr = cln.Addr().String()
		cln = limitListener(cln, cfg.MaxConnections)
		controlSrv = &http.Server{Handler: open.wrap(srvParts.ControlHandler), ReadHeaderTimeout: srv.ReadHeaderTimeout, MaxHeaderBytes: maxHeaderBytes,
			WriteTimeout: srv.WriteTimeout, IdleTimeout: srv.IdleTimeout, TLSConfig: tlsCfg.Clone(), ErrorLog: srv.ErrorLog}
		go func() { serveErr <- serve(controlSrv, cln) }()
	}

	banner(stdout, ln.Addr().String(), studioAddr, controlAddr, cfg, fx, func(w io.Writer) {
		dataBanner(w, data, getenv)
		sandboxBanner(w, cfg, sandboxes, restoredSandboxes)
	})
	go settleMemory(getenv)

	ticker := time.NewTicker(cfg.Tick)
	defer ticker.Stop()
	lastSave := time.Now()
	var sweepErr, saveErr tickErrors
	for {
		select {
		case <-ctx.Done():
			// A signal: exit 0 once stopped, even when the grace cut
			// requests off; an error only when closing or saving failed.
			err := shutdown(log, cfg.ShutdownGrace, open, backgroundDownloads(engine.Clock.Work()), data.tempDir != "", srv, studioSrv, controlSrv)
			if serr := engine.Clock.SaveClock(context.Background()); serr != nil {
				err = errors.Join(err, serr)
			}
			return err
		case err := <-serveErr:
			return err
		case <-ticker.C:
			sweepErr.report(ctx, log, "transition sweep", engineRecovered(func() error {
				_, err := engine.Clock.Tick(ctx)
				return err
			}))
			if time.Since(lastSave) >= time.Second {
				lastSave = time.Now()
				saveErr.report(ctx, log, "save clock", engineRecovered(func() error { return engine.Clock.SaveClock(ctx) }))
			}
		}
	}
}

// newSandboxes makes the process's sandbox manager (nil without sandboxes:
// --sandbox-max 0, or no control API to create them). Sandboxes live
// beside the data file, in <data>.sandboxes/ (temporary with the
// temporary store).
func newSandboxes(cfg config, base server.Config, clock *sim.SimClock, log *slog.Logger) (*sandbox.Manager, error) {
	if cfg.SandboxMax == 0 || cfg.NoControl {
		return nil, nil
	}
	base.Store, base.Clock = nil, nil
	return sandbox.New(sandbox.Config{
		Base: base, Shared: base.Shared, Dir: cfg.Data + ".sandboxes", Max: cfg.SandboxMax, Idle: cfg.SandboxIdle,
		DefaultNow: clock.Now, Log: log,
		// Not fsynced (fidelity SB11): a sandbox is a test's, and a synced
		// commit cost 5-35 ms on a shared disk, its creation included.
		StoreOptions: []store.Option{store.NoSync()},
	})
}

// sandboxBanner says whether sandboxes are on and how many were restored.
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

// warnUnknownVariables reports, once at start, each DUBSIM_* variable that
// names no setting: a typo would otherwise be ignored in silence (fidelity
// EV2).
func warnUnknownVariables(log *slog.Logger, unknown [][2]string) {
	for _, u := range unknown {
		if u[1] != "" {
			log.Warn("unknown environment variable, ignored; did you mean "+u[1]+"?", "variable", u[0], "closest", u[1])
		} else {
			log.Warn("unknown environment variable, ignored (dubsim -help lists the DUBSIM_* variables)", "variable", u[0])
		}
	}
}

// engineRecovered (engine.Recovered: run shadows the package name) runs fn, turning a panic into an error that carries its
// stack: the ticker is the main goroutine, where a panic (a damaged page of
// the data file) ended the process, and the next start panicked again.
var engineRecovered = engine.Recovered

// tickErrors reports the failures of one periodic task: at ERROR when the
// error differs from the last one reported (with the stack of a panic),
// and at INFO when the task succeeds again. A task that fails the same way
// on every tick (a damaged data file) is reported once, not five times a
// second.
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

// serve serves srv on ln, over TLS when srv has a TLS configuration (every
// listener alike; fidelity EV5).
func serve(srv *http.Server, ln net.Listener) error {
	if srv.TLSConfig != nil {
		return srv.ServeTLS(ln, "", "")
	}
	return srv.Serve(ln)
}

// drainMaxBytes maps the flag (0: never) to server.Config (negative: never;
// 0: the default).
func drainMaxBytes(flag int64) int64 {
	if flag == 0 {
		return -1
	}
	return flag
}

// bodyIdleTimeout maps --body-idle-timeout to server.Config.BodyIdleTimeout,
// where 0 means the default: the flag's 0 is no limit (negative there).
func bodyIdleTimeout(flag time.Duration) time.Duration {
	if flag == 0 {
		return -1
	}
	return flag
}

// bodyMinRate maps --body-min-rate to server.Config.BodyMinRate, where 0
// means the default: the flag's 0 is no minimum (negative there).
func bodyMinRate(flag int64) int64 {
	if flag == 0 {
		return -1
	}
	return flag
}

// zeroOff maps a flag whose 0 means off (--body-memory) to a
// server.Config field where 0 means the default and negative off.
func zeroOff(flag int64) int64 {
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

// isLoopback reports whether a listener's address takes connections only
// from this machine.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// controlBanner says where the control API is served and which protection
// is on (README, "Protecting the control plane"), with a warning when it is
// reachable from other machines without a token.
func controlBanner(w io.Writer, addr, controlAddr string, cfg config) {
	if cfg.NoControl {
		fmt.Fprintf(w, "  control API: off (--no-control)\n")
		return
	}
	where := addr
	if controlAddr != "" {
		where = controlAddr
		fmt.Fprintf(w, "  control API: %s://%s/_sim (its own address; the main address serves only /_sim/health)\n", cfg.scheme(), displayAddr(controlAddr))
	} else {
		fmt.Fprintf(w, "  control API: %s://%s/_sim\n", cfg.scheme(), displayAddr(addr))
	}
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

// tlsBanner names the certificate in use (fidelity EV5).
func tlsBanner(w io.Writer, cfg config) {
	switch {
	case cfg.TLSSelfSigned:
		fmt.Fprintf(w, "  TLS: self-signed certificate made at start (clients must trust it or skip verification)\n")
		fmt.Fprintf(w, "  TLS certificate SHA-256 fingerprint: %s\n", cfg.tlsFingerprint)
	case cfg.TLSCert != "":
		fmt.Fprintf(w, "  TLS: certificate %s (SHA-256 fingerprint %s)\n", cfg.TLSCert, cfg.tlsFingerprint)
	}
}

// banner says where dubsim serves, where its state lives (dataLine) and
// which API keys it knows.
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
