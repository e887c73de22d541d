package server_test

// Black-box fuzzing of a whole instance over HTTP: a seeded generator sends
// malformed and random requests to every route of the platform interface
// and of the control API, and the run must see no 5xx, no panic, no error
// logged, and JSON error bodies everywhere.
//
//	DUBSIM_BLACKBOX_REQUESTS=50000 go test -run BlackBox -v ./sim/server
//	DUBSIM_BLACKBOX_SEED=<seed printed by a failing run> go test -run BlackBox ./sim/server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/internal/tooltest"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/audio"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	envBlackboxRequests = "DUBSIM_BLACKBOX_REQUESTS"
	envBlackboxSeed     = "DUBSIM_BLACKBOX_SEED"
	// seqHeader numbers the requests of a test, so the server side of the
	// guard can tell which answers came from the handler chain (and not from
	// net/http itself, which refuses malformed requests with plain text).
	seqHeader = "X-Dubsim-Test-Seq"
)

// testSeed returns the seed of a randomised test: env when set, else the
// clock; it is logged so that a failing run can be replayed.
func testSeed(t testing.TB, env string) uint64 {
	t.Helper()
	if s := os.Getenv(env); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "%s", env)
		t.Logf("seed %d (from %s)", n, env)
		return n
	}
	n := uint64(time.Now().UnixNano())
	t.Logf("seed %d (replay with %s=%d)", n, env, n)
	return n
}

// refWAVBytes is a short reference voice sample, a real WAV file.
func refWAVBytes(t testing.TB, pitch float64, d time.Duration) []byte {
	t.Helper()
	tr := audio.Track{SampleRate: 16000, Duration: d, Segments: []audio.Segment{
		{Start: 50 * time.Millisecond, End: d - 50*time.Millisecond, Text: "Hello, this is my voice.", Voice: audio.Voice{PitchHz: pitch, Seed: 7}},
	}}
	b, err := io.ReadAll(audio.NewWAVReader(tr))
	require.NoError(t, err)
	return b
}

// checkErrorBody returns what is wrong with an error answer, or "": a JSON
// object with a non-empty "error" and "message", except the documented
// cloning refusal (403 with only "error") and the studio interface, whose
// body is {"error": <text>} only.
func checkErrorBody(path string, status int, ctype string, body []byte, studio bool) string {
	if !strings.HasPrefix(ctype, "application/json") {
		return fmt.Sprintf("Content-Type %q, not JSON", ctype)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Sprintf("body is not a JSON object: %v", err)
	}
	if e, _ := m["error"].(string); e == "" {
		return `no non-empty string "error"`
	}
	if studio {
		if len(m) != 1 {
			return `studio error body with fields besides "error"`
		}
		return ""
	}
	if msg, _ := m["message"].(string); msg == "" {
		if status == http.StatusForbidden && len(m) == 1 && strings.Contains(path, "cloning") {
			return "" // the documented voice cloning refusal: {"error": "..."}
		}
		return `no non-empty string "message"`
	}
	return ""
}

// isStudio reports whether the server routes r to the studio interface:
// as an authenticated request (its whole body decides) and as one whose
// key does not authenticate (its first bytes decide). The two differ only
// for a create with a platform field far into its body; the fuzzer does
// not follow which keys authenticate, so either is accepted then.
func isStudio(r bbReq) (authenticated, refused bool) {
	u, err := url.ParseRequestURI(r.uri) // as the server parses it
	if err != nil {
		return false, false
	}
	decide := func(rules server.Rules) bool {
		hr := &http.Request{Method: r.method, URL: u, Header: r.header, Body: io.NopCloser(bytes.NewReader(r.body))}
		return server.Decide(hr, rules).Interface == server.Studio
	}
	return decide(server.Rules{Pages: true}),
		decide(server.Rules{Pages: true, Authenticated: func(*http.Request) bool { return false }})
}

// ---------------------------------------------------------------------------
// The generator.

type bbProject struct {
	id, key, target, url string
	files                []string // output paths seen in Get Project answers
}

