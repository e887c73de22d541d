package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Studio projects: listing, access, creation and update.

func TestStudioProjectsList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	fresh, err := h.e.Accounts.CreateAccount(ctx, sim.AccountSpec{APIKey: "sp-fresh", Plan: sim.PlanPro})
	require.NoError(t, err)

	cases := []struct {
		name string
		key  string
		want []string
	}{
		{name: "Acme, newest first", key: spKeyAlice, want: []string{spTutorials, spSummer, spWebinar}},
		{name: "another user of Acme", key: spKeyBob, want: []string{spTutorials, spSummer, spWebinar}},
		{name: "Globex", key: spKeyGrace, want: []string{"682bc6007125e1af62bc9290", spLongNight}},
		{name: "Initech", key: spKeyPriya, want: []string{spCompliance}},
		{name: "a new company has none", key: fresh.APIKey, want: []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := spCaller(t, h, tc.key)
			l, err := h.e.StudioProjects.ListStudioProjects(ctx, c)
			require.NoError(t, err)
			assert.NotNil(t, l, "an empty list, not null")
			assert.Equal(t, tc.want, spIDs(l, spProjectID))
			for _, p := range l {
				assert.Equal(t, c.Company.ID, p.CompanyID)
			}
		})
	}

	t.Run("created in one instant: higher id first", func(t *testing.T) {
		c := spCaller(t, h, spKeyAlice)
		var made []string
		for _, name := range []string{"First", "Second"} {
			p, err := h.e.StudioProjects.CreateStudioProject(ctx, c, sim.StudioProjectInput{Name: ptr(name)}, nil)
			require.NoError(t, err)
			made = append(made, p.ID)
		}
		require.Less(t, made[0], made[1])
		l, err := h.e.StudioProjects.ListStudioProjects(ctx, c)
		require.NoError(t, err)
		assert.Equal(t, []string{made[1], made[0], spTutorials, spSummer, spWebinar}, spIDs(l, spProjectID))
	})
}

// TestStudioProjectAccess runs in order on one engine: a project read (and
// cached) for its company is still refused to another company.
func TestStudioProjectAccess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	cases := []struct {
		name     string
		key      string
		id       string
		wantName string
		code     sim.Code
		msg      string
	}{
		{name: "own company", key: spKeyAlice, id: spSummer, wantName: "Summer Campaign 2025"},
		{name: "own company again (cached)", key: spKeyAlice, id: spSummer, wantName: "Summer Campaign 2025"},
		{name: "another user of the company", key: spKeyBob, id: spSummer, wantName: "Summer Campaign 2025"},
		{name: "another company's, after a cached read", key: spKeyPriya, id: spSummer, code: sim.CodeAccessDenied, msg: sim.MsgStudioDenied},
		{name: "another company's, never read", key: spKeyAlice, id: spCompliance, code: sim.CodeAccessDenied, msg: sim.MsgStudioDenied},
		{name: "unknown", key: spKeyAlice, id: spUnknownID, code: sim.CodeNotFound, msg: sim.MsgStudioNotFound},
		{name: "not an id", key: spKeyAlice, id: "nope", code: sim.CodeNotFound, msg: sim.MsgStudioNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := h.e.StudioProjects.StudioProject(ctx, spCaller(t, h, tc.key), tc.id)
			if tc.code != "" {
				assert.Equal(t, tc.code, sim.ErrorCode(err))
				assert.EqualError(t, err, tc.msg)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.id, p.ID)
			assert.Equal(t, tc.wantName, p.Name)
			assert.Equal(t, spStoredProject(t, h, tc.id), p)
		})
	}
}

