package sim_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

func TestEmbeddedStudioFixtures(t *testing.T) {
	t.Parallel()
	fx := loadEmbedded(t)
	st := fx.Studio
	require.NotNil(t, st)

	t.Run("counts", func(t *testing.T) {
		t.Parallel()
		assert.Len(t, st.Companies, 3)
		assert.Len(t, st.Users, 9)
		assert.Len(t, st.Glossaries, 8)
		assert.Len(t, st.Folders, 5)
		assert.Len(t, st.Projects, 6)
		assert.Len(t, st.Videos, 15)
		multi := 0
		for _, c := range st.Companies {
			if c.MultiLanguage {
				multi++
			}
		}
		assert.Equal(t, 1, multi, "one multi-language company")
	})

	t.Run("every kind and status is present", func(t *testing.T) {
		t.Parallel()
		first := st.Companies[0].ID
		kinds, firstKinds := map[sim.GlossaryKind]int{}, map[sim.GlossaryKind]int{}
		for _, g := range st.Glossaries {
			kinds[g.Kind]++
			if g.CompanyID == first {
				firstKinds[g.Kind]++
			}
		}
		for _, k := range sim.GlossaryKinds {
			assert.Positive(t, kinds[k], k)
			assert.Positive(t, firstKinds[k], "first company has a %s glossary", k)
		}
		statuses, types := map[string]int{}, map[string]int{}
		for _, v := range st.Videos {
			statuses[v.Status]++
			types[v.ProcessingType]++
		}
		for _, s := range sim.VideoStatuses {
			assert.Positive(t, statuses[s], s)
		}
		assert.GreaterOrEqual(t, len(types), 5, "several processing types: %v", types)
		nested := 0
		for _, f := range st.Folders {
			if f.ParentID != "" {
				nested++
			}
		}
		assert.Positive(t, nested, "a nested folder")
	})

	t.Run("projects and videos vary", func(t *testing.T) {
		t.Parallel()
		perProject := map[string]int{}
		for _, v := range st.Videos {
			perProject[v.ProjectID]++
		}
		var remark, noRemark, client, noClient, folder, noFolder, glossary, noGlossary int
		for _, p := range st.Projects {
			assert.Contains(t, []int{2, 3}, perProject[p.ID], p.Name)
			count(p.Remark != "", &remark, &noRemark)
			count(p.ClientName != "", &client, &noClient)
			count(p.FolderID != "", &folder, &noFolder)
			count(p.TranslationGlossary+p.VoicesGlossary+p.PronunciationGlossary != "", &glossary, &noGlossary)
		}
		for name, n := range map[string]int{"remark": remark, "no remark": noRemark, "client": client, "no client": noClient,
			"folder": folder, "no folder": noFolder, "glossary": glossary, "no glossary": noGlossary} {
			assert.Positive(t, n, name)
		}
		var vars, noVars, guidance, noGuidance, remarkV, noRemarkV, dur, noDur int
		for _, v := range st.Videos {
			count(v.StringVariables != nil, &vars, &noVars)
			count(v.Guidance != nil, &guidance, &noGuidance)
			count(v.Remark != nil, &remarkV, &noRemarkV)
			count(v.DurationSeconds != nil, &dur, &noDur)
		}
		for name, n := range map[string]int{"string variables": vars, "no string variables": noVars, "guidance": guidance,
			"no guidance": noGuidance, "remark": remarkV, "no remark": noRemarkV, "duration": dur, "no duration": noDur} {
			assert.Positive(t, n, "videos with %s", name)
		}
	})

	t.Run("languages are in the catalogue", func(t *testing.T) {
		t.Parallel()
		for _, v := range st.Videos {
			assert.True(t, v.SrcLang == "multi" || fx.Catalog.IsSourceLang(v.SrcLang), "%s: %s", v.Name, v.SrcLang)
			for _, l := range v.DstLangs {
				assert.True(t, fx.Catalog.IsTargetLang(l), "%s: %s", v.Name, l)
			}
		}
		for _, g := range st.Glossaries {
			for _, l := range g.Langs {
				assert.True(t, fx.Catalog.IsSourceLang(l) || fx.Catalog.IsTargetLang(l), "%s: %s", g.Name, l)
			}
		}
	})

	t.Run("ids are ObjectId-like with a plausible timestamp", func(t *testing.T) {
		t.Parallel()
		lo, hi := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		var ids []string
		for _, c := range st.Companies {
			ids = append(ids, c.ID)
		}
		for _, u := range st.Users {
			ids = append(ids, u.ID)
		}
		for _, g := range st.Glossaries {
			ids = append(ids, g.ID)
		}
		for _, f := range st.Folders {
			ids = append(ids, f.ID)
		}
		for _, p := range st.Projects {
			ids = append(ids, p.ID)
		}
		for _, v := range st.Videos {
			ids = append(ids, v.ID)
		}
		for _, id := range ids {
			sec, err := strconv.ParseInt(id[:8], 16, 64)
			require.NoError(t, err, id)
			ts := time.Unix(sec, 0)
			assert.True(t, ts.After(lo) && ts.Before(hi), "%s: %s", id, ts)
		}
	})

	t.Run("accounts belong to distinct users; the first two share the first company", func(t *testing.T) {
		t.Parallel()
		users := map[string]sim.UserSpec{}
		for _, u := range st.Users {
			users[u.ID] = u
		}
		emails := map[string]string{}
		for _, a := range fx.Accounts {
			u, ok := users[a.UserID]
			require.True(t, ok, "%s: user %q", a.APIKey, a.UserID)
			emails[a.APIKey] = u.Email
		}
		assert.Equal(t, map[string]string{
			"dubsim-free":         "alice.johnson@acme-media.example",
			"dubsim-subscription": "bob.martinez@acme-media.example",
			"dubsim-pro":          "priya.raman@initech-learning.example",
			"dubsim-enterprise":   "grace.liu@globex-studios.example",
			"dubsim-broke":        "tom.becker@initech-learning.example",
		}, emails)
		first := st.Companies[0].ID
		assert.Equal(t, first, users[fx.Accounts[0].UserID].CompanyID)
		assert.Equal(t, first, users[fx.Accounts[1].UserID].CompanyID)
	})

	t.Run("materialise", func(t *testing.T) {
		t.Parallel()
		now := time.Date(2031, 7, 1, 9, 0, 0, 0, time.UTC)
		seed := st.Materialize(now)
		assert.Len(t, seed.Companies, len(st.Companies))
		assert.Len(t, seed.Users, len(st.Users))
		assert.Len(t, seed.Glossaries, len(st.Glossaries))
		assert.Len(t, seed.Folders, len(st.Folders))
		assert.Len(t, seed.Projects, len(st.Projects))
		require.Len(t, seed.Videos, len(st.Videos))
		projects := map[string]sim.StudioProject{}
		for _, p := range seed.Projects {
			assert.True(t, p.Fixture)
			assert.Equal(t, sim.StudioProjectStatusNew, p.Status)
			assert.False(t, p.CreatedAt.After(p.UpdatedAt), p.Name)
			assert.False(t, p.UpdatedAt.After(now), p.Name)
			projects[p.ID] = p
		}
		for _, v := range seed.Videos {
			assert.True(t, v.Fixture)
			assert.True(t, v.DueAt.IsZero(), v.Name)
			assert.Equal(t, projects[v.ProjectID].CompanyID, v.CompanyID, v.Name)
			assert.NotEmpty(t, v.CreatedBy, v.Name)
			assert.False(t, v.CreatedAt.After(v.UpdatedAt), v.Name)
			assert.False(t, v.UpdatedAt.After(now), v.Name)
			assert.False(t, v.CreatedAt.Before(projects[v.ProjectID].CreatedAt), v.Name)
		}
	})
}

