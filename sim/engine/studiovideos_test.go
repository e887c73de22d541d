package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Videos: creation from artifacts, the automatic lifecycle, listing,
// access, updates, the control side's status changes and the sweep.

// TestVideoLifecycleFromACompletedArtifact: a video made from an artifact
// that finished processing lasts as long as it, starts new, and moves on
// at exact times as the clock advances; reads apply and store the moves.
func TestVideoLifecycleFromACompletedArtifact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	alice := spCaller(t, h, spKeyAlice)
	src := spReadyArtifact(t, h, alice, sim.ArtifactVideo, spClipURL, spClipSecs*time.Second)
	require.NotNil(t, src.Duration)
	assert.Equal(t, spClipSecs, *src.Duration, "the media rule's duration")
	require.NotNil(t, src.Size)
	assert.Equal(t, derivedSize(sim.ArtifactVideo, spClipSecs*time.Second), *src.Size)
	bg := spReadyArtifact(t, h, alice, sim.ArtifactAudio, spMusicURL, spMusicSecs*time.Second)
	assert.Equal(t, spMusicSecs, *bg.Duration, "the derived duration")

	created := h.e.Clock.Now()
	nv := spNewVideo("Episode 1", src.ID)
	nv.BackgroundArtifactID, nv.InternationalMixArtifactID, nv.VocalsHitlArtifactID = bg.ID, bg.ID, bg.ID
	nv.Remark = ptr("first cut")
	nv.StringVariables = []sim.StringVariable{{Key: "episodeId", Value: "E1"}}
	nv.Pipeline = &sim.PipelineOptions{ShouldAutomateTranslation: ptr(true)}
	v, err := h.e.Videos.CreateVideo(ctx, alice, spSummer, nv, nil)
	require.NoError(t, err)
	tm := sim.DefaultStudioTiming
	want := sim.Video{ID: v.ID, ProjectID: spSummer, CompanyID: spAcme, Name: "Episode 1", Status: sim.VideoNew,
		ProcessingType: "dubbing", SrcLang: "en", DstLangs: []string{"es-ES", "fr-FR"},
		SourceArtifactID: src.ID, BackgroundArtifactID: bg.ID, InternationalMixArtifactID: bg.ID, VocalsHitlArtifactID: bg.ID,
		DurationSeconds: ptr(spClipSecs), Remark: ptr("first cut"), StringVariables: nv.StringVariables, Pipeline: nv.Pipeline,
		DueAt: created.Add(tm.VideoStart), CreatedBy: spUserAlice, CreatedAt: created, UpdatedAt: created}
	assert.Equal(t, want, v)
	assert.True(t, sim.IsStudioID(v.ID), v.ID)
	assert.Equal(t, v, spStoredVideo(t, h, v.ID))

	started := created.Add(tm.VideoStart)
	processing := tm.VideoProcessing(spClipSecs * time.Second)
	require.Equal(t, tm.VideoBase+2*tm.VideoPerMinute, processing, "two minutes of video")
	done := started.Add(processing)
	steps := []struct {
		name    string
		at      time.Time
		status  string
		updated time.Time
		due     time.Time
	}{
		{name: "1 ms before the start", at: started.Add(-time.Millisecond), status: sim.VideoNew, updated: created, due: started},
		{name: "at the start", at: started, status: sim.VideoInProgress, updated: started, due: done},
		{name: "1 ms before the end", at: done.Add(-time.Millisecond), status: sim.VideoInProgress, updated: started, due: done},
		{name: "at the end", at: done, status: sim.VideoCompleted, updated: done},
		{name: "a day later", at: done.Add(24 * time.Hour), status: sim.VideoCompleted, updated: done},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			h.clock.Advance(s.at.Sub(h.e.Clock.Now())) // no sweep: the read applies the transitions
			got, err := h.e.Videos.Video(ctx, alice, spSummer, v.ID)
			require.NoError(t, err)
			assert.Equal(t, s.status, got.Status)
			assert.Equal(t, s.updated, got.UpdatedAt)
			assert.Equal(t, s.due, got.DueAt)
			assert.Equal(t, got, spStoredVideo(t, h, v.ID), "the read stored what it applied")
			want.Status, want.UpdatedAt, want.DueAt = s.status, s.updated, s.due
			assert.Equal(t, want, got, "nothing else changes")
		})
	}

	t.Run("one read long after applies both moves at their due times", func(t *testing.T) {
		at := h.e.Clock.Now()
		v2, err := h.e.Videos.CreateVideo(ctx, alice, spSummer, spNewVideo("Episode 2", src.ID), nil)
		require.NoError(t, err)
		h.clock.Advance(time.Hour)
		got, err := h.e.Videos.Video(ctx, alice, spSummer, v2.ID)
		require.NoError(t, err)
		assert.Equal(t, sim.VideoCompleted, got.Status)
		assert.Equal(t, at.Add(tm.VideoStart+processing), got.UpdatedAt)
		assert.True(t, got.DueAt.IsZero())
	})
}