func TestCreateStudioProject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	_, err := h.e.Clock.Advance(ctx, 90*time.Minute)
	require.NoError(t, err)
	now := t0.Add(90 * time.Minute)
	alice := spCaller(t, h, spKeyAlice)

	cases := []struct {
		name string
		in   sim.StudioProjectInput
		want sim.StudioProject // the fields the input sets
		msg  string            // a validation refusal
	}{
		{name: "name only", in: sim.StudioProjectInput{Name: ptr("Launch")},
			want: sim.StudioProject{Name: "Launch", ManagerID: spUserAlice}},
		{name: "no fields", in: sim.StudioProjectInput{},
			want: sim.StudioProject{ManagerID: spUserAlice}},
		{name: "manager of the company", in: sim.StudioProjectInput{Name: ptr("Managed"), ManagerEmail: ptr("carol.nguyen@acme-media.example")},
			want: sim.StudioProject{Name: "Managed", ManagerID: spUserCarol}},
		{name: "every glossary", in: sim.StudioProjectInput{Name: ptr("Glossed"), TranslationsGlossaryID: ptr(spAcmeTranslation),
			VoicesGlossaryID: ptr(spAcmeVoices), PronunciationGlossaryID: ptr(spAcmePronunciation)},
			want: sim.StudioProject{Name: "Glossed", ManagerID: spUserAlice, TranslationGlossary: spAcmeTranslation,
				VoicesGlossary: spAcmeVoices, PronunciationGlossary: spAcmePronunciation}},
		{name: "empty glossary ids", in: sim.StudioProjectInput{Name: ptr("Bare"), TranslationsGlossaryID: ptr(""), VoicesGlossaryID: ptr("")},
			want: sim.StudioProject{Name: "Bare", ManagerID: spUserAlice}},
		{name: "manager unknown", in: sim.StudioProjectInput{Name: ptr("X"), ManagerEmail: ptr("nobody@sp.test")},
			msg: fmt.Sprintf(sim.MsgManagerUnknown, "nobody@sp.test")},
		{name: "manager of another company", in: sim.StudioProjectInput{Name: ptr("X"), ManagerEmail: ptr("priya.raman@initech-learning.example")},
			msg: fmt.Sprintf(sim.MsgManagerOtherCompany, "priya.raman@initech-learning.example")},
		{name: "translation glossary unknown", in: sim.StudioProjectInput{TranslationsGlossaryID: ptr(spUnknownID)},
			msg: fmt.Sprintf(sim.MsgGlossaryMissing, "translationsGlossaryId", spUnknownID)},
		{name: "voices glossary of another company", in: sim.StudioProjectInput{VoicesGlossaryID: ptr(spInitechTranslation)},
			msg: fmt.Sprintf(sim.MsgGlossaryOtherOrg, "voicesGlossaryId", spInitechTranslation)},
		{name: "pronunciation glossary of the wrong kind", in: sim.StudioProjectInput{PronunciationGlossaryID: ptr(spAcmeTranslation)},
			msg: fmt.Sprintf(sim.MsgGlossaryKind, "pronunciationGlossaryId", spAcmeTranslation, "translation", "pronunciation")},
		{name: "a valid field, then a refused one", in: sim.StudioProjectInput{Name: ptr("X"), TranslationsGlossaryID: ptr(spAcmeTranslation), VoicesGlossaryID: ptr(spAcmeTranslation)},
			msg: fmt.Sprintf(sim.MsgGlossaryKind, "voicesGlossaryId", spAcmeTranslation, "translation", "voices")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, err := h.e.StudioProjects.ListStudioProjects(ctx, alice)
			require.NoError(t, err)
			p, err := h.e.StudioProjects.CreateStudioProject(ctx, alice, tc.in, nil)
			if tc.msg != "" {
				assert.Equal(t, sim.CodeValidation, sim.ErrorCode(err))
				assert.EqualError(t, err, tc.msg)
				after, err := h.e.StudioProjects.ListStudioProjects(ctx, alice)
				require.NoError(t, err)
				assert.Equal(t, before, after, "a refusal creates nothing")
				return
			}
			require.NoError(t, err)
			assert.True(t, sim.IsStudioID(p.ID), p.ID)
			want := tc.want
			want.ID, want.CompanyID, want.Status, want.CreatedBy, want.CreatedAt, want.UpdatedAt = p.ID, spAcme, sim.StudioProjectStatusNew, spUserAlice, now, now
			assert.Equal(t, want, p)
			assert.Equal(t, p, spStoredProject(t, h, p.ID))
			got, err := h.e.StudioProjects.StudioProject(ctx, spCaller(t, h, spKeyBob), p.ID)
			require.NoError(t, err)
			assert.Equal(t, p, got, "visible to the company")
			after, err := h.e.StudioProjects.ListStudioProjects(ctx, alice)
			require.NoError(t, err)
			require.Len(t, after, len(before)+1)
			assert.Equal(t, p, after[0], "the newest first")
		})
	}
}