func count(cond bool, yes, no *int) {
	if cond {
		*yes++
	} else {
		*no++
	}
}

// Ids of the minimal studio set.
const (
	coA   = "65a000000000000000000001"
	coB   = "65a000000000000000000002" // multi-language
	uA1   = "65a0000000000000000000a1"
	uA2   = "65a0000000000000000000a2"
	uB1   = "65a0000000000000000000b1"
	gTr   = "65a0000000000000000000c1"
	gVo   = "65a0000000000000000000c2"
	gPr   = "65a0000000000000000000c3"
	gB    = "65a0000000000000000000c4"
	fRoot = "65a0000000000000000000d1"
	fSub  = "65a0000000000000000000d2"
	fB    = "65a0000000000000000000d3"
	pA    = "65a0000000000000000000e1"
	pB    = "65a0000000000000000000e2"
	vA    = "65a0000000000000000000f1"
	vB    = "65a0000000000000000000f2"
)

// minimalStudio is a small valid studio set with one entry of every kind
// and shape (the same as the one the tests of package fixtures load).
func minimalStudio() *sim.StudioFixtures {
	return &sim.StudioFixtures{
		Companies: []sim.CompanySpec{
			{ID: coA, Name: "A Media", CreatedAgo: "1000h"},
			{ID: coB, Name: "B Studios", MultiLanguage: true, CreatedAgo: "500h"},
		},
		Users: []sim.UserSpec{
			{ID: uA1, CompanyID: coA, Name: "Ann", Email: "ann@a.example", CreatedAgo: "900h"},
			{ID: uA2, CompanyID: coA, Name: "Abe", Email: "abe@a.example", CreatedAgo: "100h"},
			{ID: uB1, CompanyID: coB, Name: "Bea", Email: "bea@b.example", CreatedAgo: "400h"},
		},
		Glossaries: []sim.GlossarySpec{
			{ID: gTr, CompanyID: coA, Kind: sim.GlossaryTranslation, Name: "Terms", Langs: []string{"en", "es-ES"}},
			{ID: gVo, CompanyID: coA, Kind: sim.GlossaryVoices, Name: "Voices", Langs: []string{"es-ES"}},
			{ID: gPr, CompanyID: coA, Kind: sim.GlossaryPronunciation, Name: "Names"},
			{ID: gB, CompanyID: coB, Kind: sim.GlossaryTranslation, Name: "B terms"},
		},
		Folders: []sim.FolderSpec{
			{ID: fRoot, CompanyID: coA, Name: "Root"},
			{ID: fSub, CompanyID: coA, Name: "Sub", ParentID: fRoot},
			{ID: fB, CompanyID: coB, Name: "B root"},
		},
		Projects: []sim.StudioProjectSpec{
			{
				ID: pA, CompanyID: coA, Name: "Campaign", ManagerID: uA1, CreatedBy: uA2,
				TranslationGlossary: gTr, VoicesGlossary: gVo, PronunciationGlossary: gPr,
				Remark: "Urgent", ClientName: "Client", FolderID: fSub, CreatedAgo: "48h", UpdatedAgo: "1h",
			},
			{ID: pB, CompanyID: coB, Name: "Series", ManagerID: uB1, CreatedAgo: "10h", UpdatedAgo: "10h"},
		},
		Videos: []sim.VideoSpec{
			{
				ID: vA, ProjectID: pA, Name: "Spot", Status: sim.VideoCompleted, ProcessingType: "dubbing",
				SrcLang: "en", DstLangs: []string{"es-ES", "fr-FR"}, DurationSeconds: ptr(30.5), Remark: ptr("ok"),
				StringVariables: []sim.StringVariable{{Key: "id", Value: "42"}},
				Guidance:        &sim.Guidance{Common: ptr("Keep names"), ByLang: map[string]string{"es-ES": "Use tu"}},
				Pipeline:        &sim.PipelineOptions{ShouldAutomateTranslation: ptr(true)},
				CreatedBy:       uA2, CreatedAgo: "24h", UpdatedAgo: "30m",
			},
			{
				ID: vB, ProjectID: pB, Name: "Episode", Status: sim.VideoNew, ProcessingType: "subtitling",
				SrcLang: "multi", DstLangs: []string{"de-DE"}, CreatedAgo: "5h", UpdatedAgo: "5h",
			},
		},
	}
}

