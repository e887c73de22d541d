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
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"os"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
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

// errorLog is a slog.Handler that keeps every record at level Error or
// above: a healthy instance logs none, whatever the client sends.
type errorLog struct {
	mu    *sync.Mutex
	recs  *[]string
	attrs []slog.Attr
}

func newErrorLog() *errorLog { return &errorLog{mu: &sync.Mutex{}, recs: &[]string{}} }

func (h *errorLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }

func (h *errorLog) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q", r.Level, r.Message)
	for _, a := range h.attrs {
		fmt.Fprintf(&b, " %s", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s", a)
		return true
	})
	h.mu.Lock()
	*h.recs = append(*h.recs, b.String())
	h.mu.Unlock()
	return nil
}

func (h *errorLog) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(slices.Clone(h.attrs), as...)
	return &c
}

func (h *errorLog) WithGroup(string) slog.Handler { c := *h; return &c }

func (h *errorLog) records() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(*h.recs)
}

// guard wraps the instance's handler: it turns a panic that escapes the
// handler chain into a test failure (and a 500 rather than a dropped
// connection), fails on any 5xx it sees, also for requests the test did not
// send itself (the media prober fetching a loopback URL of the instance),
// and records the status of each numbered request.
type guard struct {
	t         testing.TB
	mu        sync.Mutex
	seen      map[string]bool
	panics    int
	server5xx []string
}

func newGuard(t testing.TB) *guard { return &guard{t: t, seen: map[string]bool{}} }

// fivexx returns the 5xx answers the handler chain gave.
func (g *guard) fivexx() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.server5xx)
}

// panicCount returns how many panics escaped the handler chain.
func (g *guard) panicCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.panics
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (g *guard) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seq := r.Header.Get(seqHeader)
		if seq != "" {
			g.mu.Lock()
			g.seen[seq] = true
			g.mu.Unlock()
		}
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v != nil {
				g.mu.Lock()
				g.panics++
				g.mu.Unlock()
				if v == http.ErrAbortHandler {
					g.t.Errorf("connection aborted by the handler (a drop or truncate fault fired?) on %s %s", r.Method, r.URL.RequestURI())
				} else {
					g.t.Errorf("PANIC escaped the handler chain on %s %s (seq %s): %v\n%s", r.Method, r.URL.RequestURI(), seq, v, debug.Stack())
				}
				if sw.code == 0 {
					sw.WriteHeader(http.StatusInternalServerError)
				}
			}
			code := sw.code
			if code == 0 {
				code = http.StatusOK
			}
			g.mu.Lock()
			if code >= 500 {
				g.server5xx = append(g.server5xx, fmt.Sprintf("%d on %s %s (seq %q)", code, r.Method, r.URL.RequestURI(), seq))
			}
			g.mu.Unlock()
		}()
		h.ServeHTTP(sw, r)
	})
}

// handled reports whether a numbered request reached the handler chain.
func (g *guard) handled(seq string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen[seq]
}

// guarded starts an instance through the harness, with an error-level log
// recorder, and serves it through a guard on its own httptest server.
func guarded(t *testing.T, mod func(*app.Config)) (*inst, *guard, *errorLog) {
	t.Helper()
	logs := newErrorLog()
	in := start(t, func(c *app.Config) {
		c.Log = slog.New(logs)
		if mod != nil {
			mod(c)
		}
	})
	g := newGuard(t)
	hs := httptest.NewServer(g.wrap(in.srv.Handler))
	t.Cleanup(hs.Close)
	return &inst{t: t, srv: in.srv, url: hs.URL}, g, logs
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

var fixtureKeys = []string{"dubsim-free", "dubsim-subscription", "dubsim-pro", "dubsim-enterprise", "dubsim-broke"}

// fieldNames are the JSON field names of every body of the API, and a few
// others: random objects use them so that wrong types reach the decoders.
var fieldNames = []string{
	"name", "source_lang", "target_lang", "source_video_url", "mixing_mode", "use_emotional_transfer",
	"use_soundalike_voices", "source_script_content", "source_script", "use_fixed_timings", "glossary_content",
	"tts_volume", "target_script", "target_speakers", "start_ms", "end_ms", "text", "speaker_id", "voice_key",
	"style", "seconds", "time_scale", "plan", "balance_minutes", "retranslation_enabled", "cloning_enabled",
	"outcome", "error_message", "now", "count", "source_url_pattern", "accounts", "options", "voices",
	"media_rules", "pattern", "duration_seconds", "refuse", "fail", "id", "method", "path", "probability",
	"ttl_seconds", "type", "latency_ms", "status", "error", "message", "bytes", "headers",
	"body_contains", "at_least", "at_most", "source_langs", "target_langs", "rules", "__proto__", "", "X",
}

var weirdStrings = []string{
	"", " ", "\t\n", "null", "true", "0", "-1", "NaN", "Infinity", "../../etc/passwd", "%00", "\x00", "\u202e\u0644",
	"'; DROP TABLE projects; --", "<script>alert(1)</script>", "${jndi:ldap://x}", "{{7*7}}", "☃", "😀😀😀",
	"e\u0301", "\ufeff", "\ufffd", "\u2028", "a\tb", "line1\nline2", "\\", `"`, "*", "**", "?", "[", "%",
	"en", "fr-FR", "EN", "en-us", "de_DE", "zz-ZZ", "voiceover_only", "normal", "feminine", "masculine",
	"soundalike", "emotional_transfer", "pro", "enterprise", "none", "gold", "error", "ready", "in_progress",
	"https://example.com/video.mp4", "https://media.dubsim.test/short.mp4", "ftp://x/y", "http://", "//x",
}

var numbers = []string{
	"0", "-0", "1", "-1", "0.5", "-0.5", "1e3", "1E-3", "2147483647", "2147483648", "-2147483649",
	"9223372036854775807", "9223372036854775808", "-9223372036854775809", "18446744073709551616",
	"1e308", "-1e308", "1e309", "1e-400", "123456789012345678901234567890", "3153600000", "3153600001",
	"1000000", "1000001", "600000", "86400", "1e12",
}

func (f *fuzzer) str() string {
	switch f.n(10) {
	case 0, 1, 2:
		return pick(f, weirdStrings)
	case 3:
		return pick(f, f.tgtLangs)
	case 4:
		return pick(f, f.voiceKeys)
	case 5:
		return strings.Repeat(pick(f, []string{"a", "é", "☃", "\\u0000", " "}), f.n(3000))
	case 6:
		if f.chance(0.05) {
			return strings.Repeat("x", 70_000+f.n(10_000))
		}
		return f.words(1 + f.n(12))
	default:
		b := make([]rune, f.n(40))
		for i := range b {
			switch f.n(4) {
			case 0:
				b[i] = rune(f.n(0x80))
			case 1:
				b[i] = rune(0x80 + f.n(0x800))
			case 2:
				b[i] = rune(0x1F300 + f.n(0x300))
			default:
				b[i] = rune('a' + f.n(26))
			}
		}
		return string(b)
	}
}

var vocabulary = strings.Fields("hello world the quick brown fox jumps over lazy dog voice test bonjour monde hallo welt " +
	"hola mundo ciao tutti, again. yes! no? well... 42 3.14 café naïve Über straße 東京 こんにちは Привет мир")

func (f *fuzzer) words(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = pick(f, vocabulary)
	}
	return strings.Join(w, " ")
}

