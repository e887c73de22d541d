package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/journal"
	"github.com/dubsim/dubsim/sim/sandbox"
	"github.com/dubsim/dubsim/sim/server"
)

// config is dubsim's configuration. Every flag has a DUBSIM_* environment
// fallback; flags win.
type config struct {
	// Config holds the flags a simulator takes as they are; appConfig
	// converts the ones below.
	app.Config

	Addr      string
	Data      string
	Fixtures  string
	TimeScale float64
	// SeedSet: the seed was given; it then keys the ids of a new data file.
	SeedSet       bool
	FetchLoopback bool
	UnknownFields string
	Tick          time.Duration
	LogLevel      string
	ControlAddr   string
	SandboxMax    int
	SandboxIdle   time.Duration
	Version       bool
	StudioAddr    string
	StudioEnums   string

	// Bounds whose 0 is "off" here and "the default" in app.Config
	// (zeroOff): the reading of a refused request's body (fidelity X2),
	// the idle deadline and minimum rate of a request body (HW1, HW5) and
	// the process's body memory (HY1).
	DrainMaxBytes   int64
	BodyIdleTimeout time.Duration
	BodyMinRate     int64
	BodyMemory      int64
	MaxConnections  int

	TLSCert, TLSKey string
	TLSSelfSigned   bool
	// tlsFingerprint is set at start, for the banner.
	tlsFingerprint string

	// UnknownVariables are the DUBSIM_* variables that name no setting,
	// each with the closest known name (unknownVariables).
	UnknownVariables [][2]string

	LogFormat     string
	ShutdownGrace time.Duration
}

// Flags whose variables ctl and healthcheck also read (resolveTarget).
const (
	flagControlToken  = "control-token"
	flagTLSCert       = "tls-cert"
	flagTLSSelfSigned = "tls-self-signed"
)

// defaultMaxConnections is far above what a test suite opens, far below
// what exhausts memory or descriptors (fidelity HW3).
const defaultMaxConnections = 1024

// minJournalBytes is the least --journal-bytes and --journal-memory take:
// room for two of the largest entries.
const minJournalBytes = 64 << 10

// defaultMemoryLimit is the soft memory limit when GOMEMLIMIT is not set:
// it caps the headroom defaultGCPercent gives garbage, so 200 busy
// sandboxes stay under 512 MB, and a single tenant never nears it
// (fidelity HM1).
const defaultMemoryLimit = 256 << 20

// positiveDurations are the duration flags that may not be 0.
var positiveDurations = []string{"tick", "advance-wait"}

func checkDurations(fs *flag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok || err != nil {
			return
		}
		d, ok := g.Get().(time.Duration)
		switch {
		case !ok:
		case d < 0:
			err = fmt.Errorf("%s must be a non-negative duration such as 90s or 2m; got %s", f.Name, d)
		case d == 0 && slices.Contains(positiveDurations, f.Name):
			err = fmt.Errorf("%s must be a positive duration such as 30s; got %s", f.Name, d)
		}
	})
	return err
}

