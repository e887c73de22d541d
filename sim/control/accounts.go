package control

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/go-chi/chi/v5"
)

type accountBody struct {
	APIKey               string   `json:"api_key"`
	Name                 string   `json:"name"`
	Plan                 *string  `json:"plan"`
	BalanceMinutes       *float64 `json:"balance_minutes"`
	RetranslationEnabled *bool    `json:"retranslation_enabled"`
	CloningEnabled       *bool    `json:"cloning_enabled"`
	// Studio: the company to join ("" = a new one).
	CompanyID string                  `json:"company_id"`
	UserEmail string                  `json:"user_email"`
	Storage   *sim.StorageCredentials `json:"storage"`
	RateLimit *sim.RateLimit          `json:"rate_limit"`
}

type accountResponse struct {
	APIKey               string         `json:"api_key"`
	Name                 string         `json:"name"`
	Plan                 string         `json:"plan"`
	BalanceMinutes       int64          `json:"balance_minutes"`
	RetranslationEnabled bool           `json:"retranslation_enabled"`
	CloningEnabled       bool           `json:"cloning_enabled"`
	CreatedAt            string         `json:"created_at"`
	CompanyID            string         `json:"company_id"`
	UserID               string         `json:"user_id"`
	UserEmail            string         `json:"user_email"`
	Storage              *storageView   `json:"storage"`
	RateLimit            *sim.RateLimit `json:"rate_limit"`
}

// storageView shows credentials without their secret.
type storageView struct {
	AccessKeyID string   `json:"access_key_id"`
	Region      string   `json:"region,omitempty"`
	Buckets     []string `json:"buckets,omitempty"`
}

func (a *API) accountResponse(r *http.Request, acct sim.Account) (accountResponse, error) {
	out := accountResponse{
		APIKey: acct.APIKey, Name: acct.Name, Plan: string(acct.Plan), BalanceMinutes: acct.BalanceMinutes,
		RetranslationEnabled: acct.RetranslationEnabled, CloningEnabled: acct.CloningEnabled, CreatedAt: Time(acct.CreatedAt),
		RateLimit: acct.RateLimit,
	}
	if st := acct.Storage; st != nil {
		out.Storage = &storageView{AccessKeyID: st.AccessKeyID, Region: st.Region, Buckets: st.Buckets}
	}
	c, err := a.ctl.Caller(r.Context(), acct.APIKey)
	if err != nil {
		return out, err
	}
	out.CompanyID, out.UserID, out.UserEmail = c.Company.ID, c.User.ID, c.User.Email
	return out, nil
}

func checkStorage(st *sim.StorageCredentials) error {
	if st == nil {
		return nil
	}
	if st.AccessKeyID == "" || len(st.AccessKeyID) > 128 {
		return sim.Errorf(sim.CodeValidation, msgAccessKeyID)
	}
	if len(st.SecretAccessKey) > 256 || len(st.Region) > 64 {
		return sim.Errorf(sim.CodeValidation, msgStorageTooLong)
	}
	if len(st.Buckets) > 100 {
		return sim.Errorf(sim.CodeValidation, msgBucketCount, len(st.Buckets))
	}
	for i, b := range st.Buckets {
		if b == "" || len(b) > 63 || strings.ContainsAny(b, "/ ") {
			return sim.Errorf(sim.CodeValidation, msgBucketName, i, b)
		}
	}
	return nil
}

func checkRateLimit(rl *sim.RateLimit) error {
	if rl != nil && (rl.PerMinute < 0 || rl.PerDay < 0 || rl.PerMinute > 1e9 || rl.PerDay > 1e9) {
		return sim.Errorf(sim.CodeValidation, msgRateLimit)
	}
	return nil
}

func (a *API) createAccount(r *http.Request, b accountBody) (int, any, error) {
	if err := errors.Join(checkStorage(b.Storage), checkRateLimit(b.RateLimit)); err != nil {
		return 0, nil, err
	}
	// Fields left out take the plan's fixture account's values, so a new
	// pro account can create a project at once.
	spec := sim.AccountSpec{APIKey: b.APIKey, Name: b.Name, Plan: sim.PlanNone,
		CompanyID: b.CompanyID, UserEmail: b.UserEmail, Storage: b.Storage, RateLimit: b.RateLimit,
		FromPlan: sim.PlanDefaults{Balance: b.BalanceMinutes == nil, Retranslation: b.RetranslationEnabled == nil, Cloning: b.CloningEnabled == nil}}
	spec.RetranslationEnabled = b.RetranslationEnabled != nil && *b.RetranslationEnabled
	spec.CloningEnabled = b.CloningEnabled != nil && *b.CloningEnabled
	if b.Plan != nil {
		spec.Plan = sim.Plan(*b.Plan)
	}
	if b.BalanceMinutes != nil {
		m := *b.BalanceMinutes
		if m != math.Trunc(m) || m < 0 || m > 1e12 {
			return 0, nil, sim.Errorf(sim.CodeValidation, msgBalanceMinutes, m)
		}
		spec.BalanceMinutes = int64(m)
	}
	acct, err := a.ctl.CreateAccount(r.Context(), spec)
	if err != nil {
		return 0, nil, err
	}
	out, err := a.accountResponse(r, acct)
	return http.StatusCreated, out, err
}

// handleUpdateAccount serves PATCH /_sim/accounts/{api_key}: storage
// credentials and rate limit (null removes them).
func (a *API) handleUpdateAccount(w http.ResponseWriter, r *http.Request) (int, any, error) {
	body, err := httpx.ReadJSONBody(w, r, 1<<20)
	if err != nil {
		return 0, nil, err
	}
	var raw map[string]json.RawMessage
	if err := a.dec.DecodeBytes(body, &raw); err != nil {
		return 0, nil, err
	}
	var b struct {
		Storage   *sim.StorageCredentials `json:"storage"`
		RateLimit *sim.RateLimit          `json:"rate_limit"`
	}
	if err := a.dec.DecodeBytes(body, &b); err != nil {
		return 0, nil, err
	}
	_, setStorage := raw["storage"]
	_, setRate := raw["rate_limit"]
	if !setStorage && !setRate {
		return 0, nil, sim.Errorf(sim.CodeValidation, msgStudioChangeEmpty)
	}
	if err := errors.Join(checkStorage(b.Storage), checkRateLimit(b.RateLimit)); err != nil {
		return 0, nil, err
	}
	acct, err := a.ctl.SetAccountStudio(r.Context(), chi.URLParam(r, "api_key"), sim.AccountStudioChange{
		SetStorage: setStorage, Storage: b.Storage, SetRateLimit: setRate, RateLimit: b.RateLimit})
	if err != nil {
		return 0, nil, err
	}
	out, err := a.accountResponse(r, acct)
	return http.StatusOK, out, err
}
