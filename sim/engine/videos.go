package engine

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/gencache"
	"github.com/dubsim/dubsim/sim/statemachine"
)

// Videos are the studio's dubbing jobs, made from artifacts in a studio
// project. A project's video list is cached by project id.
type Videos struct {
	*core
	ids       *idgen
	artifacts *Artifacts
	timing    sim.StudioTiming
	lists     gencache.Cache[videoList]
}

// videoList is a project's videos, sorted, as cached.
type videoList struct {
	videos  []sim.Video
	company string
	until   time.Time // the earliest DueAt of one of them (zero: none is due)
}

func usableArtifact(tx sim.Tx, c sim.Caller, field, id string, types ...string) (sim.Artifact, error) {
	a, err := get(tx.Artifacts().Get, id, nil, func() error { return sim.Errorf(sim.CodeValidation, sim.MsgArtifactMissing, field, id) })
	if err != nil {
		return a, err
	}
	if a.CompanyID != c.Company.ID {
		return a, sim.Errorf(sim.CodeValidation, sim.MsgArtifactOtherCompany, field, id)
	}
	if !slices.Contains(types, a.Type) {
		return a, sim.Errorf(sim.CodeValidation, sim.MsgArtifactType, field, id, a.Type, strings.Join(types, " or "))
	}
	if !a.Usable() {
		msg := ""
		if a.Status == sim.ArtifactFailed {
			msg = ": " + a.ErrorMessage
		}
		return a, sim.Errorf(sim.CodeValidation, sim.MsgArtifactNotUsable, field, id, a.Status, msg)
	}
	return a, nil
}

// CreateVideo adds a video to a project of the caller's company; it starts
// in status new and moves on by itself (see NextVideo).
func (e *Videos) CreateVideo(ctx context.Context, c sim.Caller, projectID string, nv sim.NewVideo, idem *sim.IdemWrite[sim.Video]) (sim.Video, error) {
	if nv.SourceLanguage == "multi" && !c.Company.MultiLanguage {
		return sim.Video{}, sim.Errorf(sim.CodeValidation, sim.MsgMultiDisabled)
	}
	// The source (always checked), then the optional audio tracks.
	refs := []struct{ field, id string }{{"sourceArtifactId", nv.SourceArtifactID}, {"backgroundWavArtifactId", nv.BackgroundArtifactID},
		{"internationalMixWavArtifactId", nv.InternationalMixArtifactID}, {"vocalsHitlWavArtifactId", nv.VocalsHitlArtifactID}}
	for _, ref := range refs { // as a read of the artifact does
		if ref.id != "" {
			_ = e.artifacts.work.waitFor(ctx, e.clock.Now(), ref.id)
		}
	}
	return in(ctx, e.batch, func(tx sim.Tx) (sim.Video, error) {
		now := e.clock.Now()
		p, err := ownedStudioProject(tx, c, projectID)
		if err != nil {
			return sim.Video{}, err
		}
		// An artifact whose processing has ended by now is usable.
		for _, ref := range refs {
			if ref.id == "" {
				continue
			}
			if a, err := tx.Artifacts().Get(ref.id); err == nil && statemachine.ArtifactDue(a, now) {
				if _, err := e.artifacts.settleArtifact(tx, a, now); err != nil {
					return sim.Video{}, err
				}
			}
		}
		src, err := usableArtifact(tx, c, refs[0].field, refs[0].id, sim.ArtifactVideo, sim.ArtifactAudio)
		for _, ref := range refs[1:] {
			if ref.id != "" && err == nil {
				_, err = usableArtifact(tx, c, ref.field, ref.id, sim.ArtifactAudio)
			}
		}
		if err != nil {
			return sim.Video{}, err
		}
		id, err := e.ids.studioID(tx, now)
		if err != nil {
			return sim.Video{}, err
		}
		v := sim.Video{ID: id, ProjectID: p.ID, CompanyID: p.CompanyID, Name: nv.Name, Status: sim.VideoNew,
			ProcessingType: nv.WorkflowType, SrcLang: nv.SourceLanguage, DstLangs: nv.TargetLanguages,
			SourceArtifactID: nv.SourceArtifactID, BackgroundArtifactID: nv.BackgroundArtifactID,
			InternationalMixArtifactID: nv.InternationalMixArtifactID, VocalsHitlArtifactID: nv.VocalsHitlArtifactID,
			Remark: nv.Remark, StringVariables: nv.StringVariables, Pipeline: nv.Pipeline,
			DueAt: statemachine.VideoDueAfter(sim.Video{}, sim.VideoNew, now, e.timing), CreatedBy: c.User.ID, CreatedAt: now, UpdatedAt: now}
		if src.Duration != nil {
			v.DurationSeconds = new(*src.Duration)
		}
		if err := tx.Videos().Put(v); err != nil {
			return v, err
		}
		return v, saveIdem(tx, idem, v, now)
	})
}