type bbReq struct {
	route   string
	method  string
	uri     string // request-URI (path and query) sent verbatim, junk included
	header  http.Header
	body    []byte
	chunked bool
	readMax int64
	after   func(status int, body []byte)
	// page: an HTML page of the web application (a 404 is HTML too)
	page bool
}

type fuzzer struct {
	t      *testing.T
	rnd    *rand.Rand
	in     *inst
	g      *guard
	client *http.Client
	seq    int

	fx        *sim.Fixtures
	srcLangs  []string
	tgtLangs  []string
	voiceKeys []string
	restore   []byte // POST /_sim/fixtures body restoring the embedded fixtures

	keys         []string // API keys of accounts (fixture and created)
	projects     []*bbProject
	faultIDs     []string
	outcomeIDs   []string
	idemKeys     []string
	unusedKey    string // the only api_key fault rules get: never sent
	wav          []byte
	fullResets   int
	maxFullReset int

	counts   map[int]int
	byRoute  map[string]map[int]int
	problems int
	kinds    map[string]int
	took     map[string]time.Duration
}

const examplesPerKind = 3

func (f *fuzzer) n(k int) int           { return f.rnd.IntN(k) }
func (f *fuzzer) chance(p float64) bool { return f.rnd.Float64() < p }
func pick[T any](f *fuzzer, s []T) T    { return s[f.rnd.IntN(len(s))] }

// problem fails the test; the first examples of each kind are logged.
func (f *fuzzer) problem(kind, format string, args ...any) {
	f.t.Helper()
	f.problems++
	f.kinds[kind]++
	if f.kinds[kind] <= examplesPerKind {
		f.t.Errorf("[%s] "+format, append([]any{kind}, args...)...)
	}
}

// ---------------------------------------------------------------------------
// Path parts.

// ---------------------------------------------------------------------------
// Routes: each builds one request of its endpoint, mostly plausible.

// sendable reports whether s can be sent in a header value.
func sendable(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f })
}

// enforceUnusedKey makes sure a fault rule body can only match requests of
// the unused key: any JSON object posted under a faults path gets it.
func (f *fuzzer) enforceUnusedKey(r *bbReq) {
	p, err := url.PathUnescape(r.uri)
	if err != nil {
		p = r.uri
	}
	if !strings.Contains(strings.ToLower(p), "fault") {
		return
	}
	var m map[string]any
	if json.Unmarshal(r.body, &m) != nil || m == nil {
		return // not an object: refused by the rule decoder
	}
	if k, present := m["api_key"]; present {
		if _, isString := k.(string); !isString {
			return // a wrong type: refused
		}
	}
	m["api_key"] = f.unusedKey
	r.body = f.marshal(m)
}

func (f *fuzzer) describe(r *bbReq) string {
	body := r.body
	if len(body) > 600 {
		body = append(slices.Clone(body[:600]), fmt.Sprintf("... (%d bytes)", len(r.body))...)
	}
	var hs []string
	for k, v := range r.header {
		for _, x := range v {
			if len(x) > 120 {
				x = x[:120] + "..."
			}
			hs = append(hs, k+": "+x)
		}
	}
	sort.Strings(hs)
	uri := r.uri
	if len(uri) > 300 {
		uri = uri[:300] + "..."
	}
	return fmt.Sprintf("%s %s chunked=%v\n  headers: %s\n  body: %q", r.method, uri, r.chunked, strings.Join(hs, " | "), body)
}