func (f *fuzzer) scalar() any {
	switch f.n(9) {
	case 0:
		return nil
	case 1:
		return f.chance(0.5)
	case 2, 3:
		return json.Number(pick(f, numbers))
	case 4:
		return f.rnd.NormFloat64() * 1e4
	default:
		return f.str()
	}
}

// value is a random JSON value of at most the given depth.
func (f *fuzzer) value(depth int) any {
	if depth <= 0 {
		return f.scalar()
	}
	switch f.n(6) {
	case 0, 1:
		m := map[string]any{}
		for i := f.n(6); i > 0; i-- {
			k := pick(f, fieldNames)
			if f.chance(0.2) {
				k = f.str()
			}
			m[k] = f.value(depth - 1)
		}
		return m
	case 2:
		a := make([]any, f.n(6))
		for i := range a {
			a[i] = f.value(depth - 1)
		}
		return a
	default:
		return f.scalar()
	}
}

func (f *fuzzer) marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(f.chance(0.5))
	if err := enc.Encode(v); err != nil {
		// An invalid json.Number: send it raw, that is junk too.
		return []byte(fmt.Sprint(v))
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// junkBody is a body of no particular shape: random JSON, broken JSON,
// deep nesting, binary, huge.
func (f *fuzzer) junkBody() []byte {
	switch f.n(14) {
	case 0:
		return nil
	case 1:
		return []byte(pick(f, []string{"{}", "[]", "null", "0", `""`, "true", "{", "}", "[", `{"a":}`, `{"a" 1}`,
			`{"a":1,}`, `{,}`, `{"a":1}{"b":2}`, `{"a":1} x`, "\xef\xbb\xbf{}", "{}\x00", `{"\ud800":1}`, `{"a":"\ud800"}`,
			`{"a":"\xff\xfe"}`, `{"a":1e400}`, `{"a":-}`, `{"a":01}`, `{"a":.5}`, `{"a":+1}`, `{'a':1}`, `{a:1}`,
			`{"a":NaN}`, `{"a":Infinity}`, `/* c */ {}`, "\n\n\t ", `{"a":"b"`, `[{"a":1}`, `{"a":[1,2}`}))
	case 2, 3, 4:
		return f.marshal(f.value(1 + f.n(4)))
	case 5:
		b := f.marshal(f.value(3))
		if len(b) > 1 {
			b = b[:f.n(len(b))]
		}
		return b
	case 6:
		b := f.marshal(f.value(3))
		i := f.n(len(b) + 1)
		return slices.Concat(b[:i], []byte{byte(f.n(256))}, b[i:])
	case 7:
		d := pick(f, []int{64, 500, 5000, 10_001, 100_000})
		if f.chance(0.5) {
			return []byte(strings.Repeat("[", d) + strings.Repeat("]", d))
		}
		return []byte(strings.Repeat(`{"a":`, d) + "1" + strings.Repeat("}", d))
	case 8:
		b := make([]byte, f.n(2048))
		for i := range b {
			b[i] = byte(f.rnd.Uint32())
		}
		return b
	case 9:
		if f.chance(0.02) { // over the 10 MB limit of JSON bodies
			return []byte(`{"name":"` + strings.Repeat("x", 10<<20+f.n(1000)) + `"}`)
		}
		return []byte(`{"name":"` + strings.Repeat("x", 70_000) + `"}`)
	case 10:
		return f.marshal([]any{f.value(2), f.value(2)})
	case 11:
		b := f.marshal(f.value(2))
		return append(b, pick(f, []string{"}", "]", " {}", "\n{}", ",", " garbage"})...)
	default:
		return f.marshal(map[string]any{pick(f, fieldNames): f.value(2), pick(f, fieldNames): f.value(1)})
	}
}

// mutate perturbs a structured body: a value replaced by a random one, a key
// dropped or added, at every level, with probability p per node.
func (f *fuzzer) mutate(v any, p float64) any {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // map order must not change the sequence of a seed
		for _, k := range keys {
			switch {
			case f.chance(p / 2):
				delete(x, k)
			case f.chance(p):
				x[k] = f.value(2)
			default:
				x[k] = f.mutate(x[k], p)
			}
		}
		if f.chance(p) {
			x[pick(f, fieldNames)] = f.value(1)
		}
		return x
	case []any:
		for i := range x {
			if f.chance(p) {
				x[i] = f.value(2)
			} else {
				x[i] = f.mutate(x[i], p)
			}
		}
		if len(x) > 1 && f.chance(p) {
			i, j := f.n(len(x)), f.n(len(x))
			x[i], x[j] = x[j], x[i]
		}
		return x
	}
	if f.chance(p / 3) {
		return f.scalar()
	}
	return v
}

// maybeSet sets each of the key, value pairs kv in m with probability p, in
// order (not a map's: the sequence of a seed must not vary).
func (f *fuzzer) maybeSet(m map[string]any, p float64, kv ...any) {
	for i := 0; i+1 < len(kv); i += 2 {
		if f.chance(p) {
			m[kv[i].(string)] = kv[i+1]
		}
	}
}

// jsonBody encodes a structured body, mutated now and then.
func (f *fuzzer) jsonBody(v any) []byte {
	if f.chance(0.3) {
		v = f.mutate(v, 0.15)
	}
	return f.marshal(v)
}

// ---------------------------------------------------------------------------
// Path parts.