func (e *Videos) settleVideo(tx sim.Tx, v sim.Video, now time.Time) (sim.Video, error) {
	nv := statemachine.NextVideo(v, now, e.timing)
	if nv.Status == v.Status && nv.DueAt.Equal(v.DueAt) {
		return v, nil
	}
	if nv.Status != v.Status {
		noteEvent(tx, Event{Resource: "video", ID: nv.ID, From: v.Status, To: nv.Status, At: now, Company: nv.CompanyID})
	}
	return nv, tx.Videos().Put(nv)
}

// ListVideos lists the videos of a project of the caller's company, oldest
// first, with due transitions applied.
func (e *Videos) ListVideos(ctx context.Context, c sim.Caller, projectID string) ([]sim.Video, error) {
	now := e.clock.Now()
	gen := e.writes.Load()
	if l, ok := e.lists.Get(projectID, gen); ok && l.company == c.Company.ID && (l.until.IsZero() || now.Before(l.until)) {
		return slices.Clone(l.videos), nil
	}
	out := []sim.Video{}
	due := false
	read := func(tx sim.Tx) error {
		out, due = out[:0], false
		if _, err := ownedStudioProject(tx, c, projectID); err != nil {
			return err
		}
		return tx.ForEachVideo(projectID, func(v sim.Video) error {
			if statemachine.VideoDue(v, now) {
				due = true
			}
			out = append(out, v)
			return nil
		})
	}
	if err := e.store.View(ctx, read); err != nil || !due {
		sortVideos(out)
		if err == nil {
			l := videoList{videos: slices.Clone(out), company: c.Company.ID}
			for _, v := range out {
				if !v.DueAt.IsZero() && (l.until.IsZero() || v.DueAt.Before(l.until)) {
					l.until = v.DueAt
				}
			}
			e.lists.Put(projectID, l, gen)
		}
		return out, err
	}
	err := e.update(ctx, func(tx sim.Tx) error {
		if err := read(tx); err != nil {
			return err
		}
		for i, v := range out {
			nv, err := e.settleVideo(tx, v, now)
			if err != nil {
				return err
			}
			out[i] = nv
		}
		return nil
	})
	sortVideos(out)
	return out, err
}

