package openapi_test

// The cases of TestControlContract (control_test.go), by subject.

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/control"
	"github.com/dubsim/dubsim/sim/control/ui"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ctlClockCases() []ctlCase {
	return []ctlCase{
		{name: "clock/read", method: "GET", path: "/_sim/clock", status: 200, field: "now", want: "2026-02-04T12:00:00.000Z"},
		{name: "clock/advance", method: "POST", path: "/_sim/clock/advance", json: `{"seconds":90.5}`, status: 200,
			field: "now", want: "2026-02-04T12:01:30.500Z"},
		{name: "clock/advance without seconds", refused: true, method: "POST", path: "/_sim/clock/advance", json: `{}`, status: 400,
			field: "message", want: "seconds or next_due is required"},
		{name: "clock/advance backwards", refused: true, method: "POST", path: "/_sim/clock/advance", json: `{"seconds":-1}`, status: 400,
			field: "message", contains: "seconds must be between 0 and"},
		{name: "clock/advance past year 9000", prep: ctlCentury(69), method: "POST", path: "/_sim/clock/advance", json: `{"seconds":3153600000}`, status: 400,
			field: "message", contains: "simulated time cannot go past 9000-01-01T00:00:00.000Z"},
		{name: "clock/advance past a download that does not end", prep: ctlHangingDownload, mod: ctlShortWait,
			method: "POST", path: "/_sim/clock/advance", json: `{"seconds":60}`, status: 504, field: "message",
			contains: "the clock moved to 2026-02-04T12:01:00.000Z, but this background work the new time depends on is still running: download of http://",
			check: func(t *testing.T, r resp) {
				assert.Contains(t, r.JSON["message"], "(waiting for the host's answer; 0 bytes so far)")
			}},
		{name: "work/list", prep: ctlHangingDownload, method: "GET", path: "/_sim/work", status: 200, field: "work.0.kind", want: "download",
			check: func(t *testing.T, r resp) {
				assert.Equal(t, "artifact", ctlLookup(r.JSON, "work.0.resource"))
				assert.Equal(t, "2026-02-04T12:00:07.000Z", ctlLookup(r.JSON, "work.0.needed_at"), "start 2 s + processing 5 s")
			}},
		{name: "work/list empty", method: "GET", path: "/_sim/work", status: 200, field: "work", want: []any{}},
		{name: "clock/advance to the next due project", prep: ctlProject, method: "POST", path: "/_sim/clock/advance", json: `{"next_due":true}`,
			status: 200, field: "transition.resource", want: "project",
			check: func(t *testing.T, r resp) {
				assert.Equal(t, "in_progress", ctlLookup(r.JSON, "transition.from"))
				assert.Equal(t, "ready", ctlLookup(r.JSON, "transition.to"))
				assert.Equal(t, r.JSON["now"], ctlLookup(r.JSON, "transition.due_at"), "the clock moved to the due time")
			}},
		{name: "clock/advance to the next due artifact", prep: ctlArtifact, method: "POST", path: "/_sim/clock/advance", json: `{"next_due":true}`,
			status: 200, field: "transition.to", want: "upload_started",
			check: func(t *testing.T, r resp) {
				assert.Equal(t, "artifact", ctlLookup(r.JSON, "transition.resource"))
				assert.Equal(t, "created", ctlLookup(r.JSON, "transition.from"))
				assert.Equal(t, "2026-02-04T12:00:02.000Z", r.JSON["now"], "artifact_start is 2 s")
			}},
		{name: "clock/advance to the next due video", prep: ctlPost("/_sim/videos/"+ctlFixtureVideo+"/status", `{"status":"new","auto":true}`),
			method: "POST", path: "/_sim/clock/advance", json: `{"next_due":true}`, status: 200, field: "transition.id", want: ctlFixtureVideo,
			check: func(t *testing.T, r resp) {
				assert.Equal(t, "video", ctlLookup(r.JSON, "transition.resource"))
				assert.Equal(t, "new", ctlLookup(r.JSON, "transition.from"))
				assert.Equal(t, "in_progress", ctlLookup(r.JSON, "transition.to"))
			}},
		{name: "clock/advance by seconds with next_due false", method: "POST", path: "/_sim/clock/advance", json: `{"seconds":1,"next_due":false}`,
			status: 200, field: "now", want: "2026-02-04T12:00:01.000Z",
			check: func(t *testing.T, r resp) { assert.NotContains(t, r.JSON, "transition") }},
		{name: "clock/advance to the next due with nothing due", method: "POST", path: "/_sim/clock/advance", json: `{"next_due":true}`, status: 409,
			field: "message", want: control.MsgNothingDue},
		{name: "clock/advance with seconds and next_due", refused: true, prep: ctlProject, method: "POST", path: "/_sim/clock/advance",
			json: `{"seconds":1,"next_due":true}`, status: 400, field: "message", want: control.MsgAdvanceOneOf},
		{name: "clock/advance with next_due false only", refused: true, method: "POST", path: "/_sim/clock/advance", json: `{"next_due":false}`, status: 400,
			field: "message", want: "seconds or next_due is required"},
		{name: "clock/advance with an unknown field", refused: true, method: "POST", path: "/_sim/clock/advance", json: `{"second":1}`, status: 400,
			field: "message", want: `Unknown field "second"`},
		// The control header says no form sent it: the body is JSON
		// whatever its Content-Type (fidelity HC3).
		{name: "clock/advance with the header and no Content-Type", method: "POST", path: "/_sim/clock/advance", body: []byte(`{"seconds":1}`), status: 200,
			field: "now", want: "2026-02-04T12:00:01.000Z"},
		{name: "clock/advance with malformed JSON", method: "POST", path: "/_sim/clock/advance", json: `{"seconds":`, status: 400,
			field: "message", contains: "Malformed JSON body"},
		{name: "clock/advance too large", method: "POST", path: "/_sim/clock/advance", body: ctlHuge(64 << 20), header: ctlJSONType, status: 413,
			field: "message", want: "Request body exceeds the limit of 67108864 bytes", heavy: true},
		{name: "clock/scale", method: "POST", path: "/_sim/clock/scale", json: `{"time_scale":60}`, status: 200, field: "time_scale", want: float64(60)},
		{name: "clock/scale negative", refused: true, method: "POST", path: "/_sim/clock/scale", json: `{"time_scale":-2}`, status: 400,
			field: "message", want: "time_scale must be between 0 and 1000000; got -2"},
		{name: "clock/scale as a string", refused: true, method: "POST", path: "/_sim/clock/scale", json: `{"time_scale":"fast"}`, status: 400,
			field: "message", contains: "time_scale must be a number"},
		{name: "clock/scale too large", method: "POST", path: "/_sim/clock/scale", body: ctlHuge(64 << 20), header: ctlJSONType, status: 413, heavy: true},
		{name: "clock/freeze", method: "POST", path: "/_sim/clock/freeze", status: 200, field: "frozen", want: true,
			check: func(t *testing.T, r resp) { assert.Equal(t, float64(0), r.JSON["time_scale"]) }},
		{name: "clock/resume", prep: ctlPost("/_sim/clock/freeze", ""), method: "POST", path: "/_sim/clock/resume", status: 200,
			field: "frozen", want: false,
			check: func(t *testing.T, r resp) {
				assert.Equal(t, float64(1), r.JSON["time_scale"], "a clock at scale 0 before the freeze runs in real time after resume")
			}},
		{name: "clock/read at scale 0", method: "GET", path: "/_sim/clock", status: 200, field: "frozen", want: true,
			check: func(t *testing.T, r resp) { assert.Equal(t, float64(0), r.JSON["time_scale"]) }},
	}
}