// TestCreateVideoAppliesDueArtifactTransitions: an artifact whose processing
// has ended by now is usable though no sweep or read has moved it yet.
func TestCreateVideoAppliesDueArtifactTransitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	alice := spCaller(t, h, spKeyAlice)
	src := spArtifact(t, h, alice, sim.ArtifactVideo, spClipURL)
	bg := spArtifact(t, h, alice, sim.ArtifactAudio, spMusicURL)
	last := src.DoneAt
	if bg.DoneAt.After(last) {
		last = bg.DoneAt
	}
	h.clock.Advance(last.Sub(t0)) // no sweep

	stored := func(id string) sim.Artifact {
		var a sim.Artifact
		require.NoError(t, h.st.View(ctx, func(tx sim.Tx) error {
			var err error
			a, err = tx.Artifacts().Get(id)
			return err
		}))
		return a
	}
	require.Equal(t, sim.ArtifactCreated, stored(src.ID).Status, "nothing has moved the artifact yet")
	nv := spNewVideo("Clip", src.ID)
	nv.BackgroundArtifactID = bg.ID
	v, err := h.e.Videos.CreateVideo(ctx, alice, spSummer, nv, nil)
	require.NoError(t, err)
	assert.Equal(t, ptr(spClipSecs), v.DurationSeconds)
	for _, a := range []sim.Artifact{src, bg} {
		got := stored(a.ID)
		assert.Equal(t, sim.ArtifactCompleted, got.Status, a.Type)
		assert.Equal(t, a.DoneAt, got.UpdatedAt, a.Type)
		assert.True(t, got.DueAt.IsZero(), a.Type)
	}
}

func TestCreateVideoRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	alice, grace, priya := spCaller(t, h, spKeyAlice), spCaller(t, h, spKeyGrace), spCaller(t, h, spKeyPriya)
	broken := spArtifact(t, h, alice, sim.ArtifactVideo, spBrokenURL) // fails when its processing ends
	ready := spReadyArtifact(t, h, alice, sim.ArtifactVideo, spClipURL, spClipSecs*time.Second)
	music := spReadyArtifact(t, h, alice, sim.ArtifactAudio, spMusicURL, spMusicSecs*time.Second)
	script := spReadyArtifact(t, h, alice, sim.ArtifactScript, spScriptURL, 90*time.Second)
	globex := spReadyArtifact(t, h, grace, sim.ArtifactVideo, spClipURL, spClipSecs*time.Second)
	initech := spReadyArtifact(t, h, priya, sim.ArtifactVideo, spClipURL, spClipSecs*time.Second)
	started := spArtifact(t, h, alice, sim.ArtifactVideo, spClipURL)
	_, err := h.e.Clock.Advance(ctx, sim.DefaultStudioTiming.ArtifactStart)
	require.NoError(t, err)
	pending := spArtifact(t, h, alice, sim.ArtifactAudio, spMusicURL)
	for id, status := range map[string]string{broken.ID: sim.ArtifactFailed, started.ID: sim.ArtifactStarted, pending.ID: sim.ArtifactCreated} {
		a, err := h.e.Artifacts.Artifact(ctx, alice, id)
		require.NoError(t, err)
		require.Equal(t, status, a.Status)
	}

	with := func(f func(*sim.NewVideo)) sim.NewVideo {
		nv := spNewVideo("Clip", ready.ID)
		f(&nv)
		return nv
	}
	cases := []struct {
		name     string
		caller   sim.Caller
		project  string
		nv       sim.NewVideo
		code     sim.Code
		msg      string
		duration *float64 // of a video created
	}{
		{name: "video source", caller: alice, project: spSummer, nv: with(func(*sim.NewVideo) {}), duration: ptr(spClipSecs)},
		{name: "audio source", caller: alice, project: spSummer, nv: with(func(nv *sim.NewVideo) { nv.SourceArtifactID = music.ID }), duration: ptr(spMusicSecs)},
		{name: "multi for a company with it enabled", caller: grace, project: spLongNight,
			nv: with(func(nv *sim.NewVideo) { nv.SourceArtifactID, nv.SourceLanguage = globex.ID, "multi" }), duration: ptr(spClipSecs)},
		{name: "multi not enabled", caller: alice, project: spSummer, nv: with(func(nv *sim.NewVideo) { nv.SourceLanguage = "multi" }),
			code: sim.CodeValidation, msg: sim.MsgMultiDisabled},
		{name: "unknown project", caller: alice, project: spUnknownID, nv: with(func(*sim.NewVideo) {}),
			code: sim.CodeNotFound, msg: sim.MsgStudioNotFound},
		{name: "another company's project", caller: alice, project: spCompliance, nv: with(func(*sim.NewVideo) {}),
			code: sim.CodeAccessDenied, msg: sim.MsgStudioDenied},
		{name: "source unknown", caller: alice, project: spSummer, nv: with(func(nv *sim.NewVideo) { nv.SourceArtifactID = spUnknownID }),
			code: sim.CodeValidation, msg: fmt.Sprintf(sim.MsgArtifactMissing, "sourceArtifactId", spUnknownID)},
		{name: "source of another company", caller: alice, project: spSummer, nv: with(func(nv *sim.NewVideo) { nv.SourceArtifactID = initech.ID }),
			code: sim.CodeValidation, msg: fmt.Sprintf(sim.MsgArtifactOtherCompany, "sourceArtifactId", initech.ID)},
		{name: "source is a script", caller: alice, project: spSummer, nv: with(func(nv *sim.NewVideo) { nv.SourceArtifactID = script.ID }),
			code: sim.CodeValidation, msg: fmt.Sprintf(sim.MsgArtifactType, "sourceArtifactId", script.ID, "script", "video or audio")},
		{name: "source not started", caller: alice, project: spSummer, nv: with(func(nv *sim.NewVideo) { nv.SourceArtifactID = pending.ID }),
			code: sim.CodeValidation, msg: fmt.Sprintf(sim.MsgArtifactNotUsable, "sourceArtifactId", pending.ID, "created", "")},
		{name: "source still processing", caller: alice, project: spSummer, nv: with(func(nv *sim.NewVideo) { nv.SourceArtifactID = started.ID }),
			code: sim.CodeValidation, msg: fmt.Sprintf(sim.MsgArtifactNotUsable, "sourceArtifactId", started.ID, "upload_started", "")},
		{name: "source failed", caller: alice, project: spSummer, nv: with(func(nv *sim.NewVideo) { nv.SourceArtifactID = broken.ID }),
			code: sim.CodeValidation, msg: fmt.Sprintf(sim.MsgArtifactNotUsable, "sourceArtifactId", broken.ID, "upload_failed", ": Codec not supported")},
		{name: "background is a video", caller: alice, project: spSummer, nv: with(func(nv *sim.NewVideo) { nv.BackgroundArtifactID = ready.ID }),
			code: sim.CodeValidation, msg: fmt.Sprintf(sim.MsgArtifactType, "backgroundWavArtifactId", ready.ID, "video", "audio")},
		{name: "international mix unknown", caller: alice, project: spSummer, nv: with(func(nv *sim.NewVideo) { nv.InternationalMixArtifactID = spUnknownID }),
			code: sim.CodeValidation, msg: fmt.Sprintf(sim.MsgArtifactMissing, "internationalMixWavArtifactId", spUnknownID)},
		{name: "vocals not processed yet", caller: alice, project: spSummer, nv: with(func(nv *sim.NewVideo) { nv.VocalsHitlArtifactID = pending.ID }),
			code: sim.CodeValidation, msg: fmt.Sprintf(sim.MsgArtifactNotUsable, "vocalsHitlWavArtifactId", pending.ID, "created", "")},
		{name: "background of another company", caller: grace, project: spLongNight,
			nv:   with(func(nv *sim.NewVideo) { nv.SourceArtifactID, nv.BackgroundArtifactID = globex.ID, music.ID }),
			code: sim.CodeValidation, msg: fmt.Sprintf(sim.MsgArtifactOtherCompany, "backgroundWavArtifactId", music.ID)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, err := h.e.Videos.ListVideos(ctx, tc.caller, tc.project)
			v, cerr := h.e.Videos.CreateVideo(ctx, tc.caller, tc.project, tc.nv, nil)
			if tc.code != "" {
				assert.Equal(t, tc.code, sim.ErrorCode(cerr))
				assert.EqualError(t, cerr, tc.msg)
				after, err2 := h.e.Videos.ListVideos(ctx, tc.caller, tc.project)
				assert.Equal(t, err, err2)
				assert.Equal(t, before, after, "a refusal creates no video")
				return
			}
			require.NoError(t, err)
			require.NoError(t, cerr)
			assert.Equal(t, sim.VideoNew, v.Status)
			assert.Equal(t, tc.nv.SourceLanguage, v.SrcLang)
			assert.Equal(t, tc.caller.Company.ID, v.CompanyID)
			assert.Equal(t, tc.duration, v.DurationSeconds)
			after, err := h.e.Videos.ListVideos(ctx, tc.caller, tc.project)
			require.NoError(t, err)
			assert.Equal(t, append(before, v), after)
		})
	}
}

