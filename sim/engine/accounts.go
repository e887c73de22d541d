package engine

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/gencache"
)

// Accounts are the API keys: their plans, balances and studio identities.
// Every request reads one, so accounts and callers are cached by key.
type Accounts struct {
	*core
	ids      *idgen
	fixtures *fixtureSet
	apiKeys  APIKeys
	accounts gencache.Cache[sim.Account]
	callers  gencache.Cache[sim.Caller]
}

const seqAccounts = "accounts"

func accountFrom(spec sim.AccountSpec, now time.Time, fixture bool) sim.Account {
	return sim.Account{
		APIKey: spec.APIKey, Name: spec.Name, Plan: spec.Plan, BalanceMinutes: spec.BalanceMinutes, InitialBalance: spec.BalanceMinutes,
		RetranslationEnabled: spec.RetranslationEnabled, CloningEnabled: spec.CloningEnabled,
		Fixture: fixture, CreatedAt: now, UserID: spec.UserID, Storage: spec.Storage, RateLimit: spec.RateLimit,
	}
}

func accountIn(tx sim.Tx, key string) (sim.Account, error) {
	return get(tx.Accounts().Get, key, nil, unauthorized)
}

func namedAccount(tx sim.Tx, key string) (sim.Account, error) {
	return get(tx.Accounts().Get, key, nil, func() error { return sim.Errorf(sim.CodeNotFound, sim.MsgAccountNotFound, key) })
}

// Account returns the account of an API key, or an unauthorized error.
func (e *Accounts) Account(ctx context.Context, apiKey string) (sim.Account, error) {
	if apiKey == "" {
		return sim.Account{}, unauthorized()
	}
	gen := e.writes.Load()
	if a, ok := e.accounts.Get(apiKey, gen); ok {
		return a, nil
	}
	a, err := in(ctx, e.store.View, func(tx sim.Tx) (sim.Account, error) { return accountIn(tx, apiKey) })
	if err == nil {
		e.accounts.Put(apiKey, a, gen)
	}
	return a, err
}

// CreateAccount adds an account; an empty APIKey gets one keyed by the
// store's secret, which nobody can predict.
func (e *Accounts) CreateAccount(ctx context.Context, spec sim.AccountSpec) (sim.Account, error) {
	if !spec.Plan.Valid() {
		return sim.Account{}, sim.Errorf(sim.CodeValidation, sim.MsgPlan, spec.Plan)
	}
	if spec.BalanceMinutes < 0 {
		return sim.Account{}, sim.Errorf(sim.CodeValidation, sim.MsgNegativeBalance)
	}
	e.fillFromPlan(&spec)
	if spec.APIKey != "" {
		k, err := e.apiKeys.Given(spec.APIKey)
		if err != nil {
			return sim.Account{}, err
		}
		spec.APIKey = k
	}
	if err := sim.CheckAPIKey(spec.APIKey); err != nil {
		return sim.Account{}, sim.Errorf(sim.CodeValidation, "%v", err)
	}
	if len(spec.CompanyID) > 64 {
		return sim.Account{}, sim.Errorf(sim.CodeValidation, sim.MsgCompanyIDLength, len(spec.CompanyID))
	}
	if e := spec.UserEmail; e != "" && (len(e) > 254 || strings.Count(e, "@") != 1 || strings.ContainsAny(e, " \t\r\n") || strings.HasPrefix(e, "@") || strings.HasSuffix(e, "@")) {
		return sim.Account{}, sim.Errorf(sim.CodeValidation, sim.MsgUserEmail, clip(e, 80))
	}
	if spec.UserID != "" {
		return sim.Account{}, sim.Errorf(sim.CodeValidation, sim.MsgUserIDChosen)
	}
	return in(ctx, e.update, func(tx sim.Tx) (sim.Account, error) {
		now := e.clock.Now()
		if spec.APIKey == "" {
			seq, err := tx.NextSequence(seqAccounts)
			if err != nil {
				return sim.Account{}, err
			}
			spec.APIKey = e.apiKeys.Hold("dsk_" + e.ids.secretToken(16, "account", fmt.Sprint(seq)))
		}
		if err := absent(tx.Accounts().Get, spec.APIKey, func() error { return sim.Errorf(sim.CodeConflict, sim.MsgAccountExists, spec.APIKey) }); err != nil {
			return sim.Account{}, err
		}
		spec.Name = cmp.Or(spec.Name, fmt.Sprintf("%s account", spec.Plan))
		a := accountFrom(spec, now, false)
		if err := e.placeAccount(tx, &a, spec.CompanyID, spec.UserEmail, now); err != nil {
			return a, err
		}
		return a, tx.Accounts().Put(a)
	})
}

// fillFromPlan gives the fields spec.FromPlan names the values of the first
// fixture account of spec's plan (zero when it has none).
func (e *Accounts) fillFromPlan(spec *sim.AccountSpec) {
	for _, f := range e.fixtures.get().Accounts {
		if f.Plan != spec.Plan {
			continue
		}
		if spec.FromPlan.Balance {
			spec.BalanceMinutes = f.BalanceMinutes
		}
		if spec.FromPlan.Retranslation {
			spec.RetranslationEnabled = f.RetranslationEnabled
		}
		if spec.FromPlan.Cloning {
			spec.CloningEnabled = f.CloningEnabled
		}
		return
	}
}