func ctlAccountCases() []ctlCase {
	return []ctlCase{
		{name: "accounts/create with everything", method: "POST", path: "/_sim/accounts",
			json: `{"api_key":"qa-team","name":"QA","plan":"pro","balance_minutes":50,"retranslation_enabled":true,"cloning_enabled":true,
				"user_email":"qa@acme-media.example","storage":{"access_key_id":"AKIA1","secret_access_key":"s3cr3t","region":"eu-west-1","buckets":["media"]},
				"rate_limit":{"per_minute":60,"per_day":1000}}`,
			status: 201, field: "storage.buckets.0", want: "media",
			check: func(t *testing.T, r resp) {
				assert.Equal(t, "qa@acme-media.example", r.JSON["user_email"])
				assert.NotContains(t, string(r.Body), "s3cr3t", "the secret is never shown")
			}},
		{name: "accounts/create with nothing", method: "POST", path: "/_sim/accounts", json: `{}`, status: 201, field: "plan", want: "none",
			check: func(t *testing.T, r resp) {
				assert.Regexp(t, `^dsk_[0-9a-f]{32}$`, r.JSON["api_key"])
				assert.Nil(t, r.JSON["storage"])
				assert.Nil(t, r.JSON["rate_limit"])
			}},
		{name: "accounts/create in a company", method: "POST", path: "/_sim/accounts", json: `{"company_id":"663266da5ec2709f7826386f"}`,
			status: 201, field: "company_id", want: "663266da5ec2709f7826386f"},
		{name: "accounts/create in an unknown company", method: "POST", path: "/_sim/accounts", json: `{"company_id":"` + ctlUnknownStudioID + `"}`,
			status: 400, field: "message", want: `company_id "` + ctlUnknownStudioID + `" does not name a company`},
		{name: "accounts/create with a taken email", method: "POST", path: "/_sim/accounts", json: `{"user_email":"alice.johnson@acme-media.example"}`,
			status: 400, field: "message", want: `user_email "alice.johnson@acme-media.example" is already taken`},
		{name: "accounts/create with an unknown plan", refused: true, method: "POST", path: "/_sim/accounts", json: `{"plan":"gold"}`, status: 400,
			field: "message", want: `plan must be one of none, subscription, pro, enterprise; got "gold"`},
		{name: "accounts/create with a fractional balance", refused: true, method: "POST", path: "/_sim/accounts", json: `{"balance_minutes":1.5}`, status: 400,
			field: "message", contains: "balance_minutes must be a whole number"},
		{name: "accounts/create with bad storage", refused: true, method: "POST", path: "/_sim/accounts", json: `{"storage":{"access_key_id":""}}`, status: 400,
			field: "message", contains: "storage.access_key_id"},
		{name: "accounts/create an existing key", method: "POST", path: "/_sim/accounts", json: `{"api_key":"dubsim-pro"}`, status: 409,
			field: "message", want: `An account with api_key "dubsim-pro" already exists`},
		{name: "accounts/create too large", method: "POST", path: "/_sim/accounts", body: ctlHuge(64 << 20), header: ctlJSONType, status: 413, heavy: true},
		{name: "accounts/update rate limit", method: "PATCH", path: "/_sim/accounts/dubsim-free", json: `{"rate_limit":{"per_minute":5}}`,
			status: 200, field: "rate_limit.per_minute", want: float64(5),
			check: func(t *testing.T, r resp) { assert.Equal(t, "dubsim-free", r.JSON["api_key"]) }},
		{name: "accounts/update storage", method: "PATCH", path: "/_sim/accounts/dubsim-pro",
			json: `{"storage":{"access_key_id":"AKIA3","secret_access_key":"x","region":"us-east-1"}}`, status: 200, field: "storage.region", want: "us-east-1"},
		{name: "accounts/update removes storage", method: "PATCH", path: "/_sim/accounts/{id}", json: `{"storage":null,"rate_limit":null}`,
			prep: func(t *testing.T, e *env) string {
				_, m := ctlCall(t, e, "POST", "/_sim/accounts", "", "", `{"storage":{"access_key_id":"AK"},"rate_limit":{"per_day":9}}`, 201)
				return m["api_key"].(string)
			},
			status: 200, field: "storage", want: nil,
			check: func(t *testing.T, r resp) {
				assert.Contains(t, r.JSON, "rate_limit")
				assert.Nil(t, r.JSON["rate_limit"])
			}},
		{name: "accounts/update with nothing", refused: true, method: "PATCH", path: "/_sim/accounts/dubsim-free", json: `{}`, status: 400,
			field: "message", want: "Send storage and/or rate_limit (null removes them)"},
		{name: "accounts/update with an unknown field", refused: true, method: "PATCH", path: "/_sim/accounts/dubsim-free", json: `{"rate_limit":null,"plan":"pro"}`,
			status: 400, field: "message", want: `Unknown field "plan"`},
		{name: "accounts/update an unknown key", method: "PATCH", path: "/_sim/accounts/nobody", json: `{"rate_limit":null}`, status: 404,
			field: "message", want: `No account with api_key "nobody"`},
		{name: "accounts/update too large", method: "PATCH", path: "/_sim/accounts/dubsim-free", body: ctlHuge(1 << 20), header: ctlJSONType,
			status: 413, field: "message", want: "Request body exceeds the limit of 1048576 bytes"},
	}
}