func TestUpdateStudioProject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	alice := spCaller(t, h, spKeyAlice)
	full := sim.StudioProjectInput{Name: ptr("Original"), ManagerEmail: ptr("carol.nguyen@acme-media.example"),
		TranslationsGlossaryID: ptr(spAcmeTranslation), VoicesGlossaryID: ptr(spAcmeVoices), PronunciationGlossaryID: ptr(spAcmePronunciation)}

	cases := []struct {
		name   string
		key    string
		id     string // "" = the project made for the case
		in     sim.StudioProjectInput
		change func(p *sim.StudioProject)
		code   sim.Code
		msg    string
	}{
		{name: "rename", in: sim.StudioProjectInput{Name: ptr("Renamed")}, change: func(p *sim.StudioProject) { p.Name = "Renamed" }},
		{name: "no fields: only updated_at", in: sim.StudioProjectInput{}, change: func(*sim.StudioProject) {}},
		{name: "another user of the company changes the manager", key: spKeyBob, in: sim.StudioProjectInput{ManagerEmail: ptr("bob.martinez@acme-media.example")},
			change: func(p *sim.StudioProject) { p.ManagerID = spUserBob }},
		{name: "remove the translation glossary", in: sim.StudioProjectInput{TranslationsGlossaryID: ptr("")},
			change: func(p *sim.StudioProject) { p.TranslationGlossary = "" }},
		{name: "swap the translation glossary", in: sim.StudioProjectInput{TranslationsGlossaryID: ptr("671e9b98bd76c09876a4bc5c")},
			change: func(p *sim.StudioProject) { p.TranslationGlossary = "671e9b98bd76c09876a4bc5c" }},
		{name: "wrong glossary kind", in: sim.StudioProjectInput{Name: ptr("Lost"), VoicesGlossaryID: ptr(spAcmePronunciation)},
			code: sim.CodeValidation, msg: fmt.Sprintf(sim.MsgGlossaryKind, "voicesGlossaryId", spAcmePronunciation, "pronunciation", "voices")},
		{name: "manager unknown", in: sim.StudioProjectInput{ManagerEmail: ptr("nobody@sp.test")},
			code: sim.CodeValidation, msg: fmt.Sprintf(sim.MsgManagerUnknown, "nobody@sp.test")},
		{name: "another company's caller", key: spKeyPriya, in: sim.StudioProjectInput{Name: ptr("Mine")},
			code: sim.CodeAccessDenied, msg: sim.MsgStudioDenied},
		{name: "unknown project", id: spUnknownID, in: sim.StudioProjectInput{Name: ptr("Ghost")},
			code: sim.CodeNotFound, msg: sim.MsgStudioNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			orig, err := h.e.StudioProjects.CreateStudioProject(ctx, alice, full, nil)
			require.NoError(t, err)
			id := orig.ID
			if tc.id != "" {
				id = tc.id
			}
			cached, err := h.e.StudioProjects.StudioProject(ctx, alice, orig.ID) // cached before the update
			require.NoError(t, err)
			require.Equal(t, orig, cached)
			_, err = h.e.Clock.Advance(ctx, time.Minute)
			require.NoError(t, err)
			key := tc.key
			if key == "" {
				key = spKeyAlice
			}
			p, err := h.e.StudioProjects.UpdateStudioProject(ctx, spCaller(t, h, key), id, tc.in)
			if tc.code != "" {
				assert.Equal(t, tc.code, sim.ErrorCode(err))
				assert.EqualError(t, err, tc.msg)
				assert.Equal(t, orig, spStoredProject(t, h, orig.ID), "a refusal changes nothing")
				return
			}
			require.NoError(t, err)
			want := orig
			tc.change(&want)
			want.UpdatedAt = h.e.Clock.Now()
			assert.Equal(t, want, p)
			assert.Equal(t, orig.CreatedAt.Add(time.Minute), p.UpdatedAt)
			got, err := h.e.StudioProjects.StudioProject(ctx, alice, orig.ID)
			require.NoError(t, err)
			assert.Equal(t, want, got, "the read after the update sees it")
		})
	}
}
