package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The control side's views of the studio records: the studio dump and the
// studio part of the state dump.

func TestStudioDump(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	acmeArt := spArtifact(t, h, spCaller(t, h, spKeyAlice), sim.ArtifactVideo, spClipURL)
	initechArt := spArtifact(t, h, spCaller(t, h, spKeyPriya), sim.ArtifactAudio, spMusicURL)

	type counts struct{ companies, users, folders, glossaries, projects, videos, artifacts int }
	cases := []struct {
		name      string
		f         sim.StudioFilter
		want      counts
		company   string   // every record belongs to it ("" = any)
		projects  []string // the projects listed, when checked
		artifacts []string
		msg       string // a not-found refusal
	}{
		{name: "everything", want: counts{3, 9, 5, 8, 6, 15, 2}, artifacts: []string{acmeArt.ID, initechArt.ID}},
		{name: "one company", f: sim.StudioFilter{CompanyID: spAcme}, want: counts{1, 4, 3, 4, 3, 7, 1}, company: spAcme,
			projects: []string{spWebinar, spSummer, spTutorials}, artifacts: []string{acmeArt.ID}},
		{name: "another company", f: sim.StudioFilter{CompanyID: spInitech}, want: counts{1, 2, 1, 2, 1, 3, 1}, company: spInitech,
			projects: []string{spCompliance}, artifacts: []string{initechArt.ID}},
		{name: "an unknown company", f: sim.StudioFilter{CompanyID: spUnknownID}, want: counts{}, artifacts: []string{}},
		{name: "one project: its company's records, its videos, no artifacts", f: sim.StudioFilter{ProjectID: spSummer},
			want: counts{1, 4, 3, 4, 1, 3, 0}, company: spAcme, projects: []string{spSummer}, artifacts: []string{}},
		{name: "one project of the company named", f: sim.StudioFilter{CompanyID: spAcme, ProjectID: spTutorials},
			want: counts{1, 4, 3, 4, 1, 2, 0}, company: spAcme, projects: []string{spTutorials}, artifacts: []string{}},
		{name: "a project of another company than the one named", f: sim.StudioFilter{CompanyID: spInitech, ProjectID: spSummer},
			msg: fmt.Sprintf(sim.MsgStudioProjectNotFound, spSummer)},
		{name: "an unknown project", f: sim.StudioFilter{ProjectID: spUnknownID}, msg: fmt.Sprintf(sim.MsgStudioProjectNotFound, spUnknownID)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := h.e.Data.StudioDump(ctx, tc.f)
			if tc.msg != "" {
				assert.Equal(t, sim.CodeNotFound, sim.ErrorCode(err))
				assert.EqualError(t, err, tc.msg)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, counts{len(d.Companies), len(d.Users), len(d.Folders), len(d.Glossaries), len(d.Projects), len(d.Videos), len(d.Artifacts)})
			assert.NotNil(t, d.Companies)
			assert.NotNil(t, d.Users)
			assert.NotNil(t, d.Folders)
			assert.NotNil(t, d.Glossaries)
			assert.NotNil(t, d.Projects)
			assert.NotNil(t, d.Videos)
			assert.Equal(t, tc.artifacts, spIDs(d.Artifacts, func(a sim.Artifact) string { return a.ID }))
			if tc.projects != nil {
				assert.Equal(t, tc.projects, spIDs(d.Projects, spProjectID), "in id order")
			}
			vids := spIDs(d.Videos, spVideoID)
			assert.True(t, slices.IsSorted(vids), "videos in id order: %v", vids)
			if tc.company == "" {
				return
			}
			for _, c := range d.Companies {
				assert.Equal(t, tc.company, c.ID)
			}
			for _, u := range d.Users {
				assert.Equal(t, tc.company, u.CompanyID, u.ID)
			}
			for _, fo := range d.Folders {
				assert.Equal(t, tc.company, fo.CompanyID, fo.ID)
			}
			for _, g := range d.Glossaries {
				assert.Equal(t, tc.company, g.CompanyID, g.ID)
			}
			for _, v := range d.Videos {
				assert.Equal(t, tc.company, v.CompanyID, v.ID)
				if tc.f.ProjectID != "" {
					assert.Equal(t, tc.f.ProjectID, v.ProjectID, v.ID)
				}
			}
		})
	}
}

