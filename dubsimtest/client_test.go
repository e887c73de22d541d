package dubsimtest_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/dubsimtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder is a RoundTripper that answers every request with a JSON body
// holding the simulated time t0 and records what was sent.
type recorder struct{ sent []string }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	line := req.Method + " " + req.URL.EscapedPath()
	if req.URL.RawQuery != "" {
		line += "?" + req.URL.RawQuery
	}
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		line += " " + string(b)
		if req.Header.Get("Content-Type") != "application/json" {
			line += " (no JSON content type)"
		}
	}
	r.sent = append(r.sent, line)
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"application/json"}},
		Body:       io.NopCloser(strings.NewReader(`{"now":"` + t0.Format(time.RFC3339) + `"}`)),
		Request:    req,
	}, nil
}

// TestClientCalls: every call of Client and of its groups sends its one
// HTTP request (AdvanceTo: two), through an HTTPClient set after
// NewClient; the base URL is unreachable, so a request that bypassed it
// would fail.
func TestClientCalls(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		call func(ctx context.Context, c *dubsimtest.Client) error
		sent []string
	}{
		{"Health", func(ctx context.Context, c *dubsimtest.Client) error { _, err := c.Health(ctx); return err },
			[]string{"GET /_sim/health"}},
		{"Work", func(ctx context.Context, c *dubsimtest.Client) error { _, err := c.Work(ctx); return err },
			[]string{"GET /_sim/work"}},
		{"Reset", func(ctx context.Context, c *dubsimtest.Client) error { return c.Reset(ctx) },
			[]string{"POST /_sim/reset"}},
		{"State", func(ctx context.Context, c *dubsimtest.Client) error { _, err := c.State(ctx, "k 1"); return err },
			[]string{"GET /_sim/state?api_key=k+1"}},
		{"LoadFixtures", func(ctx context.Context, c *dubsimtest.Client) error {
			_, err := c.LoadFixtures(ctx, map[string]any{"voices": []string{}})
			return err
		}, []string{`POST /_sim/fixtures {"voices":[]}`}},

		{"Clock.Get", func(ctx context.Context, c *dubsimtest.Client) error { _, err := c.Clock.Get(ctx); return err },
			[]string{"GET /_sim/clock"}},
		{"Clock.Advance", func(ctx context.Context, c *dubsimtest.Client) error {
			_, err := c.Clock.Advance(ctx, 90*time.Second)
			return err
		}, []string{`POST /_sim/clock/advance {"seconds":90}`}},
		{"Clock.AdvanceTo", func(ctx context.Context, c *dubsimtest.Client) error {
			_, err := c.Clock.AdvanceTo(ctx, t0.Add(time.Hour))
			return err
		}, []string{"GET /_sim/clock", `POST /_sim/clock/advance {"seconds":3600}`}},
		{"Clock.SetScale", func(ctx context.Context, c *dubsimtest.Client) error { _, err := c.Clock.SetScale(ctx, 2); return err },
			[]string{`POST /_sim/clock/scale {"time_scale":2}`}},
		{"Clock.Freeze", func(ctx context.Context, c *dubsimtest.Client) error { _, err := c.Clock.Freeze(ctx); return err },
			[]string{"POST /_sim/clock/freeze"}},
		{"Clock.Resume", func(ctx context.Context, c *dubsimtest.Client) error { _, err := c.Clock.Resume(ctx); return err },
			[]string{"POST /_sim/clock/resume"}},

		{"Accounts.Create", func(ctx context.Context, c *dubsimtest.Client) error {
			_, err := c.Accounts.Create(ctx, dubsimtest.AccountSpec{APIKey: "k"})
			return err
		}, []string{`POST /_sim/accounts {"api_key":"k"}`}},
		{"Accounts.Update", func(ctx context.Context, c *dubsimtest.Client) error {
			_, err := c.Accounts.Update(ctx, "a/b", dubsimtest.AccountPatch{ClearRateLimit: true})
			return err
		}, []string{`PATCH /_sim/accounts/a%2Fb {"rate_limit":null}`}},
		{"Accounts.Reset", func(ctx context.Context, c *dubsimtest.Client) error { return c.Accounts.Reset(ctx, "k") },
			[]string{`POST /_sim/reset {"api_key":"k"}`}},

		{"Outcomes.ForceProject", func(ctx context.Context, c *dubsimtest.Client) error {
			_, err := c.Outcomes.ForceProject(ctx, "p1", dubsimtest.Outcome{Outcome: dubsimtest.OutcomeError})
			return err
		}, []string{`POST /_sim/projects/p1/outcome {"outcome":"error"}`}},
		{"Outcomes.ForceArtifact", func(ctx context.Context, c *dubsimtest.Client) error {
			_, err := c.Outcomes.ForceArtifact(ctx, "a1", dubsimtest.Outcome{Outcome: dubsimtest.OutcomeReady, Now: true})
			return err
		}, []string{`POST /_sim/artifacts/a1/outcome {"outcome":"ready","now":true}`}},
		{"Outcomes.SetVideoStatus", func(ctx context.Context, c *dubsimtest.Client) error {
			_, err := c.Outcomes.SetVideoStatus(ctx, "v1", "completed", true)
			return err
		}, []string{`POST /_sim/videos/v1/status {"auto":true,"status":"completed"}`}},
		{"Outcomes.AddRule", func(ctx context.Context, c *dubsimtest.Client) error {
			_, err := c.Outcomes.AddRule(ctx, dubsimtest.OutcomeRuleSpec{Outcome: dubsimtest.OutcomeReady})
			return err
		}, []string{`POST /_sim/outcomes {"outcome":"ready"}`}},
		{"Outcomes.Rules", func(ctx context.Context, c *dubsimtest.Client) error { _, err := c.Outcomes.Rules(ctx); return err },
			[]string{"GET /_sim/outcomes"}},
		{"Outcomes.RemoveRule", func(ctx context.Context, c *dubsimtest.Client) error { return c.Outcomes.RemoveRule(ctx, "r1") },
			[]string{"DELETE /_sim/outcomes/r1"}},

		{"Faults.Add", func(ctx context.Context, c *dubsimtest.Client) error {
			_, err := c.Faults.Add(ctx, dubsimtest.FaultRule{ID: "f1", Action: dubsimtest.FaultAction{Type: "drop"}})
			return err
		}, []string{`POST /_sim/faults {"id":"f1","action":{"type":"drop"}}`}},
		{"Faults.List", func(ctx context.Context, c *dubsimtest.Client) error { _, err := c.Faults.List(ctx); return err },
			[]string{"GET /_sim/faults"}},
		{"Faults.Remove", func(ctx context.Context, c *dubsimtest.Client) error { return c.Faults.Remove(ctx, "f1") },
			[]string{"DELETE /_sim/faults/f1"}},
		{"Faults.Clear", func(ctx context.Context, c *dubsimtest.Client) error { _, err := c.Faults.Clear(ctx); return err },
			[]string{"DELETE /_sim/faults"}},

		{"Journal.Requests", func(ctx context.Context, c *dubsimtest.Client) error {
			_, err := c.Journal.Requests(ctx, dubsimtest.RequestFilter{Status: "4xx", Limit: 2})
			return err
		}, []string{"GET /_sim/requests?limit=2&status=4xx"}},
		{"Journal.Clear", func(ctx context.Context, c *dubsimtest.Client) error { return c.Journal.Clear(ctx) },
			[]string{"DELETE /_sim/requests"}},
		{"Journal.Verify", func(ctx context.Context, c *dubsimtest.Client) error {
			_, err := c.Journal.Verify(ctx, dubsimtest.Match{Method: "POST", Times: dubsimtest.Exactly(2)})
			return err
		}, []string{`POST /_sim/requests/verify {"method":"POST","count":2}`}},
		{"Journal.Report", func(ctx context.Context, c *dubsimtest.Client) error {
			_, err := c.Journal.Report(ctx, "k")
			return err
		}, []string{"GET /_sim/report?api_key=k"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			c := dubsimtest.NewClient("http://dubsim.invalid/")
			c.HTTPClient = &http.Client{Transport: rec}
			require.NoError(t, tc.call(t.Context(), c))
			assert.Equal(t, tc.sent, rec.sent)
		})
	}
}
