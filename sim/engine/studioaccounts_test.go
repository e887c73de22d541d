package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Studio accounts: callers, the placement of accounts in companies, the
// seeding of the studio fixtures and the studio settings of an account.

func TestCaller(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	// Records a store can hold but no use case writes: an account whose
	// user is gone, a user whose company is gone.
	require.NoError(t, h.st.Update(ctx, func(tx sim.Tx) error {
		return errors.Join(
			tx.Accounts().Put(sim.Account{APIKey: "sp-no-user", Name: "Ghost", Plan: sim.PlanPro, UserID: spUnknownID}),
			tx.Users().Put(sim.User{ID: "ffffffffffffffffffffffff", CompanyID: spUnknownID, Name: "Lost", Email: "lost@sp.test"}),
			tx.Accounts().Put(sim.Account{APIKey: "sp-no-company", Name: "Lost", Plan: sim.PlanPro, UserID: "ffffffffffffffffffffffff"}),
		)
	}))

	cases := []struct {
		name        string
		key         string
		wantUser    string
		wantCompany string
		wantMulti   bool
		code        sim.Code
		msg         string
		notFound    bool // the error wraps sim.ErrNotFound
	}{
		{name: "fixture key", key: spKeyAlice, wantUser: spUserAlice, wantCompany: spAcme},
		{name: "fixture key again (cached)", key: spKeyAlice, wantUser: spUserAlice, wantCompany: spAcme},
		{name: "another user of the same company", key: spKeyBob, wantUser: spUserBob, wantCompany: spAcme},
		{name: "multi-language company", key: spKeyGrace, wantUser: "66b14b3ee4e6d9a72a921bba", wantCompany: spGlobex, wantMulti: true},
		{name: "another company", key: spKeyPriya, wantUser: spUserPriya, wantCompany: spInitech},
		{name: "unknown key", key: "nobody", code: sim.CodeUnauthorized, msg: sim.MsgInvalidAPIKey},
		{name: "no key", key: "", code: sim.CodeUnauthorized, msg: sim.MsgInvalidAPIKey},
		{name: "user missing", key: "sp-no-user", code: sim.CodeInternal, notFound: true,
			msg: `caller Ghost: user "` + spUnknownID + `": ` + sim.ErrNotFound.Error()},
		{name: "company missing", key: "sp-no-company", code: sim.CodeInternal, notFound: true,
			msg: `caller Lost: company "` + spUnknownID + `": ` + sim.ErrNotFound.Error()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := h.e.Accounts.Caller(ctx, tc.key)
			if tc.code != "" {
				assert.Equal(t, tc.code, sim.ErrorCode(err))
				assert.EqualError(t, err, tc.msg)
				assert.Equal(t, tc.notFound, errors.Is(err, sim.ErrNotFound))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.key, c.Account.APIKey)
			assert.Equal(t, tc.wantUser, c.Account.UserID)
			assert.Equal(t, tc.wantUser, c.User.ID)
			assert.Equal(t, tc.wantCompany, c.User.CompanyID)
			assert.Equal(t, tc.wantCompany, c.Company.ID)
			assert.Equal(t, tc.wantMulti, c.Company.MultiLanguage)
			assert.True(t, c.Company.Fixture)
		})
	}
}

// TestCallerFollowsAccountChanges: a cached caller is not served after a
// write changed its account.
func TestCallerFollowsAccountChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	before := spCaller(t, h, spKeyAlice)
	assert.Nil(t, before.Account.Storage)
	assert.Equal(t, before, spCaller(t, h, spKeyAlice), "a second read answers the same")

	creds := &sim.StorageCredentials{AccessKeyID: "AKIA", Buckets: []string{"media"}}
	_, err := h.e.Accounts.SetAccountStudio(ctx, spKeyAlice, sim.AccountStudioChange{SetStorage: true, Storage: creds})
	require.NoError(t, err)
	after := spCaller(t, h, spKeyAlice)
	assert.Equal(t, creds, after.Account.Storage)
	assert.Equal(t, before.User, after.User)
	assert.Equal(t, before.Company, after.Company)
}

func TestCreateAccountPlacesItsUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	_, err := h.e.Clock.Advance(ctx, time.Hour)
	require.NoError(t, err)
	now := t0.Add(time.Hour)

	cases := []struct {
		name        string
		spec        sim.AccountSpec
		wantCompany string // "" = a new company
		wantEmail   string // "" = a generated address
		code        sim.Code
		msg         string
	}{
		{name: "a new company", spec: sim.AccountSpec{Name: "Zed"}},
		{name: "a new company, named email", spec: sim.AccountSpec{Name: "Yan", UserEmail: "yan@sp.test"}, wantEmail: "yan@sp.test"},
		{name: "joins a company", spec: sim.AccountSpec{Name: "Xia", CompanyID: spAcme}, wantCompany: spAcme},
		{name: "joins a company, named email", spec: sim.AccountSpec{Name: "Wes", CompanyID: spInitech, UserEmail: "wes@initech.test"},
			wantCompany: spInitech, wantEmail: "wes@initech.test"},
		{name: "unknown company", spec: sim.AccountSpec{Name: "Vic", CompanyID: spUnknownID},
			code: sim.CodeValidation, msg: fmt.Sprintf(sim.MsgUnknownCompany, spUnknownID)},
		{name: "email of a fixture user", spec: sim.AccountSpec{Name: "Uma", UserEmail: "alice.johnson@acme-media.example"},
			code: sim.CodeValidation, msg: fmt.Sprintf(sim.MsgEmailTaken, "alice.johnson@acme-media.example")},
		{name: "email taken by a run-time user", spec: sim.AccountSpec{Name: "Tia", CompanyID: spAcme, UserEmail: "yan@sp.test"},
			code: sim.CodeValidation, msg: fmt.Sprintf(sim.MsgEmailTaken, "yan@sp.test")},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Plan, tc.spec.APIKey = sim.PlanPro, "sp-key-"+strconv.Itoa(i)
			before, err := h.e.Data.StudioDump(ctx, sim.StudioFilter{})
			require.NoError(t, err)
			a, err := h.e.Accounts.CreateAccount(ctx, tc.spec)
			if tc.code != "" {
				assert.Equal(t, tc.code, sim.ErrorCode(err))
				assert.EqualError(t, err, tc.msg)
				after, err := h.e.Data.StudioDump(ctx, sim.StudioFilter{})
				require.NoError(t, err)
				assert.Equal(t, before, after, "a refusal creates no company and no user")
				_, err = h.e.Accounts.Account(ctx, tc.spec.APIKey)
				assert.Equal(t, sim.CodeUnauthorized, sim.ErrorCode(err), "nor the account")
				return
			}
			require.NoError(t, err)
			assert.True(t, sim.IsStudioID(a.UserID), a.UserID)
			c := spCaller(t, h, a.APIKey)
			assert.Equal(t, a.UserID, c.User.ID)
			assert.Equal(t, tc.spec.Name, c.User.Name)
			assert.Equal(t, now, c.User.CreatedAt)
			after, err := h.e.Data.StudioDump(ctx, sim.StudioFilter{})
			require.NoError(t, err)
			assert.Len(t, after.Users, len(before.Users)+1)
			if tc.wantCompany == "" {
				assert.Len(t, after.Companies, len(before.Companies)+1, "a company of its own")
				assert.Equal(t, sim.Company{ID: c.User.CompanyID, Name: tc.spec.Name + " company", CreatedAt: now}, c.Company)
				assert.Equal(t, c.User.ID[:8], c.Company.ID[:8], "both made in the same second")
			} else {
				assert.Len(t, after.Companies, len(before.Companies))
				assert.Equal(t, tc.wantCompany, c.Company.ID)
			}
			if tc.wantEmail == "" {
				assert.Equal(t, "user-"+c.User.ID[16:]+"@company-"+c.Company.ID[16:]+".dubsim.test", c.User.Email)
			} else {
				assert.Equal(t, tc.wantEmail, c.User.Email)
			}
		})
	}
}