func (f *fuzzer) send(r *bbReq) {
	f.t.Helper()
	f.seq++
	seq := strconv.Itoa(f.seq)
	f.enforceUnusedKey(r)
	if auth := r.header.Get("Authorization"); strings.Contains(auth, f.unusedKey) {
		r.header.Del("Authorization")
	}
	var body io.Reader = bytes.NewReader(r.body)
	if r.chunked {
		body = io.MultiReader(bytes.NewReader(r.body)) // hides the length
	}
	req, err := http.NewRequest(r.method, f.in.url+"/", body)
	require.NoError(f.t, err, "%s", f.describe(r))
	req.URL.Opaque = r.uri // sent verbatim
	req.URL.RawQuery = ""
	if !r.chunked && len(r.body) == 0 {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for k, v := range r.header {
		if len(v) > 0 && sendable(v[0]) {
			req.Header[k] = v
		}
	}
	req.Header.Set(seqHeader, seq)
	began := time.Now()
	defer func() { f.took[r.route] += time.Since(began) }()
	resp, err := f.client.Do(req)
	handled := f.g.handled(seq)
	if err != nil {
		// The client could not send it or lost the answer. When the server
		// answered (a large body refused before it was read), judge that.
		if !handled {
			if strings.Contains(err.Error(), "net/http: invalid") || strings.Contains(err.Error(), "net/http: can't write") {
				f.count(r.route, -1)
				return // refused by the client library itself
			}
			if _, perr := url.ParseRequestURI(r.uri); perr != nil {
				// net/http refuses a malformed request-URI before any
				// handler, and may reset the connection before the body
				// is sent.
				f.count(r.route, -1)
				return
			}
			f.problem("transport error", "request not answered by the handler: %v\n%s", err, f.describe(r))
			f.count(r.route, -2)
			return
		}
		// The handler answered but the client lost it (a large body
		// refused before it was read resets the connection): the guard
		// still sees a 5xx, if it was one.
		f.count(r.route, -2)
		return
	}
	defer resp.Body.Close()
	limit := r.readMax
	if limit == 0 {
		limit = 256 << 20
	}
	raw, rerr := io.ReadAll(io.LimitReader(resp.Body, limit))
	truncatedRead := int64(len(raw)) == limit
	f.count(r.route, resp.StatusCode)
	if resp.StatusCode >= 500 {
		f.problem(fmt.Sprintf("%d on %s", resp.StatusCode, r.route), "status %d: %s\n%s", resp.StatusCode, raw, f.describe(r))
		return
	}
	if !handled {
		// net/http refused the request itself (400, 414, 431 ...), in
		// plain text, and may reset the connection before reading the body.
		return
	}
	if rerr != nil && !truncatedRead {
		f.problem("read error", "reading the answer (status %d): %v\n%s", resp.StatusCode, rerr, f.describe(r))
		return
	}
	if r.page && resp.StatusCode == http.StatusNotFound && resp.Header.Get("Content-Type") == "text/html; charset=utf-8" {
		return // the projectUrl page of an unknown project: an HTML page, not an API envelope
	}
	if resp.StatusCode >= 400 && r.method != "HEAD" {
		studio, studioRefused := isStudio(*r)
		why := checkErrorBody(r.uri, resp.StatusCode, resp.Header.Get("Content-Type"), raw, studio)
		if why != "" && studio != studioRefused {
			why = checkErrorBody(r.uri, resp.StatusCode, resp.Header.Get("Content-Type"), raw, studioRefused)
		}
		if why != "" {
			f.problem(fmt.Sprintf("%d %s", resp.StatusCode, why), "error answer %d: %s: %q\n%s", resp.StatusCode, why, raw, f.describe(r))
		}
	}
	if r.after != nil {
		r.after(resp.StatusCode, raw)
	}
}

func (f *fuzzer) count(route string, status int) {
	f.counts[status]++
	if f.byRoute[route] == nil {
		f.byRoute[route] = map[int]int{}
	}
	f.byRoute[route][status]++
}

// fixtureRestoreBody is a POST /_sim/fixtures body that restores the
// startup fixtures (catalogue, media rules, fixture accounts).
func fixtureRestoreBody(t testing.TB) []byte {
	t.Helper()
	read := func(name, key string) json.RawMessage {
		b, err := fs.ReadFile(fixtures.FS, name)
		require.NoError(t, err)
		if key == "" {
			return b
		}
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b, &m))
		return m[key]
	}
	// Over the startup set: a load lays its entries over the set in use,
	// which keeps what earlier random loads added.
	b, err := json.Marshal(map[string]json.RawMessage{
		"accounts": read(sim.FixtureAccounts, "accounts"), "options": read(sim.FixtureOptions, ""),
		"voices": read(sim.FixtureVoices, "voices"), "media_rules": read(sim.FixtureMedia, "rules"),
		"from_startup": json.RawMessage("true"),
	})
	require.NoError(t, err)
	return b
}

