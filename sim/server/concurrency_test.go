package server_test

// Parallel clients on every endpoint at once, then the invariants: the
// balance is exact and never negative, an idempotency key creates one
// project however many clients send it. Run with -race.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/internal/tooltest"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	parallelClients = 100
	envConcSeed     = "DUBSIM_CONCURRENCY_SEED"
)

// pclient is one parallel client: its own http.Client (and connections).
type pclient struct {
	base string
	http *http.Client
}

func newPClient(t testing.TB, base string) *pclient {
	tr := &http.Transport{MaxIdleConnsPerHost: 2}
	t.Cleanup(tr.CloseIdleConnections)
	return &pclient{base: base, http: &http.Client{Transport: tr, Timeout: 2 * time.Minute}}
}

type answer struct {
	status int
	header http.Header
	body   []byte
	err    error
}

func (a answer) json() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(a.body, &m)
	return m
}

func (c *pclient) do(method, path, key, ctype string, body []byte, header map[string]string) answer {
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if strings.HasPrefix(path, "/_sim/") {
		req.Header.Set(server.HeaderControl, "1") // as the Go client and ctl send it
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: b, err: err}
}

func (c *pclient) json(method, path, key, body string, header map[string]string) answer {
	ct := ""
	if body != "" {
		ct = "application/json"
	}
	return c.do(method, path, key, ct, []byte(body), header)
}

// newAccount creates an isolated account and returns its key.
func newAccount(t *testing.T, in *inst, spec string) string {
	t.Helper()
	st, m := in.call("POST", "/_sim/accounts", "", spec)
	require.Equal(t, http.StatusCreated, st, "%v", m)
	return m["api_key"].(string)
}

// projectsOf returns the projects of an account from the state dump, by id.
func projectsOf(t *testing.T, in *inst, key string) map[string]map[string]any {
	t.Helper()
	st, m := in.call("GET", "/_sim/state?limit=1000000&api_key="+key, "", "")
	require.Equal(t, http.StatusOK, st, "%v", m)
	out := map[string]map[string]any{}
	for _, p := range m["projects"].([]any) {
		pm := p.(map[string]any)
		out[pm["id"].(string)] = pm
	}
	return out
}

// urlClass is a kind of source URL of the creations on the balance account,
// with the cost and the end the embedded media rules give it.
type urlClass struct {
	url   string
	exact bool  // the URL as is; otherwise a unique suffix is added
	cost  int64 // minutes
	fails bool  // ends in error on its first run, and is refunded
}

var balanceClasses = []urlClass{
	{"https://media.dubsim.test/short-", false, 1, false},      // 12 s
	{"https://media.dubsim.test/short-clip-", false, 1, false}, // 12 s
	{"https://example.com/video.mp4", true, 10, false},         // 10 min
	{"https://media.dubsim.test/fail-", false, 4, true},        // 240 s, then error
	{"https://media.dubsim.test/no-speech-", false, 2, true},   // 95 s, then error
}

