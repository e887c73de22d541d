package openapi_test

// Preparations of the control contract cases (control_cases_test.go): plain
// net/http, not checked against any document.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/engine"
	"github.com/dubsim/dubsim/sim/faults"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/require"
)

var ctlJSONType = map[string]string{"Content-Type": "application/json"}

// ctlCall sends a request and requires the status; it returns the JSON
// object answered, if any.
func ctlCall(t *testing.T, e *env, method, path, key, iface, body string, status int, header ...string) (http.Header, map[string]any) {
	t.Helper()
	hr, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	require.NoError(t, err)
	if key != "" {
		hr.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	if iface != "" {
		hr.Header.Set(server.HeaderInterface, iface)
	}
	if strings.HasPrefix(path, "/_sim/") {
		hr.Header.Set(server.HeaderControl, "1")
	}
	for i := 0; i+1 < len(header); i += 2 {
		hr.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(hr)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, status, res.StatusCode, "%s %s: %s", method, path, ctlClip(raw))
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return res.Header, m
}

// ctlPost prepares with one control call answered 2xx.
func ctlPost(path, body string) func(t *testing.T, e *env) string {
	return func(t *testing.T, e *env) string {
		t.Helper()
		status := http.StatusOK
		if path == "/_sim/accounts" || path == "/_sim/outcomes" || path == "/_sim/faults" {
			status = http.StatusCreated
		}
		ctlCall(t, e, "POST", path, "", "", body, status)
		return ""
	}
}

// ctlCentury advances the clock n times by 100 years (365-day years).
func ctlCentury(n int) func(t *testing.T, e *env) string {
	return func(t *testing.T, e *env) string {
		t.Helper()
		for range n {
			ctlCall(t, e, "POST", "/_sim/clock/advance", "", "", `{"seconds":3153600000}`, http.StatusOK)
		}
		return ""
	}
}

// ctlProject creates an in-progress platform project and returns its id.
func ctlProject(t *testing.T, e *env) string {
	t.Helper()
	_, m := ctlCall(t, e, "POST", "/api/v1/projects", "dubsim-enterprise", server.Platform,
		`{"source_lang":"en","target_lang":"de-DE","source_video_url":"https://cdn.test/a.mp4"}`, http.StatusOK)
	id, _ := m["project_id"].(string)
	require.NotEmpty(t, id, "%v", m)
	return id
}

// ctlFinishedProject creates a project and forces it ready.
func ctlFinishedProject(t *testing.T, e *env) string {
	t.Helper()
	id := ctlProject(t, e)
	ctlCall(t, e, "POST", "/_sim/projects/"+id+"/outcome", "", "", `{"outcome":"ready"}`, http.StatusOK)
	return id
}

// ctlShortReady creates a fr-FR project of a 12 s source (a small output)
// and forces it ready.
func ctlShortReady(t *testing.T, e *env) string {
	t.Helper()
	_, m := ctlCall(t, e, "POST", "/api/v1/projects", "dubsim-enterprise", server.Platform, plProjectBody(plShort), http.StatusOK)
	id, _ := m["project_id"].(string)
	require.NotEmpty(t, id, "%v", m)
	ctlCall(t, e, "POST", "/_sim/projects/"+id+"/outcome", "", "", `{"outcome":"ready"}`, http.StatusOK)
	return id
}

// ctlRetranslating is a ready project with a re-translation running.
func ctlRetranslating(t *testing.T, e *env) string {
	t.Helper()
	id := ctlShortReady(t, e)
	ctlCall(t, e, "POST", "/api/v1/projects/"+id+"/translations", "dubsim-enterprise", server.Platform, plRetranslation, http.StatusOK)
	return id
}

// ctlPlannedError is an in-progress project forced to end in error.
func ctlPlannedError(t *testing.T, e *env) string {
	t.Helper()
	id := ctlProject(t, e)
	ctlCall(t, e, "POST", "/_sim/projects/"+id+"/outcome", "", "", `{"outcome":"error","error_message":"No speech"}`, http.StatusOK)
	return id
}

// ctlFailedProject is a project that ended in error.
func ctlFailedProject(t *testing.T, e *env) string {
	t.Helper()
	id := ctlProject(t, e)
	ctlCall(t, e, "POST", "/_sim/projects/"+id+"/outcome", "", "", `{"outcome":"error","error_message":"No speech","now":true}`, http.StatusOK)
	return id
}

// ctlStudioBusy fills the studio records: an account in a new company, and
// in Acme Media artifacts of every source kind and status (from a presigned
// upload, from fragments, from URLs: created, upload_started, completed
// and used by a new video, failed) and a fixture video on its way.
func ctlStudioBusy(t *testing.T, e *env) string {
	t.Helper()
	ctlCall(t, e, "POST", "/_sim/accounts", "", "", `{}`, http.StatusCreated)
	_, m := ctlCall(t, e, "GET", "/api/v1/artifacts/create?fileName=take.wav", "dubsim-free", server.Studio, "", http.StatusOK)
	upload, _ := m["presignedUploadUrl"].(string)
	require.True(t, strings.HasPrefix(upload, e.url+"/"), "%v", m)
	ctlCall(t, e, "PUT", strings.TrimPrefix(upload, e.url), "", server.Studio, string(stWAV), http.StatusOK, "Content-Type", "application/octet-stream")
	ctlCall(t, e, "POST", "/api/v1/artifacts/create", "dubsim-free", server.Studio, `{"name":"Take","type":"audio","s3Path":"`+m["s3Path"].(string)+`"}`, http.StatusOK)
	ctlCall(t, e, "POST", "/api/v1/artifacts/create", "dubsim-free", server.Studio,
		`{"name":"Joined","type":"audio","fragments":[{"url":"https://cdn.test/a.wav","startTime":0},{"s3Path":"s3://my-bucket/b.wav","startTime":12}]}`, http.StatusOK)
	ctlCall(t, e, "POST", "/_sim/clock/advance", "", "", `{"seconds":60}`, http.StatusOK) // both end
	ctlArtifact(t, e)
	ctlCall(t, e, "POST", "/_sim/clock/advance", "", "", `{"seconds":2}`, http.StatusOK) // upload_started
	ctlArtifact(t, e)
	failed := ctlArtifact(t, e)
	ctlCall(t, e, "POST", "/_sim/artifacts/"+failed+"/outcome", "", "", `{"outcome":"error","error_message":"Unsupported codec","now":true}`, http.StatusOK)
	src := ctlFinishedArtifact(t, e)
	ctlCall(t, e, "POST", "/api/v1/projects/6800ed147125e1af62bc928c/videos/create", "dubsim-free", server.Studio,
		`{"name":"Teaser","workflowType":"dubbing","sourceArtifactId":"`+src+`","sourceLanguage":"en","targetLanguages":["es-ES"],`+
			`"remark":"","stringVariables":[{"key":"episode","value":"1"}],"pipelineOptions":{"shouldAutomateTranscription":true}}`, http.StatusOK)
	ctlCall(t, e, "POST", "/_sim/videos/"+ctlFixtureVideo+"/status", "", "", `{"status":"new","auto":true}`, http.StatusOK)
	return ""
}

// ctlArtifact creates a studio artifact (status created) and returns its id.
func ctlArtifact(t *testing.T, e *env) string {
	t.Helper()
	_, m := ctlCall(t, e, "POST", "/api/v1/artifacts/create", "dubsim-free", server.Studio,
		`{"name":"Source","type":"video","url":"https://cdn.test/episode-1.mp4"}`, http.StatusOK)
	id, _ := m["id"].(string)
	require.NotEmpty(t, id, "%v", m)
	return id
}

// ctlHangingDownload creates an artifact whose URL is a loopback server
// that sends nothing until the test ends.
func ctlHangingDownload(t *testing.T, e *env) string {
	t.Helper()
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(release) })
	_, m := ctlCall(t, e, "POST", "/api/v1/artifacts/create", "dubsim-free", server.Studio,
		`{"name":"Source","type":"video","url":"`+hs.URL+`/slow.mp4"}`, http.StatusOK)
	id, _ := m["id"].(string)
	require.NotEmpty(t, id, "%v", m)
	return id
}