func envName(flagName string) string {
	return "DUBSIM_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

const defaultShutdownGrace = 10 * time.Second

type listFlags struct{ fetchHosts, controlHosts, rateLimit, corsOrigins string }

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	var l listFlags
	fs := flagSet(&c, &l, stderr)
	if err := parseFlags(fs, args, stderr); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q (dubsim -help lists the commands and flags)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || f.Name == "version" {
			return
		}
		if v := getenv(envName(f.Name)); v != "" {
			if err := setFromEnv(f, v); err != nil {
				errs = append(errs, err)
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		return c, err
	}
	c.SeedSet = set["seed"] || getenv(envName("seed")) != ""
	c.UnknownVariables = unknownVariables(os.Environ(), knownVariables(fs))
	if err := c.parseLists(l); err != nil {
		return c, err
	}
	if err := checkDurations(fs); err != nil {
		return c, err
	}
	return c, c.check()
}

func flagSet(c *config, l *listFlags, stderr io.Writer) *flag.FlagSet {
	fs := newFlagSet("dubsim", `usage: dubsim [FLAGS]                 serve the simulator (flags below; each has the DUBSIM_* variable named in [$...]; flags win)
       dubsim version                print the version
       dubsim ctl COMMAND [ARGS]     call the control API (dubsim ctl -help)
       dubsim check [--data FILE]    check a data file (stopped server): exit 0 when sound, 1 with its problems
       dubsim healthcheck [--url U]  exit 0 when GET /_sim/health answers 200 (for container HEALTHCHECKs)
       dubsim parity --platform-url U --api-key K
                                     run the parity scenarios against any target (dubsim parity -help)

`, stderr)
	fs.StringVar(&c.Addr, "addr", ":8080", "listen `address` (host:port; :0 picks a free port)")
	fs.StringVar(&c.Data, "data", "", "bbolt data `file` that keeps the state across runs (default: none, a temporary store removed at exit)")
	fs.StringVar(&c.Fixtures, "fixtures", "", "`directory` whose fixture files override the embedded ones")
	fs.Float64Var(&c.TimeScale, "time-scale", 1, "speed of simulated time (1 = real time, 60 = a minute per second, 0 = frozen)")
	fs.Uint64Var(&c.Seed, "seed", 0, "seed of generated content, and of the ids of a new data file, which are otherwise keyed by a random value kept in the file (not of generated API keys, upload ids or signatures: the data file's random secret keys those)")
	fs.StringVar(&l.fetchHosts, "fetch-hosts", "", "comma-separated `hosts` (besides loopback) whose media dubsim may fetch to read durations; *.example.com and * allowed")
	fs.StringVar(&c.PublicURL, "public-url", "", "base `URL` of output download links (default: the request's scheme and host)")
	fs.DurationVar(&c.Timing.Base, "processing-base", sim.DefaultTiming.Base, "processing time of a project, fixed part")
	fs.DurationVar(&c.Timing.PerMinute, "processing-per-minute", sim.DefaultTiming.PerMinute, "processing time added per minute of source")
	fs.DurationVar(&c.Timing.RetransBase, "retranslation-base", sim.DefaultTiming.RetransBase, "processing time of a re-translation, fixed part")
	fs.DurationVar(&c.Timing.RetransPerMinute, "retranslation-per-minute", sim.DefaultTiming.RetransPerMinute, "re-translation time added per minute of source")
	fs.StringVar(&c.UnknownFields, "unknown-fields", "ignore", "unknown JSON body fields: `ignore|reject`")
	fs.IntVar(&c.CreateStatus, "create-status", 200, "HTTP `status` of a successful create or re-translation: 200 or 201")
	fs.DurationVar(&c.Tick, "tick", 200*time.Millisecond, "real-time interval of the transition sweep")
	fs.StringVar(&c.LogLevel, "log-level", "info", "`level`: debug, info, warn, error or off")
	bytesVar(fs, &c.JournalBytes, "journal-bytes", journal.DefaultMaxBytes, "`bytes` of requests each request journal (the default simulator's, each sandbox's) keeps at most; the oldest go first (64KiB or more)")
	bytesVar(fs, &c.JournalMemory, "journal-memory", journal.DefaultMemory, "`bytes` of requests all the request journals of the process keep together; past it, the oldest requests of the largest journals go first (64KiB or more)")
	fs.DurationVar(&c.MinPollInterval, "min-poll-interval", 2*time.Second, "polling faster than this is reported by the conformance report")
	fs.StringVar(&c.DateHeader, "date-header", "simulated", "clock of the HTTP Date header of every answer: `simulated|real` (simulated: the time bodies use)")
	fs.DurationVar(&c.AdvanceWait, "advance-wait", 30*time.Second, "real time a clock advance (or an artifact read) waits for the downloads its answer depends on before answering 504")
	fs.StringVar(&c.StudioAddr, "studio-addr", "", "second listen `address` that serves only the studio interface (default: none; the main address serves both)")
	fs.StringVar(&c.BlobDir, "blob-dir", "", "`directory` of uploaded and downloaded artifact files (default: the data file's path plus .blobs)")
	fs.StringVar(&l.rateLimit, "studio-rate-limit", "off", "studio rate limit of keys without their own: off, documented (60/minute and 1000/day) or `PER_MINUTE,PER_DAY` (0 = no limit)")
	fs.StringVar(&c.SharedCreate, "shared-create", "studio", "interface of a POST /api/v1/projects on the shared address whose body has a name but no other field of either create: `studio|platform` (platform: 400 source_lang is required); a body without even a name is the platform's either way")
	fs.StringVar(&c.StudioEnums, "studio-enums", "strict", "video update processingType and status: `strict|lax` (strict: values seen in the docs; lax: any string)")
	fs.DurationVar(&c.StudioTiming.ArtifactStart, "artifact-start", sim.DefaultStudioTiming.ArtifactStart, "time from artifact created to upload_started")
	fs.DurationVar(&c.StudioTiming.ArtifactBase, "artifact-processing-base", sim.DefaultStudioTiming.ArtifactBase, "time from upload_started to the end, fixed part")
	fs.DurationVar(&c.StudioTiming.ArtifactPerGB, "artifact-processing-per-gb", sim.DefaultStudioTiming.ArtifactPerGB, "artifact processing time added per gigabyte")
	fs.DurationVar(&c.StudioTiming.VideoStart, "video-start", sim.DefaultStudioTiming.VideoStart, "time from video new to in_progress")
	fs.DurationVar(&c.StudioTiming.VideoBase, "video-processing-base", sim.DefaultStudioTiming.VideoBase, "time from video in_progress to completed, fixed part")
	fs.DurationVar(&c.StudioTiming.VideoPerMinute, "video-processing-per-minute", sim.DefaultStudioTiming.VideoPerMinute, "video processing time added per minute of video")
	bytesVar(fs, &c.DrainMaxBytes, "drain-max-bytes", server.DefaultDrainMaxBytes, "after a refusal sent before the request body was read, read and discard at most this many `bytes` of the body so the client sees the answer, not a reset (0 = never)")
	fs.DurationVar(&c.BodyIdleTimeout, "body-idle-timeout", server.DefaultBodyIdleTimeout, "end the reading of a request body when no byte of it arrives for this long (400, or S3's RequestTimeout for an upload); a body that keeps arriving is never cut (0 = no limit)")
	bytesVar(fs, &c.BodyMinRate, "body-min-rate", server.DefaultBodyMinRate, "`bytes` per second a request body must average once body-idle-timeout has passed since it started, else it fails like a stalled one; stops a trickle of a byte now and then from holding a connection forever (0 = no minimum)")
	bytesVar(fs, &c.BodyMemory, "body-memory", server.DefaultBodyMemory, "request-body `bytes` the process holds in memory at once (JSON bodies, the shared address's create routing, the idempotency read-ahead); each simulator holds at most a quarter; a request waits for its bytes before its body is read (0 = unlimited)")
	fs.IntVar(&c.MaxConnections, "max-connections", defaultMaxConnections, "open connections each listen address holds at most; past it, new connections wait in the kernel's accept queue until one closes (0 = unlimited)")
	bytesVar(fs, &c.Quota.Total, "blob-quota", sim.DefaultBlobQuota, "`bytes` of uploaded and downloaded files all companies may store; a presigned upload past it is refused with 403 QuotaExceeded, an artifact download past it fails (0 = unlimited)")
	bytesVar(fs, &c.Quota.PerCompany, "company-blob-quota", sim.DefaultCompanyBlobQuota, "`bytes` of uploaded and downloaded files one company may store (0 = unlimited)")
	fs.IntVar(&c.Quota.PresignsPerCompany, "presigns-per-company", sim.DefaultPresignsPerCompany, "presigned uploads a company may have outstanding, neither used nor expired (0 = unlimited)")
	fs.IntVar(&c.Quota.DownloadsPerCompany, "downloads-per-company", sim.DefaultDownloadsPerCompany, "artifact downloads (from a url or fragments) a company may have pending; past it, creating one is refused with 403 (0 = unlimited)")
	fs.BoolVar(&c.NoControl, "no-control", false, "do not serve the /_sim control API (for shared deployments)")
	fs.BoolVar(&c.FetchLoopback, "fetch-loopback", true, "fetch media served on this machine (loopback, localhost, *.localhost) to read durations; false: treat it like any host not in --fetch-hosts")
	fs.BoolVar(&c.FetchErrorDetail, "fetch-error-detail", false, "tell a creation why its source video could not be read, and an artifact why its download failed (closed port, HTTP status, format); off, only that it could not (the reason goes to the log)")
	fs.StringVar(&c.ControlToken, flagControlToken, "", "`token` every /_sim control call must carry (Authorization: Bearer TOKEN or X-Dubsim-Control-Token); without one, the control API answers only requests for localhost, an IP address or --control-hosts")
	fs.StringVar(&l.controlHosts, "control-hosts", "", "comma-separated host `names` (besides localhost, *.localhost and IP addresses) the control API answers without a token, such as a compose service name")
	fs.StringVar(&c.ControlAddr, "control-addr", "", "listen `address` of the control API and the dashboard alone (default: none; the main address serves them)")
	fs.StringVar(&c.TLSCert, flagTLSCert, "", "PEM certificate `file` (with --tls-key): every listener serves HTTPS")
	fs.StringVar(&c.TLSKey, "tls-key", "", "PEM private key `file` of --tls-cert")
	fs.BoolVar(&c.TLSSelfSigned, flagTLSSelfSigned, false, "serve HTTPS on every listener with a certificate made at start (ECDSA P-256, for localhost, 127.0.0.1, ::1 and the listen hosts; its SHA-256 fingerprint is printed)")
	fs.StringVar(&l.corsOrigins, "cors-origins", "*", "comma-separated `origins` (https://app.example.com) whose pages may call the platform and studio interfaces (CORS, preflight answered); * any, none: no CORS. Never the control API")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log lines as `text|json` (key=value, or an object a line); the access log and lifecycle events included")
	fs.DurationVar(&c.ShutdownGrace, "shutdown-grace", defaultShutdownGrace, "on SIGINT or SIGTERM, how long to wait for open requests and background downloads before closing them (0 = close at once)")
	fs.IntVar(&c.SandboxMax, "sandbox-max", sandbox.DefaultMax, "sandboxes (POST /_sim/sandboxes: a simulator of its own per test, reached by its keys or /sbx/ID) the process holds at most; past it, creation answers 429 (0 = no sandboxes)")
	fs.DurationVar(&c.SandboxIdle, "sandbox-idle", sandbox.DefaultIdle, "real time after which a sandbox that served no request is removed with its data (0 = never)")
	fs.BoolVar(&c.Version, "version", false, "print the version and exit (also: dubsim version)")
	envHelp(fs, "version")
	return fs
}

func (c *config) parseLists(l listFlags) error {
	c.FetchHosts = splitList(l.fetchHosts)
	c.ControlHosts = splitList(l.controlHosts)
	for _, h := range c.ControlHosts {
		if strings.ContainsAny(h, "/:@ ") {
			return fmt.Errorf("control-hosts must list host names without scheme or port, such as dubsim,ci-runner; got %q", h)
		}
	}
	var err error
	if c.CORSOrigins, err = parseOrigins(l.corsOrigins); err != nil {
		return err
	}
	c.StudioRateLimit, err = parseRateLimit(l.rateLimit)
	return err
}

// check refuses values out of range and contradictory flags, and puts the
// blobs beside a data file.
func (c *config) check() error {
	if c.TimeScale < 0 || c.TimeScale > 1e6 {
		return fmt.Errorf("time-scale must be a number between 0 and 1000000; got %g", c.TimeScale)
	}
	if c.NoControl && c.ControlAddr != "" {
		return errors.New("control-addr serves the control API, which no-control turns off: give one of them")
	}
	if err := checkTLS(*c); err != nil {
		return err
	}
	if c.SandboxMax < 0 || c.SandboxMax > 100_000 {
		return fmt.Errorf("sandbox-max must be an integer between 0 (no sandboxes) and 100000; got %d", c.SandboxMax)
	}
	for i, v := range []int64{c.JournalBytes, c.JournalMemory} {
		if v < minJournalBytes {
			return fmt.Errorf("%s must be at least 64KiB (65536 bytes): a request's entry takes up to about 27 KiB; got %d", []string{"journal-bytes", "journal-memory"}[i], v)
		}
	}
	for i, v := range []int{c.MaxConnections, c.Quota.PresignsPerCompany, c.Quota.DownloadsPerCompany} {
		if v < 0 {
			return fmt.Errorf("%s must be a non-negative integer (0 = unlimited); got %d", []string{"max-connections", "presigns-per-company", "downloads-per-company"}[i], v)
		}
	}
	if c.CreateStatus != 200 && c.CreateStatus != 201 {
		return fmt.Errorf("create-status must be 200 or 201; got %d", c.CreateStatus)
	}
	for _, e := range []struct {
		name, v string
		ok      []string
	}{
		{"unknown-fields", c.UnknownFields, []string{"ignore", "reject"}},
		{"log-level", c.LogLevel, []string{"debug", "info", "warn", "error", "off"}},
		{"shared-create", c.SharedCreate, []string{"platform", "studio"}},
		{"date-header", c.DateHeader, []string{"simulated", "real"}},
		{"studio-enums", c.StudioEnums, []string{"strict", "lax"}},
		{"log-format", c.LogFormat, []string{"text", "json"}},
	} {
		if !slices.Contains(e.ok, e.v) {
			return fmt.Errorf("%s must be %s or %s; got %q", e.name, strings.Join(e.ok[:len(e.ok)-1], ", "), e.ok[len(e.ok)-1], e.v)
		}
	}
	if c.BlobDir == "" && c.Data != "" {
		c.BlobDir = c.Data + ".blobs"
	}
	return nil
}

// splitList is the non-empty entries of a comma-separated list, trimmed
// (nil: none).
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func parseRateLimit(s string) (sim.RateLimit, error) {
	switch s {
	case "off", "":
		return sim.RateLimit{}, nil
	case "documented":
		return sim.DocumentedRateLimit, nil
	}
	m, d, ok := strings.Cut(s, ",")
	pm, err1 := strconv.Atoi(strings.TrimSpace(m))
	pd, err2 := strconv.Atoi(strings.TrimSpace(d))
	if !ok || err1 != nil || err2 != nil || pm < 0 || pd < 0 {
		return sim.RateLimit{}, fmt.Errorf("studio-rate-limit must be off, documented or PER_MINUTE,PER_DAY such as 60,1000; got %q", s)
	}
	return sim.RateLimit{PerMinute: pm, PerDay: pd}, nil
}