func TestVideosList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	alice, priya := spCaller(t, h, spKeyAlice), spCaller(t, h, spKeyPriya)
	empty, err := h.e.StudioProjects.CreateStudioProject(ctx, alice, sim.StudioProjectInput{Name: ptr("Empty")}, nil)
	require.NoError(t, err)

	cases := []struct {
		name    string
		caller  sim.Caller
		project string
		want    []string
		code    sim.Code
		msg     string
	}{
		{name: "oldest first", caller: alice, project: spSummer, want: []string{spHeroSpot, spBehind, spSocialCut}},
		{name: "oldest first, again (cached)", caller: alice, project: spSummer, want: []string{spHeroSpot, spBehind, spSocialCut}},
		{name: "another project", caller: alice, project: spTutorials, want: []string{"68226f3e0a4e53a77de3f4d2", spAdvanced}},
		{name: "ids out of creation order", caller: alice, project: spWebinar, want: []string{"679d7ff40a4e53a77de3f4d4", "67b86ab60a4e53a77de3f4d5"}},
		{name: "no videos", caller: alice, project: empty.ID, want: []string{}},
		{name: "another company's, after a cached list", caller: priya, project: spSummer, code: sim.CodeAccessDenied, msg: sim.MsgStudioDenied},
		{name: "unknown project", caller: alice, project: spUnknownID, code: sim.CodeNotFound, msg: sim.MsgStudioNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, err := h.e.Videos.ListVideos(ctx, tc.caller, tc.project)
			if tc.code != "" {
				assert.Equal(t, tc.code, sim.ErrorCode(err))
				assert.EqualError(t, err, tc.msg)
				return
			}
			require.NoError(t, err)
			assert.NotNil(t, l, "an empty list, not null")
			assert.Equal(t, tc.want, spIDs(l, spVideoID))
			for _, v := range l {
				assert.Equal(t, spStoredVideo(t, h, v.ID), v)
			}
		})
	}

	t.Run("videos of one instant by id, their moves applied at the due time", func(t *testing.T) {
		src := spReadyArtifact(t, h, alice, sim.ArtifactVideo, spClipURL, spClipSecs*time.Second)
		created := h.e.Clock.Now()
		var made []string
		for _, name := range []string{"A", "B"} {
			v, err := h.e.Videos.CreateVideo(ctx, alice, spSummer, spNewVideo(name, src.ID), nil)
			require.NoError(t, err)
			made = append(made, v.ID)
		}
		require.Less(t, made[0], made[1])
		l, err := h.e.Videos.ListVideos(ctx, alice, spSummer)
		require.NoError(t, err)
		assert.Equal(t, []string{spHeroSpot, spBehind, spSocialCut, made[0], made[1]}, spIDs(l, spVideoID))
		assert.Equal(t, sim.VideoNew, l[3].Status)

		// The list read above is cached until the first due time; an
		// advance of the clock alone (no write) reaches it.
		tm := sim.DefaultStudioTiming
		h.clock.Advance(tm.VideoStart)
		l, err = h.e.Videos.ListVideos(ctx, alice, spSummer)
		require.NoError(t, err)
		require.Len(t, l, 5)
		for _, v := range l[3:] {
			assert.Equal(t, sim.VideoInProgress, v.Status)
			assert.Equal(t, created.Add(tm.VideoStart), v.UpdatedAt)
			assert.Equal(t, created.Add(tm.VideoStart+tm.VideoProcessing(spClipSecs*time.Second)), v.DueAt)
			assert.Equal(t, v, spStoredVideo(t, h, v.ID), "the list stored what it applied")
		}
		assert.Equal(t, sim.VideoInProgress, l[1].Status, "fixture videos have no due time")
		assert.Equal(t, sim.VideoNew, l[2].Status)
	})
}

func TestSortVideos(t *testing.T) {
	t.Parallel()
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	cases := []struct {
		name string
		in   []sim.Video
		want []string
	}{
		{name: "empty", in: []sim.Video{}, want: []string{}},
		{name: "by creation time", in: []sim.Video{{ID: "a", CreatedAt: at(3)}, {ID: "b", CreatedAt: at(1)}, {ID: "c", CreatedAt: at(2)}},
			want: []string{"b", "c", "a"}},
		{name: "ties by id", in: []sim.Video{{ID: "c", CreatedAt: at(1)}, {ID: "a", CreatedAt: at(1)}, {ID: "b", CreatedAt: at(1)}},
			want: []string{"a", "b", "c"}},
		{name: "time before id", in: []sim.Video{{ID: "a", CreatedAt: at(2)}, {ID: "z", CreatedAt: at(1)}, {ID: "b", CreatedAt: at(2)}},
			want: []string{"z", "a", "b"}},
		{name: "the same instant in another zone", in: []sim.Video{{ID: "b", CreatedAt: at(1)}, {ID: "a", CreatedAt: at(1).In(time.FixedZone("X", 3600))}},
			want: []string{"a", "b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sortVideos(tc.in)
			assert.Equal(t, tc.want, spIDs(tc.in, spVideoID))
		})
	}
}

// TestVideoAccess: the reads and updates of one video answer alike for
// another company's project, unknown ids and a video of another project.
func TestVideoAccess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	cases := []struct {
		name    string
		key     string
		project string
		video   string
		code    sim.Code
		msg     string
	}{
		{name: "own", key: spKeyAlice, project: spSummer, video: spHeroSpot},
		{name: "another user of the company", key: spKeyBob, project: spSummer, video: spHeroSpot},
		{name: "another company's project", key: spKeyPriya, project: spSummer, video: spHeroSpot, code: sim.CodeAccessDenied, msg: sim.MsgStudioDenied},
		{name: "unknown project", key: spKeyAlice, project: spUnknownID, video: spHeroSpot, code: sim.CodeNotFound, msg: sim.MsgStudioNotFound},
		{name: "unknown video", key: spKeyAlice, project: spSummer, video: spUnknownID, code: sim.CodeNotFound, msg: sim.MsgStudioNotFound},
		{name: "a video of another project of the company", key: spKeyAlice, project: spSummer, video: spAdvanced, code: sim.CodeNotFound, msg: sim.MsgStudioNotFound},
		{name: "another company's video under an own project", key: spKeyAlice, project: spSummer, video: "6815cce40a4e53a77de3f4db", code: sim.CodeNotFound, msg: sim.MsgStudioNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := spCaller(t, h, tc.key)
			orig := spStoredVideo(t, h, spHeroSpot)
			v, err := h.e.Videos.Video(ctx, c, tc.project, tc.video)
			u, uerr := h.e.Videos.UpdateVideo(ctx, c, tc.project, tc.video, sim.VideoUpdate{Name: ptr("Touched by " + tc.key)})
			if tc.code != "" {
				for _, err := range []error{err, uerr} {
					assert.Equal(t, tc.code, sim.ErrorCode(err))
					assert.EqualError(t, err, tc.msg)
				}
				assert.Equal(t, orig, spStoredVideo(t, h, spHeroSpot))
				return
			}
			require.NoError(t, err)
			require.NoError(t, uerr)
			assert.Equal(t, orig, v)
			assert.Equal(t, "Touched by "+tc.key, u.Name)
			assert.Equal(t, u, spStoredVideo(t, h, tc.video))
		})
	}
}