// TestConcurrentClientsOnEveryEndpoint runs 100 clients against every
// endpoint at once, then checks that no answer was a 5xx, nothing was logged
// at error level, and the balance of the account that took the parallel
// creations is exact.
func TestConcurrentClientsOnEveryEndpoint(t *testing.T) {
	t.Parallel()
	seed := testSeed(t, envConcSeed)
	in, g, logs := guarded(t, func(c *app.Config) { c.Seed = seed })
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)

	const initialBalance = 400
	acctA := newAccount(t, in, fmt.Sprintf(`{"plan":"enterprise","balance_minutes":%d,"retranslation_enabled":true,"cloning_enabled":true}`, initialBalance))
	acctC := newAccount(t, in, `{"plan":"pro","balance_minutes":1000}`) // outcomes, forced outcomes and resets: never acctA
	unusedKey := fmt.Sprintf("concurrency-unused-%x", seed)
	wav := refWAVBytes(t, 120, 400*time.Millisecond)
	restore := fixtureRestoreBody(t)
	targets := []string{"de-DE", "fr-FR", "es-ES", "ja-JP"}

	var mu sync.Mutex
	type created struct {
		class  urlClass
		target string
	}
	createdA := map[string]created{} // acknowledged creations on acctA
	deletedA := map[string]bool{}    // acknowledged deletes on acctA
	var idsA, idsC []string
	var files []string
	var failures []string
	statusCount := map[int]int{}
	opCount := map[string]int{}
	opTime := map[string]time.Duration{}
	opStatus := map[string]map[int]int{}
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 30 {
			failures = append(failures, fmt.Sprintf(format, args...))
		} else if len(failures) == 30 {
			failures = append(failures, "(more failures not shown)")
		}
	}
	someID := func(r *rand.Rand, ids *[]string) string {
		mu.Lock()
		defer mu.Unlock()
		if len(*ids) == 0 {
			return "123456789"
		}
		if r.IntN(2) == 0 {
			return (*ids)[len(*ids)-1-r.IntN(min(len(*ids), 8))]
		}
		return (*ids)[r.IntN(len(*ids))]
	}
	targetOf := func(id string) string {
		mu.Lock()
		defer mu.Unlock()
		if c, ok := createdA[id]; ok {
			return c.target
		}
		return "de-DE"
	}
	retranslation := func(r *rand.Rand, target string) string {
		voices := fx.Catalog.Voices[target]
		v := voices[r.IntN(len(voices))]
		return fmt.Sprintf(`{"target_script":[{"start_ms":100,"end_ms":1500,"text":"Eins","speaker_id":1},{"start_ms":1800,"end_ms":3000,"text":"Zwei %d","speaker_id":1}],
			"target_speakers":[{"speaker_id":1,"voice_key":%q,"style":%q}]}`, r.IntN(1000), v.VoiceKey, v.Style)
	}
	cloningForm := func(r *rand.Rand) (string, []byte) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		_ = mw.WriteField("text", "Hello there, number "+strconv.Itoa(r.IntN(100))+".")
		_ = mw.WriteField("language", "en-US")
		w, _ := mw.CreateFormFile("reference_audio_files", "ref.wav")
		_, _ = w.Write(wav)
		_ = mw.Close()
		return mw.FormDataContentType(), buf.Bytes()
	}

	type op struct {
		name   string
		weight int
		run    func(c *pclient, r *rand.Rand) (answer, []int)
	}
	ok := []int{http.StatusOK}
	ops := []op{
		{"create A", 24, func(c *pclient, r *rand.Rand) (answer, []int) {
			cl := balanceClasses[r.IntN(len(balanceClasses))]
			u := cl.url
			if !cl.exact {
				u += strconv.Itoa(r.IntN(1e6)) + ".mp4"
			}
			target := targets[r.IntN(len(targets))]
			var hdr map[string]string
			if r.IntN(3) == 0 {
				hdr = map[string]string{"Idempotency-Key": fmt.Sprintf("k-%d-%d", r.Uint64(), r.Uint64())}
			}
			a := c.json("POST", "/api/v1/projects", acctA, fmt.Sprintf(`{"source_lang":"en","target_lang":%q,"source_video_url":%q}`, target, u), hdr)
			if a.status == http.StatusOK {
				m := a.json()
				id, _ := m["project_id"].(string)
				cost, _ := m["cost_minutes"].(float64)
				bal, _ := m["balance_minutes"].(float64)
				if int64(cost) != cl.cost {
					fail("create %s: cost %v, want %d", u, cost, cl.cost)
				}
				if bal < 0 || bal > initialBalance {
					fail("create %s: balance_minutes %v out of [0, %d]", u, bal, initialBalance)
				}
				mu.Lock()
				if _, dup := createdA[id]; dup {
					failures = append(failures, "project id "+id+" acknowledged twice")
				}
				createdA[id] = created{class: cl, target: target}
				idsA = append(idsA, id)
				mu.Unlock()
			}
			return a, []int{200, 402}
		}},
		{"create C", 3, func(c *pclient, r *rand.Rand) (answer, []int) {
			a := c.json("POST", "/api/v1/projects", acctC, `{"source_lang":"en","target_lang":"it-IT","source_video_url":"https://media.dubsim.test/short-c.mp4"}`, nil)
			if a.status == http.StatusOK {
				mu.Lock()
				idsC = append(idsC, a.json()["project_id"].(string))
				mu.Unlock()
			}
			return a, []int{200, 402}
		}},
		{"get", 14, func(c *pclient, r *rand.Rand) (answer, []int) {
			a := c.json("GET", "/api/v1/projects/"+someID(r, &idsA), acctA, "", nil)
			if m := a.json(); a.status == http.StatusOK {
				if u, _ := m["output_tts_audio_url"].(string); u != "" {
					mu.Lock()
					files = append(files, strings.TrimPrefix(u, c.base))
					mu.Unlock()
				}
			}
			return a, []int{200, 404}
		}},
		{"delete", 7, func(c *pclient, r *rand.Rand) (answer, []int) {
			id := someID(r, &idsA)
			a := c.json("DELETE", "/api/v1/projects/"+id, acctA, "", nil)
			if a.status == http.StatusOK {
				mu.Lock()
				if deletedA[id] {
					failures = append(failures, "project "+id+" deleted twice with 200")
				}
				deletedA[id] = true
				mu.Unlock()
			}
			return a, []int{200, 400, 404}
		}},
		{"retranslate", 6, func(c *pclient, r *rand.Rand) (answer, []int) {
			id := someID(r, &idsA)
			return c.json("POST", "/api/v1/projects/"+id+"/translations", acctA, retranslation(r, targetOf(id)), nil), []int{200, 400, 404}
		}},
		{"validate", 6, func(c *pclient, r *rand.Rand) (answer, []int) {
			id := someID(r, &idsA)
			return c.json("POST", "/api/v1/projects/"+id+"/validate-translation-request", acctA, retranslation(r, targetOf(id)), nil), []int{200, 400, 404}
		}},
		{"balance", 5, func(c *pclient, r *rand.Rand) (answer, []int) {
			a := c.json("GET", "/api/v1/balance", acctA, "", nil)
			if b, _ := a.json()["balance_minutes"].(float64); a.status == 200 && (b < 0 || b > initialBalance) {
				fail("balance %v out of [0, %d]", b, initialBalance)
			}
			return a, ok
		}},
		{"options", 2, func(c *pclient, r *rand.Rand) (answer, []int) {
			return c.json("GET", "/api/v1/options", "dubsim-free", "", nil), ok
		}},
		{"voices", 1, func(c *pclient, r *rand.Rand) (answer, []int) {
			return c.json("GET", "/api/v1/voices", "dubsim-pro", "", nil), ok
		}},
		{"advance", 4, func(c *pclient, r *rand.Rand) (answer, []int) {
			return c.json("POST", "/_sim/clock/advance", "", fmt.Sprintf(`{"seconds":%d}`, 20+r.IntN(300)), nil), ok
		}},
		{"clock", 1, func(c *pclient, r *rand.Rand) (answer, []int) {
			switch r.IntN(4) {
			case 0:
				return c.json("POST", "/_sim/clock/freeze", "", "", nil), ok
			case 1:
				return c.json("POST", "/_sim/clock/resume", "", "", nil), ok
			case 2:
				return c.json("POST", "/_sim/clock/scale", "", `{"time_scale":0}`, nil), ok
			}
			return c.json("GET", "/_sim/clock", "", "", nil), ok
		}},
		{"state", 1, func(c *pclient, r *rand.Rand) (answer, []int) {
			return c.json("GET", "/_sim/state?limit=5&api_key="+acctC, "", "", nil), ok
		}},
		{"journal", 3, func(c *pclient, r *rand.Rand) (answer, []int) {
			switch r.IntN(3) {
			case 0:
				return c.json("POST", "/_sim/requests/verify", "", `{"method":"POST","path":"/api/v1/projects","at_least":0}`, nil), ok
			case 1:
				return c.json("GET", "/_sim/report?api_key="+acctA, "", "", nil), ok
			}
			return c.json("GET", "/_sim/requests?limit=20&status=4xx", "", "", nil), ok
		}},
		{"cloning", 2, func(c *pclient, r *rand.Rand) (answer, []int) {
			ct, body := cloningForm(r)
			a := c.do("POST", "/api/v1/cloning/synthesize", acctA, ct, body, nil)
			if a.status == http.StatusOK && !bytes.HasPrefix(a.body, []byte("RIFF")) {
				fail("cloning answered 200 without a WAV file")
			}
			return a, ok
		}},
		{"faults", 2, func(c *pclient, r *rand.Rand) (answer, []int) {
			a := c.json("POST", "/_sim/faults", "", fmt.Sprintf(`{"api_key":%q,"path":"/api/v1/*","action":{"type":%q}}`,
				unusedKey, []string{"drop", "truncate", "rate_limit"}[r.IntN(3)]), nil)
			if a.status != http.StatusCreated {
				return a, []int{201}
			}
			return c.json("DELETE", "/_sim/faults/"+a.json()["id"].(string), "", "", nil), ok
		}},
		{"outcomes C", 2, func(c *pclient, r *rand.Rand) (answer, []int) {
			switch r.IntN(3) {
			case 0:
				return c.json("POST", "/_sim/outcomes", "", fmt.Sprintf(`{"api_key":%q,"count":1,"outcome":"error"}`, acctC), nil), []int{201}
			case 1:
				return c.json("POST", "/_sim/projects/"+someID(r, &idsC)+"/outcome", "", `{"outcome":"ready"}`, nil), []int{200, 404, 409}
			}
			return c.json("POST", "/_sim/reset", "", fmt.Sprintf(`{"api_key":%q}`, acctC), nil), ok
		}},
		{"files", 2, func(c *pclient, r *rand.Rand) (answer, []int) {
			mu.Lock()
			path := "/files/projects/1/1/dubbed_audio.wav"
			if len(files) > 0 {
				path = files[r.IntN(len(files))]
			}
			mu.Unlock()
			return c.do("GET", path, "", "", nil, map[string]string{"Range": "bytes=0-1023"}), []int{206, 404}
		}},
		{"accounts", 1, func(c *pclient, r *rand.Rand) (answer, []int) {
			return c.json("POST", "/_sim/accounts", "", `{"plan":"subscription","balance_minutes":5}`, nil), []int{201}
		}},
		{"fixtures", 1, func(c *pclient, r *rand.Rand) (answer, []int) {
			return c.do("POST", "/_sim/fixtures", "", "application/json", restore, nil), ok
		}},
	}
	weights := 0
	for _, o := range ops {
		weights += o.weight
	}

	// With 10 operations per client the hundred clients still spend all of
	// acctA's balance while they race for it (about 280 creations on it,
	// dozens refused with 402); the long run (tooltest.Long) sends 30.
	opsPerClient := 10
	if tooltest.Long() && !testing.Short() {
		opsPerClient = 30
	}
	began := time.Now()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < parallelClients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := newPClient(t, in.url)
			r := rand.New(rand.NewPCG(seed, uint64(i)))
			<-start
			for k := 0; k < opsPerClient; k++ {
				w := r.IntN(weights)
				var o op
				for _, o = range ops {
					if w < o.weight {
						break
					}
					w -= o.weight
				}
				t0 := time.Now()
				a, want := o.run(c, r)
				d := time.Since(t0)
				mu.Lock()
				statusCount[a.status]++
				opCount[o.name]++
				opTime[o.name] += d
				if opStatus[o.name] == nil {
					opStatus[o.name] = map[int]int{}
				}
				opStatus[o.name][a.status]++
				mu.Unlock()
				switch {
				case a.err != nil:
					fail("%s: transport error: %v", o.name, a.err)
				case a.status >= 500:
					fail("%s: status %d: %s", o.name, a.status, a.body)
				case !slices.Contains(want, a.status):
					fail("%s: status %d, want one of %v: %s", o.name, a.status, want, a.body)
				case a.status >= 400:
					if why := checkErrorBody("", a.status, a.header.Get("Content-Type"), a.body, false); why != "" {
						fail("%s: error answer %d: %s: %s", o.name, a.status, why, a.body)
					}
				}
			}
		}(i)
	}
	close(start)
	wg.Wait()
	elapsed := time.Since(began)

	// Every run completes: first runs are ready or failed (and refunded),
	// re-translations ready.
	st, m := in.call("POST", "/_sim/clock/advance", "", `{"seconds":86400}`)
	require.Equal(t, http.StatusOK, st, "%v", m)

	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, failures)

	// (a) The balance: every acknowledged creation charged its cost once;
	// the projects that failed their first run were refunded; a delete
	// refunds nothing. A delete is only accepted in ready or error, and
	// with no forced outcome on this account a project of a failing URL
	// is in error (refunded) and any other is ready (not refunded) then.
	existing := projectsOf(t, in, acctA)
	want := int64(initialBalance)
	for id, c := range createdA {
		p, exists := existing[id]
		switch {
		case exists:
			assert.False(t, deletedA[id], "project %s was deleted with 200 but still exists", id)
			assert.EqualValues(t, c.class.cost, p["cost_minutes"], "project %s", id)
			refunded, _ := p["refunded"].(bool)
			wantStatus := "ready"
			if c.class.fails {
				wantStatus = "error"
			}
			assert.Equal(t, wantStatus, p["status"], "project %s (%s)", id, c.class.url)
			assert.Equal(t, c.class.fails, refunded, "project %s (%s) refunded", id, c.class.url)
			if !refunded {
				want -= c.class.cost
			}
		default:
			assert.True(t, deletedA[id], "project %s was created and never deleted, but is gone", id)
			if !c.class.fails { // deleted while ready: not refunded
				want -= c.class.cost
			}
		}
	}
	for id := range existing {
		_, ok := createdA[id]
		assert.True(t, ok, "project %s exists but no creation was acknowledged", id)
	}
	for id := range deletedA {
		_, ok := createdA[id]
		assert.True(t, ok, "deleted project %s was never created", id)
	}
	assert.GreaterOrEqual(t, want, int64(0))
	st, bal := in.call("GET", "/api/v1/balance", acctA, "")
	require.Equal(t, http.StatusOK, st)
	assert.EqualValues(t, want, bal["balance_minutes"], "balance of the account with parallel creations")
	_, state := in.call("GET", "/_sim/state?limit=1&api_key="+acctA, "", "")
	assert.EqualValues(t, want, state["accounts"].([]any)[0].(map[string]any)["balance_minutes"], "balance in the state dump")

	// No fault rule ever fired, nothing panicked or was logged as an error.
	_, rules := in.call("GET", "/_sim/faults", "", "")
	assert.Empty(t, rules["rules"], "every rule added was removed")
	assert.Zero(t, g.panicCount())
	assert.Empty(t, g.fivexx())
	assert.Empty(t, logs.records(), "records at level error or above")

	deletedRefunded := 0
	for id := range deletedA {
		if createdA[id].class.fails {
			deletedRefunded++
		}
	}
	t.Logf("%d clients × %d operations in %v; acct A: %d created, %d deleted (%d of them refunded before), %d remain, balance %d of %d",
		parallelClients, opsPerClient, elapsed.Round(time.Millisecond), len(createdA), len(deletedA), deletedRefunded, len(existing), want, initialBalance)
	names := make([]string, 0, len(opCount))
	for name := range opCount {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Logf("  %-12s %4d calls, mean latency %8v, answers %s", name, opCount[name],
			(opTime[name] / time.Duration(opCount[name])).Round(time.Microsecond), formatCounts(opStatus[name]))
	}
	t.Logf("answers by status: %s", formatCounts(statusCount))
}