var junkIDs = []string{
	"0", "-1", "1", "123456789", "999999999", "18446744073709551616", strings.Repeat("9", 300), "..", "%2e%2e",
	"%2F", "..%2F..%2Fetc%2Fpasswd", "%00", "%ff%fe", "%E2%98%83", "☃", "null", "undefined", "%7Bproject_id%7D",
	"{id}", "a;b", "a,b", "~", "*", "%20", "+", "%2B", "a%2Fb", "%25", "%252e", strings.Repeat("a", 5000),
	"%zz", "%", "%%", "%u0041", ".", "flt_1", "out_1", "802323387", "0x1F", "1e3", "%C0%AE%C0%AE",
}

var junkPaths = []string{
	"/", "//", "/api", "/api/v1", "/api/v1/", "/api/v2/projects", "/API/V1/OPTIONS", "/api/v1/options/",
	"/api/v1//options", "/api/v1/./options", "/api/v1/projects/../balance", "/api/v1/projects/%2e%2e/balance",
	"/api/v1/projects/..%2f..%2fbalance", "/files/projects/../../../../etc/passwd",
	"/files/projects/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/files/..%2f..%2f..%2fetc%2fpasswd",
	"/files/projects/1/1/..%5c..%5cwin.ini", "/_sim", "/_sim/", "/_sim/../api/v1/options", "/_sim/%2e%2e/api/v1/balance",
	"/_sim/clock/", "/_sim/clock/advance/x", "/_sim/projects//outcome", "/_sim/outcomes/", "/_sim/faults/a/b",
	"/_sim/requests/", "/_sim/requests/verify/", "/%00", "/%ff", "/%E2%98%83", "/☃", "/api/v1/projects/%00/translations",
	"/favicon.ico", "/.env", "/.git/config", "/api/v1/projects?project_id=1", "/api/v1/cloning",
	"/api/v1/cloning/synthesize/", "/files", "/files/projects", "/files/projects/1", "/files/projects/1/1",
	"/files/projects/1/1/x/y", "/api/v1/projects/1/translations/1", "/api/v1/projects/1/2/3/4/5/6/7/8",
	"/%2e%2e/%2e%2e/etc/passwd", "/api/v1/balance%00", "/api/v1/balance;jsessionid=1", "/api/v1/balance/..",
	"/_sim/%63lock", "/api/v1/%6Fptions", "/api/%zz", "/api/v1/projects/%", "/" + strings.Repeat("a/", 2000),
}

func (f *fuzzer) junkID() string {
	if f.chance(0.2) {
		var b strings.Builder
		for i := f.n(12); i >= 0; i-- {
			switch f.n(5) {
			case 0:
				fmt.Fprintf(&b, "%%%02X", f.n(256))
			case 1:
				b.WriteString(pick(f, []string{"%", "%g1", "%2", "%%", "%0", "%C0"}))
			case 2:
				b.WriteString(pick(f, []string{"..", ".", "/", "%2f", "%5c", ";", "?", "&", "=", "#"}))
			default:
				b.WriteByte(byte('a' + f.n(26)))
			}
		}
		return b.String()
	}
	return pick(f, junkIDs)
}

// project picks a tracked project, or nil.
func (f *fuzzer) project() *bbProject {
	if len(f.projects) == 0 {
		return nil
	}
	if f.chance(0.5) { // the newest ones are the most likely to exist
		return f.projects[len(f.projects)-1-f.n(min(len(f.projects), 10))]
	}
	return pick(f, f.projects)
}

// projectRef returns a project id for a path and the key to use with it:
// mostly a real project with its owner, sometimes another key or a junk id.
func (f *fuzzer) projectRef() (string, string, *bbProject) {
	p := f.project()
	if p == nil || f.chance(0.3) {
		return f.junkID(), f.key(), nil
	}
	if f.chance(0.1) {
		return p.id, f.key(), p
	}
	return p.id, p.key, p
}

func (f *fuzzer) key() string {
	switch {
	case f.chance(0.45):
		return "dubsim-enterprise"
	case f.chance(0.9):
		return pick(f, f.keys)
	default:
		return pick(f, []string{"nobody", "dubsim-ENTERPRISE", "dubsim-enterprise ", "dsk_", "x", strings.Repeat("k", 300)})
	}
}

func (f *fuzzer) headerJunk() string {
	n := f.n(200)
	if f.chance(0.01) {
		n = 20_000
	}
	b := make([]byte, n)
	for i := range b {
		switch f.n(8) {
		case 0:
			b[i] = 0x80 + byte(f.n(0x80)) // obs-text
		case 1:
			b[i] = '\t'
		default:
			b[i] = byte(0x20 + f.n(0x5f))
		}
	}
	return string(b)
}

func (f *fuzzer) auth(key string) string {
	switch f.n(24) {
	case 0:
		return ""
	case 1:
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(key+":x"))
	case 2:
		return "Bearer"
	case 3:
		return "Bearer    "
	case 4:
		return "bearer " + key
	case 5:
		return "BEARER   " + key + "   "
	case 6:
		return "Bearer " + f.headerJunk()
	case 7:
		return "Token " + key
	case 8:
		return "Bearer " + key + " " + key
	default:
		return "Bearer " + key
	}
}

var contentTypes = []string{
	"application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "application/problem+json",
	"application/json; charset=latin1", "application/json;;;", "application/jsonx", "text/json", "text/plain",
	"application/x-www-form-urlencoded", "multipart/form-data", "multipart/form-data; boundary=", "multipart/form-data; boundary=xyz",
	"multipart/mixed; boundary=xyz", "application/octet-stream", "*/*", "json", "/", ";", "a/b/c", "application/json; boundary=\"",
	"audio/wav", "", "\u00e9/\u00e9",
}

