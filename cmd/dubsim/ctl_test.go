package main

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCtlRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args               []string
		method, path, body string
		wantErr            string // the first line of the error
	}{
		{args: []string{"clock"}, method: "GET", path: "/_sim/clock"},
		{args: []string{"work"}, method: "GET", path: "/_sim/work"},
		{args: []string{"advance", "90.5"}, method: "POST", path: "/_sim/clock/advance", body: `{"seconds":90.5}`},
		{args: []string{"advance", "soon"}, wantErr: `ctl advance: SECONDS must be a number; got "soon"`},
		{args: []string{"scale", "x"}, wantErr: `ctl scale: FACTOR must be a number; got "x"`},
		{args: []string{"clock", "now"}, wantErr: "ctl clock: takes no arguments; got 1"},
		{args: []string{"outcome", "1"}, wantErr: "ctl outcome: takes 2 arguments or 3; got 1"},
		{args: []string{"account"}, wantErr: "ctl account: takes 1 to 4 arguments; got 0"},
		{args: []string{"video-status", "v1", "new", "later"}, wantErr: `ctl video-status: the third argument can only be auto; got "later"`},
		{args: []string{"report", "k", "html"}, wantErr: `ctl report: the second argument can only be text; got "html"`},
		{args: []string{"scale", "60"}, method: "POST", path: "/_sim/clock/scale", body: `{"time_scale":60}`},
		{args: []string{"freeze"}, method: "POST", path: "/_sim/clock/freeze"},
		{args: []string{"resume"}, method: "POST", path: "/_sim/clock/resume"},
		{args: []string{"reset"}, method: "POST", path: "/_sim/reset"},
		{args: []string{"reset", "dubsim-pro"}, method: "POST", path: "/_sim/reset", body: `{"api_key":"dubsim-pro"}`},
		{args: []string{"state", "a b"}, method: "GET", path: "/_sim/state?api_key=a+b"},
		{args: []string{"account", "pro", "120", "retranslation", "cloning"}, method: "POST", path: "/_sim/accounts",
			body: `{"balance_minutes":120,"cloning_enabled":true,"plan":"pro","retranslation_enabled":true}`},
		{args: []string{"account", "pro", "lots"}, wantErr: `ctl account: BALANCE must be a whole number of minutes, or one of retranslation, cloning; got "lots"`},
		{args: []string{"outcome", "123456789", "error", "Boom"}, method: "POST", path: "/_sim/projects/123456789/outcome", body: `{"error_message":"Boom","outcome":"error"}`},
		{args: []string{"artifact-outcome", "a1", "error", "Bad codec"}, method: "POST", path: "/_sim/artifacts/a1/outcome", body: `{"error_message":"Bad codec","now":true,"outcome":"error"}`},
		{args: []string{"video-status", "v1", "completed"}, method: "POST", path: "/_sim/videos/v1/status", body: `{"auto":false,"status":"completed"}`},
		{args: []string{"video-status", "v1", "new", "auto"}, method: "POST", path: "/_sim/videos/v1/status", body: `{"auto":true,"status":"new"}`},
		{args: []string{"account-set", "k", `{"rate_limit":null}`}, method: "PATCH", path: "/_sim/accounts/k", body: `{"rate_limit":null}`},
		{args: []string{"fault-add", `{"action":{"type":"drop"}}`}, method: "POST", path: "/_sim/faults", body: `{"action":{"type":"drop"}}`},
		{args: []string{"advance", "next"}, method: "POST", path: "/_sim/clock/advance", body: `{"next_due":true}`},
		{args: []string{"project", "802323387"}, method: "GET", path: "/_sim/projects/802323387"},
		{args: []string{"studio"}, method: "GET", path: "/_sim/studio"},
		{args: []string{"studio", "c 1"}, method: "GET", path: "/_sim/studio?company_id=c+1"},
		{args: []string{"fault-rm", "flt_1"}, method: "DELETE", path: "/_sim/faults/flt_1"},
		{args: []string{"requests", "status=4xx"}, method: "GET", path: "/_sim/requests?status=4xx"},
		{args: []string{"report", "dubsim-pro", "text"}, method: "GET", path: "/_sim/report?api_key=dubsim-pro&format=text"},
		{args: []string{"raw", "get", "/_sim/state"}, method: "GET", path: "/_sim/state"},
		{args: []string{"sandbox"}, method: "POST", path: "/_sim/sandboxes"},
		{args: []string{"sandbox", `{"time_scale":60}`}, method: "POST", path: "/_sim/sandboxes", body: `{"time_scale":60}`},
		{args: []string{"sandboxes"}, method: "GET", path: "/_sim/sandboxes"},
		{args: []string{"sandbox-rm", "k7q2m9x4w3p8r5t6"}, method: "DELETE", path: "/_sim/sandboxes/k7q2m9x4w3p8r5t6"},
		{args: []string{"nonsense"}, wantErr: `ctl: unknown command "nonsense"`},
		{args: nil, wantErr: "ctl: missing COMMAND"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			c, err := ctlRequest(tc.args)
			if tc.wantErr != "" {
				require.Error(t, err)
				lines := strings.Split(err.Error(), "\n")
				require.Len(t, lines, 2, "one line saying what is wrong, then one usage line")
				assert.Equal(t, tc.wantErr, lines[0])
				assert.True(t, strings.HasPrefix(lines[1], "usage: dubsim ctl [flags] "), lines[1])
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.method, c.method)
			assert.Equal(t, tc.path, c.path)
			assert.Equal(t, tc.body, string(c.body))
		})
	}
}

