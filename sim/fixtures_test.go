package sim_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