func (f *fuzzer) videoURL() string {
	switch f.n(20) {
	case 0, 1, 2, 3, 4, 5, 6, 7:
		return "https://media.dubsim.test/short-" + strconv.Itoa(f.n(1000)) + ".mp4"
	case 8:
		return "https://example.com/video.mp4"
	case 9:
		return pick(f, []string{"https://media.dubsim.test/fail.mp4", "https://media.dubsim.test/no-speech.mp4"})
	case 10:
		return pick(f, []string{"https://media.dubsim.test/unreadable.mp4", "https://media.dubsim.test/private/x.mp4"})
	case 11:
		return pick(f, []string{"https://media.dubsim.test/hour.mp4", "https://media.dubsim.test/long.mp4"})
	case 12:
		return "https://cdn.test/" + f.words(1) + strconv.Itoa(f.n(1e6)) + ".mp4"
	case 13: // matched by the media rules the fuzzer loads
		return pick(f, []string{"https://cdn.test/bbx-" + strconv.Itoa(f.n(100)) + ".mp4", "https://cdn.test/x" + strconv.Itoa(f.n(100))})
	case 14:
		// Loopback: the media prober reads the file's real header, here
		// from the instance itself.
		if p := f.project(); p != nil && len(p.files) > 0 && f.chance(0.7) {
			return f.in.url + pick(f, p.files)
		}
		return pick(f, []string{"http://127.0.0.1:1/clip.mp4", f.in.url + "/api/v1/options", f.in.url + "/nothing.wav", "http://[::1]:1/x.wav", "http://localhost:1/a.mp4"})
	default:
		return pick(f, []string{"", "not a url", "ftp://example.com/a.mp4", "https://", "https:///x", "//example.com/a.mp4",
			"https://example.com/%zz", "https://" + strings.Repeat("a", 300) + ".com/x.mp4", "javascript:alert(1)",
			"file:///etc/passwd", "https://example.com/a b.mp4", "HTTPS://EXAMPLE.COM/VIDEO.MP4", "https://[::1/x"})
	}
}

func (f *fuzzer) segments(n int, withSpeakers int) []any {
	segs := make([]any, n)
	t := int64(f.n(500))
	for i := range segs {
		start := t + int64(f.n(400))
		end := start + 300 + int64(f.n(4000))
		t = end
		s := map[string]any{"start_ms": start, "end_ms": end, "text": f.words(1 + f.n(10))}
		if withSpeakers > 0 {
			s["speaker_id"] = 1 + f.n(withSpeakers)
		}
		segs[i] = s
	}
	return segs
}

func (f *fuzzer) createBody() []byte {
	m := map[string]any{"source_lang": pick(f, f.srcLangs), "target_lang": pick(f, f.tgtLangs), "source_video_url": f.videoURL()}
	opt := func(p float64, k string, v func() any) {
		if f.chance(p) {
			m[k] = v()
		}
	}
	opt(0.5, "name", func() any { return f.str() })
	opt(0.2, "mixing_mode", func() any { return pick(f, append(slices.Clone(sim.MixingModes), "loud")) })
	opt(0.1, "use_emotional_transfer", func() any { return f.chance(0.5) })
	opt(0.15, "use_soundalike_voices", func() any { return f.chance(0.5) })
	opt(0.15, "tts_volume", func() any { return pick(f, append(slices.Clone(sim.TTSVolumes), "max")) })
	opt(0.1, "use_fixed_timings", func() any { return f.chance(0.5) })
	switch f.n(12) {
	case 0:
		m["source_script"] = f.segments(1+f.n(20), 0)
	case 1:
		m["source_script_content"] = pick(f, []string{
			"1\n00:00:00,100 --> 00:00:01,500\nHello world\n\n2\n00:00:02,000 --> 00:00:03,000\nAgain\n",
			"WEBVTT\n\n00:00.100 --> 00:01.500\n<v Bob>Hello\n", "Hello world. How are you?\n\nFine.", "", "   ",
			"1\n00:00:00,100 --> \n", "\xff\xfe", "WEBVTT\n\nNOTE only a note\n", f.words(50),
		})
	case 2:
		m["glossary_content"] = pick(f, []string{"hello\tbonjour\nworld\tmonde", "no tab here", "\t", "a\tb\r\n\r\nc\td", "", f.words(5)})
	}
	return f.jsonBody(m)
}

func (f *fuzzer) retranslationBody(p *bbProject) []byte {
	lang := pick(f, f.tgtLangs)
	if p != nil && p.target != "" && f.chance(0.9) {
		lang = p.target
	}
	voices := f.fx.Catalog.Voices[lang]
	nSpk := 1 + f.n(3)
	speakers := make([]any, nSpk)
	for i := range speakers {
		vk := pick(f, f.voiceKeys)
		if len(voices) > 0 && f.chance(0.85) {
			vk = pick(f, voices).VoiceKey
		} else if f.chance(0.3) {
			vk = pick(f, []string{sim.VoiceSoundalike, sim.VoiceEmotionalTransfer, "", "nope:xx-XX-Nobody"})
		}
		speakers[i] = map[string]any{"speaker_id": i + 1, "voice_key": vk, "style": pick(f, []string{"masculine", "feminine", "feminine", "neutral"})}
	}
	n := 1 + f.n(30)
	if f.chance(0.03) {
		n = 200 + f.n(300)
	}
	m := map[string]any{"target_script": f.segments(n, nSpk), "target_speakers": speakers}
	if f.chance(0.2) {
		m["mixing_mode"] = pick(f, append(slices.Clone(sim.MixingModes), "x"))
	}
	if f.chance(0.2) {
		m["tts_volume"] = pick(f, sim.TTSVolumes)
	}
	if f.chance(0.2) {
		m["use_fixed_timings"] = f.chance(0.5)
	}
	return f.jsonBody(m)
}

