package sim_test

import (
	"encoding/json"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
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
// and shape; tests break one thing at a time.
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

// minimalAccounts gives k1 and k2 users of the first company.
const minimalAccounts = `{"accounts": [
	{"api_key": "k1", "plan": "pro", "user_id": "` + uA1 + `"},
	{"api_key": "k2", "plan": "enterprise", "user_id": "` + uA2 + `", "company_id": "` + coA + `"},
	{"api_key": "k3", "plan": "none"}
]}`

// studioFS is validFixtures with studio.json (and accounts.json, when not
// empty) replaced.
func studioFS(t *testing.T, s *sim.StudioFixtures, accounts string) fs.FS {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	top := sim.MemFS{sim.FixtureStudio: b}
	if accounts != "" {
		top[sim.FixtureAccounts] = []byte(accounts)
	}
	return sim.Overlay{Top: top, Base: validFixtures()}
}

func TestLoadStudioFixturesValid(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(*sim.StudioFixtures)
		data   string // replaces the whole file when set
	}{
		{name: "minimal set", mutate: func(*sim.StudioFixtures) {}},
		{name: "empty object: no studio data", data: `{}`},
		{name: "null lists", data: `{"companies": null, "users": null, "glossaries": null, "folders": null, "projects": null, "videos": null}`},
		{name: "a parent folder after its child", mutate: func(s *sim.StudioFixtures) { slices.Reverse(s.Folders) }},
		{name: "updated as old as created", mutate: func(s *sim.StudioFixtures) { s.Videos[0].UpdatedAgo = "24h" }},
		{name: "zero ages", mutate: func(s *sim.StudioFixtures) {
			s.Projects[1].CreatedAgo, s.Projects[1].UpdatedAgo = "0s", "0s"
			s.Videos[1].CreatedAgo, s.Videos[1].UpdatedAgo = "0s", "0"
		}},
		{name: "created with the company", mutate: func(s *sim.StudioFixtures) { s.Users[0].CreatedAgo = "1000h" }},
		{name: "guidance without byLang", mutate: func(s *sim.StudioFixtures) { s.Videos[0].Guidance.ByLang = nil }},
		{name: "processing type standard", mutate: func(s *sim.StudioFixtures) { s.Videos[1].ProcessingType = "standard" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var fsys fs.FS
			if tc.data != "" {
				fsys = sim.Overlay{Top: sim.MemFS{sim.FixtureStudio: []byte(tc.data)}, Base: validFixtures()}
			} else {
				s := minimalStudio()
				tc.mutate(s)
				fsys = studioFS(t, s, minimalAccounts)
			}
			fx, err := sim.LoadFixtures(fsys)
			require.NoError(t, err)
			require.NotNil(t, fx.Studio)
		})
	}

	t.Run("null optional fields read as unset", func(t *testing.T) {
		t.Parallel()
		b, err := json.Marshal(minimalStudio())
		require.NoError(t, err)
		var doc map[string][]map[string]any
		require.NoError(t, json.Unmarshal(b, &doc))
		for _, f := range []string{"remark", "client_name", "folder_id", "translation_glossary", "voices_glossary", "pronunciation_glossary", "created_by"} {
			doc["projects"][0][f] = nil
		}
		for _, f := range []string{"remark", "duration_seconds", "string_variables", "guidance", "pipeline", "created_by"} {
			doc["videos"][0][f] = nil
		}
		doc["folders"][1]["parent_id"] = nil
		b, err = json.Marshal(doc)
		require.NoError(t, err)
		fx, err := sim.LoadFixtures(sim.Overlay{Top: sim.MemFS{sim.FixtureStudio: b}, Base: validFixtures()})
		require.NoError(t, err)
		seed := fx.Studio.Materialize(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
		p, v := seed.Projects[0], seed.Videos[0]
		assert.Empty(t, p.Remark+p.ClientName+p.FolderID+p.TranslationGlossary+p.VoicesGlossary+p.PronunciationGlossary)
		assert.Equal(t, uA1, p.CreatedBy, "created_by defaults to the manager")
		assert.Equal(t, uA1, v.CreatedBy, "created_by defaults to the project's manager")
		assert.Nil(t, v.Remark)
		assert.Nil(t, v.DurationSeconds)
		assert.Nil(t, v.StringVariables)
		assert.Nil(t, v.Guidance)
		assert.Nil(t, v.Pipeline)
		assert.Empty(t, seed.Folders[1].ParentID)
	})
}

func TestLoadStudioFixturesRejects(t *testing.T) {
	t.Parallel()
	const pre = "fixtures: studio.json: "
	cases := []struct {
		name     string
		mutate   func(*sim.StudioFixtures)
		accounts string // replaces minimalAccounts when set
		wantErr  string
	}{
		// ids
		{
			name:    "uppercase id",
			mutate:  func(s *sim.StudioFixtures) { s.Companies[0].ID = "65A000000000000000000001" },
			wantErr: pre + `companies[0] "65A000000000000000000001": id must be 24 lowercase hexadecimal characters`,
		},
		{
			name:    "short id",
			mutate:  func(s *sim.StudioFixtures) { s.Users[1].ID = "65a0" },
			wantErr: pre + `users[1] "65a0": id must be 24 lowercase hexadecimal characters`,
		},
		{
			name:    "empty id",
			mutate:  func(s *sim.StudioFixtures) { s.Videos[1].ID = "" },
			wantErr: pre + `videos[1] "": id must be 24 lowercase hexadecimal characters`,
		},
		{
			name:    "id used by two kinds",
			mutate:  func(s *sim.StudioFixtures) { s.Glossaries[2].ID = uA2 },
			wantErr: pre + `glossaries[2] "` + uA2 + `": id is already used by users[1] "` + uA2 + `"`,
		},
		{
			name:    "id used twice in a kind",
			mutate:  func(s *sim.StudioFixtures) { s.Videos[1].ID = vA },
			wantErr: pre + `videos[1] "` + vA + `": id is already used by videos[0] "` + vA + `"`,
		},
		// names
		{
			name:    "company without a name",
			mutate:  func(s *sim.StudioFixtures) { s.Companies[1].Name = " " },
			wantErr: pre + `companies[1] "` + coB + `": name is required`,
		},
		{
			name:    "video name too long",
			mutate:  func(s *sim.StudioFixtures) { s.Videos[0].Name = strings.Repeat("é", sim.MaxNameLength+1) },
			wantErr: pre + `videos[0] "` + vA + `": name is 501 characters long; at most 500`,
		},
		// users
		{
			name:    "user of an unknown company",
			mutate:  func(s *sim.StudioFixtures) { s.Users[2].CompanyID = pA },
			wantErr: pre + `users[2] "` + uB1 + `": company_id "` + pA + `" is not a company of studio.json`,
		},
		{
			name:    "email without @",
			mutate:  func(s *sim.StudioFixtures) { s.Users[0].Email = "ann.a.example" },
			wantErr: pre + `users[0] "` + uA1 + `": email "ann.a.example" has no '@'`,
		},
		{
			name:    "email used twice, in another case",
			mutate:  func(s *sim.StudioFixtures) { s.Users[2].Email = "Ann@A.Example" },
			wantErr: pre + `users[2] "` + uB1 + `": email "Ann@A.Example" is already used by users[0] "` + uA1 + `" (emails compare case-insensitively)`,
		},
		// glossaries
		{
			name:    "glossary of an unknown company",
			mutate:  func(s *sim.StudioFixtures) { s.Glossaries[0].CompanyID = "" },
			wantErr: pre + `glossaries[0] "` + gTr + `": company_id "" is not a company of studio.json`,
		},
		{
			name:    "glossary of an unknown kind",
			mutate:  func(s *sim.StudioFixtures) { s.Glossaries[1].Kind = "voice" },
			wantErr: pre + `glossaries[1] "` + gVo + `": kind "voice" is not one of translation, voices, pronunciation`,
		},
		{
			name:    "glossary language of a bad shape",
			mutate:  func(s *sim.StudioFixtures) { s.Glossaries[0].Langs = []string{"en", "es_ES"} },
			wantErr: pre + `glossaries[0] "` + gTr + `": langs: "es_ES" is neither an ISO 639-1 code (en) nor a BCP 47 code (es-ES)`,
		},
		// folders
		{
			name:    "folder of an unknown company",
			mutate:  func(s *sim.StudioFixtures) { s.Folders[2].CompanyID = uB1 },
			wantErr: pre + `folders[2] "` + fB + `": company_id "` + uB1 + `" is not a company of studio.json`,
		},
		{
			name:    "folder with an unknown parent",
			mutate:  func(s *sim.StudioFixtures) { s.Folders[1].ParentID = pA },
			wantErr: pre + `folders[1] "` + fSub + `": parent_id "` + pA + `" is not a folder of studio.json`,
		},
		{
			name:    "folder with a parent of another company",
			mutate:  func(s *sim.StudioFixtures) { s.Folders[1].ParentID = fB },
			wantErr: pre + `folders[1] "` + fSub + `": parent_id "` + fB + `" is a folder of company "` + coB + `", not of "` + coA + `"`,
		},
		{
			name:    "folder that is its own parent",
			mutate:  func(s *sim.StudioFixtures) { s.Folders[0].ParentID = fRoot },
			wantErr: pre + `folders[0] "` + fRoot + `": parent_id: folder "` + fRoot + `" is its own ancestor`,
		},
		{
			name:    "folders in a cycle",
			mutate:  func(s *sim.StudioFixtures) { s.Folders[0].ParentID = fSub },
			wantErr: pre + `folders[0] "` + fRoot + `": parent_id: folder "` + fRoot + `" is its own ancestor`,
		},
		// projects
		{
			name:    "project of an unknown company",
			mutate:  func(s *sim.StudioFixtures) { s.Projects[1].CompanyID = "65a0000000000000000000ff" },
			wantErr: pre + `projects[1] "` + pB + `": company_id "65a0000000000000000000ff" is not a company of studio.json`,
		},
		{
			name:    "project without a manager",
			mutate:  func(s *sim.StudioFixtures) { s.Projects[0].ManagerID = "" },
			wantErr: pre + `projects[0] "` + pA + `": manager_id is required`,
		},
		{
			name:    "project with an unknown manager",
			mutate:  func(s *sim.StudioFixtures) { s.Projects[0].ManagerID = coA },
			wantErr: pre + `projects[0] "` + pA + `": manager_id "` + coA + `" is not a user of studio.json`,
		},
		{
			name:    "project managed from another company",
			mutate:  func(s *sim.StudioFixtures) { s.Projects[1].ManagerID = uA1 },
			wantErr: pre + `projects[1] "` + pB + `": manager_id "` + uA1 + `" is a user of company "` + coA + `", not of "` + coB + `"`,
		},
		{
			name:    "project created by a user of another company",
			mutate:  func(s *sim.StudioFixtures) { s.Projects[0].CreatedBy = uB1 },
			wantErr: pre + `projects[0] "` + pA + `": created_by "` + uB1 + `" is a user of company "` + coB + `", not of "` + coA + `"`,
		},
		{
			name:    "translation glossary of the voices kind",
			mutate:  func(s *sim.StudioFixtures) { s.Projects[0].TranslationGlossary = gVo },
			wantErr: pre + `projects[0] "` + pA + `": translation_glossary "` + gVo + `" is a voices glossary, not a translation glossary`,
		},
		{
			name:    "voices glossary of the pronunciation kind",
			mutate:  func(s *sim.StudioFixtures) { s.Projects[0].VoicesGlossary = gPr },
			wantErr: pre + `projects[0] "` + pA + `": voices_glossary "` + gPr + `" is a pronunciation glossary, not a voices glossary`,
		},
		{
			name:    "pronunciation glossary of the translation kind",
			mutate:  func(s *sim.StudioFixtures) { s.Projects[0].PronunciationGlossary = gTr },
			wantErr: pre + `projects[0] "` + pA + `": pronunciation_glossary "` + gTr + `" is a translation glossary, not a pronunciation glossary`,
		},
		{
			name:    "unknown glossary",
			mutate:  func(s *sim.StudioFixtures) { s.Projects[0].VoicesGlossary = fRoot },
			wantErr: pre + `projects[0] "` + pA + `": voices_glossary "` + fRoot + `" is not a glossary of studio.json`,
		},
		{
			name:    "glossary of another company",
			mutate:  func(s *sim.StudioFixtures) { s.Projects[1].TranslationGlossary = gTr },
			wantErr: pre + `projects[1] "` + pB + `": translation_glossary "` + gTr + `" is a glossary of company "` + coA + `", not of "` + coB + `"`,
		},
		{
			name:    "unknown folder",
			mutate:  func(s *sim.StudioFixtures) { s.Projects[0].FolderID = gTr },
			wantErr: pre + `projects[0] "` + pA + `": folder_id "` + gTr + `" is not a folder of studio.json`,
		},
		{
			name:    "folder of another company",
			mutate:  func(s *sim.StudioFixtures) { s.Projects[1].FolderID = fSub },
			wantErr: pre + `projects[1] "` + pB + `": folder_id "` + fSub + `" is a folder of company "` + coA + `", not of "` + coB + `"`,
		},
		// videos
		{
			name:    "video of an unknown project",
			mutate:  func(s *sim.StudioFixtures) { s.Videos[0].ProjectID = coA },
			wantErr: pre + `videos[0] "` + vA + `": project_id "` + coA + `" is not a project of studio.json`,
		},
		{
			name:    "unknown video status",
			mutate:  func(s *sim.StudioFixtures) { s.Videos[0].Status = "done" },
			wantErr: pre + `videos[0] "` + vA + `": status "done" is not one of new, in_progress, completed`,
		},
		{
			name:    "unknown processing type",
			mutate:  func(s *sim.StudioFixtures) { s.Videos[1].ProcessingType = "lipsync" },
			wantErr: pre + `videos[1] "` + vB + `": processing_type "lipsync" is not one of ` + strings.Join(sim.ProcessingTypes, ", "),
		},
		{
			name:    "source language with a region",
			mutate:  func(s *sim.StudioFixtures) { s.Videos[0].SrcLang = "en-US" },
			wantErr: pre + `videos[0] "` + vA + `": src_lang "en-US" is not an ISO 639-1 code such as "en" (or "multi")`,
		},
		{
			name:    "multi without the company's multi_language",
			mutate:  func(s *sim.StudioFixtures) { s.Videos[0].SrcLang = "multi" },
			wantErr: pre + `videos[0] "` + vA + `": src_lang "multi" needs a company with multi_language; company "` + coA + `" has not`,
		},
		{
			name:    "no target languages",
			mutate:  func(s *sim.StudioFixtures) { s.Videos[1].DstLangs = nil },
			wantErr: pre + `videos[1] "` + vB + `": dst_langs is required`,
		},
		{
			name:    "target language without a region",
			mutate:  func(s *sim.StudioFixtures) { s.Videos[1].DstLangs = []string{"de"} },
			wantErr: pre + `videos[1] "` + vB + `": dst_langs: "de" is not a BCP 47 code such as "es-ES"`,
		},
		{
			name:    "target language twice",
			mutate:  func(s *sim.StudioFixtures) { s.Videos[0].DstLangs = []string{"es-ES", "fr-FR", "es-ES"} },
			wantErr: pre + `videos[0] "` + vA + `": dst_langs: "es-ES" is listed twice`,
		},
		{
			name:    "zero duration",
			mutate:  func(s *sim.StudioFixtures) { s.Videos[0].DurationSeconds = ptr(0.0) },
			wantErr: pre + `videos[0] "` + vA + `": duration_seconds must be positive (or null); got 0`,
		},
		{
			name: "string variable without a key",
			mutate: func(s *sim.StudioFixtures) {
				s.Videos[0].StringVariables = append(s.Videos[0].StringVariables, sim.StringVariable{Value: "x"})
			},
			wantErr: pre + `videos[0] "` + vA + `": string_variables[1]: key is required`,
		},
		{
			name:    "guidance for a language the video is not dubbed into",
			mutate:  func(s *sim.StudioFixtures) { s.Videos[0].Guidance.ByLang["de-DE"] = "Sie" },
			wantErr: pre + `videos[0] "` + vA + `": guidance.byLang: "de-DE" is not one of the video's dst_langs [es-ES fr-FR]`,
		},
		{
			name:    "video created by a user of another company",
			mutate:  func(s *sim.StudioFixtures) { s.Videos[1].CreatedBy = uA1 },
			wantErr: pre + `videos[1] "` + vB + `": created_by "` + uA1 + `" is a user of company "` + coA + `", not of "` + coB + `"`,
		},
		{
			name:    "video created by an unknown user",
			mutate:  func(s *sim.StudioFixtures) { s.Videos[0].CreatedBy = pA },
			wantErr: pre + `videos[0] "` + vA + `": created_by "` + pA + `" is not a user of studio.json`,
		},
		// ages
		{
			name:    "missing created_ago",
			mutate:  func(s *sim.StudioFixtures) { s.Companies[0].CreatedAgo = "" },
			wantErr: pre + `companies[0] "` + coA + `": created_ago is required (a Go duration such as "720h")`,
		},
		{
			name:    "missing updated_ago",
			mutate:  func(s *sim.StudioFixtures) { s.Projects[1].UpdatedAgo = "" },
			wantErr: pre + `projects[1] "` + pB + `": updated_ago is required (a Go duration such as "720h")`,
		},
		{
			name:    "age in days",
			mutate:  func(s *sim.StudioFixtures) { s.Users[0].CreatedAgo = "30d" },
			wantErr: pre + `users[0] "` + uA1 + `": created_ago "30d" is not a Go duration such as "720h"`,
		},
		{
			name:    "negative age",
			mutate:  func(s *sim.StudioFixtures) { s.Videos[1].UpdatedAgo = "-1h" },
			wantErr: pre + `videos[1] "` + vB + `": updated_ago "-1h" is negative (in the future)`,
		},
		{
			name:    "updated before created",
			mutate:  func(s *sim.StudioFixtures) { s.Projects[0].UpdatedAgo = "49h" },
			wantErr: pre + `projects[0] "` + pA + `": updated_ago 49h is older than created_ago 48h`,
		},
		{
			name:    "user older than the company",
			mutate:  func(s *sim.StudioFixtures) { s.Users[2].CreatedAgo = "501h" },
			wantErr: pre + `users[2] "` + uB1 + `": created_ago 501h is older than its companies[1] "` + coB + `" (created 500h0m0s ago)`,
		},
		{
			name:    "project older than the company",
			mutate:  func(s *sim.StudioFixtures) { s.Projects[1].CreatedAgo = "600h" },
			wantErr: pre + `projects[1] "` + pB + `": created_ago 600h is older than its companies[1] "` + coB + `" (created 500h0m0s ago)`,
		},
		{
			name:    "video older than the project",
			mutate:  func(s *sim.StudioFixtures) { s.Videos[0].CreatedAgo = "72h" },
			wantErr: pre + `videos[0] "` + vA + `": created_ago 72h is older than its projects[0] "` + pA + `" (created 48h0m0s ago)`,
		},
		// accounts
		{
			name:     "account of an unknown user",
			mutate:   func(*sim.StudioFixtures) {},
			accounts: `{"accounts": [{"api_key": "k1", "plan": "pro", "user_id": "` + gTr + `"}]}`,
			wantErr:  `fixtures: accounts.json: account "k1": user_id "` + gTr + `" is not a user of studio.json`,
		},
		{
			name:     "account whose company is not its user's",
			mutate:   func(*sim.StudioFixtures) {},
			accounts: `{"accounts": [{"api_key": "k1", "plan": "pro", "user_id": "` + uA1 + `", "company_id": "` + coB + `"}]}`,
			wantErr:  `fixtures: accounts.json: account "k1": company_id "` + coB + `" is not the company of user "` + uA1 + `" ("` + coA + `")`,
		},
		{
			name:     "a user removed while an account names it",
			mutate:   func(s *sim.StudioFixtures) { s.Users = s.Users[:1]; s.Projects, s.Videos = nil, nil },
			accounts: minimalAccounts,
			wantErr:  `fixtures: accounts.json: account "k2": user_id "` + uA2 + `" is not a user of studio.json`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := minimalStudio()
			tc.mutate(s)
			accounts := minimalAccounts
			if tc.accounts != "" {
				accounts = tc.accounts
			}
			fx, err := sim.LoadFixtures(studioFS(t, s, accounts))
			require.Error(t, err)
			assert.Nil(t, fx)
			assert.EqualError(t, err, tc.wantErr)
		})
	}
}

func TestLoadStudioFixturesRejectsBadFiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		data    string
		wantErr string
	}{
		{"malformed", `{"companies": [`, "fixtures: studio.json: unexpected EOF"},
		{"empty file", ``, "fixtures: studio.json: unexpected EOF"},
		{"wrong type", `{"companies": {}}`, "fixtures: studio.json: json: cannot unmarshal object into Go struct field StudioFixtures.companies of type []sim.CompanySpec"},
		{"misspelt field", `{"projects": [{"id": "` + pA + `", "folder": "x"}]}`, `fixtures: studio.json: json: unknown field "folder"`},
		{"unknown top-level list", `{"artifacts": []}`, `fixtures: studio.json: json: unknown field "artifacts"`},
		{"data after the object", `{} {}`, "fixtures: studio.json: data after the top-level object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fx, err := sim.LoadFixtures(sim.Overlay{Top: sim.MemFS{sim.FixtureStudio: []byte(tc.data)}, Base: validFixtures()})
			assert.Nil(t, fx)
			assert.EqualError(t, err, tc.wantErr)
		})
	}

	t.Run("missing studio.json", func(t *testing.T) {
		t.Parallel()
		fsys := validFixtures()
		delete(fsys, sim.FixtureStudio)
		fx, err := sim.LoadFixtures(fsys)
		assert.Nil(t, fx)
		require.ErrorIs(t, err, fs.ErrNotExist)
		assert.Contains(t, err.Error(), sim.FixtureStudio)
	})

	t.Run("a fixture directory without studio.json falls back to the embedded one", func(t *testing.T) {
		t.Parallel()
		fsys := validFixtures()
		delete(fsys, sim.FixtureStudio)
		delete(fsys, sim.FixtureAccounts) // validFixtures' accounts have no users of the embedded studio data
		fx, err := sim.LoadFixtures(sim.Overlay{Top: fsys, Base: fixtures.FS})
		require.NoError(t, err)
		assert.Len(t, fx.Studio.Companies, 3)
		assert.Equal(t, []string{"en-US", "fr-FR"}, fx.Catalog.TargetLangs, "options.json comes from the directory")
	})
}

