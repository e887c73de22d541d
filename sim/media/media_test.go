package media

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dubsim/dubsim/sim"
)

func rules(rs ...sim.MediaRule) func() []sim.MediaRule {
	return func() []sim.MediaRule { return rs }
}

func TestProbeRules(t *testing.T) {
	t.Parallel()
	const remote = "https://videos.example.com/talks/keynote.mp4"
	wav := wavBytes(t, smallWAVDuration)

	tests := []struct {
		name  string
		rules []sim.MediaRule
		url   string
		// memory serves the small WAV at this host (loopback, no network).
		memory string

		wantErr      string // non-empty: refusal with exactly this message
		wantDuration time.Duration
		wantOrigin   string // "derived": the URL's derived duration
		wantFail     string
	}{
		{
			name: "duration rule",
			rules: []sim.MediaRule{
				{Pattern: "https://videos.example.com/*", DurationSeconds: 90},
			},
			url:          remote,
			wantDuration: 90 * time.Second,
			wantOrigin:   sim.OriginRule,
		},
		{
			name: "fractional seconds",
			rules: []sim.MediaRule{
				{Pattern: "*keynote*", DurationSeconds: 0.25},
			},
			url:          remote,
			wantDuration: 250 * time.Millisecond,
			wantOrigin:   sim.OriginRule,
		},
		{
			name: "first match wins over a later duration",
			rules: []sim.MediaRule{
				{Pattern: "*/other/*", DurationSeconds: 1},
				{Pattern: "*/talks/*", DurationSeconds: 120},
				{Pattern: "*", DurationSeconds: 5},
			},
			url:          remote,
			wantDuration: 120 * time.Second,
			wantOrigin:   sim.OriginRule,
		},
		{
			name: "first match wins over a later refusal",
			rules: []sim.MediaRule{
				{Pattern: "*.mp4", DurationSeconds: 61},
				{Pattern: "*", Refuse: "Video is private"},
			},
			url:          remote,
			wantDuration: 61 * time.Second,
			wantOrigin:   sim.OriginRule,
		},
		{
			name: "refusal wins over a later duration",
			rules: []sim.MediaRule{
				{Pattern: "*keynote*", Refuse: "Video is private"},
				{Pattern: "*", DurationSeconds: 61},
			},
			url:     remote,
			wantErr: "Video is private",
		},
		{
			name: "refusal message is not a format string",
			rules: []sim.MediaRule{
				{Pattern: "*", Refuse: "100% private: %s %d"},
			},
			url:     remote,
			wantErr: "100% private: %s %d",
		},
		{
			name: "refusal of a loopback URL is not fetched",
			rules: []sim.MediaRule{
				{Pattern: "http://localhost/*", Refuse: "Unsupported codec"},
			},
			url:     "http://localhost/a.wav",
			wantErr: "Unsupported codec",
		},
		{
			name: "duration rule for a loopback URL is not fetched",
			rules: []sim.MediaRule{
				{Pattern: "http://localhost/*", DurationSeconds: 12},
			},
			url:          "http://localhost/a.wav",
			wantDuration: 12 * time.Second,
			wantOrigin:   sim.OriginRule,
		},
		{
			name: "fail rule with duration",
			rules: []sim.MediaRule{
				{Pattern: "*keynote*", DurationSeconds: 42.5, Fail: "Audio extraction failed"},
			},
			url:          remote,
			wantDuration: 42500 * time.Millisecond,
			wantOrigin:   sim.OriginRule,
			wantFail:     "Audio extraction failed",
		},
		{
			name: "fail rule without duration derives and keeps Fail",
			rules: []sim.MediaRule{
				{Pattern: "*keynote*", Fail: "Audio extraction failed"},
			},
			url:        remote,
			wantOrigin: sim.OriginDerived,
			wantFail:   "Audio extraction failed",
		},
		{
			name: "fail rule without duration is first match: later duration rule ignored",
			rules: []sim.MediaRule{
				{Pattern: "*keynote*", Fail: "Transcoding failed"},
				{Pattern: "*", DurationSeconds: 5},
			},
			url:        remote,
			wantOrigin: sim.OriginDerived,
			wantFail:   "Transcoding failed",
		},
		{
			name: "fail rule without duration fetches a loopback URL and keeps Fail",
			rules: []sim.MediaRule{
				{Pattern: "http://localhost/*", Fail: "Transcoding failed"},
			},
			url:          "http://localhost/a.wav",
			memory:       "localhost",
			wantDuration: smallWAVDuration,
			wantOrigin:   sim.OriginMedia,
			wantFail:     "Transcoding failed",
		},
		{
			name: "no rule matches",
			rules: []sim.MediaRule{
				{Pattern: "https://other.example.com/*", DurationSeconds: 10, Fail: "x"},
				{Pattern: "*.webm", Refuse: "no"},
			},
			url:        remote,
			wantOrigin: sim.OriginDerived,
		},
		{
			name:       "no rules",
			url:        remote,
			wantOrigin: sim.OriginDerived,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rt := &routeTransport{t: t}
			if tc.memory != "" {
				rt.mem = map[string]http.Handler{tc.memory: serveBytes(wav)}
			}
			r := &Resolver{Rules: rules(tc.rules...), IDs: sim.NewIDs(7), Client: &http.Client{Transport: rt}}
			info, err := r.Probe(context.Background(), tc.url)
			if tc.wantErr != "" {
				assert.Equal(t, tc.wantErr, requireVideoInfo(t, err))
				assert.Empty(t, rt.hosts(), "a refused URL must not be fetched")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantOrigin, info.Origin)
			assert.Equal(t, tc.wantFail, info.Fail)
			want := tc.wantDuration
			if tc.wantOrigin == sim.OriginDerived {
				want = (&Resolver{IDs: sim.NewIDs(7)}).Derived(tc.url)
			}
			assertDuration(t, want, info.Duration)
			if tc.wantOrigin != sim.OriginMedia {
				assert.Empty(t, rt.hosts(), "nothing may be fetched")
			}
		})
	}
}