// ctlShortWait bounds the wait for background work to a fraction of a second.
func ctlShortWait(c *app.Config) { c.AdvanceWait = 300 * time.Millisecond }

// ctlFinishedArtifact creates an artifact and forces it completed.
func ctlFinishedArtifact(t *testing.T, e *env) string {
	t.Helper()
	id := ctlArtifact(t, e)
	ctlCall(t, e, "POST", "/_sim/artifacts/"+id+"/outcome", "", "", `{"outcome":"ready","now":true}`, http.StatusOK)
	return id
}

// ctlBusy fills the state dump: three projects of one key (in progress,
// failed, ready), an outcome rule, an artifact in processing and a video
// on its way.
func ctlBusy(t *testing.T, e *env) string {
	t.Helper()
	ctlProject(t, e)
	failed := ctlProject(t, e)
	ctlCall(t, e, "POST", "/_sim/projects/"+failed+"/outcome", "", "", `{"outcome":"error","error_message":"No speech","now":true}`, http.StatusOK)
	ctlFinishedProject(t, e)
	ctlPost("/_sim/outcomes", `{"api_key":"dubsim-pro","source_url_pattern":"*/b.mp4","outcome":"error"}`)(t, e)
	ctlArtifact(t, e)
	ctlCall(t, e, "POST", "/_sim/videos/"+ctlFixtureVideo+"/status", "", "", `{"status":"new","auto":true}`, http.StatusOK)
	ctlCall(t, e, "PATCH", "/_sim/accounts/dubsim-enterprise", "", "", `{"storage":{"access_key_id":"AK","region":"eu","buckets":["b"]},"rate_limit":{"per_minute":60}}`, http.StatusOK)
	return ""
}