// parallelSame sends one request per client, all released at once.
func parallelSame(t *testing.T, in *inst, n int, req func(i int, c *pclient) answer) []answer {
	t.Helper()
	out := make([]answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := newPClient(t, in.url)
			<-start
			out[i] = req(i, c)
		}(i)
	}
	close(start)
	wg.Wait()
	return out
}

// TestConcurrentIdenticalIdempotentCreations: 100 clients send the same
// creation with the same Idempotency-Key at once.
func TestConcurrentIdenticalIdempotentCreations(t *testing.T) {
	t.Parallel()
	in, g, logs := guarded(t, nil)
	key := newAccount(t, in, `{"plan":"pro","balance_minutes":1000}`)
	const body = `{"name":"Same","source_lang":"en","target_lang":"fr-FR","source_video_url":"https://example.com/video.mp4"}`
	hdr := map[string]string{"Idempotency-Key": "one-key"}
	answers := parallelSame(t, in, parallelClients, func(_ int, c *pclient) answer {
		return c.json("POST", "/api/v1/projects", key, body, hdr)
	})
	var first []byte
	counts := map[int]int{}
	for _, a := range answers {
		require.NoError(t, a.err)
		counts[a.status]++
		switch a.status {
		case http.StatusOK:
			if first == nil {
				first = a.body
			}
			assert.Equal(t, string(first), string(a.body), "every 200 is the first answer")
		case http.StatusConflict:
			assert.Equal(t, "ConflictError", a.json()["error"], "%s", a.body)
		default:
			t.Errorf("status %d: %s", a.status, a.body)
		}
	}
	require.NotNil(t, first, "one request ran")
	t.Logf("answers by status: %s", formatCounts(counts))

	projects := projectsOf(t, in, key)
	assert.Len(t, projects, 1, "exactly one project")
	var receipt map[string]any
	require.NoError(t, json.Unmarshal(first, &receipt))
	assert.Contains(t, projects, receipt["project_id"])
	_, bal := in.call("GET", "/api/v1/balance", key, "")
	assert.EqualValues(t, 990, bal["balance_minutes"], "charged once")

	again := newPClient(t, in.url).json("POST", "/api/v1/projects", key, body, hdr)
	assert.Equal(t, http.StatusOK, again.status)
	assert.Equal(t, string(first), string(again.body))
	assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	assert.Empty(t, g.fivexx())
	assert.Empty(t, logs.records())
}