// TestPlaceAccountWithAUser: an account that names its user (the fixture
// accounts) keeps it when the user exists; the run-time API refuses user_id
// before placeAccount, so it is called directly here.
func TestPlaceAccountWithAUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	cases := []struct {
		name   string
		userID string
		msg    string
	}{
		{name: "a fixture user", userID: spUserCarol},
		{name: "an unknown user", userID: spUnknownID, msg: fmt.Sprintf(sim.MsgUnknownUser, spUnknownID)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, err := h.e.Data.StudioDump(ctx, sim.StudioFilter{})
			require.NoError(t, err)
			a := sim.Account{APIKey: "sp-placed", Name: "Placed", UserID: tc.userID}
			err = h.st.Update(ctx, func(tx sim.Tx) error { return h.e.Accounts.placeAccount(tx, &a, spInitech, "", t0) })
			if tc.msg != "" {
				assert.Equal(t, sim.CodeValidation, sim.ErrorCode(err))
				assert.EqualError(t, err, tc.msg)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.userID, a.UserID, "the named user stays; companyID is not used")
			after, err := h.e.Data.StudioDump(ctx, sim.StudioFilter{})
			require.NoError(t, err)
			assert.Equal(t, before, after, "no user or company is created")
		})
	}
}

// TestStartPlacesOrphanAccounts: accounts stored before the studio interface
// existed (no user) get a user in a company of their own when the engine
// starts; fixture records already stored keep their state.
func TestStartPlacesOrphanAccounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	c := spCaller(t, h, spKeyAlice)
	require.NoError(t, h.st.Update(ctx, func(tx sim.Tx) error {
		return errors.Join(
			tx.Accounts().Put(sim.Account{APIKey: "sp-old-1", Name: "Old one", Plan: sim.PlanPro, CreatedAt: t0}),
			tx.Accounts().Put(sim.Account{APIKey: "sp-old-2", Name: "Old two", Plan: sim.PlanNone, CreatedAt: t0}),
		)
	}))
	// A fixture project and video changed since the seeding.
	renamed := "Summer Campaign (renamed)"
	_, err := h.e.StudioProjects.UpdateStudioProject(ctx, c, spSummer, sim.StudioProjectInput{Name: &renamed})
	require.NoError(t, err)
	_, err = h.e.Videos.SetVideoStatus(ctx, spSocialCut, sim.VideoCompleted, false)
	require.NoError(t, err)
	_, err = h.e.Clock.Advance(ctx, time.Hour)
	require.NoError(t, err)
	before, err := h.e.Data.StudioDump(ctx, sim.StudioFilter{})
	require.NoError(t, err)

	require.NoError(t, h.e.Start(ctx), "a second start on the same store")

	after, err := h.e.Data.StudioDump(ctx, sim.StudioFilter{})
	require.NoError(t, err)
	assert.Len(t, after.Companies, len(before.Companies)+2)
	assert.Len(t, after.Users, len(before.Users)+2)
	for _, key := range []string{"sp-old-1", "sp-old-2"} {
		o := spCaller(t, h, key)
		assert.True(t, sim.IsStudioID(o.Account.UserID), "%s: %q", key, o.Account.UserID)
		assert.Equal(t, o.Account.Name, o.User.Name)
		assert.Equal(t, o.Account.Name+" company", o.Company.Name)
		assert.Equal(t, t0.Add(time.Hour), o.User.CreatedAt)
		assert.NotEqual(t, spAcme, o.Company.ID)
	}
	assert.NotEqual(t, spCaller(t, h, "sp-old-1").Company.ID, spCaller(t, h, "sp-old-2").Company.ID, "one company each")
	assert.Equal(t, renamed, spStoredProject(t, h, spSummer).Name, "a stored fixture project keeps its state")
	assert.Equal(t, sim.VideoCompleted, spStoredVideo(t, h, spSocialCut).Status, "a stored fixture video keeps its state")
	assert.Equal(t, spUserAlice, spCaller(t, h, spKeyAlice).User.ID, "fixture accounts keep their user")
}

func TestSeedStudioWithoutStudioFixtures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	bare := *fx
	bare.Studio = nil
	h := spHarnessWith(t, &bare)
	d, err := h.e.Data.StudioDump(ctx, sim.StudioFilter{})
	require.NoError(t, err)
	assert.Equal(t, sim.StudioDump{Companies: []sim.Company{}, Users: []sim.User{}, Folders: []sim.Folder{}, Glossaries: []sim.Glossary{},
		Projects: []sim.StudioProject{}, Videos: []sim.Video{}, Artifacts: []sim.Artifact{}}, d)
	a, err := h.e.Accounts.Account(ctx, spKeyAlice)
	require.NoError(t, err)
	assert.Equal(t, spUserAlice, a.UserID, "fixture accounts still name their user")
}