func ctlStateCases() []ctlCase {
	return []ctlCase{
		{name: "reset/everything", prep: ctlPost("/_sim/accounts", `{"api_key":"temp"}`), method: "POST", path: "/_sim/reset", status: 200,
			field: "reset", want: true,
			check: func(t *testing.T, r resp) { assert.NotContains(t, r.JSON, "api_key") }},
		{name: "reset/one account", method: "POST", path: "/_sim/reset", json: `{"api_key":"dubsim-pro"}`, status: 200,
			field: "api_key", want: "dubsim-pro"},
		{name: "reset/an unknown account", method: "POST", path: "/_sim/reset", json: `{"api_key":"nobody"}`, status: 404,
			field: "message", want: `No account with api_key "nobody"`},
		{name: "reset/with an unknown field", refused: true, method: "POST", path: "/_sim/reset", json: `{"key":"dubsim-pro"}`, status: 400,
			field: "message", want: `Unknown field "key"`},
		{name: "reset/with an array", refused: true, method: "POST", path: "/_sim/reset", json: `[]`, status: 400, field: "message", want: sim.MsgBodyNotObject},
		{name: "reset/too large", method: "POST", path: "/_sim/reset", body: ctlHuge(64 << 20), header: ctlJSONType, status: 413, heavy: true},
		{name: "state/everything", prep: ctlBusy, method: "GET", path: "/_sim/state", status: 200, field: "frozen", want: true,
			check: func(t *testing.T, r resp) {
				var st sim.State
				require.NoError(t, json.Unmarshal(r.Body, &st))
				assert.Len(t, st.Projects, 3)
				assert.Len(t, st.OutcomeRules, 1)
				kinds := map[string]bool{}
				for _, tr := range st.PendingTransitions {
					kinds[tr.Resource] = true
				}
				assert.Equal(t, map[string]bool{"project": true, "artifact": true, "video": true}, kinds)
				assert.Positive(t, st.Studio["artifacts"])
			}},
		{name: "state/of one key, truncated", prep: ctlBusy, method: "GET", path: "/_sim/state?api_key=dubsim-enterprise&limit=1", status: 200,
			field: "truncated", want: true,
			check: func(t *testing.T, r resp) {
				assert.Len(t, r.JSON["accounts"], 1)
				assert.Len(t, r.JSON["projects"], 1)
				assert.NotEmpty(t, r.JSON["next_cursor"])
			}},
		{name: "state/cursor not given by the dump", method: "GET", path: "/_sim/state?cursor=nope", status: 400, field: "message",
			want: `cursor "nope" is not a next_cursor of the state dump`},
		{name: "state/limit 0", method: "GET", path: "/_sim/state?limit=0", status: 400, field: "message", want: `limit must be a positive integer; got "0"`},
		{name: "fixtures/load", method: "POST", path: "/_sim/fixtures",
			json: `{"accounts":[{"api_key":"team-a","name":"Team A","plan":"pro","balance_minutes":7}],"media_rules":[{"pattern":"*/trailer.mp4","duration_seconds":150}]}`,
			// Laid over the 8 media rules and 5 accounts of the default set.
			status: 200, field: "loaded.media_rules", want: float64(9),
			check: func(t *testing.T, r resp) { assert.Equal(t, float64(6), ctlLookup(r.JSON, "loaded.accounts")) }},
		{name: "fixtures/nothing", refused: true, method: "POST", path: "/_sim/fixtures", json: `{}`, status: 400,
			field: "message", want: "send at least one of accounts, options, voices, media_rules, studio, or from_startup: true"},
		{name: "fixtures/invalid content", method: "POST", path: "/_sim/fixtures", json: `{"accounts":[{"api_key":"x","plan":"gold"}]}`, status: 400,
			field: "message", contains: "accounts.json"},
		{name: "fixtures/too large", method: "POST", path: "/_sim/fixtures", body: ctlHuge(64 << 20), header: ctlJSONType, status: 413, heavy: true},
	}
}