// multipartBody is a voice cloning form: valid, broken, or in between.
func (f *fuzzer) multipartBody() (string, []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if f.chance(0.2) {
		_ = mw.SetBoundary(pick(f, []string{"a", "xyz", strings.Repeat("b", 70), "with space", "----WebKitFormBoundary7MA4YWxkTrZu0gW"}))
	}
	valid := f.chance(0.45)
	field := func(name, value string) {
		w, err := mw.CreateFormField(name)
		require.NoError(f.t, err)
		_, _ = io.WriteString(w, value)
	}
	file := func(name string, data []byte) {
		w, err := mw.CreateFormFile("reference_audio_files", name)
		require.NoError(f.t, err)
		_, _ = w.Write(data)
	}
	text := func() string {
		switch f.n(12) {
		case 0:
			return ""
		case 1:
			return "   "
		case 2:
			return "!!! ... ???"
		case 3:
			return strings.Repeat("a", 5001)
		case 4:
			return "\xff\xfe invalid"
		case 5:
			if f.chance(0.1) {
				return strings.Repeat("é", 5000) // the limit in characters, not bytes
			}
			return strings.Repeat("ab ", 200)
		default:
			return f.words(1 + f.n(20))
		}
	}
	if valid {
		field("text", f.words(1+f.n(15)))
		field("language", pick(f, f.tgtLangs))
		file("ref.wav", f.wav)
	} else {
		for i := f.n(6); i >= 0; i-- {
			switch f.n(7) {
			case 0:
				field("text", text())
			case 1:
				field("language", pick(f, []string{pick(f, f.tgtLangs), "en", "xx-XX", "", strings.Repeat("l", 300)}))
			case 2, 3:
				data := pick(f, [][]byte{f.wav, f.wav[:44], f.wav[:10], nil, []byte("ID3\x04\x00\x00\x00\x00\x00\x00junk"),
					[]byte("fLaC\x00\x00\x00\x22"), []byte("\x00\x00\x00\x18ftypM4A "), []byte("not audio at all"),
					[]byte("\x1aE\xdf\xa3"), []byte{0xff, 0xfb, 0x90, 0x64, 0, 0}})
				file(pick(f, []string{"ref.wav", "", "../../etc/passwd", "☃.mp3", strings.Repeat("n", 500)}), data)
			case 4:
				h := textproto.MIMEHeader{}
				h.Set("Content-Disposition", pick(f, []string{`form-data`, `form-data; name=`, `attachment; name="text"`,
					`form-data; name="reference_audio_files"; filename*=UTF-8''%E2%98%83.wav`, `form-data; name="text"; name="language"`, "junk"}))
				if f.chance(0.5) {
					h.Set("Content-Type", pick(f, contentTypes))
				}
				if w, err := mw.CreatePart(h); err == nil {
					_, _ = w.Write([]byte(f.str()))
				}
			case 5:
				field(f.str(), f.str())
			default:
				for j := 0; j < 11; j++ {
					file("r.wav", f.wav)
				}
			}
		}
	}
	if !f.chance(0.05) {
		_ = mw.Close()
	}
	body := buf.Bytes()
	if f.chance(0.08) && len(body) > 0 {
		body = body[:f.n(len(body))]
	}
	ct := mw.FormDataContentType()
	if f.chance(0.15) {
		ct = pick(f, []string{"multipart/form-data", "multipart/form-data; boundary=other", "multipart/mixed; boundary=" + mw.Boundary(),
			"application/json", "", "multipart/form-data; boundary=\"" + mw.Boundary() + "\"", "MULTIPART/FORM-DATA; BOUNDARY=" + mw.Boundary()})
	}
	return ct, body
}

// ---------------------------------------------------------------------------
// Routes: each builds one request of its endpoint, mostly plausible.

type bbRoute struct {
	name   string
	weight int
	build  func(f *fuzzer) *bbReq
}

func (f *fuzzer) platform(route, method, uri, key string, body []byte) *bbReq {
	r := &bbReq{route: route, method: method, uri: uri, header: http.Header{}, body: body}
	if a := f.auth(key); a != "" {
		r.header.Set("Authorization", a)
	}
	if body != nil {
		r.header.Set("Content-Type", "application/json")
	}
	return r
}

func (f *fuzzer) control(route, method, uri string, body []byte) *bbReq {
	r := &bbReq{route: route, method: method, uri: uri, header: http.Header{}, body: body}
	if body != nil {
		r.header.Set("Content-Type", "application/json")
	}
	return r
}

func (f *fuzzer) trackCreated(key, target, url string) func(int, []byte) {
	return func(status int, body []byte) {
		if status != http.StatusOK && status != http.StatusCreated {
			return
		}
		var m map[string]any
		if json.Unmarshal(body, &m) != nil {
			return
		}
		if id, _ := m["project_id"].(string); id != "" && !slices.ContainsFunc(f.projects, func(p *bbProject) bool { return p.id == id }) {
			f.projects = append(f.projects, &bbProject{id: id, key: key, target: target, url: url})
			if len(f.projects) > 400 {
				f.projects = slices.Delete(f.projects, 0, 100)
			}
		}
	}
}