func TestUpdateVideo(t *testing.T) {
	t.Parallel()
	// On the fixture video "Hero spot 30s": targets es-ES and fr-FR, with
	// guidance for both.
	cases := []struct {
		name   string
		u      sim.VideoUpdate
		change func(v *sim.Video)
		msg    string
	}{
		{name: "name", u: sim.VideoUpdate{Name: ptr("Hero spot 30s v2")}, change: func(v *sim.Video) { v.Name = "Hero spot 30s v2" }},
		{name: "nothing: only updatedAt", u: sim.VideoUpdate{}, change: func(*sim.Video) {}},
		{name: "processing type", u: sim.VideoUpdate{ProcessingType: ptr("voiceover")}, change: func(v *sim.Video) { v.ProcessingType = "voiceover" }},
		{name: "status", u: sim.VideoUpdate{Status: ptr(sim.VideoInProgress)}, change: func(v *sim.Video) { v.Status = sim.VideoInProgress }},
		{name: "remark", u: sim.VideoUpdate{Remark: ptr("Re-approved")}, change: func(v *sim.Video) { v.Remark = ptr("Re-approved") }},
		{name: "remark null", u: sim.VideoUpdate{ClearRemark: true}, change: func(v *sim.Video) { v.Remark = nil }},
		{name: "string variables", u: sim.VideoUpdate{HasStringVariables: true, StringVariables: []sim.StringVariable{{Key: "k", Value: "v"}}},
			change: func(v *sim.Video) { v.StringVariables = []sim.StringVariable{{Key: "k", Value: "v"}} }},
		{name: "string variables null", u: sim.VideoUpdate{HasStringVariables: true}, change: func(v *sim.Video) { v.StringVariables = nil }},
		{name: "a target added keeps the guidance", u: sim.VideoUpdate{HasDstLangs: true, DstLangs: []string{"es-ES", "fr-FR", "de-DE"}},
			change: func(v *sim.Video) { v.DstLangs = []string{"es-ES", "fr-FR", "de-DE"} }},
		{name: "a target dropped with its guidance replaced",
			u: sim.VideoUpdate{HasDstLangs: true, DstLangs: []string{"es-ES"}, HasGuidance: true, Guidance: &sim.Guidance{ByLang: map[string]string{"es-ES": "Usted"}}},
			change: func(v *sim.Video) {
				v.DstLangs, v.Guidance = []string{"es-ES"}, &sim.Guidance{ByLang: map[string]string{"es-ES": "Usted"}}
			}},
		{name: "targets replaced, guidance null", u: sim.VideoUpdate{HasDstLangs: true, DstLangs: []string{"de-DE"}, HasGuidance: true},
			change: func(v *sim.Video) { v.DstLangs, v.Guidance = []string{"de-DE"}, nil }},
		{name: "guidance for the new targets", u: sim.VideoUpdate{HasDstLangs: true, DstLangs: []string{"de-DE"}, HasGuidance: true,
			Guidance: &sim.Guidance{Common: ptr("Sie"), ByLang: map[string]string{"de-DE": "Formal"}}},
			change: func(v *sim.Video) {
				v.DstLangs, v.Guidance = []string{"de-DE"}, &sim.Guidance{Common: ptr("Sie"), ByLang: map[string]string{"de-DE": "Formal"}}
			}},
		{name: "common guidance only", u: sim.VideoUpdate{HasGuidance: true, Guidance: &sim.Guidance{Common: ptr("Short")}},
			change: func(v *sim.Video) { v.Guidance = &sim.Guidance{Common: ptr("Short")} }},
		{name: "a target dropped, its guidance left", u: sim.VideoUpdate{HasDstLangs: true, DstLangs: []string{"es-ES"}},
			msg: fmt.Sprintf(sim.MsgGuidanceStale, "fr-FR")},
		{name: "both targets dropped, their guidance left", u: sim.VideoUpdate{HasDstLangs: true, DstLangs: []string{"de-DE"}, Name: ptr("lost")},
			msg: fmt.Sprintf(sim.MsgGuidanceStale, "es-ES, fr-FR")},
		{name: "guidance for a language not targeted", u: sim.VideoUpdate{HasGuidance: true, Guidance: &sim.Guidance{ByLang: map[string]string{"it-IT": "x", "de-DE": "y", "es-ES": "z"}}},
			msg: fmt.Sprintf(sim.MsgGuidanceLanguage, "de-DE", "es-ES, fr-FR")},
		{name: "guidance for a target dropped in the same request",
			u:   sim.VideoUpdate{HasDstLangs: true, DstLangs: []string{"es-ES"}, HasGuidance: true, Guidance: &sim.Guidance{ByLang: map[string]string{"fr-FR": "Vous"}}},
			msg: fmt.Sprintf(sim.MsgGuidanceLanguage, "fr-FR", "es-ES")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			h := spHarness(t)
			orig := spStoredVideo(t, h, spHeroSpot)
			require.Equal(t, []string{"es-ES", "fr-FR"}, orig.DstLangs)
			require.Len(t, orig.Guidance.ByLang, 2)
			_, err := h.e.Clock.Advance(ctx, time.Hour)
			require.NoError(t, err)
			v, err := h.e.Videos.UpdateVideo(ctx, spCaller(t, h, spKeyBob), spSummer, spHeroSpot, tc.u)
			if tc.msg != "" {
				assert.Equal(t, sim.CodeValidation, sim.ErrorCode(err))
				assert.EqualError(t, err, tc.msg)
				assert.Equal(t, orig, spStoredVideo(t, h, spHeroSpot), "a refusal changes nothing")
				return
			}
			require.NoError(t, err)
			want := orig
			tc.change(&want)
			want.UpdatedAt = t0.Add(time.Hour)
			assert.Equal(t, want, v)
			assert.Equal(t, v, spStoredVideo(t, h, spHeroSpot))
		})
	}
}