func ctlOutcomeCases() []ctlCase {
	return []ctlCase{
		{name: "project outcome/error at its due time", prep: ctlProject, method: "POST", path: "/_sim/projects/{id}/outcome",
			json: `{"outcome":"error","error_message":"Transcription failed"}`, status: 200, field: "planned_outcome", want: "error",
			check: func(t *testing.T, r resp) {
				assert.Equal(t, "in_progress", r.JSON["status"])
				assert.Contains(t, r.JSON, "due_at")
			}},
		{name: "project outcome/error now", prep: ctlProject, method: "POST", path: "/_sim/projects/{id}/outcome",
			json: `{"outcome":"error","now":true}`, status: 200, field: "error_message", want: sim.DefaultForcedError,
			check: func(t *testing.T, r resp) { assert.Equal(t, "error", r.JSON["status"]) }},
		{name: "project outcome/ready", prep: ctlProject, method: "POST", path: "/_sim/projects/{id}/outcome", json: `{"outcome":"ready"}`,
			status: 200, field: "status", want: "ready"},
		{name: "project outcome/unknown outcome", refused: true, prep: ctlProject, method: "POST", path: "/_sim/projects/{id}/outcome", json: `{"outcome":"maybe"}`,
			status: 400, field: "message", want: `outcome must be "error" or "ready"; got "maybe"`},
		{name: "project outcome/without outcome", refused: true, method: "POST", path: "/_sim/projects/123456789/outcome", json: `{"now":true}`,
			status: 400, field: "message", want: "outcome is required"},
		{name: "project outcome/unknown project", method: "POST", path: "/_sim/projects/123456789/outcome", json: `{"outcome":"error"}`,
			status: 404, field: "message", want: sim.MsgProjectNotFound},
		{name: "project outcome/finished project", prep: ctlFinishedProject, method: "POST", path: "/_sim/projects/{id}/outcome",
			json: `{"outcome":"error"}`, status: 409, field: "message", contains: "not in_progress"},
		{name: "project outcome/too large", method: "POST", path: "/_sim/projects/123456789/outcome", body: ctlHuge(64 << 20), header: ctlJSONType,
			status: 413, heavy: true},
		{name: "artifact outcome/error later", prep: ctlArtifact, method: "POST", path: "/_sim/artifacts/{id}/outcome",
			json: `{"outcome":"error","error_message":"Unsupported codec"}`, status: 200, field: "planned_outcome", want: "error",
			check: func(t *testing.T, r resp) { assert.Equal(t, "created", r.JSON["status"]) }},
		{name: "artifact outcome/error now", prep: ctlArtifact, method: "POST", path: "/_sim/artifacts/{id}/outcome",
			json: `{"outcome":"error","error_message":"Unsupported codec","now":true}`, status: 200, field: "status", want: "upload_failed",
			check: func(t *testing.T, r resp) { assert.Equal(t, "Unsupported codec", r.JSON["error_message"]) }},
		{name: "artifact outcome/ready now", prep: ctlArtifact, method: "POST", path: "/_sim/artifacts/{id}/outcome",
			json: `{"outcome":"ready","size":1048576,"duration_seconds":12.5,"now":true}`, status: 200, field: "status", want: "upload_completed"},
		{name: "artifact outcome/negative size", refused: true, prep: ctlArtifact, method: "POST", path: "/_sim/artifacts/{id}/outcome",
			json: `{"outcome":"ready","size":-1}`, status: 400, field: "message", contains: "size must be between 0 and"},
		{name: "artifact outcome/unknown artifact", method: "POST", path: "/_sim/artifacts/" + ctlUnknownStudioID + "/outcome",
			json: `{"outcome":"ready"}`, status: 404, field: "message", want: "Artifact " + ctlUnknownStudioID + " not found"},
		{name: "artifact outcome/finished artifact", prep: ctlFinishedArtifact, method: "POST", path: "/_sim/artifacts/{id}/outcome",
			json: `{"outcome":"error"}`, status: 409, field: "message", contains: "has already finished processing (status upload_completed)"},
		{name: "artifact outcome/too large", method: "POST", path: "/_sim/artifacts/" + ctlUnknownStudioID + "/outcome", body: ctlHuge(64 << 20),
			header: ctlJSONType, status: 413, heavy: true},
		{name: "video status/in progress, automatic", method: "POST", path: "/_sim/videos/" + ctlFixtureVideo + "/status",
			json: `{"status":"in_progress","auto":true}`, status: 200, field: "status", want: "in_progress",
			check: func(t *testing.T, r resp) { assert.Contains(t, r.JSON, "next_transition_at") }},
		{name: "video status/new, stays", method: "POST", path: "/_sim/videos/" + ctlFixtureVideo + "/status", json: `{"status":"new"}`,
			status: 200, field: "video_id", want: ctlFixtureVideo,
			check: func(t *testing.T, r resp) { assert.NotContains(t, r.JSON, "next_transition_at") }},
		{name: "video status/unknown status", refused: true, method: "POST", path: "/_sim/videos/" + ctlFixtureVideo + "/status", json: `{"status":"archived"}`,
			status: 400, field: "message", contains: "status must be one of new, in_progress, completed"},
		{name: "video status/unknown video", method: "POST", path: "/_sim/videos/" + ctlUnknownStudioID + "/status", json: `{"status":"new"}`,
			status: 404, field: "message", want: "Video " + ctlUnknownStudioID + " not found"},
		{name: "video status/too large", method: "POST", path: "/_sim/videos/" + ctlFixtureVideo + "/status", body: ctlHuge(64 << 20),
			header: ctlJSONType, status: 413, heavy: true},
		{name: "outcome rules/list", prep: ctlPost("/_sim/outcomes", `{"api_key":"dubsim-pro","source_url_pattern":"*/a.mp4","count":3,"outcome":"error"}`),
			method: "GET", path: "/_sim/outcomes", status: 200, field: "rules.0.id", want: "out_1",
			check: func(t *testing.T, r resp) {
				assert.Equal(t, sim.DefaultForcedError, ctlLookup(r.JSON, "rules.0.error_message"))
			}},
		{name: "outcome rules/list none", method: "GET", path: "/_sim/outcomes", status: 200, field: "rules", want: []any{}},
		{name: "outcome rules/add for projects", method: "POST", path: "/_sim/outcomes",
			json: `{"api_key":"dubsim-pro","count":2,"outcome":"error","error_message":"TTS quota exceeded"}`, status: 201, field: "remaining", want: float64(2)},
		{name: "outcome rules/add past the bound", prep: ctlOutcomesFull, method: "POST", path: "/_sim/outcomes", json: `{"outcome":"ready"}`,
			status: 409, field: "message", contains: "holds 1000 outcome rules"},
		{name: "outcome rules/add for artifacts", method: "POST", path: "/_sim/outcomes",
			json: `{"resource":"artifact","source_url_pattern":"*broken*","outcome":"ready"}`, status: 201, field: "resource", want: "artifact",
			check: func(t *testing.T, r resp) { assert.Equal(t, float64(1), r.JSON["remaining"], "count defaults to 1") }},
		{name: "outcome rules/add with count 0", refused: true, method: "POST", path: "/_sim/outcomes", json: `{"outcome":"error","count":0}`, status: 400,
			field: "message", want: "count must be at least 1; got 0"},
		{name: "outcome rules/add for an unknown key", method: "POST", path: "/_sim/outcomes", json: `{"outcome":"error","api_key":"nobody"}`,
			status: 400, field: "message", want: `api_key "nobody" is not an account`},
		{name: "outcome rules/add too large", method: "POST", path: "/_sim/outcomes", body: ctlHuge(64 << 20), header: ctlJSONType, status: 413, heavy: true},
		{name: "outcome rules/remove", prep: ctlPost("/_sim/outcomes", `{"outcome":"ready"}`), method: "DELETE", path: "/_sim/outcomes/out_1",
			status: 200, field: "removed", want: "out_1"},
		{name: "outcome rules/remove an unknown rule", method: "DELETE", path: "/_sim/outcomes/out_9", status: 404,
			field: "message", want: `No outcome rule "out_9"`},
	}
}