// Rules are read on every Probe, so fixture changes apply at once.
func TestProbeRulesAreReadEachTime(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	r := &Resolver{IDs: sim.NewIDs(1), Rules: func() []sim.MediaRule {
		calls.Add(1)
		return []sim.MediaRule{{Pattern: "*", DurationSeconds: float64(calls.Load())}}
	}}
	for i := 1; i <= 3; i++ {
		info, err := r.Probe(context.Background(), "https://example.com/v.mp4")
		require.NoError(t, err)
		assert.Equal(t, time.Duration(i)*time.Second, info.Duration)
	}
}

func TestProbeDerived(t *testing.T) {
	t.Parallel()
	urls := make([]string, 500)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://cdn.example.com/videos/%d/clip.mp4", i)
	}
	probe := func(t *testing.T, seed uint64, url string) sim.SourceInfo {
		t.Helper()
		client, _ := noContactClient(t)
		r := &Resolver{IDs: sim.NewIDs(seed), Client: client}
		info, err := r.Probe(context.Background(), url)
		require.NoError(t, err)
		assert.Equal(t, sim.OriginDerived, info.Origin)
		assert.Empty(t, info.Fail)
		return info
	}

	t.Run("deterministic per URL and seed", func(t *testing.T) {
		t.Parallel()
		for _, u := range urls[:50] {
			a, b := probe(t, 42, u), probe(t, 42, u)
			assert.Equal(t, a.Duration, b.Duration, u)
		}
	})
	t.Run("within 30 s to 15 min and spread over the range", func(t *testing.T) {
		t.Parallel()
		seen := map[time.Duration]bool{}
		lo, hi := time.Duration(1<<62), time.Duration(0)
		for _, u := range urls {
			d := probe(t, 1, u).Duration
			assert.GreaterOrEqual(t, d, 30*time.Second, u)
			assert.LessOrEqual(t, d, 15*time.Minute, u)
			seen[d] = true
			lo, hi = min(lo, d), max(hi, d)
		}
		assert.Greater(t, len(seen), 450, "%d URLs gave only %d distinct durations", len(urls), len(seen))
		assert.Less(t, lo, 2*time.Minute, "shortest derived duration")
		assert.Greater(t, hi, 13*time.Minute, "longest derived duration")
	})
	t.Run("depends on the seed", func(t *testing.T) {
		t.Parallel()
		differ := 0
		for _, u := range urls[:200] {
			if probe(t, 1, u).Duration != probe(t, 2, u).Duration {
				differ++
			}
		}
		assert.Greater(t, differ, 190, "seeds 1 and 2 gave the same duration for %d of 200 URLs", 200-differ)
	})
	t.Run("nil IDs is usable and deterministic", func(t *testing.T) {
		t.Parallel()
		r := &Resolver{}
		a, err := r.Probe(context.Background(), urls[0])
		require.NoError(t, err)
		b, err := r.Probe(context.Background(), urls[0])
		require.NoError(t, err)
		assert.Equal(t, a, b)
		assert.GreaterOrEqual(t, a.Duration, 30*time.Second)
	})
}

func TestIsLoopback(t *testing.T) {
	t.Parallel()
	tests := []struct {
		host string
		want bool
	}{
		{"localhost", true},
		{"LocalHost", true},
		{"127.0.0.1", true},
		{"127.8.9.10", true},
		{"::1", true},
		{"[::1]", true},
		{"foo.localhost", true},
		{"a.b.LOCALHOST", true},
		{"localhost.", true},
		{"LOCALHOST.", true},
		{"foo.localhost.", true},
		{"127.0.0.1.", true},
		{"", false},
		{"example.com", false},
		{"10.0.0.1", false},
		{"192.168.1.10", false},
		{"169.254.169.254", false},
		{"[fe80::1]", false},
		{"notlocalhost", false},
		{"localhost.example.com", false},
		{"127.0.0.1.nip.io", false},
		{"evil-localhost", false},
		{"evil-localhost.", false},
		{"localhost..", false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q", tc.host), func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, IsLoopback(tc.host))
		})
	}
}

