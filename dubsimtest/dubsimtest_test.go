package dubsimtest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dubsim/dubsim/dubsimtest"
	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)

const shortVideo = "https://media.dubsim.test/short.mp4"

// call sends a request to the simulator's platform or studio API and
// decodes a JSON answer.
func call(t testing.TB, s *dubsimtest.Sim, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	return callAt(t, s.URL, method, path, key, body)
}

// callAt is call on the simulator (or sandbox) at base.
func callAt(t testing.TB, base, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, base+path, strings.NewReader(body))
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var m map[string]any
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &m), "%s", raw)
	}
	return resp.StatusCode, m
}

// createProject creates a platform project from the short fixture video.
func createProject(t testing.TB, s *dubsimtest.Sim, key string) string {
	t.Helper()
	st, m := call(t, s, "POST", "/api/v1/projects", key, `{"source_lang":"en","target_lang":"de-DE","source_video_url":"`+shortVideo+`"}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	return m["project_id"].(string)
}

func projectStatus(t testing.TB, s *dubsimtest.Sim, key, id string) map[string]any {
	t.Helper()
	st, m := call(t, s, "GET", "/api/v1/projects/"+id, key, "")
	require.Equal(t, http.StatusOK, st, "%v", m)
	return m
}

func balance(t testing.TB, s *dubsimtest.Sim, key string) float64 {
	t.Helper()
	st, m := call(t, s, "GET", "/api/v1/balance", key, "")
	require.Equal(t, http.StatusOK, st, "%v", m)
	return m["balance_minutes"].(float64)
}

// apiError asserts that err is an *APIError with the status and name.
// apiError asserts that err is an *APIError with status and name.
func apiError(t testing.TB, err error, status int, name string) {
	t.Helper()
	_ = asAPIError(t, err, status, name)
}

// asAPIError is apiError that returns the error for further assertions.
func asAPIError(t testing.TB, err error, status int, name string) *dubsimtest.APIError {
	t.Helper()
	var ae *dubsimtest.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, status, ae.Status, "%v", err)
	assert.Equal(t, name, ae.Name, "%v", err)
	return ae
}

func TestFixtureKeys(t *testing.T) {
	t.Parallel()
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	keys := map[string]sim.AccountSpec{}
	for _, a := range fx.Accounts {
		keys[a.APIKey] = a
	}
	for _, tc := range []struct {
		key     string
		plan    sim.Plan
		balance int64
	}{
		{dubsimtest.KeyFree, sim.PlanNone, 30},
		{dubsimtest.KeySubscription, "subscription", 100},
		{dubsimtest.KeyPro, "pro", 600},
		{dubsimtest.KeyEnterprise, "enterprise", 6000},
		{dubsimtest.KeyBroke, "enterprise", 0},
	} {
		t.Run(tc.key, func(t *testing.T) {
			a, ok := keys[tc.key]
			require.True(t, ok, "no fixture account %s", tc.key)
			assert.Equal(t, tc.plan, a.Plan)
			assert.Equal(t, tc.balance, a.BalanceMinutes)
		})
	}
}

func TestProjectBecomesReadyOnAdvance(t *testing.T) {
	t.Parallel()
	s := dubsimtest.Start(t, dubsimtest.WithStart(t0))
	ctx := t.Context()

	h := dubsimtest.Must(s.Health(ctx))(t)
	assert.Equal(t, "ok", h.Status)
	assert.Equal(t, t0, h.Now)
	ck := dubsimtest.Must(s.Clock.Get(ctx))(t)
	assert.Equal(t, dubsimtest.Clock{Now: t0, TimeScale: 0, Frozen: true}, ck, "time stands still at scale 0: frozen, as the dashboard shows it")

	id := createProject(t, s, dubsimtest.KeyPro)
	assert.Equal(t, "in_progress", projectStatus(t, s, dubsimtest.KeyPro, id)["status"])
	assert.Equal(t, float64(599), balance(t, s, dubsimtest.KeyPro), "one minute charged")

	now := dubsimtest.Must(s.Clock.Advance(ctx, time.Hour))(t)
	assert.Equal(t, t0.Add(time.Hour), now)
	p := projectStatus(t, s, dubsimtest.KeyPro, id)
	assert.Equal(t, "ready", p["status"])
	assert.NotEmpty(t, p["output_tts_audio_url"])

	now = dubsimtest.Must(s.Clock.AdvanceTo(ctx, t0.Add(2*time.Hour)))(t)
	assert.Equal(t, t0.Add(2*time.Hour), now)
	_, err := s.Clock.AdvanceTo(ctx, t0)
	require.ErrorContains(t, err, "the clock is already at")
	assert.Equal(t, t0.Add(2*time.Hour), dubsimtest.Must(s.Clock.Get(ctx))(t).Now, "a refused AdvanceTo changes nothing")
}

func TestClockControls(t *testing.T) {
	t.Parallel()
	s := dubsimtest.Start(t, dubsimtest.WithStart(t0))
	ctx := t.Context()

	ck := dubsimtest.Must(s.Clock.Freeze(ctx))(t)
	assert.True(t, ck.Frozen)
	ck = dubsimtest.Must(s.Clock.Resume(ctx))(t)
	assert.False(t, ck.Frozen)
	assert.Equal(t, 1.0, ck.TimeScale, "a clock at scale 0 before the freeze runs in real time after resume")
	ck = dubsimtest.Must(s.Clock.SetScale(ctx, 0))(t)
	assert.True(t, ck.Frozen, "scale 0 stops time")
	assert.False(t, ck.Now.Before(t0), "time ran forward between resume and scale 0, never back")
	again := dubsimtest.Must(s.Clock.Get(ctx))(t)
	assert.Equal(t, ck.Now, again.Now, "and stands still at scale 0")
	_, err := s.Clock.SetScale(ctx, -1)
	apiError(t, err, http.StatusBadRequest, "ValidationError")
}

func TestCreateAccount(t *testing.T) {
	t.Parallel()
	s := dubsimtest.Start(t)
	ctx := t.Context()
	for _, tc := range []struct {
		name    string
		spec    dubsimtest.AccountSpec
		check   func(t *testing.T, a dubsimtest.Account)
		balance float64
	}{
		{"chosen key", dubsimtest.AccountSpec{APIKey: "team-a", Plan: "pro", BalanceMinutes: dubsimtest.Ptr[int64](50)}, func(t *testing.T, a dubsimtest.Account) {
			assert.Equal(t, "team-a", a.APIKey)
			assert.Equal(t, "pro", a.Plan)
		}, 50},
		{"defaults", dubsimtest.AccountSpec{}, func(t *testing.T, a dubsimtest.Account) {
			assert.True(t, strings.HasPrefix(a.APIKey, "dsk_"), a.APIKey)
			assert.Equal(t, "none", a.Plan)
			assert.NotEmpty(t, a.UserID)
			assert.NotEmpty(t, a.CompanyID)
		}, 30}, // dubsim-free's, the fixture account of the plan none
		{"plan defaults", dubsimtest.AccountSpec{Plan: "pro"}, func(t *testing.T, a dubsimtest.Account) {
			assert.True(t, a.CloningEnabled, "as dubsim-pro")
			assert.False(t, a.RetranslationEnabled, "as dubsim-pro")
		}, 600},
		{"explicit zero and false", dubsimtest.AccountSpec{Plan: "enterprise", BalanceMinutes: dubsimtest.Ptr[int64](0), CloningEnabled: dubsimtest.Ptr(false)}, func(t *testing.T, a dubsimtest.Account) {
			assert.False(t, a.CloningEnabled)
			assert.True(t, a.RetranslationEnabled, "as dubsim-enterprise")
		}, 0},
		{"studio settings", dubsimtest.AccountSpec{Plan: "enterprise", BalanceMinutes: dubsimtest.Ptr[int64](10), UserEmail: "qa@acme-media.example",
			RateLimit: &dubsimtest.RateLimit{PerMinute: 5}}, func(t *testing.T, a dubsimtest.Account) {
			assert.Equal(t, "qa@acme-media.example", a.UserEmail)
			assert.Equal(t, &dubsimtest.RateLimit{PerMinute: 5}, a.RateLimit)
		}, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := dubsimtest.Must(s.Accounts.Create(ctx, tc.spec))(t)
			tc.check(t, a)
			assert.Equal(t, int64(tc.balance), a.BalanceMinutes)
			assert.Equal(t, tc.balance, balance(t, s, a.APIKey), "the new key works on the platform API")
		})
	}
	_, err := s.Accounts.Create(ctx, dubsimtest.AccountSpec{APIKey: "team-a"})
	ae := asAPIError(t, err, http.StatusConflict, "ConflictError")
	assert.Equal(t, `An account with api_key "team-a" already exists`, ae.Message)
	assert.Equal(t, `dubsim: POST /_sim/accounts: 409 ConflictError: An account with api_key "team-a" already exists`, err.Error())
}

func TestUpdateAccount(t *testing.T) {
	t.Parallel()
	s := dubsimtest.Start(t)
	ctx := t.Context()
	creds := &dubsimtest.StorageCredentials{AccessKeyID: "AKIAEXAMPLE", SecretAccessKey: "secret", Buckets: []string{"my-bucket"}}
	a := dubsimtest.Must(s.Accounts.Update(ctx, dubsimtest.KeyFree, dubsimtest.AccountPatch{Storage: creds, RateLimit: &dubsimtest.RateLimit{PerDay: 9}}))(t)
	assert.Equal(t, &dubsimtest.StorageCredentials{AccessKeyID: "AKIAEXAMPLE", Buckets: []string{"my-bucket"}}, a.Storage, "shown without the secret")
	assert.Equal(t, &dubsimtest.RateLimit{PerDay: 9}, a.RateLimit)

	a = dubsimtest.Must(s.Accounts.Update(ctx, dubsimtest.KeyFree, dubsimtest.AccountPatch{ClearRateLimit: true}))(t)
	assert.Nil(t, a.RateLimit)
	assert.NotNil(t, a.Storage, "left as it was")

	_, err := s.Accounts.Update(ctx, dubsimtest.KeyFree, dubsimtest.AccountPatch{})
	apiError(t, err, http.StatusBadRequest, "ValidationError")
}

func TestForceProjectOutcome(t *testing.T) {
	t.Parallel()
	s := dubsimtest.Start(t, dubsimtest.WithStart(t0))
	ctx := t.Context()
	const key = dubsimtest.KeyEnterprise
	for _, tc := range []struct {
		name       string
		outcome    dubsimtest.Outcome
		forced     string // status answered
		planned    bool   // due_at and planned_outcome answered
		afterForce string
		afterHour  string
	}{
		{"error now", dubsimtest.Outcome{Outcome: dubsimtest.OutcomeError, ErrorMessage: "No speech detected", Now: true}, "error", false, "error", "error"},
		{"error at due time", dubsimtest.Outcome{Outcome: dubsimtest.OutcomeError}, "in_progress", true, "in_progress", "error"},
		{"ready", dubsimtest.Outcome{Outcome: dubsimtest.OutcomeReady}, "ready", false, "ready", "ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := createProject(t, s, key)
			f := dubsimtest.Must(s.Outcomes.ForceProject(ctx, id, tc.outcome))(t)
			assert.Equal(t, id, f.ProjectID)
			assert.Equal(t, tc.forced, f.Status)
			assert.Equal(t, tc.planned, f.DueAt != nil, "due_at")
			if tc.planned {
				assert.Equal(t, tc.outcome.Outcome, f.PlannedOutcome)
			}
			assert.Equal(t, tc.afterForce, projectStatus(t, s, key, id)["status"])
			dubsimtest.Must(s.Clock.Advance(ctx, time.Hour))(t)
			p := projectStatus(t, s, key, id)
			assert.Equal(t, tc.afterHour, p["status"])
			if tc.outcome.ErrorMessage != "" {
				assert.Equal(t, tc.outcome.ErrorMessage, p["error_message"])
			}
		})
	}
	_, err := s.Outcomes.ForceProject(ctx, "123456789", dubsimtest.Outcome{Outcome: dubsimtest.OutcomeError})
	apiError(t, err, http.StatusNotFound, "NotFoundError")
}

func TestOutcomeRules(t *testing.T) {
	t.Parallel()
	s := dubsimtest.Start(t)
	ctx := t.Context()
	r := dubsimtest.Must(s.Outcomes.AddRule(ctx, dubsimtest.OutcomeRuleSpec{APIKey: dubsimtest.KeyPro, Outcome: dubsimtest.OutcomeError, ErrorMessage: "TTS quota exceeded"}))(t)
	assert.NotEmpty(t, r.ID)
	assert.Equal(t, 1, r.Remaining, "count 0 means 1")
	other := dubsimtest.Must(s.Outcomes.AddRule(ctx, dubsimtest.OutcomeRuleSpec{APIKey: dubsimtest.KeyFree, Count: 3, Outcome: dubsimtest.OutcomeReady}))(t)
	rules := dubsimtest.Must(s.Outcomes.Rules(ctx))(t)
	assert.Len(t, rules, 2)

	before := balance(t, s, dubsimtest.KeyPro)
	id := createProject(t, s, dubsimtest.KeyPro)
	dubsimtest.Must(s.Clock.Advance(ctx, time.Hour))(t)
	p := projectStatus(t, s, dubsimtest.KeyPro, id)
	assert.Equal(t, "error", p["status"])
	assert.Equal(t, "TTS quota exceeded", p["error_message"])
	assert.Equal(t, before, balance(t, s, dubsimtest.KeyPro), "refunded")

	rules = dubsimtest.Must(s.Outcomes.Rules(ctx))(t)
	require.Len(t, rules, 1, "the used-up rule is gone")
	assert.Equal(t, other.ID, rules[0].ID)
	require.NoError(t, s.Outcomes.RemoveRule(ctx, other.ID))
	assert.Empty(t, dubsimtest.Must(s.Outcomes.Rules(ctx))(t))
	apiError(t, s.Outcomes.RemoveRule(ctx, other.ID), http.StatusNotFound, "NotFoundError")
}

func TestFaults(t *testing.T) {
	t.Parallel()
	s := dubsimtest.Start(t)
	ctx := t.Context()

	once := dubsimtest.Must(s.Faults.Add(ctx, dubsimtest.FaultRule{Method: "POST", Path: "/api/v1/projects", Count: 1,
		Action: dubsimtest.FaultAction{Type: "error", Status: 503, Error: "ServiceUnavailableError", Message: "Try again later"}}))(t)
	require.NotNil(t, once.Remaining)
	assert.Equal(t, int64(1), *once.Remaining)
	limited := dubsimtest.Must(s.Faults.Add(ctx, dubsimtest.FaultRule{ID: "slow-down", APIKey: dubsimtest.KeyFree,
		Action: dubsimtest.FaultAction{Type: "rate_limit", RetryAfterSeconds: 5}}))(t)
	assert.Nil(t, limited.Remaining, "unlimited")

	body := `{"source_lang":"en","target_lang":"de-DE","source_video_url":"` + shortVideo + `"}`
	st, m := call(t, s, "POST", "/api/v1/projects", dubsimtest.KeyPro, body)
	assert.Equal(t, http.StatusServiceUnavailable, st)
	assert.Equal(t, map[string]any{"error": "ServiceUnavailableError", "message": "Try again later"}, m)
	st, _ = call(t, s, "POST", "/api/v1/projects", dubsimtest.KeyPro, body)
	assert.Equal(t, http.StatusOK, st, "count 1: fired once")
	st, _ = call(t, s, "GET", "/api/v1/balance", dubsimtest.KeyFree, "")
	assert.Equal(t, http.StatusTooManyRequests, st)

	faults := dubsimtest.Must(s.Faults.List(ctx))(t)
	require.Len(t, faults, 2, "the used-up rule stays listed as spent")
	assert.Equal(t, once.ID, faults[0].ID)
	assert.Equal(t, "spent", faults[0].State)
	assert.Equal(t, int64(1), faults[0].Hits)
	assert.Equal(t, "slow-down", faults[1].ID)
	assert.Equal(t, "active", faults[1].State)
	assert.Equal(t, int64(1), faults[1].Hits)
	assert.Equal(t, 5, int(faults[1].Action.RetryAfterSeconds))

	fired := dubsimtest.Must(s.Journal.Requests(ctx, dubsimtest.RequestFilter{Status: "503"}))(t)
	require.Len(t, fired, 1)
	assert.Equal(t, once.ID, fired[0].Fault)

	require.NoError(t, s.Faults.Remove(ctx, once.ID), "a spent rule is removed like a live one")
	apiError(t, s.Faults.Remove(ctx, once.ID), http.StatusNotFound, "NotFoundError")
	require.NoError(t, s.Faults.Remove(ctx, "slow-down"))
	dubsimtest.Must(s.Faults.Add(ctx, dubsimtest.FaultRule{Action: dubsimtest.FaultAction{Type: "drop"}, Path: "/nowhere"}))(t)
	assert.Equal(t, 1, dubsimtest.Must(s.Faults.Clear(ctx))(t))

	_, err := s.Faults.Add(ctx, dubsimtest.FaultRule{Action: dubsimtest.FaultAction{Type: "explode"}})
	ae := asAPIError(t, err, http.StatusBadRequest, "ValidationError")
	assert.Contains(t, ae.Message, "action.type must be one of")
}

func TestJournalVerifyAndReport(t *testing.T) {
	t.Parallel()
	s := dubsimtest.Start(t)
	ctx := t.Context()
	const key = dubsimtest.KeyPro
	createProject(t, s, key) // no Idempotency-Key: a report finding
	call(t, s, "GET", "/api/v1/projects/000000000", key, "")

	reqs := dubsimtest.Must(s.Journal.Requests(ctx, dubsimtest.RequestFilter{APIKey: key}))(t)
	require.Len(t, reqs, 2)
	assert.Equal(t, "GET", reqs[0].Method, "newest first")
	assert.Equal(t, http.StatusNotFound, reqs[0].Status)
	assert.NotEmpty(t, reqs[0].ResponseBody, "error bodies are kept")
	assert.Equal(t, "POST", reqs[1].Method)
	assert.Equal(t, "platform", reqs[1].Interface)
	assert.Equal(t, "application/json", reqs[1].Headers["Content-Type"])
	assert.Contains(t, reqs[1].RequestBody, shortVideo)
	assert.False(t, reqs[1].Time.IsZero())

	for _, tc := range []struct {
		name     string
		m        dubsimtest.Match
		ok       bool
		matched  int
		nearMiss bool
	}{
		{"created once", dubsimtest.Match{Method: "POST", Path: "/api/v1/projects", APIKey: key, Times: dubsimtest.Exactly(1)}, true, 1, false},
		{"not twice", dubsimtest.Match{Method: "POST", Path: "/api/v1/projects", Times: dubsimtest.Exactly(2)}, false, 1, false},
		{"never a delete", dubsimtest.Match{Method: "DELETE", Times: dubsimtest.Exactly(0)}, true, 0, false},
		{"zero Times is at least one", dubsimtest.Match{Method: "DELETE"}, false, 0, false},
		{"any times, none", dubsimtest.Match{Method: "DELETE", Times: dubsimtest.AnyTimes}, true, 0, false},
		{"at least 2", dubsimtest.Match{Path: "/api/v1/projects*", APIKey: key, Times: dubsimtest.AtLeast(2)}, true, 2, false},
		{"at least 3", dubsimtest.Match{Path: "/api/v1/projects*", APIKey: key, Times: dubsimtest.AtLeast(3)}, false, 2, false},
		{"at most 1", dubsimtest.Match{Path: "/api/v1/projects*", APIKey: key, Times: dubsimtest.AtMost(1)}, false, 2, false},
		{"between 2 and 5", dubsimtest.Match{Path: "/api/v1/projects*", APIKey: key, Times: dubsimtest.Between(2, 5)}, true, 2, false},
		{"without idempotency key", dubsimtest.Match{Method: "POST", Path: "/api/v1/projects", Headers: map[string]string{"Idempotency-Key": ""}}, true, 1, false},
		{"a 4xx on the project", dubsimtest.Match{Path: "/api/v1/projects/*", Status: "4xx"}, true, 1, false},
		{"near miss", dubsimtest.Match{Method: "POST", Path: "/api/v1/projects", Status: "201"}, false, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := dubsimtest.Must(s.Journal.Verify(ctx, tc.m))(t)
			assert.Equal(t, tc.ok, v.OK, "%+v", v)
			assert.Equal(t, tc.matched, v.Matched)
			assert.NotEmpty(t, v.Expected)
			if tc.nearMiss {
				require.NotEmpty(t, v.NearMisses)
				assert.Equal(t, "POST", v.NearMisses[0].Request.Method)
				assert.NotEmpty(t, v.NearMisses[0].Reason)
			}
		})
	}

	rep := dubsimtest.Must(s.Journal.Report(ctx, key))(t)
	assert.Equal(t, key, rep.APIKey)
	assert.Equal(t, 2, rep.Summary.Requests)
	var rules []string
	for _, f := range rep.Findings {
		rules = append(rules, f.Rule)
	}
	assert.Contains(t, rules, "post-without-idempotency-key")
	assert.Contains(t, rep.Text(), "post-without-idempotency-key")
	_, err := s.Journal.Report(ctx, "")
	apiError(t, err, http.StatusBadRequest, "ValidationError")

	require.NoError(t, s.Journal.Clear(ctx))
	assert.Empty(t, dubsimtest.Must(s.Journal.Requests(ctx, dubsimtest.RequestFilter{APIKey: key}))(t))
	_, err = s.Journal.Requests(ctx, dubsimtest.RequestFilter{Status: "teapot"})
	apiError(t, err, http.StatusBadRequest, "ValidationError")
}

func TestResetAndState(t *testing.T) {
	t.Parallel()
	s := dubsimtest.Start(t)
	ctx := t.Context()
	extra := dubsimtest.Must(s.Accounts.Create(ctx, dubsimtest.AccountSpec{Plan: "pro", BalanceMinutes: dubsimtest.Ptr[int64](5)}))(t)
	id := createProject(t, s, dubsimtest.KeyPro)
	createProject(t, s, extra.APIKey)

	st := dubsimtest.Must(s.State(ctx, dubsimtest.KeyPro))(t)
	require.Len(t, st.Projects, 1)
	assert.Equal(t, id, st.Projects[0].ID)
	require.Len(t, st.Accounts, 1)
	assert.Equal(t, int64(599), st.Accounts[0].BalanceMinutes)
	require.Len(t, st.PendingTransitions, 1)
	assert.Equal(t, "ready", st.PendingTransitions[0].To)

	require.NoError(t, s.Accounts.Reset(ctx, dubsimtest.KeyPro))
	assert.Equal(t, float64(600), balance(t, s, dubsimtest.KeyPro))
	assert.Len(t, dubsimtest.Must(s.State(ctx, ""))(t).Projects, 1, "the other account's project stays")

	require.NoError(t, s.Reset(ctx))
	st = dubsimtest.Must(s.State(ctx, ""))(t)
	assert.Empty(t, st.Projects)
	assert.Len(t, st.Accounts, 5, "the fixture accounts only")
	apiError(t, s.Accounts.Reset(ctx, extra.APIKey), http.StatusNotFound, "NotFoundError")
}

func TestLoadFixtures(t *testing.T) {
	t.Parallel()
	s := dubsimtest.Start(t)
	ctx := t.Context()
	loaded := dubsimtest.Must(s.LoadFixtures(ctx, json.RawMessage(`{"accounts":[{"api_key":"team-b","plan":"pro","balance_minutes":50}]}`)))(t)
	assert.Equal(t, 6, loaded["accounts"], "laid over the 5 fixture accounts")
	assert.Equal(t, float64(50), balance(t, s, "team-b"))

	loaded = dubsimtest.Must(s.LoadFixtures(ctx, map[string]any{"media_rules": []map[string]any{{"pattern": "*/trailer.mp4", "duration_seconds": 150}}}))(t)
	assert.Equal(t, 9, loaded["media_rules"], "laid over the 8 fixture rules")
	assert.Equal(t, 6, loaded["accounts"], "the previous load's account stays")

	_, err := s.LoadFixtures(ctx, map[string]any{})
	apiError(t, err, http.StatusBadRequest, "ValidationError")
}

// TestStudioControls drives the studio controls: an artifact forced to
// fail, another forced to complete, and a video of it given a status.
func TestStudioControls(t *testing.T) {
	t.Parallel()
	s := dubsimtest.Start(t)
	ctx := t.Context()
	const key = dubsimtest.KeyFree // a user of the fixture company Acme Media
	artifact := func(url string) string {
		st, m := call(t, s, "POST", "/api/v1/artifacts/create", key, `{"name":"Source","type":"video","url":"`+url+`"}`)
		require.Equal(t, http.StatusOK, st, "%v", m)
		return m["id"].(string)
	}

	failed := artifact("https://cdn.test/broken.mp4")
	f := dubsimtest.Must(s.Outcomes.ForceArtifact(ctx, failed, dubsimtest.Outcome{Outcome: dubsimtest.OutcomeError, ErrorMessage: "Unsupported codec", Now: true}))(t)
	assert.Equal(t, failed, f.ArtifactID)
	assert.Equal(t, sim.ArtifactFailed, f.Status)
	_, got := call(t, s, "GET", "/api/v1/artifacts/"+failed, key, "")
	assert.Equal(t, sim.ArtifactFailed, got["status"])

	size, seconds := int64(1<<20), 90.0
	done := artifact("https://cdn.test/episode-1.mp4")
	f = dubsimtest.Must(s.Outcomes.ForceArtifact(ctx, done, dubsimtest.Outcome{Outcome: dubsimtest.OutcomeReady, Now: true, Size: &size, DurationSeconds: &seconds}))(t)
	assert.Equal(t, sim.ArtifactCompleted, f.Status)
	_, err := s.Outcomes.ForceArtifact(ctx, done, dubsimtest.Outcome{Outcome: dubsimtest.OutcomeError})
	apiError(t, err, http.StatusConflict, "ConflictError")

	st, m := call(t, s, "POST", "/api/v1/projects", key, `{"name":"Season 1","managerEmail":"alice.johnson@acme-media.example"}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	pid := m["id"].(string)
	st, m = call(t, s, "POST", "/api/v1/projects/"+pid+"/videos/create", key,
		`{"name":"Episode 1","workflowType":"dubbing","sourceArtifactId":"`+done+`","sourceLanguage":"en","targetLanguages":["es-ES"]}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	vid := m["id"].(string)
	assert.Equal(t, sim.VideoNew, m["status"])

	v := dubsimtest.Must(s.Outcomes.SetVideoStatus(ctx, vid, sim.VideoCompleted, false))(t)
	assert.Equal(t, dubsimtest.VideoStatus{VideoID: vid, Status: sim.VideoCompleted}, v)
	_, m = call(t, s, "GET", "/api/v1/projects/"+pid+"/videos/"+vid, key, "")
	assert.Equal(t, sim.VideoCompleted, m["status"])
	v = dubsimtest.Must(s.Outcomes.SetVideoStatus(ctx, vid, sim.VideoNew, true))(t)
	assert.NotNil(t, v.NextTransitionAt, "the automatic lifecycle continues")
}

func TestOptions(t *testing.T) {
	t.Parallel()
	fxDir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(fxDir, "accounts.json"),
		[]byte(`{"accounts":[{"api_key":"team-c","plan":"enterprise","balance_minutes":77}]}`), 0o644))

	for _, tc := range []struct {
		name  string
		opts  []dubsimtest.Option
		check func(t *testing.T, s *dubsimtest.Sim)
	}{
		{"start", []dubsimtest.Option{dubsimtest.WithStart(t0)}, func(t *testing.T, s *dubsimtest.Sim) {
			assert.Equal(t, t0, dubsimtest.Must(s.Clock.Get(t.Context()))(t).Now)
		}},
		{"default start is now, to the second, frozen", nil, func(t *testing.T, s *dubsimtest.Sim) {
			ck := dubsimtest.Must(s.Clock.Get(t.Context()))(t)
			assert.Equal(t, ck.Now.Truncate(time.Second), ck.Now)
			assert.WithinDuration(t, time.Now(), ck.Now, time.Minute)
			assert.Zero(t, ck.TimeScale)
		}},
		{"time scale", []dubsimtest.Option{dubsimtest.WithTimeScale(60)}, func(t *testing.T, s *dubsimtest.Sim) {
			assert.Equal(t, 60.0, dubsimtest.Must(s.Clock.Get(t.Context()))(t).TimeScale)
		}},
		{"fixtures", []dubsimtest.Option{dubsimtest.WithFixtures(fxDir)}, func(t *testing.T, s *dubsimtest.Sim) {
			assert.Equal(t, float64(77), balance(t, s, "team-c"))
			st, _ := call(t, s, "GET", "/api/v1/balance", dubsimtest.KeyPro, "")
			assert.Equal(t, http.StatusUnauthorized, st, "the overlay's accounts.json replaces the embedded one")
		}},
		{"control token", []dubsimtest.Option{dubsimtest.WithControlToken("s3cret")}, func(t *testing.T, s *dubsimtest.Sim) {
			assert.Equal(t, "s3cret", s.Token, "the Sim's client carries it")
			dubsimtest.Must(s.Clock.Get(t.Context()))(t)
			anon := dubsimtest.NewClient(s.URL)
			_, err := anon.Clock.Get(t.Context())
			apiError(t, err, http.StatusUnauthorized, "UnauthorizedError")
		}},
		{"address", []dubsimtest.Option{dubsimtest.WithAddr(":0")}, func(t *testing.T, s *dubsimtest.Sim) {
			u, err := url.Parse(s.URL)
			require.NoError(t, err)
			assert.Equal(t, "127.0.0.1", u.Hostname(), "an unspecified host is reached on loopback")
			assert.NotEqual(t, "0", u.Port())
			assert.Equal(t, "ok", dubsimtest.Must(s.Health(t.Context()))(t).Status)
		}},
		{"seed", []dubsimtest.Option{dubsimtest.WithSeed(7)}, func(t *testing.T, s *dubsimtest.Sim) {
			same := dubsimtest.Start(t, dubsimtest.WithSeed(7))
			other := dubsimtest.Start(t, dubsimtest.WithSeed(8))
			id := createProject(t, s, dubsimtest.KeyPro)
			assert.Equal(t, id, createProject(t, same, dubsimtest.KeyPro), "same seed, same ids")
			assert.NotEqual(t, id, createProject(t, other, dubsimtest.KeyPro), "another seed, other ids")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.check(t, dubsimtest.Start(t, tc.opts...))
		})
	}

	_, err := dubsimtest.New(dubsimtest.WithFixtures(filepath.Join(fxDir, "accounts.json")))
	assert.ErrorContains(t, err, "is not a directory")
}

// TestRunningClock: with a running clock, the background sweep applies due
// transitions without any read of the project: the refund of a failed
// project shows in the balance.
func TestRunningClock(t *testing.T) {
	t.Parallel()
	s := dubsimtest.Start(t, dubsimtest.WithTimeScale(1e5))
	ctx := t.Context()
	const key = dubsimtest.KeyPro
	dubsimtest.Must(s.Outcomes.AddRule(ctx, dubsimtest.OutcomeRuleSpec{APIKey: key, Outcome: dubsimtest.OutcomeError}))(t)
	// Stopped while the charge is read: at 1e5 a busy machine could
	// otherwise let the failure and its refund land before the read.
	dubsimtest.Must(s.Clock.Freeze(ctx))(t)
	createProject(t, s, key)
	assert.Equal(t, float64(599), balance(t, s, key))
	dubsimtest.Must(s.Clock.Resume(ctx))(t)
	require.Eventually(t, func() bool { return balance(t, s, key) == 600 }, 30*time.Second, 5*time.Millisecond,
		"the sweep fails the project and refunds its minute")
}

// TestIsolation: two simulators of one test share nothing.
func TestIsolation(t *testing.T) {
	t.Parallel()
	a := dubsimtest.Start(t, dubsimtest.WithStart(t0))
	b := dubsimtest.Start(t, dubsimtest.WithStart(t0))
	ctx := t.Context()
	assert.NotEqual(t, a.URL, b.URL)
	assert.NotEqual(t, a.Dir, b.Dir)

	dubsimtest.Must(a.Accounts.Create(ctx, dubsimtest.AccountSpec{APIKey: "only-in-a"}))(t)
	createProject(t, a, dubsimtest.KeyPro)
	dubsimtest.Must(a.Clock.Advance(ctx, time.Hour))(t)
	dubsimtest.Must(a.Faults.Add(ctx, dubsimtest.FaultRule{Action: dubsimtest.FaultAction{Type: "drop"}}))(t)

	apiError(t, b.Accounts.Reset(ctx, "only-in-a"), http.StatusNotFound, "NotFoundError")
	assert.Equal(t, float64(600), balance(t, b, dubsimtest.KeyPro))
	assert.Equal(t, t0, dubsimtest.Must(b.Clock.Get(ctx))(t).Now)
	assert.Empty(t, dubsimtest.Must(b.Faults.List(ctx))(t))
	assert.Empty(t, dubsimtest.Must(b.Journal.Requests(ctx, dubsimtest.RequestFilter{APIKey: dubsimtest.KeyPro, Method: "POST"}))(t))
}

// TestCleanup: once the test that started it ends, the simulator's
// listener is closed and its directory removed.
func TestCleanup(t *testing.T) {
	t.Parallel()
	var s *dubsimtest.Sim
	t.Run("started", func(t *testing.T) {
		s = dubsimtest.Start(t)
		dubsimtest.Must(s.Health(t.Context()))(t)
		_, err := os.Stat(filepath.Join(s.Dir, "dubsim.db"))
		require.NoError(t, err)
	})
	_, err := s.Health(t.Context())
	assert.True(t, errors.Is(err, syscall.ECONNREFUSED), "%v", err)
	_, err = os.Stat(s.Dir)
	assert.True(t, errors.Is(err, os.ErrNotExist), "%v", err)
	assert.NoError(t, s.Close(), "closing again returns the first result")
}

func TestNewAndClose(t *testing.T) {
	t.Parallel()
	s, err := dubsimtest.New(dubsimtest.WithStart(t0))
	require.NoError(t, err)
	assert.Equal(t, t0, dubsimtest.Must(s.Clock.Get(t.Context()))(t).Now)
	require.NoError(t, s.Close())
	_, err = os.Stat(s.Dir)
	assert.True(t, errors.Is(err, os.ErrNotExist), "%v", err)
	assert.NoError(t, s.Close())
}

// TestClientErrors: answers outside the envelope, bodies that are not
// JSON and unreachable servers.
func TestClientErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		status  int
		body    string
		errName string
		message string
		text    string
	}{
		{"envelope", 404, `{"error":"NotFoundError","message":"No control route GET /_sim/clock"}`, "NotFoundError", "No control route GET /_sim/clock",
			"dubsim: GET /_sim/clock: 404 NotFoundError: No control route GET /_sim/clock"},
		{"proxy page", 502, "<html>Bad Gateway</html>\n", "", "<html>Bad Gateway</html>", "dubsim: GET /_sim/clock: 502 Bad Gateway: <html>Bad Gateway</html>"},
		{"long body", 500, strings.Repeat("x", 5000), "", strings.Repeat("x", 1024), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			t.Cleanup(hs.Close)
			_, err := dubsimtest.NewClient(hs.URL + "/").Clock.Get(t.Context())
			ae := asAPIError(t, err, tc.status, tc.errName)
			assert.Equal(t, tc.message, ae.Message)
			assert.Equal(t, "GET", ae.Method)
			assert.Equal(t, "/_sim/clock", ae.Path)
			if tc.text != "" {
				assert.EqualError(t, err, tc.text)
			}
		})
	}

	t.Run("not json", func(t *testing.T) {
		t.Parallel()
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
		t.Cleanup(hs.Close)
		_, err := dubsimtest.NewClient(hs.URL).Clock.Get(t.Context())
		assert.ErrorContains(t, err, "dubsim: GET /_sim/clock: decoding the answer")
	})
}

// TestAdvanceWaitsForDownloads: an artifact made from a loopback URL is
// completed by the one Advance that passes its processing time, whenever
// the download ends in real time; Work lists the download until then.
func TestAdvanceWaitsForDownloads(t *testing.T) {
	t.Parallel()
	s := dubsimtest.Start(t, dubsimtest.WithStart(t0))
	ctx := t.Context()
	gate := make(chan struct{})
	body := bytes.Repeat([]byte("x"), 4096) // not media: the artifact is a script
	media := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(media.Close)
	t.Cleanup(func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	})
	st, m := call(t, s, "POST", "/api/v1/artifacts/create", dubsimtest.KeyFree, `{"name":"Lines","type":"script","url":"`+media.URL+`/lines.srt"}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	id := m["id"].(string)

	work := dubsimtest.Must(s.Work(ctx))(t)
	require.Len(t, work, 1)
	assert.Equal(t, "download", work[0].Kind)
	assert.Equal(t, id, work[0].ID)
	require.NotNil(t, work[0].NeededAt)
	assert.Equal(t, t0.Add(7*time.Second), *work[0].NeededAt, "start 2 s + processing 5 s")

	close(gate)
	dubsimtest.Must(s.Clock.Advance(ctx, time.Hour))(t)
	_, m = call(t, s, "GET", "/api/v1/artifacts/"+id, dubsimtest.KeyFree, "")
	assert.Equal(t, sim.ArtifactCompleted, m["status"], "%v", m)
	assert.Equal(t, float64(len(body)), m["size"])
	assert.Empty(t, dubsimtest.Must(s.Work(ctx))(t))
}

// TestStudioURLIsTheStudioInterface: StudioURL serves the studio interface
// alone, so a client with two base URLs sends the docs' minimal studio
// create there and gets a studio project, whatever the shared address would
// decide; the journal records it with routed_by "prefix".
func TestStudioURLIsTheStudioInterface(t *testing.T) {
	t.Parallel()
	s := dubsimtest.Start(t, dubsimtest.WithStart(t0))
	require.Equal(t, s.URL+"/studio", s.StudioURL)
	st, m := call(t, s, "POST", "/studio/api/v1/projects", dubsimtest.KeyFree, `{"name":"Marketing","source_lang":"en"}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	assert.True(t, sim.IsStudioID(m["id"].(string)), "%v", m)
	assert.Equal(t, s.StudioURL+"/projects/"+m["id"].(string), m["projectUrl"])
	reqs := dubsimtest.Must(s.Journal.Requests(t.Context(), dubsimtest.RequestFilter{Path: "/studio/*"}))(t)
	require.Len(t, reqs, 1)
	assert.Equal(t, "studio", reqs[0].Interface)
	assert.Equal(t, "prefix", reqs[0].RoutedBy)
}

// TestPlatformURLIsThePlatformInterface: PlatformURL serves the platform
// interface alone: a body the shared address gives the studio (only a
// name) is the platform's create there, and the output links of its
// projects lead back under it.
func TestPlatformURLIsThePlatformInterface(t *testing.T) {
	t.Parallel()
	s := dubsimtest.Start(t, dubsimtest.WithStart(t0))
	require.Equal(t, s.URL+"/platform", s.PlatformURL)
	st, m := callAt(t, s.PlatformURL, "POST", "/api/v1/projects", dubsimtest.KeyPro, `{"name":"Marketing"}`)
	require.Equal(t, http.StatusBadRequest, st, "%v", m)
	assert.Equal(t, map[string]any{"error": "ValidationError", "message": "source_lang is required"}, m)
	st, m = callAt(t, s.PlatformURL, "POST", "/api/v1/projects", dubsimtest.KeyPro, `{"source_lang":"en","target_lang":"de-DE","source_video_url":"`+shortVideo+`"}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	id := m["project_id"].(string)
	dubsimtest.Must(s.Clock.Advance(t.Context(), time.Hour))(t)
	st, m = callAt(t, s.PlatformURL, "GET", "/api/v1/projects/"+id, dubsimtest.KeyPro, "")
	require.Equal(t, http.StatusOK, st, "%v", m)
	assert.True(t, strings.HasPrefix(m["output_video_url"].(string), s.PlatformURL+"/files/projects/"+id+"/"), "%v", m["output_video_url"])
	reqs := dubsimtest.Must(s.Journal.Requests(t.Context(), dubsimtest.RequestFilter{Path: "/platform/*"}))(t)
	require.Len(t, reqs, 3)
	// The path as sent: "*/api/v1/projects" matches it and the shared address's.
	st, m = call(t, s, "POST", "/api/v1/projects", dubsimtest.KeyPro, `{"source_lang":"en","target_lang":"de-DE","source_video_url":"`+shortVideo+`"}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	for pattern, n := range map[string]int{"/api/v1/projects": 1, "/platform/api/v1/projects": 2, "*/api/v1/projects": 3} {
		v := dubsimtest.Must(s.Journal.Verify(t.Context(), dubsimtest.Match{Method: "POST", Path: pattern, Times: dubsimtest.Exactly(n)}))(t)
		assert.True(t, v.OK, "%s: %+v", pattern, v)
	}
	for _, r := range reqs {
		assert.Equal(t, "platform", r.Interface)
		assert.Equal(t, "prefix", r.RoutedBy)
	}
}

// fatalTB records a Fatalf instead of ending the test.
type fatalTB struct {
	testing.TB
	failed string
}

func (f *fatalTB) Helper()                        {}
func (f *fatalTB) Fatalf(format string, a ...any) { f.failed = fmt.Sprintf(format, a...) }

func TestMust(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	value := func(err error) (int, error) { return 7, err }
	only := func(err error) error { return err }
	for _, tc := range []struct {
		name   string
		check  func(tb testing.TB) any
		failed string
	}{
		{"value, no error", func(tb testing.TB) any { return dubsimtest.Must(value(nil))(tb) }, ""},
		{"value, error", func(tb testing.TB) any { return dubsimtest.Must(value(boom))(tb) }, "boom"},
		{"error only, nil", func(tb testing.TB) any { return dubsimtest.Must(only(nil))(tb) }, ""},
		{"error only, error", func(tb testing.TB) any { return dubsimtest.Must(only(boom))(tb) }, "boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := &fatalTB{TB: t}
			v := tc.check(tb)
			assert.Equal(t, tc.failed, tb.failed)
			if tc.failed == "" && strings.HasPrefix(tc.name, "value") {
				assert.Equal(t, 7, v)
			}
		})
	}
	// Against a simulator: a call that returns only an error.
	s := dubsimtest.Start(t)
	tb := &fatalTB{TB: t}
	_ = dubsimtest.Must(s.Faults.Remove(t.Context(), "flt_none"))(tb)
	assert.Contains(t, tb.failed, "404 NotFoundError")
}