func TestPutEach(t *testing.T) {
	t.Parallel()
	errDisk := errors.New("disk on fire")
	cases := []struct {
		name    string
		getErr  error
		putErr  error
		wantPut bool
		wantErr error
	}{
		{name: "missing: stored", getErr: sim.ErrNotFound, wantPut: true},
		{name: "missing, the put fails", getErr: sim.ErrNotFound, putErr: errDisk, wantPut: true, wantErr: errDisk},
		{name: "missing (wrapped not found)", getErr: fmt.Errorf("bucket x: %w", sim.ErrNotFound), wantPut: true},
		{name: "present: kept", getErr: nil},
		{name: "the read fails", getErr: errDisk, wantErr: errDisk},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &fakeRecords{getErr: tc.getErr, putErr: tc.putErr}
			err := putEach[string](r, true, func(string) string { return "id-1" }, []string{"seed"})
			assert.Equal(t, tc.wantErr, err)
			assert.Equal(t, "id-1", r.gotID)
			if tc.wantPut {
				assert.Equal(t, "seed", r.put)
			} else {
				assert.Empty(t, r.put)
			}
		})
	}
	t.Run("without keep: every record is put, none read", func(t *testing.T) {
		r := &fakeRecords{}
		require.NoError(t, putEach[string](r, false, func(string) string { return "id-1" }, []string{"seed"}))
		assert.Empty(t, r.gotID)
		assert.Equal(t, "seed", r.put)
	})
}

// fakeRecords notes the id read and the record put.
type fakeRecords struct {
	getErr, putErr error
	gotID, put     string
}

func (r *fakeRecords) Get(id string) (string, error)    { r.gotID = id; return "stored", r.getErr }
func (r *fakeRecords) Put(v string) error               { r.put = v; return r.putErr }
func (r *fakeRecords) ForEach(func(string) error) error { return nil }

func TestSetAccountStudio(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	s0 := &sim.StorageCredentials{AccessKeyID: "AKIA0", SecretAccessKey: "s0", Region: "eu-west-1"}
	r0 := &sim.RateLimit{PerMinute: 60, PerDay: 1000}
	s1 := &sim.StorageCredentials{AccessKeyID: "AKIA1", Buckets: []string{"a", "b"}}
	r1 := &sim.RateLimit{PerMinute: 5}
	cases := []struct {
		name        string
		ch          sim.AccountStudioChange
		wantStorage *sim.StorageCredentials
		wantRate    *sim.RateLimit
	}{
		{name: "nothing set", ch: sim.AccountStudioChange{Storage: s1, RateLimit: r1}, wantStorage: s0, wantRate: r0},
		{name: "storage", ch: sim.AccountStudioChange{SetStorage: true, Storage: s1, RateLimit: r1}, wantStorage: s1, wantRate: r0},
		{name: "rate limit", ch: sim.AccountStudioChange{SetRateLimit: true, Storage: s1, RateLimit: r1}, wantStorage: s0, wantRate: r1},
		{name: "both", ch: sim.AccountStudioChange{SetStorage: true, Storage: s1, SetRateLimit: true, RateLimit: r1}, wantStorage: s1, wantRate: r1},
		{name: "storage removed", ch: sim.AccountStudioChange{SetStorage: true}, wantStorage: nil, wantRate: r0},
		{name: "rate limit removed", ch: sim.AccountStudioChange{SetRateLimit: true}, wantStorage: s0, wantRate: nil},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := "sp-studio-" + strconv.Itoa(i)
			created, err := h.e.Accounts.CreateAccount(ctx, sim.AccountSpec{APIKey: key, Plan: sim.PlanPro, BalanceMinutes: 10, Storage: s0, RateLimit: r0})
			require.NoError(t, err)
			a, err := h.e.Accounts.SetAccountStudio(ctx, key, tc.ch)
			require.NoError(t, err)
			assert.Equal(t, tc.wantStorage, a.Storage)
			assert.Equal(t, tc.wantRate, a.RateLimit)
			stored, err := h.e.Accounts.Account(ctx, key)
			require.NoError(t, err)
			assert.Equal(t, a, stored)
			created.Storage, created.RateLimit = tc.wantStorage, tc.wantRate
			assert.Equal(t, created, stored, "nothing else changes")
		})
	}
	t.Run("unknown key", func(t *testing.T) {
		_, err := h.e.Accounts.SetAccountStudio(ctx, "nobody", sim.AccountStudioChange{SetStorage: true, Storage: s1})
		assert.Equal(t, sim.CodeNotFound, sim.ErrorCode(err))
		assert.EqualError(t, err, fmt.Sprintf(sim.MsgAccountNotFound, "nobody"))
	})
}

func TestStudioIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	var ids []string
	require.NoError(t, h.st.Update(ctx, func(tx sim.Tx) error {
		for _, at := range []time.Time{t0, t0, t0.Add(time.Second)} {
			id, err := h.e.Accounts.ids.studioID(tx, at)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	}))
	counter := func(id string) uint64 {
		n, err := strconv.ParseUint(id[16:], 16, 32)
		require.NoError(t, err)
		return n
	}
	for i, id := range ids {
		assert.True(t, sim.IsStudioID(id), id)
		assert.Equal(t, ids[0][8:16], id[8:16], "the process token")
		if i > 0 {
			assert.Equal(t, counter(ids[i-1])+1, counter(id), "the counter follows the sequence")
		}
	}
	assert.Equal(t, fmt.Sprintf("%08x", t0.Unix()), ids[0][:8], "the creation second")
	assert.Equal(t, ids[0][:8], ids[1][:8])
	assert.Equal(t, fmt.Sprintf("%08x", t0.Unix()+1), ids[2][:8])
	assert.Less(t, ids[0], ids[1], "ids of one second follow each other")
}

func TestUUID(t *testing.T) {
	t.Parallel()
	h := spHarness(t)
	const shape = `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`
	cases := []struct {
		name  string
		parts []string
	}{
		{name: "one part", parts: []string{"upload"}},
		{name: "two parts", parts: []string{"upload", "1"}},
		{name: "other parts", parts: []string{"upload", "2"}},
		{name: "no parts", parts: nil},
	}
	seen := map[string]string{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := h.e.Accounts.ids.uuid(tc.parts...)
			assert.Regexp(t, shape, u)
			assert.Equal(t, u, h.e.Accounts.ids.uuid(tc.parts...), "keyed by the store's secret: the same parts give the same UUID")
			if prev, ok := seen[u]; ok {
				t.Errorf("%s gives the UUID of %s", tc.name, prev)
			}
			seen[u] = tc.name
		})
	}
}

// TestCreateAccountTakesPlanDefaults: the fields a creation leaves out take
// the values of the plan's first fixture account, so a new account of a
// plan behaves like the fixture key of that plan; given fields win.
func TestCreateAccountTakesPlanDefaults(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	all := sim.PlanDefaults{Balance: true, Retranslation: true, Cloning: true}
	cases := []struct {
		name             string
		spec             sim.AccountSpec
		balance          int64
		retrans, cloning bool
	}{
		{name: "none", spec: sim.AccountSpec{Plan: sim.PlanNone, FromPlan: all}, balance: 30},
		{name: "subscription", spec: sim.AccountSpec{Plan: sim.PlanSubscription, FromPlan: all}, balance: 100},
		{name: "pro", spec: sim.AccountSpec{Plan: sim.PlanPro, FromPlan: all}, balance: 600, cloning: true},
		{name: "enterprise: the first fixture account of the plan, not dubsim-broke", spec: sim.AccountSpec{Plan: sim.PlanEnterprise, FromPlan: all}, balance: 6000, retrans: true, cloning: true},
		{name: "given fields win", spec: sim.AccountSpec{Plan: sim.PlanPro, BalanceMinutes: 0, CloningEnabled: false, FromPlan: sim.PlanDefaults{Retranslation: true}}, balance: 0},
		{name: "nothing from the plan", spec: sim.AccountSpec{Plan: sim.PlanEnterprise, BalanceMinutes: 5}, balance: 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := h.e.Accounts.CreateAccount(context.Background(), tc.spec)
			require.NoError(t, err)
			assert.Equal(t, tc.balance, a.BalanceMinutes)
			assert.Equal(t, tc.retrans, a.RetranslationEnabled)
			assert.Equal(t, tc.cloning, a.CloningEnabled)
		})
	}
}