func ctlJournalCases() []ctlCase {
	return []ctlCase{
		{name: "requests/list", prep: ctlTraffic, method: "GET", path: "/_sim/requests", status: 200, field: "requests.0.path", want: "/_sim/clock/resume",
			check: func(t *testing.T, r resp) {
				assert.Equal(t, float64(4), ctlLookup(r.JSON, "stats.stored"))
				assert.Equal(t, "control", ctlLookup(r.JSON, "requests.2.interface"))
				assert.Contains(t, ctlLookup(r.JSON, "requests.2.response_body"), `Unknown field \"second\"`)
				assert.Equal(t, "retry-1", ctlLookup(r.JSON, "requests.3.headers.Idempotency-Key"))
			}},
		{name: "requests/filtered", prep: ctlTraffic, method: "GET", path: "/_sim/requests?method=post&path=/_sim/*&status=4xx&key=&since=0&limit=5",
			status: 200, field: "requests.0.path", want: "/_sim/clock/advance",
			check: func(t *testing.T, r resp) { assert.Len(t, r.JSON["requests"], 1) }},
		{name: "requests/unknown parameter", method: "GET", path: "/_sim/requests?colour=red", status: 400,
			field: "message", want: `Unknown query parameter "colour"; use method, path, status, key, since, limit`},
		{name: "requests/bad status", method: "GET", path: "/_sim/requests?status=4x", status: 400, field: "message", contains: "status must be a status code"},
		{name: "requests/clear", prep: ctlTraffic, method: "DELETE", path: "/_sim/requests", status: 200, field: "reset", want: true},
		{name: "requests/clear with a query", method: "DELETE", path: "/_sim/requests?status=404", status: 400,
			field: "message", contains: "takes no query parameters"},
		{name: "verify/passes", prep: ctlTraffic, method: "POST", path: "/_sim/requests/verify",
			json: `{"method":"POST","path":"/_sim/clock/advance","status":"4xx","body_contains":"second","count":1}`, status: 200, field: "ok", want: true,
			check: func(t *testing.T, r resp) { assert.Equal(t, []any{}, r.JSON["near_misses"]) }},
		{name: "verify/fails with near misses", prep: ctlTraffic, method: "POST", path: "/_sim/requests/verify",
			json:   `{"method":"POST","path":"/_sim/clock/advance","status":200,"headers":{"User-Agent":"probe"},"at_least":1,"at_most":2}`,
			status: 200, field: "ok", want: false,
			check: func(t *testing.T, r resp) {
				assert.Contains(t, ctlLookup(r.JSON, "near_misses.0.reason"), "status 400, expected 200")
			}},
		{name: "verify/a header the journal does not keep", method: "POST", path: "/_sim/requests/verify", json: `{"headers":{"X-Custom":""}}`,
			status: 400, field: "message", contains: `headers: "X-Custom" is not recorded by the journal`},
		{name: "verify/count with at_least", refused: true, method: "POST", path: "/_sim/requests/verify", json: `{"count":1,"at_least":1}`, status: 400,
			field: "message", want: "count cannot be combined with at_least or at_most"},
		{name: "verify/too large", method: "POST", path: "/_sim/requests/verify", body: ctlHuge(64 << 10), header: ctlJSONType, status: 413,
			field: "message", want: "Request body exceeds the limit of 65536 bytes"},
		{name: "report/JSON", prep: ctlSloppyClient, method: "GET", path: "/_sim/report?api_key=dubsim-pro", status: 200,
			field: "findings.0.rule", want: "json-without-content-type",
			check: func(t *testing.T, r resp) {
				assert.Equal(t, float64(2), ctlLookup(r.JSON, "summary.findings"))
				assert.Equal(t, "post-without-idempotency-key", ctlLookup(r.JSON, "findings.1.rule"))
			}},
		{name: "report/text", prep: ctlSloppyClient, method: "GET", path: "/_sim/report?api_key=dubsim-pro&format=text", status: 200,
			contains: "[ERROR] json-without-content-type",
			check:    func(t *testing.T, r resp) { assert.Equal(t, "text/plain; charset=utf-8", r.Header.Get("Content-Type")) }},
		{name: "report/text by Accept", method: "GET", path: "/_sim/report?api_key=dubsim-free", header: map[string]string{"Accept": "text/plain, application/json;q=0.5"},
			status: 200, contains: `Conformance report for API key "dubsim-free"`},
		{name: "report/JSON by Accept", method: "GET", path: "/_sim/report?api_key=dubsim-free&format=json", header: map[string]string{"Accept": "text/plain"},
			status: 200, field: "findings", want: []any{}},
		{name: "report/without api_key", method: "GET", path: "/_sim/report", status: 400, field: "message", want: "api_key is required"},
		{name: "report/unknown format", method: "GET", path: "/_sim/report?api_key=k&format=xml", status: 400,
			field: "message", want: `format must be json or text; got "xml"`},
	}
}