func (f *fuzzer) routes() []bbRoute {
	return []bbRoute{
		{"GET balance", 4, func(f *fuzzer) *bbReq { return f.platform("balance", "GET", "/api/v1/balance", f.key(), nil) }},
		{"GET options", 3, func(f *fuzzer) *bbReq { return f.platform("options", "GET", "/api/v1/options", f.key(), nil) }},
		{"GET voices", 2, func(f *fuzzer) *bbReq { return f.platform("voices", "GET", "/api/v1/voices", f.key(), nil) }},
		{"POST projects", 16, func(f *fuzzer) *bbReq {
			key := f.key()
			body := f.createBody()
			var m map[string]any
			_ = json.Unmarshal(body, &m)
			target, _ := m["target_lang"].(string)
			u, _ := m["source_video_url"].(string)
			r := f.platform("create", "POST", "/api/v1/projects", key, body)
			r.after = f.trackCreated(key, target, u)
			return r
		}},
		{"GET project", 10, func(f *fuzzer) *bbReq {
			id, key, p := f.projectRef()
			r := f.platform("get project", "GET", "/api/v1/projects/"+id, key, nil)
			r.after = func(status int, body []byte) {
				var m map[string]any
				if p == nil || status != http.StatusOK || json.Unmarshal(body, &m) != nil {
					return
				}
				for _, k := range []string{"output_tts_audio_url", "output_video_url"} {
					if u, _ := m[k].(string); strings.HasPrefix(u, f.in.url) && !slices.Contains(p.files, strings.TrimPrefix(u, f.in.url)) {
						p.files = append(p.files, strings.TrimPrefix(u, f.in.url))
					}
				}
			}
			return r
		}},
		{"DELETE project", 4, func(f *fuzzer) *bbReq {
			id, key, _ := f.projectRef()
			return f.platform("delete project", "DELETE", "/api/v1/projects/"+id, key, nil)
		}},
		{"POST translations", 7, func(f *fuzzer) *bbReq {
			id, key, p := f.projectRef()
			return f.platform("retranslate", "POST", "/api/v1/projects/"+id+"/translations", key, f.retranslationBody(p))
		}},
		{"POST validate", 7, func(f *fuzzer) *bbReq {
			id, key, p := f.projectRef()
			return f.platform("validate", "POST", "/api/v1/projects/"+id+"/validate-translation-request", key, f.retranslationBody(p))
		}},
		{"POST cloning", 5, func(f *fuzzer) *bbReq {
			key := pick(f, []string{"dubsim-pro", "dubsim-enterprise", "dubsim-enterprise", "dubsim-free", "dubsim-subscription", f.key()})
			ct, body := f.multipartBody()
			r := f.platform("cloning", "POST", "/api/v1/cloning/synthesize", key, body)
			r.header.Set("Content-Type", ct)
			if ct == "" {
				r.header.Del("Content-Type")
			}
			r.readMax = 1 << 20
			return r
		}},
		{"GET files", 6, func(f *fuzzer) *bbReq {
			var uri string
			if p := f.project(); p != nil && len(p.files) > 0 && f.chance(0.7) {
				uri = pick(f, p.files)
			} else {
				id, _, _ := f.projectRef()
				uri = "/files/projects/" + id + "/" + pick(f, []string{"1", "0", "2", "-1", "abc", "99999999999999999999", f.junkID()}) +
					"/" + pick(f, []string{"dubbed_audio.wav", "dubbed_video.mov", "x.wav", "..", "%2e%2e", f.junkID()})
			}
			r := &bbReq{route: "files", method: pick(f, []string{"GET", "GET", "HEAD"}), uri: uri, header: http.Header{}, readMax: 256 << 10}
			if f.chance(0.6) {
				r.header.Set("Range", pick(f, []string{"bytes=0-1023", "bytes=44-", "bytes=-100", "bytes=100-50", "bytes=999999999999-",
					"bytes=0-0,5-5,9-9", "bytes=", "bytes=a-b", "items=0-1", "bytes=0-1023, 0-1023", "bytes=-0", "bytes=18446744073709551615-"}))
			}
			if f.chance(0.1) {
				r.header.Set(pick(f, []string{"If-None-Match", "If-Match", "If-Modified-Since", "If-Unmodified-Since", "If-Range"}),
					pick(f, []string{"*", `"x"`, "Mon, 02 Jan 2006 15:04:05 GMT", "junk", "Thu, 01 Jan 1970 00:00:00 GMT"}))
			}
			return r
		}},
		{"junk path", 4, func(f *fuzzer) *bbReq {
			uri := pick(f, junkPaths)
			if f.chance(0.3) {
				uri = "/api/v1/" + f.junkID()
			}
			r := f.platform("junk path", pick(f, []string{"GET", "POST", "DELETE", "PUT"}), uri, f.key(), nil)
			if r.method == "POST" || r.method == "PUT" {
				r.body = f.junkBody()
				r.header.Set("Content-Type", "application/json")
			}
			return r
		}},

		// Control API.
		{"GET clock", 1, func(f *fuzzer) *bbReq { return f.control("clock", "GET", "/_sim/clock", nil) }},
		{"POST advance", 4, func(f *fuzzer) *bbReq {
			var s any = json.Number(strconv.Itoa(f.n(7200)))
			switch f.n(12) {
			case 0:
				s = json.Number(pick(f, numbers))
			case 1:
				s = pick(f, []any{"60", nil, true, []any{1}, map[string]any{}, -5, 0.001, 86400 * 2})
			}
			m := map[string]any{"seconds": s}
			if f.chance(0.05) {
				delete(m, "seconds")
			}
			return f.control("advance", "POST", "/_sim/clock/advance", f.jsonBody(m))
		}},
		{"POST scale", 1, func(f *fuzzer) *bbReq {
			return f.control("scale", "POST", "/_sim/clock/scale", f.jsonBody(map[string]any{"time_scale": pick(f, []any{0, 1, 60, 1e6, 1e7, -1, "2", nil, 0.5, json.Number("1e400")})}))
		}},
		{"POST freeze", 1, func(f *fuzzer) *bbReq {
			return f.control("freeze", "POST", pick(f, []string{"/_sim/clock/freeze", "/_sim/clock/resume"}), nil)
		}},
		{"POST accounts", 3, func(f *fuzzer) *bbReq {
			m := map[string]any{"plan": pick(f, []any{"none", "subscription", "pro", "enterprise", "gold", "", nil, 3}),
				"balance_minutes": pick(f, []any{0, 10, 100, 1000, 1e12, 1e12 + 1, -1, 1.5, "10", nil})}
			if f.chance(0.5) {
				m["retranslation_enabled"] = f.chance(0.7)
			}
			if f.chance(0.5) {
				m["cloning_enabled"] = f.chance(0.7)
			}
			if f.chance(0.2) {
				m["api_key"] = pick(f, []any{"dubsim-pro", "team-" + strconv.Itoa(f.n(50)), f.str(), 5, strings.Repeat("k", 40_000)})
			}
			if f.chance(0.2) {
				m["name"] = f.str()
			}
			r := f.control("accounts", "POST", "/_sim/accounts", f.jsonBody(m))
			r.after = func(status int, body []byte) {
				var m map[string]any
				if status == http.StatusCreated && json.Unmarshal(body, &m) == nil {
					if k, _ := m["api_key"].(string); k != "" && sendable(k) && k != f.unusedKey {
						f.keys = append(f.keys, k)
					}
				}
			}
			return r
		}},
		{"POST reset", 2, func(f *fuzzer) *bbReq {
			if f.fullResets < f.maxFullReset && f.chance(0.05) {
				f.fullResets++
				return f.control("reset (full)", "POST", "/_sim/reset", pick(f, [][]byte{nil, []byte("{}")}))
			}
			k := pick(f, []string{pick(f, f.keys), "nobody", ""})
			if k == "" {
				k = "x" // an empty api_key would reset everything
			}
			r := f.control("reset (account)", "POST", "/_sim/reset", f.marshal(map[string]any{"api_key": k}))
			if f.chance(0.1) {
				r.body = []byte(pick(f, []string{`{"api_key":5}`, `{"api_key":"dubsim-pro","x":1}`, `[]`, `{"api_key":"dubsim-pro"`, `null`}))
			}
			return r
		}},
		{"GET web views", 1, func(f *fuzzer) *bbReq {
			id := f.junkID()
			if p := f.project(); p != nil && f.chance(0.5) {
				id = p.id
			}
			switch f.n(5) {
			case 0:
				return f.control("project view", pick(f, []string{"GET", "HEAD"}), "/_sim/projects/"+url.PathEscape(id), nil)
			case 1:
				return f.control("project audio", "GET", "/_sim/projects/"+url.PathEscape(id)+"/audio.wav", nil)
			case 2:
				return f.control("studio dump", "GET", "/_sim/studio"+pick(f, []string{"", "?company_id=" + url.QueryEscape(id), "?x=1", "?company_id=%zz"}), nil)
			case 3:
				return f.control("dashboard file", "GET", "/_sim/ui/"+pick(f, []string{"", "index.html", "app.js", "app.css", url.PathEscape(id), "%2e%2e/ui.go", "static/app.js"}), nil)
			}
			r := f.control("project page", pick(f, []string{"GET", "HEAD"}), "/projects/"+url.PathEscape(id), nil)
			r.page = true
			return r
		}},
		{"GET state", 1, func(f *fuzzer) *bbReq {
			q := pick(f, []string{"?api_key=" + url.QueryEscape(pick(f, f.keys)) + "&limit=20", "?limit=5", "?limit=0", "?limit=-1", "?limit=x",
				"?limit=99999999999999999999", "?api_key=nobody", "?api_key=%zz", "?limit=1&limit=2", "?api_key=dubsim-enterprise&limit=3"})
			return f.control("state", "GET", "/_sim/state"+q, nil)
		}},
		{"POST fixtures", 2, func(f *fuzzer) *bbReq {
			var m map[string]any
			switch f.n(6) {
			case 0:
				m = map[string]any{"accounts": []any{map[string]any{"api_key": pick(f, []any{"team-" + strconv.Itoa(f.n(20)), "team-" + strconv.Itoa(f.n(20)), strings.Repeat("t", 33_000)}), "plan": pick(f, []any{"pro", "gold", "enterprise", nil}),
					"balance_minutes": pick(f, []any{5, 500, -1, 1e15, "x"}), "retranslation_enabled": true, "cloning_enabled": f.chance(0.5)}}}
			case 1:
				// No duration between about 1e6 s and 9e9 s: the script of
				// such a source exhausts memory (reported, not fuzzed).
				m = map[string]any{"media_rules": []any{map[string]any{"pattern": pick(f, []any{"*/bbx-*", "", "*", "https://cdn.test/x*", 5}),
					"duration_seconds": pick(f, []any{30, 0, -1, 0.001, 86400, 1e12, 1e300, json.Number("1e400"), "9"}), pick(f, []string{"note", "refuse", "fail", "x"}): f.str()}}}
			case 2:
				m = map[string]any{"options": f.value(2), "voices": f.value(2)}
			case 3:
				m = map[string]any{"options": map[string]any{"source_langs": []any{"en", "xx"}, "target_langs": []any{"en-US", f.str()}, "soundalike_langs": []any{"en"}},
					"voices": map[string]any{"en-US": []any{map[string]any{"name": "A", "voice_key": "k1:en-US-A", "style": pick(f, []any{"feminine", "odd"})}}}}
			case 4:
				var raw map[string]any
				require.NoError(f.t, json.Unmarshal(f.restore, &raw))
				m = raw
			default:
				m = map[string]any{}
			}
			return f.control("fixtures", "POST", "/_sim/fixtures", f.jsonBody(m))
		}},
		{"POST project outcome", 3, func(f *fuzzer) *bbReq {
			id, _, _ := f.projectRef()
			m := map[string]any{"outcome": pick(f, []any{"error", "ready", "maybe", "", nil, 1})}
			if f.chance(0.5) {
				m["error_message"] = f.str()
			}
			if f.chance(0.5) {
				m["now"] = pick(f, []any{true, false, "yes"})
			}
			return f.control("force outcome", "POST", "/_sim/projects/"+id+"/outcome", f.jsonBody(m))
		}},
		{"outcomes", 3, func(f *fuzzer) *bbReq {
			switch f.n(3) {
			case 0:
				return f.control("outcomes list", "GET", "/_sim/outcomes", nil)
			case 1:
				id := f.junkID()
				if len(f.outcomeIDs) > 0 && f.chance(0.7) {
					id = pick(f, f.outcomeIDs)
				}
				return f.control("outcomes delete", "DELETE", "/_sim/outcomes/"+id, nil)
			}
			m := map[string]any{"outcome": pick(f, []any{"error", "ready", "x"}), "count": pick(f, []any{1, 2, 0, -1, 1e10, "1", nil})}
			if f.chance(0.5) {
				m["api_key"] = pick(f, append(slices.Clone(f.keys), "nobody"))
			}
			if f.chance(0.5) {
				m["source_url_pattern"] = pick(f, []any{"*/short-1*", "*", "", "**", "https://cdn.test/*", 4})
			}
			if f.chance(0.3) {
				m["error_message"] = f.str()
			}
			r := f.control("outcomes add", "POST", "/_sim/outcomes", f.jsonBody(m))
			r.after = func(status int, body []byte) {
				var m map[string]any
				if status == http.StatusCreated && json.Unmarshal(body, &m) == nil {
					if id, _ := m["id"].(string); id != "" {
						f.outcomeIDs = append(f.outcomeIDs, id)
					}
				}
			}
			return r
		}},
		{"faults", 3, func(f *fuzzer) *bbReq {
			switch f.n(5) {
			case 0:
				return f.control("faults list", "GET", "/_sim/faults", nil)
			case 1:
				id := f.junkID()
				if len(f.faultIDs) > 0 && f.chance(0.7) {
					id = pick(f, f.faultIDs)
				}
				return f.control("faults delete", "DELETE", "/_sim/faults/"+id, nil)
			case 2:
				if f.chance(0.2) {
					return f.control("faults clear", "DELETE", "/_sim/faults", nil)
				}
			}
			// Every rule added gets the unused api_key (enforced again in
			// send), so none fires on the requests of this test.
			action := map[string]any{"type": pick(f, []any{"latency", "error", "rate_limit", "drop", "truncate", "bogus", "", 1})}
			for i := f.n(4); i > 0; i-- {
				action[pick(f, []string{"latency_ms", "distribution", "min_ms", "max_ms", "mean_ms", "stddev_ms", "median_ms", "sigma",
					"status", "error", "message", "retry_after_seconds", "bytes", "x"})] = pick(f, []any{1, 100, 600001, -1, 0.5, 503, 404, "uniform", "lognormal", "normal", "x", 1 << 41, nil})
			}
			m := map[string]any{"api_key": f.unusedKey, "action": action}
			f.maybeSet(m, 0.3, "method", pick(f, []any{"GET", "post", "POST", ""}), "path", pick(f, []any{"/api/v1/*", "x", "*", ""}),
				"count", pick(f, []any{0, 1, 5, -1, 2e9}), "probability", pick(f, []any{0.5, 1, 0, 2}), "ttl_seconds", pick(f, []any{0, 60, -1, 1e9}),
				"id", pick(f, []any{"r-" + strconv.Itoa(f.n(30)), "bad id", strings.Repeat("i", 65)}))
			r := f.control("faults add", "POST", "/_sim/faults", f.jsonBody(m))
			r.after = func(status int, body []byte) {
				var m map[string]any
				if status == http.StatusCreated && json.Unmarshal(body, &m) == nil {
					if id, _ := m["id"].(string); id != "" {
						f.faultIDs = append(f.faultIDs, id)
					}
				}
			}
			return r
		}},
		{"requests", 2, func(f *fuzzer) *bbReq {
			if f.chance(0.1) {
				return f.control("requests reset", "DELETE", "/_sim/requests"+pick(f, []string{"", "?x=1"}), nil)
			}
			// Mostly with a limit: the whole journal (4 MiB of entries
			// with bodies up to 8 KiB) is slow to encode under the race
			// detector.
			q := pick(f, []string{"?limit=10", "?status=4xx&limit=5", "?status=0&limit=5", "?status=6xx", "?path=/api/v1/*&method=post&limit=5",
				"?key=dubsim-enterprise&limit=3", "?since=5&limit=5", "?since=-1", "?limit=99999999999", "?bogus=1", "?path=x", "?method=%20",
				"?limit=1&limit=2", "?%zz", "?limit=0&status=404", "?limit=-3"})
			if f.chance(0.05) {
				q = ""
			}
			return f.control("requests list", "GET", "/_sim/requests"+q, nil)
		}},
		{"verify", 2, func(f *fuzzer) *bbReq {
			m := map[string]any{}
			f.maybeSet(m, 0.35, "method", pick(f, []any{"POST", "GET", "bad method", 1}), "path", pick(f, []any{"/api/v1/projects", "/api/v1/*", "x", ""}),
				"api_key", pick(f, f.keys), "status", pick(f, []any{200, "4xx", "9xx", 0, -1, "200", true}), "body_contains", f.str(),
				"headers", pick(f, []any{map[string]any{"Idempotency-Key": ""}, map[string]any{"X-Nope": "1"}, map[string]any{"content-type": "a", "Content-Type": "b"}, "x"}),
				"count", pick(f, []any{0, 1, -1, "1"}), "at_least", pick(f, []any{0, 2}), "at_most", pick(f, []any{1, 0}))
			return f.control("verify", "POST", "/_sim/requests/verify", f.jsonBody(m))
		}},
		{"report", 2, func(f *fuzzer) *bbReq {
			q := pick(f, []string{"?api_key=" + url.QueryEscape(pick(f, f.keys)), "?api_key=dubsim-enterprise&format=text", "?api_key=dubsim-enterprise&format=xml",
				"", "?format=json", "?api_key=", "?api_key=a&api_key=b", "?api_key=dubsim-pro&x=1"})
			r := f.control("report", "GET", "/_sim/report"+q, nil)
			if f.chance(0.2) {
				r.header.Set("Accept", pick(f, []string{"text/plain", "application/json", "*/*", "text/*;q=0.1, application/json", "junk"}))
			}
			return r
		}},
		{"control junk", 1, func(f *fuzzer) *bbReq {
			r := f.control("control junk", pick(f, []string{"GET", "POST", "DELETE", "PATCH"}), "/_sim/"+f.junkID(), nil)
			if r.method == "POST" {
				r.body = f.junkBody()
				r.header.Set("Content-Type", "application/json")
			}
			return r
		}},
	}
}