// TestConcurrentIdempotencyKeyWithDifferentBodies: 100 clients send the
// same key with 100 different bodies at once; one runs, the others are
// refused (409 while it runs, 422 after).
func TestConcurrentIdempotencyKeyWithDifferentBodies(t *testing.T) {
	t.Parallel()
	in, g, logs := guarded(t, nil)
	key := newAccount(t, in, `{"plan":"pro","balance_minutes":1000}`)
	hdr := map[string]string{"Idempotency-Key": "shared-key"}
	answers := parallelSame(t, in, parallelClients, func(i int, c *pclient) answer {
		return c.json("POST", "/api/v1/projects", key,
			fmt.Sprintf(`{"name":"Body %d","source_lang":"en","target_lang":"fr-FR","source_video_url":"https://example.com/video.mp4"}`, i), hdr)
	})
	counts := map[int]int{}
	winner := -1
	for i, a := range answers {
		require.NoError(t, a.err)
		counts[a.status]++
		switch a.status {
		case http.StatusOK:
			winner = i
		case http.StatusConflict:
			assert.Equal(t, "ConflictError", a.json()["error"], "%s", a.body)
		case http.StatusUnprocessableEntity:
			assert.Equal(t, "IdempotencyError", a.json()["error"], "%s", a.body)
		default:
			t.Errorf("status %d: %s", a.status, a.body)
		}
	}
	t.Logf("answers by status: %s", formatCounts(counts))
	assert.Equal(t, 1, counts[http.StatusOK], "exactly one 200")
	assert.Equal(t, parallelClients-1, counts[http.StatusConflict]+counts[http.StatusUnprocessableEntity], "every other one refused")

	projects := projectsOf(t, in, key)
	require.Len(t, projects, 1, "exactly one project")
	for _, p := range projects {
		assert.Equal(t, fmt.Sprintf("Body %d", winner), p["name"], "the project of the request that got the 200")
	}
	_, bal := in.call("GET", "/api/v1/balance", key, "")
	assert.EqualValues(t, 990, bal["balance_minutes"], "charged once")
	assert.Empty(t, g.fivexx())
	assert.Empty(t, logs.records())
}
