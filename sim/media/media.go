package media

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// Derived durations fall in this range.
const (
	minDerived = 30 * time.Second
	maxDerived = 15 * time.Minute
)

// Resolver implements the engine's Prober.
type Resolver struct {
	// Rules returns the fixture rules in use (first match wins).
	Rules func() []sim.MediaRule
	// AllowHosts lists hosts besides loopback whose media is fetched:
	// exact names, "*.example.com" suffixes, or "*" for every host.
	AllowHosts []string
	IDs        *sim.IDs
	// NoLoopback turns off fetching from this machine (loopback hosts are
	// then treated like any host not in AllowHosts).
	NoLoopback bool
	// Client fetches media; nil is a client whose connections go through
	// the resolver's own checked, pinned dialling (see dial).
	Client *http.Client
	// GenericErrors tells API users that media could not be read, not why
	// (fidelity HF2, HX3); the reason goes to Log.
	GenericErrors bool
	Log           *slog.Logger

	// lookup resolves host names (nil: the system's resolver); tests
	// replace it.
	lookup func(ctx context.Context, host string) ([]net.IPAddr, error)

	// stall bounds how long a download may go without receiving data
	// (0: downloadStall); tests shorten it.
	stall time.Duration

	// probes holds a slot per probe reading media: at most MaxProbes run
	// at once, each buffering up to maxBuffered (fidelity HP1).
	probesOnce sync.Once
	probes     chan struct{}
	// Process bounds the probes of every Resolver that shares it (the
	// simulators of a process) together; nil: only this one's MaxProbes.
	Process ProbeSlots
}

// ProbeSlots are places for probes reading media, shared by Resolvers.
type ProbeSlots chan struct{}

// MaxProcessProbes is how many probes read media at once in all the
// Resolvers of a process (Resolver.Process): two simulators' whole
// shares, 128 MiB of buffers at most.
const MaxProcessProbes = 2 * MaxProbes

// MaxProbes is how many probes of source videos read media at once (fidelity
// HP1); more wait for a slot within their request.
const MaxProbes = 4

// probeBuffers lends probes their maxBuffered bytes: forty probes in a row
// reuse a few instead of leaving 16 MiB of garbage each (373 MB resident with
// four probes at a time, 117 MB with one; test/hostile). Probe returns only a
// duration, so nothing keeps a buffer after its probe.
var probeBuffers = sync.Pool{New: func() any { b := make([]byte, maxBuffered); return &b }}

// Probe returns what is known of the video at rawURL.
func (r *Resolver) Probe(ctx context.Context, rawURL string) (sim.SourceInfo, error) {
	info := sim.SourceInfo{Origin: sim.OriginDerived}
	if rule, ok := r.Rule(rawURL); ok {
		if rule.Refuse != "" {
			return info, sim.Errorf(sim.CodeVideoInfo, "%s", rule.Refuse)
		}
		info.Fail = rule.Fail
		if rule.DurationSeconds > 0 {
			info.Duration = time.Duration(rule.DurationSeconds * float64(time.Second))
			info.Origin = sim.OriginRule
			return info, nil
		}
	}
	u, err := url.Parse(rawURL)
	if err == nil && r.mayFetch(u.Hostname()) {
		d, err := r.fetch(ctx, rawURL)
		if err != nil {
			// Whether the port is closed, what status or content type it
			// answered, stays in the log: the answer would make dubsim a
			// port scanner of the hosts it may reach.
			if r.Log != nil {
				r.Log.Warn("media probe failed", "url", rawURL, "err", err)
			}
			if r.GenericErrors {
				return info, sim.Errorf(sim.CodeVideoInfo, sim.MsgVideoUnreadable, rawURL, MsgCannotRead)
			}
			return info, sim.Errorf(sim.CodeVideoInfo, sim.MsgVideoUnreadable, rawURL, err)
		}
		info.Duration, info.Origin = d, sim.OriginMedia
		return info, nil
	}
	info.Duration = r.Derived(rawURL)
	return info, nil
}

// Rule returns the first fixture rule matching rawURL (rules are read on
// every call, so fixture changes apply at once).
func (r *Resolver) Rule(rawURL string) (sim.MediaRule, bool) {
	if r.Rules == nil {
		return sim.MediaRule{}, false
	}
	for _, rule := range r.Rules() {
		if rule.Matches(rawURL) {
			return rule, true
		}
	}
	return sim.MediaRule{}, false
}

// Derived returns the duration dubsim assigns to rawURL when neither a rule
// nor the media itself gives one: between 30 s and 15 min, a function of
// the URL and the ID seed.
func (r *Resolver) Derived(rawURL string) time.Duration {
	ids := r.IDs
	if ids == nil {
		ids = sim.NewIDs(0)
	}
	span := uint64((maxDerived - minDerived) / time.Millisecond)
	return minDerived + time.Duration(ids.Hash("duration", rawURL)%span)*time.Millisecond
}

// IsLoopback reports whether host names this machine: a loopback address,
// localhost or a name under .localhost (RFC 6761), with or without the
// root's final dot. An IPv6 address may be bracketed, as in a URL ("[::1]").
func IsLoopback(host string) bool {
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func (r *Resolver) mayFetch(host string) bool {
	if host == "" {
		return false
	}
	if IsLoopback(host) {
		return !r.NoLoopback
	}
	host = strings.ToLower(host)
	for _, a := range r.AllowHosts {
		a = strings.ToLower(strings.TrimSpace(a))
		switch {
		case a == "*" || a == host:
			return true
		case strings.HasPrefix(a, "*.") && strings.HasSuffix(host, a[1:]):
			return true
		}
	}
	return false
}

func (r *Resolver) client() *http.Client {
	c := r.Client
	if c == nil {
		// No proxy (a proxy would connect on its own terms): every
		// connection goes through dial.
		c = &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{
			DialContext:           r.dial,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          16,
			IdleConnTimeout:       30 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 15 * time.Second,
		}}
	}
	cc := *c
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		if !r.mayFetch(req.URL.Hostname()) {
			return fmt.Errorf("redirect to %s, a host dubsim may not contact (see --fetch-hosts)", req.URL.Host)
		}
		return nil
	}
	return &cc
}

func (r *Resolver) fetch(ctx context.Context, rawURL string) (time.Duration, error) {
	r.probesOnce.Do(func() { r.probes = make(chan struct{}, MaxProbes) })
	for _, slots := range []chan struct{}{r.probes, r.Process} {
		if slots == nil {
			continue
		}
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	buf := probeBuffers.Get().(*[]byte)
	defer probeBuffers.Put(buf)
	rr := &rangeReader{ctx: ctx, client: r.client(), url: rawURL, buf: *buf}
	if err := rr.open(); err != nil {
		return 0, err
	}
	_, d, _, err := Inspect(rr, rr.size)
	return d, err
}