// TestUpdateVideoAndTheLifecycle: an update applies the due moves first; a
// status written by the client stops the automatic lifecycle.
func TestUpdateVideoAndTheLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	alice := spCaller(t, h, spKeyAlice)
	src := spReadyArtifact(t, h, alice, sim.ArtifactVideo, spClipURL, spClipSecs*time.Second)
	created := h.e.Clock.Now()
	v, err := h.e.Videos.CreateVideo(ctx, alice, spSummer, spNewVideo("Clip", src.ID), nil)
	require.NoError(t, err)
	tm := sim.DefaultStudioTiming
	started := created.Add(tm.VideoStart)

	h.clock.Advance(tm.VideoStart + time.Second) // due, not swept
	v, err = h.e.Videos.UpdateVideo(ctx, alice, spSummer, v.ID, sim.VideoUpdate{Name: ptr("Renamed")})
	require.NoError(t, err)
	assert.Equal(t, "Renamed", v.Name)
	assert.Equal(t, sim.VideoInProgress, v.Status, "the due move applied first")
	assert.Equal(t, started.Add(tm.VideoProcessing(spClipSecs*time.Second)), v.DueAt)
	assert.Equal(t, started.Add(time.Second), v.UpdatedAt, "the update's own time")

	written := h.e.Clock.Now()
	v, err = h.e.Videos.UpdateVideo(ctx, alice, spSummer, v.ID, sim.VideoUpdate{Status: ptr(sim.VideoNew)})
	require.NoError(t, err)
	assert.Equal(t, sim.VideoNew, v.Status)
	assert.True(t, v.DueAt.IsZero(), "a client-written status stops the lifecycle")
	_, err = h.e.Clock.Advance(ctx, 24*time.Hour)
	require.NoError(t, err)
	got, err := h.e.Videos.Video(ctx, alice, spSummer, v.ID)
	require.NoError(t, err)
	assert.Equal(t, sim.VideoNew, got.Status)
	assert.Equal(t, written, got.UpdatedAt)
}

func TestSetVideoStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	alice := spCaller(t, h, spKeyAlice)
	src := spReadyArtifact(t, h, alice, sim.ArtifactVideo, spClipURL, spClipSecs*time.Second)
	tm := sim.DefaultStudioTiming
	fresh := func(t *testing.T) string { // a new video of 120 s
		v, err := h.e.Videos.CreateVideo(ctx, alice, spSummer, spNewVideo("Clip", src.ID), nil)
		require.NoError(t, err)
		return v.ID
	}
	noDuration := func(*testing.T) string { return spAdvanced }
	unknown := func(*testing.T) string { return spUnknownID }

	cases := []struct {
		name     string
		video    func(t *testing.T) string
		status   string
		auto     bool
		due      time.Duration // after now; -1: none
		dayLater string        // the status a day later
		code     sim.Code
		msg      string
	}{
		{name: "new, auto", video: fresh, status: sim.VideoNew, auto: true, due: tm.VideoStart, dayLater: sim.VideoCompleted},
		{name: "in_progress, auto", video: fresh, status: sim.VideoInProgress, auto: true, due: tm.VideoProcessing(spClipSecs * time.Second), dayLater: sim.VideoCompleted},
		{name: "in_progress, auto, no duration", video: noDuration, status: sim.VideoInProgress, auto: true, due: tm.VideoBase, dayLater: sim.VideoCompleted},
		{name: "completed, auto", video: fresh, status: sim.VideoCompleted, auto: true, due: -1, dayLater: sim.VideoCompleted},
		{name: "new, not auto", video: fresh, status: sim.VideoNew, due: -1, dayLater: sim.VideoNew},
		{name: "in_progress, not auto", video: noDuration, status: sim.VideoInProgress, due: -1, dayLater: sim.VideoInProgress},
		{name: "unknown status", video: fresh, status: "archived", auto: true, code: sim.CodeValidation,
			msg: fmt.Sprintf(sim.MsgVideoStatus, "new, in_progress, completed", "archived")},
		{name: "empty status", video: fresh, status: "", code: sim.CodeValidation,
			msg: fmt.Sprintf(sim.MsgVideoStatus, "new, in_progress, completed", "")},
		{name: "unknown video", video: unknown, status: sim.VideoNew, auto: true, code: sim.CodeNotFound,
			msg: fmt.Sprintf(sim.MsgVideoNotFound, spUnknownID)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := tc.video(t)
			_, err := h.e.Clock.Advance(ctx, time.Hour)
			require.NoError(t, err)
			now := h.e.Clock.Now()
			var before sim.Video
			if tc.code != sim.CodeNotFound {
				before = spStoredVideo(t, h, id)
			}
			v, err := h.e.Videos.SetVideoStatus(ctx, id, tc.status, tc.auto)
			if tc.code != "" {
				assert.Equal(t, tc.code, sim.ErrorCode(err))
				assert.EqualError(t, err, tc.msg)
				if tc.code != sim.CodeNotFound {
					assert.Equal(t, before, spStoredVideo(t, h, id), "a refusal changes nothing")
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.status, v.Status)
			assert.Equal(t, now, v.UpdatedAt)
			if tc.due < 0 {
				assert.True(t, v.DueAt.IsZero(), "%v", v.DueAt)
			} else {
				assert.Equal(t, now.Add(tc.due), v.DueAt)
			}
			assert.Equal(t, v, spStoredVideo(t, h, id))
			_, err = h.e.Clock.Advance(ctx, 24*time.Hour)
			require.NoError(t, err)
			assert.Equal(t, tc.dayLater, spStoredVideo(t, h, id).Status, "the sweep, a day later")
		})
	}
}

func TestMinTime(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		a, b    time.Time
		wantArg int
	}{
		{name: "first earlier", a: t0, b: t0.Add(time.Second), wantArg: 0},
		{name: "second earlier", a: t0.Add(time.Second), b: t0, wantArg: 1},
		{name: "equal", a: t0, b: t0, wantArg: 1},
		{name: "zero first", a: time.Time{}, b: t0, wantArg: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := []time.Time{tc.a, tc.b}[tc.wantArg]
			assert.Equal(t, want, minTime(tc.a, tc.b))
		})
	}
}

// TestSweepStudio: the sweep applies the artifact and video moves due at the
// time it is given, each at its own due time, and counts them.
func TestSweepStudio(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	alice := spCaller(t, h, spKeyAlice)
	src := spReadyArtifact(t, h, alice, sim.ArtifactVideo, spClipURL, spClipSecs*time.Second)
	t1 := h.e.Clock.Now()
	a := spArtifact(t, h, alice, sim.ArtifactAudio, spMusicURL)
	v, err := h.e.Videos.CreateVideo(ctx, alice, spSummer, spNewVideo("Clip", src.ID), nil)
	require.NoError(t, err)
	tm := sim.DefaultStudioTiming
	aStart, aDone := t1.Add(tm.ArtifactStart), spArtifactDone(t1, sim.ArtifactAudio, spMusicSecs*time.Second)
	vStart := t1.Add(tm.VideoStart)
	vDone := vStart.Add(tm.VideoProcessing(spClipSecs * time.Second))
	require.Equal(t, aDone, a.DoneAt)

	steps := []struct {
		name     string
		at       time.Time
		want     int
		artifact string
		video    string
		aUpdated time.Time
		vUpdated time.Time
	}{
		{name: "nothing due", at: aStart.Add(-time.Millisecond), want: 0, artifact: sim.ArtifactCreated, video: sim.VideoNew, aUpdated: t1, vUpdated: t1},
		{name: "the artifact starts", at: aStart, want: 1, artifact: sim.ArtifactStarted, video: sim.VideoNew, aUpdated: aStart, vUpdated: t1},
		{name: "the artifact completes", at: aDone, want: 1, artifact: sim.ArtifactCompleted, video: sim.VideoNew, aUpdated: aDone, vUpdated: t1},
		{name: "the video starts", at: vStart, want: 1, artifact: sim.ArtifactCompleted, video: sim.VideoInProgress, aUpdated: aDone, vUpdated: vStart},
		{name: "the same time again", at: vStart, want: 0, artifact: sim.ArtifactCompleted, video: sim.VideoInProgress, aUpdated: aDone, vUpdated: vStart},
		{name: "1 ms before the video completes", at: vDone.Add(-time.Millisecond), want: 0, artifact: sim.ArtifactCompleted, video: sim.VideoInProgress, aUpdated: aDone, vUpdated: vStart},
		{name: "the video completes, swept late", at: vDone.Add(time.Hour), want: 1, artifact: sim.ArtifactCompleted, video: sim.VideoCompleted, aUpdated: aDone, vUpdated: vDone},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			n, err := h.e.Clock.sweeper.sweep(ctx, s.at)
			require.NoError(t, err)
			assert.Equal(t, s.want, n)
			var got sim.Artifact
			require.NoError(t, h.st.View(ctx, func(tx sim.Tx) error {
				var err error
				got, err = tx.Artifacts().Get(a.ID)
				return err
			}))
			assert.Equal(t, s.artifact, got.Status)
			assert.Equal(t, s.aUpdated, got.UpdatedAt)
			gv := spStoredVideo(t, h, v.ID)
			assert.Equal(t, s.video, gv.Status)
			assert.Equal(t, s.vUpdated, gv.UpdatedAt)
		})
	}
}