// blackboxRequests is DUBSIM_BLACKBOX_REQUESTS, else 5000 in the long run
// (tooltest.Long) and 2000 by default: each route's share of the weights
// is at least 1%, so 2000 requests still send each route about twenty of
// its random variants, with a new seed on every run.
func blackboxRequests(t *testing.T) int {
	n := 2000
	if tooltest.Long() {
		n = 5000
	}
	if s := os.Getenv(envBlackboxRequests); s != "" {
		v, err := strconv.Atoi(s)
		require.NoError(t, err, envBlackboxRequests)
		n = v
	}
	if testing.Short() && os.Getenv(envBlackboxRequests) == "" {
		n = 1000
	}
	return n
}

// TestBlackBoxRandomRequests sends thousands of seeded random, malformed and
// plausible requests to every endpoint over HTTP.
func TestBlackBoxRandomRequests(t *testing.T) {
	t.Parallel()
	seed := testSeed(t, envBlackboxSeed)
	total := blackboxRequests(t)
	in, g, logs := guarded(t, func(c *app.Config) { c.Seed = seed })

	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	f := &fuzzer{
		t: t, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), in: in, g: g,
		client: &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		fx:     fx, srcLangs: fx.Catalog.SourceLangs, tgtLangs: fx.Catalog.TargetLangs,
		restore: fixtureRestoreBody(t), keys: slices.Clone(fixtureKeys),
		unusedKey: fmt.Sprintf("blackbox-unused-%016x", seed), wav: refWAVBytes(t, 140, 300*time.Millisecond),
		maxFullReset: max(1, total/2000), counts: map[int]int{}, byRoute: map[string]map[int]int{}, kinds: map[string]int{}, took: map[string]time.Duration{},
	}
	t.Cleanup(f.client.CloseIdleConnections)
	for _, vs := range fx.Catalog.Voices {
		for _, v := range vs {
			f.voiceKeys = append(f.voiceKeys, v.VoiceKey)
		}
	}
	slices.Sort(f.voiceKeys) // map order must not change the sequence of a seed

	routes := f.routes()
	weights := 0
	for _, r := range routes {
		weights += r.weight
	}
	began := time.Now()
	for i := 0; i < total; i++ {
		if i > 0 && i%500 == 0 {
			// Put the embedded catalogue and media rules back now and then,
			// so that a random fixture load does not refuse everything for
			// the rest of the run.
			f.send(f.control("fixtures (restore)", "POST", "/_sim/fixtures", f.restore))
		}
		w := f.n(weights)
		var route bbRoute
		for _, route = range routes {
			if w < route.weight {
				break
			}
			w -= route.weight
		}
		r := route.build(f)
		f.perturb(r)
		f.send(r)
	}
	elapsed := time.Since(began)

	// The instance still works: the embedded catalogue loaded again is what
	// Get Options answers, exactly.
	f.send(f.control("fixtures (restore)", "POST", "/_sim/fixtures", f.restore))
	st, opts := in.call("GET", "/api/v1/options", "dubsim-pro", "")
	require.Equal(t, http.StatusOK, st, "%v", opts)
	assert.Equal(t, toAny(fx.Catalog.SourceLangs), opts["source_langs"])
	assert.Equal(t, toAny(fx.Catalog.TargetLangs), opts["target_langs"])
	assert.Len(t, opts, 2)
	st, m := in.call("POST", "/_sim/clock/advance", "", `{"seconds":1}`)
	assert.Equal(t, http.StatusOK, st, "%v", m)

	// No fault rule could fire: every one has the unused key and no hits.
	st, rules := in.call("GET", "/_sim/faults", "", "")
	require.Equal(t, http.StatusOK, st)
	for _, r := range rules["rules"].([]any) {
		rule := r.(map[string]any)
		assert.Equal(t, f.unusedKey, rule["api_key"], "%v", rule)
		assert.EqualValues(t, 0, rule["hits"], "%v", rule)
	}

	assert.Zero(t, g.panicCount(), "panics")
	assert.Empty(t, g.fivexx(), "5xx answers seen by the server (also to the media prober's own requests)")
	assert.Empty(t, logs.records(), "records at level error or above")
	assert.Zero(t, f.problems, "problems by kind (%d examples of each logged above): %v", examplesPerKind, f.kinds)

	t.Logf("%d requests in %v (%.0f/s), seed %d, %d full resets, %d projects tracked, %d accounts",
		f.seq, elapsed.Round(time.Millisecond), float64(f.seq)/elapsed.Seconds(), seed, f.fullResets, len(f.projects), len(f.keys))
	t.Logf("answers by status: %s", formatCounts(f.counts))
	names := make([]string, 0, len(f.byRoute))
	for name := range f.byRoute {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Logf("  %-22s %7v  %s", name, f.took[name].Round(time.Millisecond), formatCounts(f.byRoute[name]))
	}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// formatCounts prints {status: count}; -1 is a request refused before any