func ctlFaultCases() []ctlCase {
	add := func(name, rule, field string, want any) ctlCase {
		return ctlCase{name: "faults/add " + name, method: "POST", path: "/_sim/faults", json: rule, status: 201, field: field, want: want}
	}
	return []ctlCase{
		{name: "faults/list", prep: ctlFaultRules, method: "GET", path: "/_sim/faults", status: 200, field: "rules.0.id", want: "slow-create",
			check: func(t *testing.T, r resp) {
				assert.Nil(t, ctlLookup(r.JSON, "rules.0.remaining"), "unlimited")
				assert.Equal(t, float64(3), ctlLookup(r.JSON, "rules.1.remaining"))
				assert.NotNil(t, ctlLookup(r.JSON, "rules.1.expires_at"))
			}},
		add("fixed latency", `{"id":"slow-create","method":"POST","path":"/api/v1/projects","action":{"type":"latency","latency_ms":2000}}`, "action.latency_ms", float64(2000)),
		add("uniform latency", `{"method":"GET","probability":0.5,"action":{"type":"latency","distribution":"uniform","min_ms":100,"max_ms":900}}`, "id", "flt_1"),
		add("normal latency", `{"action":{"type":"latency","distribution":"normal","mean_ms":300,"stddev_ms":50}}`, "remaining", nil),
		add("lognormal latency", `{"path":"/api/v1/projects/*","probability":0.2,"action":{"type":"latency","distribution":"lognormal","median_ms":300,"sigma":0.8}}`,
			"action.sigma", 0.8),
		add("error", `{"path":"/api/v1/balance","count":2,"ttl_seconds":60,"action":{"type":"error","status":503,"error":"ServiceUnavailableError","message":"Try again later"}}`,
			"remaining", float64(2)),
		add("rate limit", `{"api_key":"dubsim-pro","count":3,"action":{"type":"rate_limit","retry_after_seconds":5}}`, "hits", float64(0)),
		add("drop", `{"method":"GET","path":"/api/v1/projects/*","count":1,"action":{"type":"drop"}}`, "action.type", "drop"),
		add("truncate", `{"path":"/files/*","ttl_seconds":60,"action":{"type":"truncate","bytes":1024}}`, "action.bytes", float64(1024)),
		{name: "faults/add an unknown action", refused: true, method: "POST", path: "/_sim/faults", json: `{"action":{"type":"teleport"}}`, status: 400,
			field: "message", want: `action.type must be one of latency, error, rate_limit, drop, truncate; got "teleport"`},
		{name: "faults/add a field of another action", refused: true, method: "POST", path: "/_sim/faults", json: `{"action":{"type":"drop","bytes":5}}`, status: 400,
			field: "message", want: "action.bytes is not allowed for action type drop"},
		{name: "faults/add an id in use", prep: ctlFaultRules, method: "POST", path: "/_sim/faults", json: `{"id":"slow-create","action":{"type":"drop"}}`,
			status: 400, field: "message", want: "id slow-create is already used by another fault rule"},
		{name: "faults/add past the live rules' bound", prep: ctlFaultsFull, method: "POST", path: "/_sim/faults", json: `{"action":{"type":"drop"}}`,
			status: 409, field: "message", contains: "holds 1000 live fault rules"},
		{name: "faults/add too large", method: "POST", path: "/_sim/faults", body: ctlHuge(64 << 10), header: ctlJSONType, status: 413},
		{name: "faults/clear", prep: ctlFaultRules, method: "DELETE", path: "/_sim/faults", status: 200, field: "removed", want: float64(2)},
		{name: "faults/remove", prep: ctlFaultRules, method: "DELETE", path: "/_sim/faults/slow-create", status: 200, field: "removed", want: "slow-create"},
		{name: "faults/remove an unknown rule", method: "DELETE", path: "/_sim/faults/flt_9", status: 404, field: "message", want: "Fault rule flt_9 not found"},
	}
}

func ctlMetaCases() []ctlCase {
	return []ctlCase{
		{name: "health/GET", method: "GET", path: "/_sim/health", status: 200, field: "status", want: "ok",
			check: func(t *testing.T, r resp) { assert.Equal(t, "test", r.JSON["version"]) }},
		{name: "health/HEAD", method: "HEAD", path: "/_sim/health", status: 200,
			check: func(t *testing.T, r resp) {
				assert.Equal(t, "no-store", r.Header.Get("Cache-Control"))
				assert.Empty(t, r.Body)
			}},
		{name: "openapi/combined", method: "GET", path: "/_sim/openapi.json", status: 200, field: "info.title", want: "dubsim: platform, studio and control interfaces"},
		{name: "openapi/control", method: "GET", path: "/_sim/openapi/control.json", status: 200, field: "info.title", want: "dubsim control interface"},
		{name: "openapi/platform", method: "GET", path: "/_sim/openapi/platform.json", status: 200, field: "openapi", want: "3.1.0"},
		{name: "openapi/studio without .json", method: "GET", path: "/_sim/openapi/studio", status: 200, field: "openapi", want: "3.1.0"},
		{name: "openapi/unknown document", method: "GET", path: "/_sim/openapi/billing.json", status: 404, field: "message", contains: "No OpenAPI document"},
	}
}

// ctlStreamsFull opens ui.MaxEventStreams event streams, held until the
// test ends.
func ctlStreamsFull(t *testing.T, e *env) string {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for range ui.MaxEventStreams {
		hr, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url+"/_sim/events", nil)
		require.NoError(t, err)
		res, err := http.DefaultClient.Do(hr) // returns with the headers: the stream holds its place
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode)
		t.Cleanup(func() { _ = res.Body.Close() })
	}
	return ""
}