// ctlTraffic leaves four journal entries, oldest first: a platform request
// with a key and an Idempotency-Key, a refused clock advance, a clock read
// and a state read.
func ctlTraffic(t *testing.T, e *env) string {
	t.Helper()
	ctlCall(t, e, "GET", "/api/v1/balance", "dubsim-pro", server.Platform, "", http.StatusOK, "Idempotency-Key", "retry-1")
	ctlCall(t, e, "POST", "/_sim/clock/advance", "", "", `{"second":1}`, http.StatusBadRequest)
	ctlCall(t, e, "POST", "/_sim/clock/freeze", "", "", "", http.StatusOK)
	ctlCall(t, e, "POST", "/_sim/clock/resume", "", "", "", http.StatusOK)
	ctlCall(t, e, "GET", "/_sim/state?limit=1", "", "", "", http.StatusOK) // control reads are not recorded
	return ""
}

// ctlSloppyClient sends, as dubsim-pro, a JSON body without its
// Content-Type and a creation without an Idempotency-Key.
func ctlSloppyClient(t *testing.T, e *env) string {
	t.Helper()
	hr, err := http.NewRequest("POST", e.url+"/api/v1/projects", strings.NewReader(`{"source_lang":"en"}`))
	require.NoError(t, err)
	hr.Header.Set("Authorization", "Bearer dubsim-pro")
	hr.Header.Set("Content-Type", "text/plain")
	hr.Header.Set(server.HeaderInterface, server.Platform)
	res, err := http.DefaultClient.Do(hr)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	ctlCall(t, e, "POST", "/api/v1/projects", "dubsim-pro", server.Platform,
		`{"source_lang":"en","target_lang":"de-DE","source_video_url":"https://cdn.test/sloppy.mp4"}`, http.StatusOK)
	return ""
}

// ctlFaultRules adds two rules: slow-create (unlimited, never expires) and
// flt_1 (3 uses, expires in a minute).
// ctlOutcomesFull stores as many outcome rules as a simulator keeps, in
// one transaction where the engine keeps them (its meta record
// "outcome_rules"): adding them one by one rewrites the whole list each
// time, seconds of CPU for a thousand. That AddOutcomeRule reaches the
// bound and refuses past it is sim/engine's TestOutcomeRuleBounds; if the
// engine kept its rules elsewhere, the case's add would not be refused.
func ctlOutcomesFull(t *testing.T, e *env) string {
	t.Helper()
	rules := make([]sim.OutcomeRule, engine.MaxOutcomeRules)
	for i := range rules {
		rules[i] = sim.OutcomeRule{ID: "out_" + strconv.Itoa(i+1), Outcome: sim.ForceReady, Remaining: 1, CreatedAt: t0}
	}
	b, err := json.Marshal(rules)
	require.NoError(t, err)
	require.NoError(t, e.store.Update(t.Context(), func(tx sim.Tx) error { return tx.PutMeta("outcome_rules", b) }))
	got, err := e.srv.Engine.Outcomes.OutcomeRules(t.Context())
	require.NoError(t, err)
	require.Len(t, got, engine.MaxOutcomeRules, "the engine reads the rules stored")
	return ""
}

// ctlFaultsFull adds as many live fault rules as a simulator holds.
func ctlFaultsFull(t *testing.T, e *env) string {
	t.Helper()
	for range faults.MaxLive {
		_, err := e.srv.Faults.Add(faults.Rule{Path: "/nothing", Action: faults.Action{Type: faults.ActionDrop}})
		require.NoError(t, err)
	}
	return ""
}

func ctlFaultRules(t *testing.T, e *env) string {
	t.Helper()
	ctlPost("/_sim/faults", `{"id":"slow-create","method":"POST","path":"/api/v1/projects","action":{"type":"latency","latency_ms":1}}`)(t, e)
	ctlPost("/_sim/faults", `{"path":"/api/v1/balance","count":3,"ttl_seconds":60,"action":{"type":"error","status":503}}`)(t, e)
	return ""
}

// ctlIDs lists the ids of studio records.
func ctlIDs[T any](records []T) []string {
	ids := make([]string, len(records))
	for i, r := range records {
		var v struct {
			ID string `json:"id"`
		}
		b, _ := json.Marshal(r)
		_ = json.Unmarshal(b, &v)
		ids[i] = v.ID
	}
	return ids
}

var ctlHugeBodies sync.Map // limit -> []byte

// ctlHuge returns a body one byte over limit (shared, never written).
func ctlHuge(limit int) []byte {
	if b, ok := ctlHugeBodies.Load(limit); ok {
		return b.([]byte)
	}
	b := bytes.Repeat([]byte(" "), limit+1)
	b[0] = '{'
	v, _ := ctlHugeBodies.LoadOrStore(limit, b)
	return v.([]byte)
}

// ctlLookup follows a dotted path ("rules.0.id") through a decoded JSON value.
func ctlLookup(v any, path string) any {
	if m, ok := v.(map[string]any); ok && m == nil {
		return nil
	}
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func ctlClip(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}