func TestStudioMaterialize(t *testing.T) {
	t.Parallel()
	fx, err := sim.LoadFixtures(studioFS(t, minimalStudio(), minimalAccounts))
	require.NoError(t, err)
	now := time.Date(2030, 5, 6, 7, 8, 9, 10, time.UTC)
	seed := fx.Studio.Materialize(now)
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
		later := fx.Studio.Materialize(now.Add(shift))
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
		s := fx.Studio.Materialize(now)
		v := &s.Videos[0]
		v.DstLangs[0] = "xx-XX"
		*v.DurationSeconds = 1
		*v.Remark = "changed"
		v.StringVariables[0].Value = "changed"
		*v.Guidance.Common = "changed"
		v.Guidance.ByLang["es-ES"] = "changed"
		*v.Pipeline.ShouldAutomateTranslation = false
		s.Glossaries[0].Langs[0] = "xx"
		again := fx.Studio.Materialize(now)
		assert.Equal(t, seed.Videos, again.Videos)
		assert.Equal(t, seed.Glossaries, again.Glossaries)
	})

	t.Run("nil fixtures give an empty seed", func(t *testing.T) {
		t.Parallel()
		var none *sim.StudioFixtures
		assert.Equal(t, sim.StudioSeed{}, none.Materialize(now))
	})
}