// ctlAcme is a studio company of the fixtures (fixtures/studio.json).
const ctlAcme = "663266da5ec2709f7826386f"

func ctlDashboardCases() []ctlCase {
	audio := "/_sim/projects/{id}/audio.wav"
	rng := func(v string) map[string]string { return map[string]string{"Range": v} }
	const past, future = "Mon, 02 Jan 2006 15:04:05 GMT", "Fri, 01 Jan 2100 00:00:00 GMT"
	var cases []ctlCase
	for _, m := range []string{"GET", "HEAD"} {
		cases = append(cases,
			ctlCase{name: "project/ready " + m, prep: ctlShortReady, method: m, path: "/_sim/projects/{id}", status: 200},
			ctlCase{name: "project/unknown " + m, method: m, path: "/_sim/projects/123456789", status: 404, field: "message", want: sim.MsgProjectNotFound},
			ctlCase{name: "project audio/whole " + m, prep: ctlShortReady, method: m, path: audio, status: 200,
				check: func(t *testing.T, r resp) {
					assert.Equal(t, "audio/wav", r.Header.Get("Content-Type"))
					n, err := strconv.Atoi(r.Header.Get("Content-Length"))
					require.NoError(t, err)
					assert.Greater(t, n, 44, "a WAV header and samples")
					if m == "GET" {
						assert.Len(t, r.Body, n)
						assert.Equal(t, "RIFF", string(r.Body[:4]))
					}
				}},
			ctlCase{name: "project audio/range " + m, prep: ctlShortReady, method: m, path: audio, header: rng("bytes=0-43"), status: 206,
				check: func(t *testing.T, r resp) {
					assert.Regexp(t, `^bytes 0-43/[0-9]+$`, r.Header.Get("Content-Range"))
					assert.Equal(t, "44", r.Header.Get("Content-Length"))
				}},
			ctlCase{name: "project audio/not modified " + m, prep: ctlShortReady, method: m, path: audio, header: map[string]string{"If-Modified-Since": future},
				status: 304},
			ctlCase{name: "project audio/precondition failed " + m, prep: ctlShortReady, method: m, path: audio,
				header: map[string]string{"If-Unmodified-Since": past}, status: 412},
			ctlCase{name: "project audio/range past the end " + m, prep: ctlShortReady, method: m, path: audio, header: rng("bytes=999999999-"),
				status: 416, check: func(t *testing.T, r resp) { assert.Regexp(t, `^bytes \*/[0-9]+$`, r.Header.Get("Content-Range")) }},
			ctlCase{name: "project audio/in progress " + m, prep: ctlProject, method: m, path: audio, status: 404,
				field: "message", contains: "has no output audio (status in_progress)"},
			ctlCase{name: "studio/everything " + m, method: m, path: "/_sim/studio", status: 200},
			ctlCase{name: "studio/unknown parameter " + m, method: m, path: "/_sim/studio?limit=1", status: 400,
				field: "message", want: `Unknown query parameter "limit"; use company_id`},
			ctlCase{name: "events/stream " + m, method: m, path: "/_sim/events", status: 200, stream: true,
				check: func(t *testing.T, r resp) {
					assert.Equal(t, "text/event-stream; charset=utf-8", r.Header.Get("Content-Type"))
					if m == "GET" {
						assert.Contains(t, string(r.Body), "retry: 2000\n\nevent: changed\ndata: {\"seq\":1,")
					}
				}},
			ctlCase{name: "events/a query parameter " + m, method: m, path: "/_sim/events?token=x", status: 400,
				field: "message", want: `Unknown query parameter "token"; /_sim/events takes none`},
			ctlCase{name: "events/too many streams " + m, prep: ctlStreamsFull, method: m, path: "/_sim/events", status: 429,
				field: "message", want: "Too many event streams open on this simulator (at most 16); retry when one closes",
				check: func(t *testing.T, r resp) { assert.Equal(t, "2", r.Header.Get("Retry-After")) }},
			ctlCase{name: "dashboard/without the slash " + m, method: m, path: "/_sim/ui", status: 301, noRedirect: true,
				check: func(t *testing.T, r resp) { assert.Equal(t, "/_sim/ui/", r.Header.Get("Location")) }},
			ctlCase{name: "dashboard/icon " + m, method: m, path: "/_sim/ui/favicon.svg", status: 200,
				check: func(t *testing.T, r resp) {
					assert.Equal(t, "image/svg+xml", r.Header.Get("Content-Type"))
					assert.Contains(t, r.Header.Get("Content-Security-Policy"), "script-src 'self'")
				}},
			ctlCase{name: "dashboard/unknown file " + m, method: m, path: "/_sim/ui/nothing.js", status: 404,
				field: "message", want: "No dashboard file /_sim/ui/nothing.js"},
		)
	}
	for i := range cases {
		if cases[i].method == http.MethodHead { // no body to look into
			cases[i].field, cases[i].want, cases[i].contains = "", nil, ""
		}
	}
	return append(cases,
		ctlCase{name: "project/in progress", prep: ctlProject, method: "GET", path: "/_sim/projects/{id}", status: 200, field: "status", want: "in_progress",
			check: func(t *testing.T, r resp) {
				assert.Equal(t, "dubsim-enterprise", r.JSON["api_key"])
				assert.Equal(t, "ready", r.JSON["planned_outcome"])
				assert.Contains(t, r.JSON, "due_at")
				assert.NotContains(t, r.JSON, "completed_at")
				assert.NotContains(t, r.JSON, "audio_url", "no output yet")
				assert.Equal(t, float64(0), r.JSON["output_generation"])
				// The scripts are produced when the first run completes.
				assert.Equal(t, true, r.JSON["scripts_pending"])
				assert.Empty(t, r.JSON["source_script"])
				assert.Empty(t, r.JSON["speakers"])
				assert.Equal(t, "created", ctlLookup(r.JSON, "history.0.kind"))
				assert.Equal(t, r.JSON["due_at"], ctlLookup(r.JSON, "history.0.estimated_completion"))
			}},
		ctlCase{name: "project/planned error", prep: ctlPlannedError, method: "GET", path: "/_sim/projects/{id}", status: 200, field: "planned_outcome", want: "error",
			check: func(t *testing.T, r resp) { assert.Equal(t, "forced_outcome", ctlLookup(r.JSON, "history.1.kind")) }},
		ctlCase{name: "project/ready", prep: ctlShortReady, method: "GET", path: "/_sim/projects/{id}", status: 200, field: "status", want: "ready",
			check: func(t *testing.T, r resp) {
				assert.Equal(t, "/_sim/projects/"+r.JSON["id"].(string)+"/audio.wav", r.JSON["audio_url"])
				assert.Equal(t, "2026-02-04T12:00:00.000Z", r.JSON["completed_at"])
				assert.NotContains(t, r.JSON, "due_at")
				assert.NotContains(t, r.JSON, "planned_outcome")
				assert.Equal(t, float64(1), r.JSON["output_generation"])
				assert.NotEmpty(t, r.JSON["source_script"])
				assert.NotEmpty(t, r.JSON["target_script"])
				assert.NotEmpty(t, r.JSON["speakers"])
				assert.NotContains(t, r.JSON, "scripts_pending")
			}},
		ctlCase{name: "project/re-translating", prep: ctlRetranslating, method: "GET", path: "/_sim/projects/{id}", status: 200,
			field: "pending_retranslation.mixing_mode", want: "voiceover_only",
			check: func(t *testing.T, r resp) {
				assert.Equal(t, "in_progress", r.JSON["status"])
				assert.Equal(t, "Au revoir le monde!", ctlLookup(r.JSON, "pending_retranslation.target_script.0.text"))
				assert.Equal(t, "53f154:fr-FR-DeniseNeural", ctlLookup(r.JSON, "pending_retranslation.target_speakers.0.voice_key"))
				assert.Equal(t, float64(1), r.JSON["translations_count"])
				assert.Contains(t, r.JSON, "audio_url", "the previous generation stays")
			}},
		ctlCase{name: "project/failed", prep: ctlFailedProject, method: "GET", path: "/_sim/projects/{id}", status: 200, field: "error_message", want: "No speech",
			check: func(t *testing.T, r resp) {
				assert.Equal(t, "error", r.JSON["status"])
				assert.Equal(t, true, r.JSON["refunded"])
				assert.NotContains(t, r.JSON, "audio_url")
			}},
		ctlCase{name: "project audio/several ranges", prep: ctlShortReady, method: "GET", path: audio, header: rng("bytes=0-3,8-11"), status: 206,
			check: func(t *testing.T, r resp) {
				assert.True(t, strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/byteranges; boundary="), r.Header.Get("Content-Type"))
			}},
		ctlCase{name: "project audio/range malformed", prep: ctlShortReady, method: "GET", path: audio, header: rng("bytes=x"), status: 416,
			field: "message", want: "Range not satisfiable: the Range header must name bytes inside the file"},
		ctlCase{name: "project audio/failed", prep: ctlFailedProject, method: "GET", path: audio, status: 404, field: "message", contains: "has no output audio (status error)"},
		ctlCase{name: "project audio/unknown", method: "GET", path: "/_sim/projects/123456789/audio.wav", status: 404, field: "message", want: sim.MsgProjectNotFound},
		ctlCase{name: "studio/busy", prep: ctlStudioBusy, method: "GET", path: "/_sim/studio", status: 200,
			check: func(t *testing.T, r resp) {
				var d sim.StudioDump
				require.NoError(t, json.Unmarshal(r.Body, &d))
				assert.Len(t, d.Companies, 4, "the fixture companies and the new account's")
				assert.Len(t, d.Artifacts, 6)
				kinds, statuses := map[string]bool{}, map[string]bool{}
				for _, a := range d.Artifacts {
					kinds[a.SourceKind], statuses[a.Status] = true, true
				}
				assert.Equal(t, map[string]bool{"upload": true, "fragments": true, "url": true}, kinds)
				assert.Equal(t, map[string]bool{"created": true, "upload_started": true, "upload_completed": true, "upload_failed": true}, statuses)
				assert.NotEmpty(t, d.Videos)
				for _, list := range [][]string{ctlIDs(d.Companies), ctlIDs(d.Users), ctlIDs(d.Folders), ctlIDs(d.Glossaries), ctlIDs(d.Projects),
					ctlIDs(d.Videos), ctlIDs(d.Artifacts)} {
					assert.IsIncreasing(t, list, "in id order")
				}
			}},
		ctlCase{name: "studio/one company", prep: ctlStudioBusy, method: "GET", path: "/_sim/studio?company_id=" + ctlAcme, status: 200,
			field: "companies.0.id", want: ctlAcme,
			check: func(t *testing.T, r resp) {
				var d sim.StudioDump
				require.NoError(t, json.Unmarshal(r.Body, &d))
				assert.Len(t, d.Companies, 1)
				assert.NotEmpty(t, d.Projects)
				assert.NotEmpty(t, d.Artifacts)
				for _, u := range d.Users {
					assert.Equal(t, ctlAcme, u.CompanyID)
				}
				for _, v := range d.Videos {
					assert.Equal(t, ctlAcme, v.CompanyID)
				}
				for _, a := range d.Artifacts {
					assert.Equal(t, ctlAcme, a.CompanyID)
				}
			}},
		ctlCase{name: "studio/an unknown company", method: "GET", path: "/_sim/studio?company_id=" + ctlUnknownStudioID, status: 200, field: "companies", want: []any{},
			check: func(t *testing.T, r resp) { assert.Equal(t, []any{}, r.JSON["videos"]) }},
	)
}