// TestStudioDumpAppliesDueMoves: the dump shows the records as the clock
// has them, like the state dump.
func TestStudioDumpAppliesDueMoves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	alice := spCaller(t, h, spKeyAlice)
	src := spReadyArtifact(t, h, alice, sim.ArtifactVideo, spClipURL, spClipSecs*time.Second)
	created := h.e.Clock.Now()
	v, err := h.e.Videos.CreateVideo(ctx, alice, spSummer, spNewVideo("Clip", src.ID), nil)
	require.NoError(t, err)
	a := spArtifact(t, h, alice, sim.ArtifactAudio, spMusicURL)
	h.clock.Advance(sim.DefaultStudioTiming.VideoStart) // no sweep

	d, err := h.e.Data.StudioDump(ctx, sim.StudioFilter{ProjectID: spSummer})
	require.NoError(t, err)
	i := slices.IndexFunc(d.Videos, func(x sim.Video) bool { return x.ID == v.ID })
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, sim.VideoInProgress, d.Videos[i].Status)
	assert.Equal(t, created.Add(sim.DefaultStudioTiming.VideoStart), d.Videos[i].UpdatedAt)

	d, err = h.e.Data.StudioDump(ctx, sim.StudioFilter{CompanyID: spAcme})
	require.NoError(t, err)
	j := slices.IndexFunc(d.Artifacts, func(x sim.Artifact) bool { return x.ID == a.ID })
	require.GreaterOrEqual(t, j, 0)
	assert.Equal(t, sim.ArtifactCompleted, d.Artifacts[j].Status)
	assert.Equal(t, a.DoneAt, d.Artifacts[j].UpdatedAt)
}

func TestStateStudio(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	alice := spCaller(t, h, spKeyAlice)
	fixtureCounts := map[string]int{"companies": 3, "users": 9, "glossaries": 8, "folders": 5, "studio_projects": 6, "videos": 15}

	st, err := h.e.Data.State(ctx, sim.StateFilter{})
	require.NoError(t, err)
	assert.Equal(t, fixtureCounts, st.Studio, "kinds without records are absent")
	assert.Empty(t, st.PendingTransitions, "fixture videos are not due")

	src := spReadyArtifact(t, h, alice, sim.ArtifactVideo, spClipURL, spClipSecs*time.Second)
	t1 := h.e.Clock.Now()
	a := spArtifact(t, h, alice, sim.ArtifactAudio, spMusicURL)
	v, err := h.e.Videos.CreateVideo(ctx, alice, spSummer, spNewVideo("Clip", src.ID), nil)
	require.NoError(t, err)
	_, err = h.e.Uploads.PresignUpload(ctx, alice, "take.wav")
	require.NoError(t, err)
	_, err = h.e.StudioProjects.CreateStudioProject(ctx, alice, sim.StudioProjectInput{Name: ptr("Counted")}, nil)
	require.NoError(t, err)
	_, err = h.e.Accounts.CreateAccount(ctx, sim.AccountSpec{APIKey: "sp-counted", Plan: sim.PlanPro})
	require.NoError(t, err)

	tm := sim.DefaultStudioTiming
	steps := []struct {
		name    string
		advance time.Duration
		pending []sim.Transition
	}{
		{name: "both due later, the earliest first", pending: []sim.Transition{
			{Resource: "artifact", ID: a.ID, From: sim.ArtifactCreated, To: sim.ArtifactStarted, DueAt: t1.Add(tm.ArtifactStart)},
			{Resource: "video", ID: v.ID, From: sim.VideoNew, To: sim.VideoInProgress, DueAt: t1.Add(tm.VideoStart)},
		}},
		{name: "the artifact started", advance: tm.ArtifactStart, pending: []sim.Transition{
			{Resource: "artifact", ID: a.ID, From: sim.ArtifactStarted, To: sim.ArtifactCompleted, DueAt: a.DoneAt},
			{Resource: "video", ID: v.ID, From: sim.VideoNew, To: sim.VideoInProgress, DueAt: t1.Add(tm.VideoStart)},
		}},
		{name: "the artifact done, the video started", advance: tm.VideoStart - tm.ArtifactStart, pending: []sim.Transition{
			{Resource: "video", ID: v.ID, From: sim.VideoInProgress, To: sim.VideoCompleted,
				DueAt: t1.Add(tm.VideoStart + tm.VideoProcessing(spClipSecs*time.Second))},
		}},
		{name: "all done", advance: time.Hour, pending: []sim.Transition{}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			h.clock.Advance(s.advance) // State applies the due moves itself
			st, err := h.e.Data.State(ctx, sim.StateFilter{})
			require.NoError(t, err)
			want := map[string]int{"uploads": 1, "artifacts": 2}
			for k, n := range fixtureCounts {
				want[k] = n
			}
			want["videos"]++
			want["studio_projects"]++
			want["companies"]++
			want["users"]++
			assert.Equal(t, want, st.Studio)
			assert.Equal(t, s.pending, st.PendingTransitions)
		})
	}
}
