package control_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/control"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type fakeCtl struct {
	control.Controller // methods a test does not fake panic
	now                time.Time
	advanced           []time.Duration
	accounts           []sim.AccountSpec
	resets             int
}

func (f *fakeCtl) Now() time.Time { return f.now }
func (f *fakeCtl) Caller(_ context.Context, key string) (sim.Caller, error) {
	return sim.Caller{User: sim.User{ID: "u1", Email: "u1@x.test"}, Company: sim.Company{ID: "c1"}}, nil
}
func (f *fakeCtl) TimeScale() float64          { return 60 }
func (f *fakeCtl) Frozen() bool                { return false }
func (f *fakeCtl) Reset(context.Context) error { f.resets++; return nil }
func (f *fakeCtl) Advance(_ context.Context, d time.Duration) (time.Time, error) {
	f.advanced = append(f.advanced, d)
	f.now = f.now.Add(d)
	return f.now, nil
}
func (f *fakeCtl) CreateAccount(_ context.Context, spec sim.AccountSpec) (sim.Account, error) {
	if !spec.Plan.Valid() {
		return sim.Account{}, sim.Errorf(sim.CodeValidation, "bad plan %q", spec.Plan)
	}
	f.accounts = append(f.accounts, spec)
	return sim.Account{APIKey: "dsk_1", Name: "n", Plan: spec.Plan, BalanceMinutes: spec.BalanceMinutes,
		RetranslationEnabled: spec.RetranslationEnabled, CloningEnabled: spec.CloningEnabled, CreatedAt: f.now}, nil
}

func serve(h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestControlAPI(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 2, 4, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name, method, path, body string
		status                   int
		want                     string
		check                    func(t *testing.T, f *fakeCtl)
	}{
		{"clock", "GET", "/clock", "", 200, `{"now":"2026-02-04T12:00:00.000Z","time_scale":60,"frozen":false}`, nil},
		{"advance", "POST", "/clock/advance", `{"seconds": 90.5}`, 200, `{"now":"2026-02-04T12:01:30.500Z","time_scale":60,"frozen":false}`,
			func(t *testing.T, f *fakeCtl) { assert.Equal(t, []time.Duration{90500 * time.Millisecond}, f.advanced) }},
		{"advance zero", "POST", "/clock/advance", `{"seconds": 0}`, 200, `{"now":"2026-02-04T12:00:00.000Z","time_scale":60,"frozen":false}`, nil},
		{"advance missing seconds", "POST", "/clock/advance", `{}`, 400, `{"error":"ValidationError","message":"seconds or next_due is required"}`, nil},
		{"advance negative", "POST", "/clock/advance", `{"seconds": -1}`, 400, `{"error":"ValidationError","message":"seconds must be between 0 and 3153600000; got -1"}`, nil},
		{"advance too far", "POST", "/clock/advance", `{"seconds": 1e12}`, 400, `{"error":"ValidationError","message":"seconds must be between 0 and 3153600000; got 1e+12"}`, nil},
		{"advance string", "POST", "/clock/advance", `{"seconds": "10"}`, 400, `{"error":"ValidationError","message":"seconds must be a number; got string"}`, nil},
		{"advance typo", "POST", "/clock/advance", `{"second": 10}`, 400, `{"error":"ValidationError","message":"Unknown field \"second\""}`, nil},
		{"advance no body", "POST", "/clock/advance", ``, 400, `{"error":"ValidationError","message":"Request body must be a JSON object"}`, nil},
		{"account", "POST", "/accounts", `{"plan":"pro","balance_minutes":12,"retranslation_enabled":true}`, 201,
			`{"api_key":"dsk_1","name":"n","plan":"pro","balance_minutes":12,"retranslation_enabled":true,"cloning_enabled":false,"created_at":"2026-02-04T12:00:00.000Z","company_id":"c1","user_id":"u1","user_email":"u1@x.test","storage":null,"rate_limit":null}`,
			func(t *testing.T, f *fakeCtl) {
				require.Len(t, f.accounts, 1)
				assert.Equal(t, sim.AccountSpec{Plan: sim.PlanPro, BalanceMinutes: 12, RetranslationEnabled: true, FromPlan: sim.PlanDefaults{Cloning: true}}, f.accounts[0])
			}},
		{"account default plan none", "POST", "/accounts", `{}`, 201,
			`{"api_key":"dsk_1","name":"n","plan":"none","balance_minutes":0,"retranslation_enabled":false,"cloning_enabled":false,"created_at":"2026-02-04T12:00:00.000Z","company_id":"c1","user_id":"u1","user_email":"u1@x.test","storage":null,"rate_limit":null}`, nil},
		{"account fractional balance", "POST", "/accounts", `{"balance_minutes":1.5}`, 400,
			`{"error":"ValidationError","message":"balance_minutes must be a whole number of minutes between 0 and 1e12; got 1.5"}`, nil},
		{"account bad plan", "POST", "/accounts", `{"plan":"gold"}`, 400, `{"error":"ValidationError","message":"bad plan \"gold\""}`, nil},
		{"reset", "POST", "/reset", ``, 200, `{"reset":true}`, func(t *testing.T, f *fakeCtl) { assert.Equal(t, 1, f.resets) }},
		{"unknown route", "GET", "/nope", ``, 404, `{"error":"NotFoundError","message":"No control route GET /nope"}`, nil},
		{"wrong method", "GET", "/reset", ``, 405, `{"error":"MethodNotAllowedError","message":"Method GET is not allowed on /reset"}`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeCtl{now: t0}
			rec := serve(control.New(f, nil).Routes(), tc.method, tc.path, tc.body)
			assert.Equal(t, tc.status, rec.Code)
			assert.JSONEq(t, tc.want, rec.Body.String())
			if tc.check != nil {
				tc.check(t, f)
			}
		})
	}
}