func TestStudioMaterialize(t *testing.T) {
	t.Parallel()
	studio := minimalStudio()
	now := time.Date(2030, 5, 6, 7, 8, 9, 10, time.UTC)
	seed := studio.Materialize(now)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }

	assert.Equal(t, []sim.Company{
		{ID: coA, Name: "A Media", Fixture: true, CreatedAt: ago(1000 * time.Hour)},
		{ID: coB, Name: "B Studios", MultiLanguage: true, Fixture: true, CreatedAt: ago(500 * time.Hour)},
	}, seed.Companies)
	assert.Equal(t, []sim.User{
		{ID: uA1, CompanyID: coA, Name: "Ann", Email: "ann@a.example", Fixture: true, CreatedAt: ago(900 * time.Hour)},
		{ID: uA2, CompanyID: coA, Name: "Abe", Email: "abe@a.example", Fixture: true, CreatedAt: ago(100 * time.Hour)},
		{ID: uB1, CompanyID: coB, Name: "Bea", Email: "bea@b.example", Fixture: true, CreatedAt: ago(400 * time.Hour)},
	}, seed.Users)
	assert.Equal(t, []sim.Glossary{
		{ID: gTr, CompanyID: coA, Kind: sim.GlossaryTranslation, Name: "Terms", Langs: []string{"en", "es-ES"}, Fixture: true},
		{ID: gVo, CompanyID: coA, Kind: sim.GlossaryVoices, Name: "Voices", Langs: []string{"es-ES"}, Fixture: true},
		{ID: gPr, CompanyID: coA, Kind: sim.GlossaryPronunciation, Name: "Names", Fixture: true},
		{ID: gB, CompanyID: coB, Kind: sim.GlossaryTranslation, Name: "B terms", Fixture: true},
	}, seed.Glossaries)
	assert.Equal(t, []sim.Folder{
		{ID: fRoot, CompanyID: coA, Name: "Root", Fixture: true},
		{ID: fSub, CompanyID: coA, Name: "Sub", ParentID: fRoot, Fixture: true},
		{ID: fB, CompanyID: coB, Name: "B root", Fixture: true},
	}, seed.Folders)
	assert.Equal(t, []sim.StudioProject{
		{
			ID: pA, CompanyID: coA, Name: "Campaign", Status: sim.StudioProjectStatusNew, ManagerID: uA1,
			TranslationGlossary: gTr, VoicesGlossary: gVo, PronunciationGlossary: gPr, Remark: "Urgent", ClientName: "Client",
			FolderID: fSub, CreatedBy: uA2, Fixture: true, CreatedAt: ago(48 * time.Hour), UpdatedAt: ago(time.Hour),
		},
		{
			ID: pB, CompanyID: coB, Name: "Series", Status: sim.StudioProjectStatusNew, ManagerID: uB1, CreatedBy: uB1,
			Fixture: true, CreatedAt: ago(10 * time.Hour), UpdatedAt: ago(10 * time.Hour),
		},
	}, seed.Projects)
	assert.Equal(t, []sim.Video{
		{
			ID: vA, ProjectID: pA, CompanyID: coA, Name: "Spot", Status: sim.VideoCompleted, ProcessingType: "dubbing",
			SrcLang: "en", DstLangs: []string{"es-ES", "fr-FR"}, DurationSeconds: ptr(30.5), Remark: ptr("ok"),
			StringVariables: []sim.StringVariable{{Key: "id", Value: "42"}},
			Guidance:        &sim.Guidance{Common: ptr("Keep names"), ByLang: map[string]string{"es-ES": "Use tu"}},
			Pipeline:        &sim.PipelineOptions{ShouldAutomateTranslation: ptr(true)},
			Fixture:         true, CreatedBy: uA2, CreatedAt: ago(24 * time.Hour), UpdatedAt: ago(30 * time.Minute),
		},
		{
			ID: vB, ProjectID: pB, CompanyID: coB, Name: "Episode", Status: sim.VideoNew, ProcessingType: "subtitling",
			SrcLang: "multi", DstLangs: []string{"de-DE"}, Fixture: true, CreatedBy: uB1,
			CreatedAt: ago(5 * time.Hour), UpdatedAt: ago(5 * time.Hour),
		},
	}, seed.Videos)
	for _, v := range seed.Videos {
		assert.True(t, v.DueAt.IsZero())
	}

	t.Run("another now moves every timestamp by the same amount", func(t *testing.T) {
		t.Parallel()
		const shift = 1000*time.Hour + 17*time.Second
		later := studio.Materialize(now.Add(shift))
		for i, c := range later.Companies {
			assert.Equal(t, shift, c.CreatedAt.Sub(seed.Companies[i].CreatedAt))
		}
		for i, u := range later.Users {
			assert.Equal(t, shift, u.CreatedAt.Sub(seed.Users[i].CreatedAt))
		}
		for i, p := range later.Projects {
			assert.Equal(t, shift, p.CreatedAt.Sub(seed.Projects[i].CreatedAt))
			assert.Equal(t, shift, p.UpdatedAt.Sub(seed.Projects[i].UpdatedAt))
		}
		for i, v := range later.Videos {
			assert.Equal(t, shift, v.CreatedAt.Sub(seed.Videos[i].CreatedAt))
			assert.Equal(t, shift, v.UpdatedAt.Sub(seed.Videos[i].UpdatedAt))
		}
	})

	t.Run("seeds share no memory with the fixtures", func(t *testing.T) {
		t.Parallel()
		s := studio.Materialize(now)
		v := &s.Videos[0]
		v.DstLangs[0] = "xx-XX"
		*v.DurationSeconds = 1
		*v.Remark = "changed"
		v.StringVariables[0].Value = "changed"
		*v.Guidance.Common = "changed"
		v.Guidance.ByLang["es-ES"] = "changed"
		*v.Pipeline.ShouldAutomateTranslation = false
		s.Glossaries[0].Langs[0] = "xx"
		again := studio.Materialize(now)
		assert.Equal(t, seed.Videos, again.Videos)
		assert.Equal(t, seed.Glossaries, again.Glossaries)
	})

	t.Run("nil fixtures give an empty seed", func(t *testing.T) {
		t.Parallel()
		var none *sim.StudioFixtures
		assert.Equal(t, sim.StudioSeed{}, none.Materialize(now))
	})
}