func TestCtlAgainstARunningInstance(t *testing.T) {
	t.Parallel()
	in := start(t, "--data", filepath.Join(t.TempDir(), "d.db"), "--time-scale", "0")
	defer func() { assert.NoError(t, in.stop()) }()
	getenv := func(k string) string {
		if k == "DUBSIM_URL" {
			return in.base
		}
		return ""
	}
	var out strings.Builder
	require.NoError(t, run(t.Context(), []string{"ctl", "advance", "60"}, getenv, &out, io.Discard))
	assert.Contains(t, out.String(), `"now"`)
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"ctl", "account", "pro", "5"}, getenv, &out, io.Discard))
	assert.Contains(t, out.String(), `"plan":"pro"`)
	out.Reset()
	err := run(t.Context(), []string{"ctl", "--url", in.base, "outcome", "1", "error"}, func(string) string { return "" }, &out, io.Discard)
	assert.EqualError(t, err, "POST /_sim/projects/1/outcome: HTTP 404", "an error answer is a failing exit")
	assert.Contains(t, out.String(), "NotFoundError")

	// A sandbox, then every command against it through --url BASE/sbx/ID.
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"ctl", "sandbox", `{"start":"2030-01-01T00:00:00Z"}`}, getenv, &out, io.Discard))
	var sb struct {
		ID      string `json:"id"`
		BaseURL string `json:"base_url"`
	}
	require.NoError(t, json.Unmarshal([]byte(out.String()), &sb), out.String())
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"ctl", "--url", sb.BaseURL, "advance", "60"}, getenv, &out, io.Discard))
	assert.Contains(t, out.String(), `"now":"2030-01-01T00:01:00.000Z"`, "the sandbox's clock moved")
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"ctl", "clock"}, getenv, &out, io.Discard))
	assert.NotContains(t, out.String(), `"now":"2030-01-01`, "the default's clock is its own")
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"ctl", "sandboxes"}, getenv, &out, io.Discard))
	assert.Contains(t, out.String(), sb.ID)
	require.NoError(t, run(t.Context(), []string{"ctl", "sandbox-rm", sb.ID}, getenv, io.Discard, io.Discard))
}

// TestCtlUsageListsEveryCommand: the help is made from the command table, so
// every command a user can type is in it with its arguments, and names are
// unique (a second row of one name would never be reached).
func TestCtlUsageListsEveryCommand(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	usage := ctlUsage()
	for _, c := range ctlCommands {
		assert.False(t, seen[c.name], "command %q twice", c.name)
		seen[c.name] = true
		assert.Contains(t, usage, "\n  "+strings.TrimSpace(c.name+" "+c.args))
		_, err := ctlRequest(append([]string{c.name}, make([]string, c.max+1)...))
		assert.ErrorContains(t, err, "usage: "+c.usage(), "one argument too many for %s", c.name)
	}
}