// TestSweepStudioInBatches: more due videos than one sweep transaction
// takes are all moved, in several transactions.
func TestSweepStudioInBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	const n = sweepBatch + 88
	ids := make([]string, n)
	require.NoError(t, h.st.Update(ctx, func(tx sim.Tx) error {
		for i := range ids {
			ids[i] = fmt.Sprintf("%024x", i+1)
			v := sim.Video{ID: ids[i], ProjectID: spSummer, CompanyID: spAcme, Name: "bulk", Status: sim.VideoNew,
				DstLangs: []string{"es-ES"}, DueAt: t0, CreatedAt: t0, UpdatedAt: t0}
			if err := tx.Videos().Put(v); err != nil {
				return err
			}
		}
		return nil
	}))
	tm := sim.DefaultStudioTiming
	steps := []struct {
		name   string
		at     time.Time
		want   int
		status string
	}{
		{name: "all start", at: t0, want: n, status: sim.VideoInProgress},
		{name: "none due again", at: t0, want: 0, status: sim.VideoInProgress},
		{name: "all complete", at: t0.Add(tm.VideoBase), want: n, status: sim.VideoCompleted},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			got, err := h.e.Clock.sweeper.sweep(ctx, s.at)
			require.NoError(t, err)
			assert.Equal(t, s.want, got)
			for _, id := range []string{ids[0], ids[sweepBatch-1], ids[sweepBatch], ids[n-1]} {
				v := spStoredVideo(t, h, id)
				assert.Equal(t, s.status, v.Status, id)
				assert.Equal(t, s.at, v.UpdatedAt, id)
			}
		})
	}
}

// TestSweepStudioUnschedulesAStuckArtifact: an artifact due but unable to
// move (waiting for a download that no longer runs) is unscheduled, so the
// sweep cannot spin on it.
func TestSweepStudioUnschedulesAStuckArtifact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	stuck := sim.Artifact{ID: spUnknownID, CompanyID: spAcme, Type: sim.ArtifactVideo, Status: sim.ArtifactStarted,
		Pending: true, StartAt: t0, DoneAt: t0, DueAt: t0, CreatedAt: t0, UpdatedAt: t0}
	require.NoError(t, h.st.Update(ctx, func(tx sim.Tx) error { return tx.Artifacts().Put(stuck) }))

	n, err := h.e.Clock.sweeper.sweep(ctx, t0.Add(time.Second))
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	var got sim.Artifact
	require.NoError(t, h.st.View(ctx, func(tx sim.Tx) error {
		var err error
		got, err = tx.Artifacts().Get(stuck.ID)
		return err
	}))
	assert.True(t, got.DueAt.IsZero(), "unscheduled")
	stuck.DueAt = time.Time{}
	assert.Equal(t, stuck, got, "nothing else changes")
	n, err = h.e.Clock.sweeper.sweep(ctx, t0.Add(time.Hour))
	require.NoError(t, err)
	assert.Zero(t, n)
}

// TestSweepStudioCountsEveryChange: the sweep returns how many records it
// changed: an artifact and a video moved in one sweep count 2 (it counted
// the larger of the two lists of a batch).
func TestSweepStudioCountsEveryChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := spHarness(t)
	require.NoError(t, h.st.Update(ctx, func(tx sim.Tx) error {
		return errors.Join(
			tx.Artifacts().Put(sim.Artifact{ID: spUnknownID, CompanyID: spAcme, Type: sim.ArtifactAudio, Status: sim.ArtifactCreated,
				Result: sim.ArtifactResult{Known: true, Size: 1}, StartAt: t0, DoneAt: t0.Add(time.Minute), DueAt: t0, CreatedAt: t0, UpdatedAt: t0}),
			tx.Videos().Put(sim.Video{ID: "ffffffffffffffffffffffff", ProjectID: spSummer, CompanyID: spAcme, Name: "v", Status: sim.VideoNew,
				DueAt: t0, CreatedAt: t0, UpdatedAt: t0}),
		)
	}))
	n, err := h.e.Clock.sweeper.sweep(ctx, t0)
	require.NoError(t, err)
	assert.Equal(t, sim.VideoInProgress, spStoredVideo(t, h, "ffffffffffffffffffffffff").Status)
	assert.Equal(t, 2, n, "one artifact and one video changed")
}
