package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/simtest"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 2, 4, 12, 0, 0, 0, time.UTC)

type inst struct {
	t   testing.TB
	srv *server.Server
	url string
}

func start(t testing.TB, mod func(*app.Config)) *inst {
	t.Helper()
	s := simtest.New(t, t0, mod).Server
	hs := httptest.NewServer(s.Handler)
	t.Cleanup(hs.Close)
	return &inst{t: t, srv: s, url: hs.URL}
}

// call sends a request and decodes a JSON answer.
func (in *inst) call(method, path, key, body string) (int, map[string]any) {
	in.t.Helper()
	req, err := http.NewRequest(method, in.url+path, strings.NewReader(body))
	require.NoError(in.t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if strings.HasPrefix(path, "/_sim/") {
		req.Header.Set(server.HeaderControl, "1") // as the Go client and ctl send it
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(in.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(in.t, err)
	var m map[string]any
	if len(raw) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		require.NoError(in.t, json.Unmarshal(raw, &m), "%s", raw)
	}
	return resp.StatusCode, m
}

func (in *inst) create(key, url string) string {
	in.t.Helper()
	st, m := in.call("POST", "/api/v1/projects", key, `{"source_lang":"en","target_lang":"de-DE","source_video_url":"`+url+`"}`)
	require.Equal(in.t, http.StatusOK, st, "%v", m)
	return m["project_id"].(string)
}

func (in *inst) project(key, id string) map[string]any {
	in.t.Helper()
	st, m := in.call("GET", "/api/v1/projects/"+id, key, "")
	require.Equal(in.t, http.StatusOK, st, "%v", m)
	return m
}

func (in *inst) balance(key string) float64 {
	_, m := in.call("GET", "/api/v1/balance", key, "")
	return m["balance_minutes"].(float64)
}

func TestForcedOutcomeOfOneProject(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	const key = "dubsim-enterprise"
	failLater := in.create(key, "https://cdn.test/a.mp4")
	failNow := in.create(key, "https://cdn.test/b.mp4")
	readyNow := in.create(key, "https://cdn.test/c.mp4")
	before := in.balance(key)

	st, m := in.call("POST", "/_sim/projects/"+failLater+"/outcome", "", `{"outcome":"error","error_message":"Transcription failed"}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	assert.Equal(t, "in_progress", in.project(key, failLater)["status"], "fails at its due time")

	st, _ = in.call("POST", "/_sim/projects/"+failNow+"/outcome", "", `{"outcome":"error","now":true}`)
	require.Equal(t, http.StatusOK, st)
	p := in.project(key, failNow)
	assert.Equal(t, "error", p["status"])
	assert.Equal(t, sim.DefaultForcedError, p["error_message"])

	st, _ = in.call("POST", "/_sim/projects/"+readyNow+"/outcome", "", `{"outcome":"ready"}`)
	require.Equal(t, http.StatusOK, st)
	p = in.project(key, readyNow)
	assert.Equal(t, "ready", p["status"])
	assert.NotEmpty(t, p["output_tts_audio_url"])

	in.call("POST", "/_sim/clock/advance", "", `{"seconds":3600}`)
	p = in.project(key, failLater)
	assert.Equal(t, "error", p["status"])
	assert.Equal(t, "Transcription failed", p["error_message"])
	assert.Greater(t, in.balance(key), before, "failed projects are refunded")

	st, m = in.call("POST", "/_sim/projects/"+readyNow+"/outcome", "", `{"outcome":"error"}`)
	assert.Equal(t, http.StatusConflict, st)
	assert.Equal(t, "ConflictError", m["error"])
	st, _ = in.call("POST", "/_sim/projects/123456789/outcome", "", `{"outcome":"error"}`)
	assert.Equal(t, http.StatusNotFound, st)
	st, m = in.call("POST", "/_sim/projects/"+failLater+"/outcome", "", `{"outcome":"maybe"}`)
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Equal(t, `outcome must be "error" or "ready"; got "maybe"`, m["message"])
}

func TestOutcomeRulesForNextProjects(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	key := "dubsim-enterprise"
	st, rule := in.call("POST", "/_sim/outcomes", "", `{"api_key":"dubsim-enterprise","count":2,"outcome":"error","error_message":"Quota of the TTS vendor exceeded"}`)
	require.Equal(t, http.StatusCreated, st, "%v", rule)
	st, byURL := in.call("POST", "/_sim/outcomes", "", `{"source_url_pattern":"*/instant/*","count":1,"outcome":"ready"}`)
	require.Equal(t, http.StatusCreated, st, "%v", byURL)

	other := in.create("dubsim-pro", "https://cdn.test/other.mp4") // another account: not affected
	a := in.create(key, "https://cdn.test/1.mp4")
	b := in.create(key, "https://cdn.test/2.mp4")
	c := in.create(key, "https://cdn.test/3.mp4") // the rule is used up
	instant := in.create("dubsim-pro", "https://cdn.test/instant/x.mp4")
	assert.Equal(t, "ready", in.project("dubsim-pro", instant)["status"], "complete now")

	_, list := in.call("GET", "/_sim/outcomes", "", "")
	assert.Empty(t, list["rules"], "both rules used up and removed")

	in.call("POST", "/_sim/clock/advance", "", `{"seconds":3600}`)
	for id, want := range map[string]string{a: "error", b: "error", c: "ready"} {
		p := in.project(key, id)
		assert.Equal(t, want, p["status"], id)
		if want == "error" {
			assert.Equal(t, "Quota of the TTS vendor exceeded", p["error_message"])
		}
	}
	assert.Equal(t, "ready", in.project("dubsim-pro", other)["status"])

	for _, tc := range []struct{ body, msg string }{
		{`{"outcome":"error","count":0}`, "count must be at least 1; got 0"},
		{`{"outcome":"ready","error_message":"x"}`, `error_message applies only to outcome "error"`},
		{`{"outcome":"error","api_key":"nobody"}`, `api_key "nobody" is not an account`},
		{`{"count":1}`, "outcome is required"},
	} {
		st, m := in.call("POST", "/_sim/outcomes", "", tc.body)
		assert.Equal(t, http.StatusBadRequest, st, tc.body)
		assert.Equal(t, tc.msg, m["message"], tc.body)
	}
	st, _ = in.call("DELETE", "/_sim/outcomes/out_99", "", "")
	assert.Equal(t, http.StatusNotFound, st)
}

func TestResetOneAccount(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	keep := in.create("dubsim-pro", "https://cdn.test/keep.mp4")
	gone := in.create("dubsim-enterprise", "https://cdn.test/gone.mp4")
	st, m := in.call("POST", "/_sim/reset", "", `{"api_key":"dubsim-enterprise"}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	st, _ = in.call("GET", "/api/v1/projects/"+gone, "dubsim-enterprise", "")
	assert.Equal(t, http.StatusNotFound, st)
	assert.Equal(t, float64(6000), in.balance("dubsim-enterprise"), "fixture balance restored")
	assert.Equal(t, "in_progress", in.project("dubsim-pro", keep)["status"], "other accounts untouched")

	st, _ = in.call("POST", "/_sim/reset", "", `{"api_key":"nobody"}`)
	assert.Equal(t, http.StatusNotFound, st)

	st, _ = in.call("POST", "/_sim/reset", "", "")
	require.Equal(t, http.StatusOK, st)
	st, _ = in.call("GET", "/api/v1/projects/"+keep, "dubsim-pro", "")
	assert.Equal(t, http.StatusNotFound, st, "a full reset empties everything")
}

func TestStateDump(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	long := in.create("dubsim-pro", "https://media.dubsim.test/hour.mp4")
	short := in.create("dubsim-pro", "https://media.dubsim.test/short.mp4")
	st, m := in.call("GET", "/_sim/state?api_key=dubsim-pro", "", "")
	require.Equal(t, http.StatusOK, st)
	assert.Len(t, m["accounts"], 1)
	assert.Len(t, m["projects"], 2)
	pend := m["pending_transitions"].([]any)
	require.Len(t, pend, 2)
	assert.Equal(t, short, pend[0].(map[string]any)["id"], "earliest due first")
	assert.Equal(t, long, pend[1].(map[string]any)["id"])
	assert.Equal(t, "ready", pend[0].(map[string]any)["to"])

	st, m = in.call("GET", "/_sim/state?limit=0", "", "")
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Equal(t, `limit must be a positive integer; got "0"`, m["message"])
}

func TestTransitionsCompleteAtTheirDueTimeWhateverTheStep(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	ids := []string{in.create("dubsim-pro", "https://media.dubsim.test/hour.mp4"), in.create("dubsim-pro", "https://media.dubsim.test/short.mp4"),
		in.create("dubsim-pro", "https://cdn.test/x.mp4")}
	_, before := in.call("GET", "/_sim/state", "", "")
	due := map[string]string{}
	for _, tr := range before["pending_transitions"].([]any) {
		m := tr.(map[string]any)
		due[m["id"].(string)] = m["due_at"].(string)
	}
	in.call("POST", "/_sim/clock/advance", "", `{"seconds":86400}`) // one big step
	for _, id := range ids {
		p := in.project("dubsim-pro", id)
		d, _ := time.Parse(time.RFC3339Nano, due[id])
		assert.Equal(t, sim.PlatformTime(d), p["completion_date"], "completed at its own due time, not at the end of the step")
	}
}

func TestClockControl(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	st, m := in.call("POST", "/_sim/clock/scale", "", `{"time_scale": 60}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	assert.Equal(t, float64(60), m["time_scale"])
	st, m = in.call("POST", "/_sim/clock/freeze", "", "")
	require.Equal(t, http.StatusOK, st)
	assert.Equal(t, true, m["frozen"])
	assert.Equal(t, float64(0), m["time_scale"])
	st, m = in.call("POST", "/_sim/clock/resume", "", "")
	require.Equal(t, http.StatusOK, st)
	assert.Equal(t, false, m["frozen"])
	assert.Equal(t, float64(60), m["time_scale"], "resume restores the scale")
	st, m = in.call("POST", "/_sim/clock/scale", "", `{"time_scale": -2}`)
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Equal(t, "time_scale must be between 0 and 1000000; got -2", m["message"])
}

func TestFixturesAtRunTime(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	st, m := in.call("POST", "/_sim/fixtures", "", `{"accounts":[{"api_key":"team-a","name":"Team A","plan":"pro","balance_minutes":7}],
		"media_rules":[{"pattern":"*/trailer.mp4","duration_seconds":150}]}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	assert.Equal(t, float64(7), in.balance("team-a"))
	id := in.create("team-a", "https://cdn.test/trailer.mp4")
	_, p := in.call("GET", "/api/v1/projects/"+id, "team-a", "")
	assert.Equal(t, float64(3), p["cost_minutes"], "the loaded media rule gives 150 s")

	st, m = in.call("POST", "/_sim/fixtures", "", `{"accounts":[{"api_key":"x","plan":"gold"}]}`)
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Contains(t, m["message"], "accounts.json")
	st, m = in.call("POST", "/_sim/fixtures", "", `{}`)
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Equal(t, "send at least one of accounts, options, voices, media_rules, studio, or from_startup: true", m["message"])
}

func TestSeedChangesIDs(t *testing.T) {
	t.Parallel()
	ids := func(seed uint64) []string {
		in := start(t, func(c *app.Config) {
			// The seed keys ids through the store (store.KeySeed), as
			// dubsim's --seed does.
			st, err := store.Open(filepath.Join(t.TempDir(), "seeded.db"), store.NoSync(), store.KeySeed(seed))
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			c.Seed, c.Store = seed, st
		})
		var out []string
		for i := 0; i < 3; i++ {
			out = append(out, in.create("dubsim-enterprise", "https://cdn.test/v.mp4"))
		}
		return out
	}
	a, b, c := ids(1), ids(1), ids(2)
	assert.Equal(t, a, b, "the same seed gives the same ids")
	assert.NotEqual(t, a, c, "another seed gives other ids")
}

func TestNoControl(t *testing.T) {
	t.Parallel()
	in := start(t, func(c *app.Config) { c.NoControl = true })
	st, m := in.call("GET", "/_sim/clock", "", "")
	assert.Equal(t, http.StatusNotFound, st)
	assert.Equal(t, "NotFoundError", m["error"])
}

func TestFaultsAndJournalTogether(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	st, rule := in.call("POST", "/_sim/faults", "", `{"method":"GET","path":"/api/v1/balance","count":1,"action":{"type":"error","status":503,"error":"ServiceUnavailableError","message":"Try again later"}}`)
	require.Equal(t, http.StatusCreated, st, "%v", rule)
	st, m := in.call("GET", "/api/v1/balance", "dubsim-pro", "")
	assert.Equal(t, http.StatusServiceUnavailable, st)
	assert.Equal(t, map[string]any{"error": "ServiceUnavailableError", "message": "Try again later"}, m, "the platform envelope")
	st, _ = in.call("GET", "/api/v1/balance", "dubsim-pro", "")
	assert.Equal(t, http.StatusOK, st, "count 1: the next call passes")

	st, m = in.call("GET", "/_sim/requests?path=/api/v1/balance", "", "")
	require.Equal(t, http.StatusOK, st, "%v", m)
	reqs := m["requests"].([]any)
	require.Len(t, reqs, 2)
	faulted := 0
	for _, r := range reqs {
		if r.(map[string]any)["fault"] == rule["id"] {
			faulted++
		}
	}
	assert.Equal(t, 1, faulted, "the journal names the fault rule that answered")
}

// TestConformanceReportOfASloppyClient scripts a client that breaks the
// contract in many ways against a real instance and reads the report.
func TestConformanceReportOfASloppyClient(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	const key = "dubsim-enterprise"
	send := func(method, path, ctype, body string) int {
		req, err := http.NewRequest(method, in.url+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	// JSON sent as text/plain, twice without change.
	assert.Equal(t, 400, send("POST", "/api/v1/projects", "text/plain", `{"source_lang":"en"}`))
	assert.Equal(t, 400, send("POST", "/api/v1/projects", "text/plain", `{"source_lang":"en"}`))
	// No Idempotency-Key, then polling with no pause, and a delete while processing.
	id := in.create(key, "https://cdn.test/sloppy.mp4")
	for i := 0; i < 3; i++ {
		send("GET", "/api/v1/projects/"+id, "", "")
	}
	assert.Equal(t, 400, send("DELETE", "/api/v1/projects/"+id, "", ""))
	// A made-up voice key, without reading the catalogue.
	st, _ := in.call("POST", "/_sim/projects/"+id+"/outcome", "", `{"outcome":"ready"}`)
	require.Equal(t, 200, st)
	assert.Equal(t, 400, send("POST", "/api/v1/projects/"+id+"/translations", "application/json",
		`{"target_script":[{"start_ms":0,"end_ms":900,"text":"Hallo","speaker_id":1}],"target_speakers":[{"speaker_id":1,"style":"feminine","voice_key":"abc123:de-DE-MadeUpNeural"}]}`))
	// Deleted, then read again.
	assert.Equal(t, 200, send("DELETE", "/api/v1/projects/"+id, "", ""))
	assert.Equal(t, 404, send("GET", "/api/v1/projects/"+id, "", ""))
	// A 429 whose Retry-After is ignored.
	st, _ = in.call("POST", "/_sim/faults", "", `{"api_key":"dubsim-enterprise","path":"/api/v1/balance","count":1,"action":{"type":"rate_limit","retry_after_seconds":30}}`)
	require.Equal(t, 201, st)
	assert.Equal(t, 429, send("GET", "/api/v1/balance", "", ""))
	assert.Equal(t, 200, send("GET", "/api/v1/balance", "", ""))

	st, rep := in.call("GET", "/_sim/report?api_key="+key, "", "")
	require.Equal(t, http.StatusOK, st)
	rules := map[string]bool{}
	for _, f := range rep["findings"].([]any) {
		rules[f.(map[string]any)["rule"].(string)] = true
	}
	for _, want := range []string{"json-without-content-type", "retry-without-change", "post-without-idempotency-key",
		"polling-too-fast", "action-while-in-progress", "voice-not-from-catalogue", "request-after-delete", "ignored-retry-after"} {
		assert.True(t, rules[want], "finding %s in %v", want, rules)
	}

	req, err := http.NewRequest("GET", in.url+"/_sim/report?api_key="+key+"&format=text", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(text), "voice-not-from-catalogue")

	_, clean := in.call("GET", "/_sim/report?api_key=dubsim-free", "", "")
	assert.Empty(t, clean["findings"], "a key that sent nothing has no findings")
}

// A full reset also drops forced-outcome rules: a rule left by one test
// must not fail the next test's project on a shared instance.
func TestResetDropsOutcomeRules(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	st, m := in.call("POST", "/_sim/outcomes", "", `{"api_key":"dubsim-pro","outcome":"error","error_message":"left over","count":1}`)
	require.Equal(t, http.StatusCreated, st, "%v", m)
	st, m = in.call("POST", "/_sim/reset", "", "")
	require.Equal(t, http.StatusOK, st, "%v", m)
	st, m = in.call("GET", "/_sim/outcomes", "", "")
	require.Equal(t, http.StatusOK, st, "%v", m)
	assert.Empty(t, m["rules"])
	id := in.create("dubsim-pro", "https://cdn.test/after-reset.mp4")
	in.call("POST", "/_sim/clock/advance", "", `{"seconds":3600}`)
	assert.Equal(t, "ready", in.project("dubsim-pro", id)["status"])
}