// Caller resolves an API key to its studio identity.
func (e *Accounts) Caller(ctx context.Context, apiKey string) (sim.Caller, error) {
	var c sim.Caller
	gen := e.writes.Load()
	if c, ok := e.callers.Get(apiKey, gen); ok {
		return c, nil
	}
	acct, err := e.Account(ctx, apiKey)
	if err != nil {
		return c, err
	}
	c.Account = acct
	err = e.store.View(ctx, func(tx sim.Tx) error {
		u, err := tx.Users().Get(acct.UserID)
		if err != nil {
			return fmt.Errorf("caller %s: user %q: %w", acct.Name, acct.UserID, err)
		}
		co, err := tx.Companies().Get(u.CompanyID)
		if err != nil {
			return fmt.Errorf("caller %s: company %q: %w", acct.Name, u.CompanyID, err)
		}
		c.User, c.Company = u, co
		return nil
	})
	if err == nil {
		e.callers.Put(apiKey, c, gen)
	}
	return c, err
}

// placeAccount gives a to a user: the fixture user it names, or a new user
// in companyID (a new company when empty).
func (e *Accounts) placeAccount(tx sim.Tx, a *sim.Account, companyID, email string, now time.Time) error {
	if a.UserID != "" {
		_, err := get(tx.Users().Get, a.UserID, nil, func() error { return sim.Errorf(sim.CodeValidation, sim.MsgUnknownUser, a.UserID) })
		return err
	}
	var co sim.Company
	if companyID != "" {
		var err error
		if co, err = get(tx.Companies().Get, companyID, nil, func() error { return sim.Errorf(sim.CodeValidation, sim.MsgUnknownCompany, companyID) }); err != nil {
			return err
		}
	} else {
		id, err := e.ids.studioID(tx, now)
		if err != nil {
			return err
		}
		co = sim.Company{ID: id, Name: a.Name + " company", CreatedAt: now}
		if err := tx.Companies().Put(co); err != nil {
			return err
		}
	}
	id, err := e.ids.studioID(tx, now)
	if err != nil {
		return err
	}
	email = cmp.Or(email, "user-"+id[16:]+"@company-"+co.ID[16:]+".dubsim.test")
	if err := absent(tx.UserByEmail, email, func() error { return sim.Errorf(sim.CodeValidation, sim.MsgEmailTaken, email) }); err != nil {
		return err
	}
	u := sim.User{ID: id, CompanyID: co.ID, Name: a.Name, Email: email, CreatedAt: now}
	if err := tx.Users().Put(u); err != nil {
		return err
	}
	a.UserID = u.ID
	return nil
}

// ensureUsers places every account that has no user (a fixture account
// without user_id) in a company of its own.
func (e *Accounts) ensureUsers(tx sim.Tx, now time.Time) error {
	var orphans []sim.Account
	if err := tx.Accounts().ForEach(func(a sim.Account) error {
		if a.UserID == "" {
			orphans = append(orphans, a)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, a := range orphans {
		if err := e.placeAccount(tx, &a, "", "", now); err != nil {
			return err
		}
		if err := tx.Accounts().Put(a); err != nil {
			return err
		}
	}
	return nil
}

// SetAccountStudio changes an account's storage credentials and rate limit.
func (e *Accounts) SetAccountStudio(ctx context.Context, apiKey string, ch sim.AccountStudioChange) (sim.Account, error) {
	return in(ctx, e.update, func(tx sim.Tx) (sim.Account, error) {
		a, err := namedAccount(tx, apiKey)
		if err != nil {
			return a, err
		}
		if ch.SetStorage {
			a.Storage = ch.Storage
		}
		if ch.SetRateLimit {
			a.RateLimit = ch.RateLimit
		}
		return a, tx.Accounts().Put(a)
	})
}

// ResetAccount deletes an account's projects and idempotency keys and gives
// it back its initial balance (its fixture balance for a fixture account).
func (e *Accounts) ResetAccount(ctx context.Context, apiKey string) error {
	return e.update(ctx, func(tx sim.Tx) error {
		a, err := namedAccount(tx, apiKey)
		if err != nil {
			return err
		}
		var ids []string
		if err := tx.ForEachProjectHead(func(p sim.Project) error {
			if p.APIKey == apiKey {
				ids = append(ids, p.ID)
			}
			return nil
		}); err != nil {
			return err
		}
		for _, id := range ids {
			if err := tx.DeleteProject(id); err != nil {
				return err
			}
		}
		if _, err := tx.DeleteIdempotencyScope(apiKey); err != nil {
			return err
		}
		a.BalanceMinutes = a.InitialBalance
		for _, spec := range e.fixtures.get().Accounts {
			if spec.APIKey == apiKey {
				a = accountFrom(spec, e.clock.Now(), true)
			}
		}
		return tx.Accounts().Put(a)
	})
}

// APIKeys is the form of the API keys an engine holds, for an instance
// whose keys have a form of their own (sandboxes).
type APIKeys interface {
	// Hold is the key an account of key k (a fixture's, or one generated)
	// is held under.
	Hold(k string) string
	// Given is the key an account created with key k gets, or a
	// *sim.Error that refuses k.
	Given(k string) (string, error)
}

// plainKeys holds keys as given and refuses those that start with
// sim.SandboxKeyPrefix (fidelity SB2).
type plainKeys struct{}

func (plainKeys) Hold(k string) string { return k }

func (plainKeys) Given(k string) (string, error) {
	if strings.HasPrefix(k, sim.SandboxKeyPrefix) {
		return "", sim.Errorf(sim.CodeValidation, sim.MsgSandboxKey, clip(k, 80))
	}
	return k, nil
}

// ownFixtures is fx with every account key in the form keys holds it: a
// copy, as the set may be shared with other engines.
func ownFixtures(keys APIKeys, fx *sim.Fixtures) *sim.Fixtures {
	if _, plain := keys.(plainKeys); plain || fx == nil {
		return fx
	}
	own := *fx
	own.Accounts = make([]sim.AccountSpec, len(fx.Accounts))
	for i, a := range fx.Accounts {
		a.APIKey = keys.Hold(a.APIKey)
		own.Accounts[i] = a
	}
	return &own
}