// URLs whose host is neither loopback nor allowed get a derived duration and
// never reach the transport.
func TestProbeNoContact(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		allow []string
		url   string
	}{
		{"remote host", nil, "https://example.com/video.mp4"},
		{"private address", nil, "http://10.0.0.1/video.mp4"},
		{"private address with port", nil, "http://10.0.0.1:8080/video.mp4"},
		{"link-local metadata address", nil, "http://169.254.169.254/latest/meta-data"},
		{"IPv6 non-loopback", nil, "http://[fe80::1]/video.mp4"},
		{"loopback only in userinfo", nil, "http://127.0.0.1@example.com/video.mp4"},
		{"localhost as a subdomain of a remote host", nil, "http://localhost.example.com/video.mp4"},
		{"loopback-looking name", nil, "http://127.0.0.1.nip.io/video.mp4"},
		{"no host", nil, "file:///etc/passwd"},
		{"not a URL", nil, "http://exa mple.com/%zz"},
		{"suffix rule vs similar name", []string{"*.example.com"}, "https://evil-example.com/video.mp4"},
		{"suffix rule vs name ending in the domain without a dot", []string{"*.example.com"}, "https://notexample.com/video.mp4"},
		{"suffix rule vs domain as a prefix", []string{"*.example.com"}, "https://cdn.example.com.evil.net/video.mp4"},
		{"exact rule vs subdomain", []string{"media.partner.org"}, "https://evil.media.partner.org/video.mp4"},
		{"exact rule vs parent", []string{"media.partner.org"}, "https://partner.org/video.mp4"},
		{"exact rule vs similar name", []string{"media.partner.org"}, "https://media-partner.org/video.mp4"},
		{"exact rule vs longer name", []string{"media.partner.org"}, "https://media.partner.org.evil.net/video.mp4"},
		{"empty allow entry", []string{""}, "https://example.com/video.mp4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			client, rt := noContactClient(t)
			r := &Resolver{AllowHosts: tc.allow, IDs: sim.NewIDs(3), Client: client}
			info, err := r.Probe(context.Background(), tc.url)
			require.NoError(t, err)
			assert.Equal(t, sim.OriginDerived, info.Origin)
			assert.Equal(t, r.Derived(tc.url), info.Duration)
			assert.Empty(t, rt.hosts())
		})
	}
}

// Loopback and allowed hosts are fetched; an in-memory transport answers so
// no network is used.
func TestProbeFetchesAllowedHosts(t *testing.T) {
	t.Parallel()
	wav := wavBytes(t, smallWAVDuration)
	tests := []struct {
		name  string
		allow []string
		url   string
		host  string // the URL host the transport must be asked for
	}{
		{"localhost", nil, "http://localhost/a.wav", "localhost"},
		{"localhost with port", nil, "http://localhost:8080/a.wav", "localhost:8080"},
		{"127.0.0.1", nil, "http://127.0.0.1/a.wav", "127.0.0.1"},
		{"[::1]", nil, "http://[::1]:9000/a.wav", "[::1]:9000"},
		{"foo.localhost", nil, "http://foo.localhost/a.wav", "foo.localhost"},
		{"exact", []string{"media.partner.org"}, "https://media.partner.org/a.wav", "media.partner.org"},
		{"exact, host in another case", []string{"media.partner.org"}, "https://Media.Partner.ORG/a.wav", "Media.Partner.ORG"},
		{"exact, among others", []string{"a.test", "media.partner.org", "b.test"}, "https://media.partner.org/a.wav", "media.partner.org"},
		{"suffix", []string{"*.example.com"}, "https://cdn.example.com/a.wav", "cdn.example.com"},
		{"suffix, deeper", []string{"*.example.com"}, "https://eu.cdn.example.com/a.wav", "eu.cdn.example.com"},
		{"suffix in another case", []string{"*.Example.COM"}, "https://cdn.example.com/a.wav", "cdn.example.com"},
		{"wildcard", []string{"*"}, "https://anything.test/a.wav", "anything.test"},
		{"wildcard, IP", []string{"*"}, "http://203.0.113.7/a.wav", "203.0.113.7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rt := &routeTransport{t: t, mem: map[string]http.Handler{tc.host: serveBytes(wav)}}
			r := &Resolver{AllowHosts: tc.allow, IDs: sim.NewIDs(3), Client: &http.Client{Transport: rt}}
			info, err := r.Probe(context.Background(), tc.url)
			require.NoError(t, err)
			assert.Equal(t, sim.OriginMedia, info.Origin)
			assertDuration(t, smallWAVDuration, info.Duration)
			assert.Contains(t, rt.hosts(), tc.host)
		})
	}
}