// handler (by the client library, or by net/http with a reset connection),
// -2 an answer the client lost.
func formatCounts(c map[int]int) string {
	keys := make([]int, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d:%d", k, c[k])
	}
	return strings.Join(parts, " ")
}

// TestBlackBoxFarFutureClock drives the clock as far as the control API
// lets it, one legal advance at a time: the instance must keep answering
// without 5xx (refusing an advance with a 4xx is fine), and the sweep must
// still terminate once due times no longer fit in int64 nanoseconds (after
// 2262).
func TestBlackBoxFarFutureClock(t *testing.T) {
	t.Parallel()
	const maxAdvance = `{"seconds":3153600000}` // 100 years, the largest accepted
	client := &http.Client{Timeout: 10 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	post := func(in *inst, path, key, body string) (int, string) {
		req, err := http.NewRequest("POST", in.url+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const create = `{"source_lang":"en","target_lang":"de-DE","source_video_url":"https://media.dubsim.test/short.mp4"}`

	t.Run("past year 9999", func(t *testing.T) {
		in, g, logs := guarded(t, nil)
		for i := 0; i < 90; i++ {
			st, body := post(in, "/_sim/clock/advance", "", maxAdvance)
			require.Less(t, st, 500, "advance #%d: %s", i+1, body)
			if st != http.StatusOK {
				break // refused: the clock stays where it can be served
			}
		}
		st, body := post(in, "/api/v1/projects", "dubsim-enterprise", create)
		assert.Less(t, st, 500, "create after the advances: %s", body)
		st, clock := in.call("GET", "/_sim/clock", "", "")
		assert.Equal(t, http.StatusOK, st, "%v", clock)
		assert.Empty(t, g.fivexx())
		assert.Empty(t, logs.records())
	})

	t.Run("sweep after 2262", func(t *testing.T) {
		in, _, _ := guarded(t, nil)
		for i := 0; i < 3; i++ { // 2026 + 300 years: UnixNano no longer fits
			st, body := post(in, "/_sim/clock/advance", "", maxAdvance)
			require.Equal(t, http.StatusOK, st, body)
		}
		// More projects in progress, not yet due, than one sweep batch.
		for i := 0; i < 520; i++ {
			st, body := post(in, "/api/v1/projects", "dubsim-enterprise", create)
			require.Equal(t, http.StatusOK, st, body)
		}
		st, body := post(in, "/_sim/clock/advance", "", `{"seconds":1}`)
		require.Equal(t, http.StatusOK, st, "a one-second advance must answer (within 10 s): %s", body)
		st, body = post(in, "/_sim/clock/advance", "", `{"seconds":3600}`)
		require.Equal(t, http.StatusOK, st, body)
		_, state := in.call("GET", "/_sim/state?api_key=dubsim-enterprise&limit=1", "", "")
		assert.Empty(t, state["pending_transitions"], "every project completed")
	})
}