func sortVideos(vs []sim.Video) {
	slices.SortStableFunc(vs, func(a, b sim.Video) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
}

func ownedVideo(tx sim.Tx, c sim.Caller, projectID, videoID string) (sim.Video, error) {
	if _, err := ownedStudioProject(tx, c, projectID); err != nil {
		return sim.Video{}, err
	}
	return get(tx.Videos().Get, videoID, func(v sim.Video) bool { return v.ProjectID == projectID }, studioMissing)
}

// settledVideo is ownedVideo with the video's due transitions applied.
func (e *Videos) settledVideo(tx sim.Tx, c sim.Caller, projectID, videoID string, now time.Time) (sim.Video, error) {
	owned := func(id string) (sim.Video, error) { return ownedVideo(tx, c, projectID, id) }
	return settleIn(tx, now, owned, videoID, e.settleVideo)
}

// Video returns one video of a project of the caller's company.
func (e *Videos) Video(ctx context.Context, c sim.Caller, projectID, videoID string) (sim.Video, error) {
	now := e.clock.Now()
	v, err := in(ctx, e.store.View, func(tx sim.Tx) (sim.Video, error) { return ownedVideo(tx, c, projectID, videoID) })
	if err != nil || !statemachine.VideoDue(v, now) {
		return v, err
	}
	return in(ctx, e.update, func(tx sim.Tx) (sim.Video, error) { return e.settledVideo(tx, c, projectID, videoID, now) })
}

// UpdateVideo applies a video update. A status written by the client stops
// the automatic lifecycle of the video.
func (e *Videos) UpdateVideo(ctx context.Context, c sim.Caller, projectID, videoID string, u sim.VideoUpdate) (sim.Video, error) {
	return in(ctx, e.update, func(tx sim.Tx) (sim.Video, error) {
		now := e.clock.Now()
		v, err := e.settledVideo(tx, c, projectID, videoID, now)
		if err != nil {
			return v, err
		}
		langs := v.DstLangs
		if u.HasDstLangs {
			langs = u.DstLangs
		}
		known := func(k string) bool { return slices.Contains(langs, k) }
		if u.HasGuidance && u.Guidance != nil {
			for _, k := range slices.Sorted(maps.Keys(u.Guidance.ByLang)) {
				if !known(k) {
					return v, sim.Errorf(sim.CodeValidation, sim.MsgGuidanceLanguage, k, strings.Join(langs, ", "))
				}
			}
		}
		if u.HasDstLangs && !u.HasGuidance && v.Guidance != nil {
			if stale := slices.DeleteFunc(slices.Sorted(maps.Keys(v.Guidance.ByLang)), known); len(stale) > 0 {
				return v, sim.Errorf(sim.CodeValidation, sim.MsgGuidanceStale, strings.Join(stale, ", "))
			}
		}
		if u.Name != nil {
			v.Name = *u.Name
		}
		if u.HasDstLangs {
			v.DstLangs = u.DstLangs
		}
		if u.ProcessingType != nil {
			v.ProcessingType = *u.ProcessingType
		}
		if u.Status != nil {
			v.Status = *u.Status
			v.DueAt = time.Time{}
		}
		if u.Remark != nil {
			v.Remark = new(*u.Remark)
		}
		if u.ClearRemark {
			v.Remark = nil
		}
		if u.HasStringVariables {
			v.StringVariables = u.StringVariables
		}
		if u.HasGuidance {
			v.Guidance = u.Guidance
		}
		v.UpdatedAt = now
		return v, tx.Videos().Put(v)
	})
}

// SetVideoStatus moves a video to a status at once, from the control API;
// with auto, the automatic lifecycle continues from there.
func (e *Videos) SetVideoStatus(ctx context.Context, id, status string, auto bool) (sim.Video, error) {
	if !slices.Contains(sim.VideoStatuses, status) {
		return sim.Video{}, sim.Errorf(sim.CodeValidation, sim.MsgVideoStatus, strings.Join(sim.VideoStatuses, ", "), status)
	}
	return in(ctx, e.update, func(tx sim.Tx) (sim.Video, error) {
		v, err := get(tx.Videos().Get, id, nil, func() error { return sim.Errorf(sim.CodeNotFound, sim.MsgVideoNotFound, id) })
		if err != nil {
			return v, err
		}
		now := e.clock.Now()
		v.Status, v.UpdatedAt, v.DueAt = status, now, time.Time{}
		if auto {
			v.DueAt = statemachine.VideoDueAfter(v, status, now, e.timing)
		}
		return v, tx.Videos().Put(v)
	})
}