var methods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "PURGE", "get", "Post", "FOO-BAR", "M", "PROPFIND"}

// perturb applies the cross-cutting mutations: method, headers, body,
// query, chunked transfer.
func (f *fuzzer) perturb(r *bbReq) {
	fullReset := r.route == "reset (full)" || r.route == "reset (account)"
	if f.chance(0.06) && !fullReset {
		r.method = pick(f, methods)
	}
	if f.chance(0.06) && !fullReset {
		r.body = f.junkBody()
	}
	if f.chance(0.05) {
		if ct := pick(f, contentTypes); ct != "" {
			r.header.Set("Content-Type", ct)
		} else {
			r.header.Del("Content-Type")
		}
	}
	if f.chance(0.04) && !fullReset {
		sep := "?"
		if strings.Contains(r.uri, "?") {
			sep = "&"
		}
		r.uri += sep + pick(f, []string{"a=%zz", "&&&", "=", "x=" + strings.Repeat("y", 3000), "limit=1;2", "api_key=dubsim-pro", "%00=%00", "a[]=1&a[]=2"})
	}
	if f.chance(0.03) && !fullReset {
		r.uri += pick(f, []string{"/", "//", "/x", "%2F..", "/..", "/.", ";x"})
	}
	if r.method == "POST" && f.chance(0.3) {
		switch {
		case len(f.idemKeys) > 0 && f.chance(0.5):
			r.header.Set("Idempotency-Key", pick(f, f.idemKeys))
		case f.chance(0.1):
			r.header.Set("Idempotency-Key", pick(f, []string{strings.Repeat("k", 256), strings.Repeat("k", 255), " ", "☃", "\xff", f.headerJunk()}))
		default:
			k := "idem-" + strconv.Itoa(f.n(1e6))
			r.header.Set("Idempotency-Key", k)
			if len(f.idemKeys) < 12 {
				f.idemKeys = append(f.idemKeys, k)
			} else {
				f.idemKeys[f.n(len(f.idemKeys))] = k
			}
		}
	}
	if f.chance(0.04) {
		r.header.Set(pick(f, []string{"Accept", "X-Forwarded-Proto", "Accept-Encoding", "Content-Encoding", "X-Request-Id", "Cookie", "Origin"}),
			pick(f, []string{"text/plain", "https", "gzip", "junk", "*/*", f.headerJunk()}))
	}
	if len(r.body) > 0 && f.chance(0.08) {
		r.chunked = true
	}
	if r.body == nil && r.method != "GET" && r.method != "HEAD" && f.chance(0.03) {
		r.chunked = true // an empty chunked body: Content-Length unknown
	}
}

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

func blackboxRequests(t *testing.T) int {
	n := 5000
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
