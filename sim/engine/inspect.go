package engine

import (
	"context"
	"errors"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// This file holds the read-only views of the control API and the dashboard:
// the studio dump and the next due transition.

// farFuture is later than any due time the clock can reach.
var farFuture = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// StudioDump returns the studio records f selects, with every due
// transition applied first (as the state dump does). A ProjectID that names
// no studio project is a not-found error.
func (e *Engine) StudioDump(ctx context.Context, f sim.StudioFilter) (sim.StudioDump, error) {
	if _, err := e.Tick(ctx); err != nil {
		return sim.StudioDump{}, err
	}
	d := sim.StudioDump{Companies: []sim.Company{}, Users: []sim.User{}, Folders: []sim.Folder{},
		Glossaries: []sim.Glossary{}, Projects: []sim.StudioProject{}, Videos: []sim.Video{}, Artifacts: []sim.Artifact{}}
	err := e.store.View(ctx, func(tx sim.Tx) error {
		company := f.CompanyID
		if f.ProjectID != "" {
			p, err := tx.StudioProject(f.ProjectID)
			if errors.Is(err, sim.ErrNotFound) || (err == nil && company != "" && p.CompanyID != company) {
				return sim.Errorf(sim.CodeNotFound, "Studio project %s not found", f.ProjectID)
			}
			if err != nil {
				return err
			}
			company = p.CompanyID
		}
		in := func(c string) bool { return company == "" || c == company }
		steps := []error{
			tx.ForEachCompany(func(c sim.Company) error {
				if in(c.ID) {
					d.Companies = append(d.Companies, c)
				}
				return nil
			}),
			tx.ForEachUser(func(u sim.User) error {
				if in(u.CompanyID) {
					d.Users = append(d.Users, u)
				}
				return nil
			}),
			tx.ForEachFolder(func(fo sim.Folder) error {
				if in(fo.CompanyID) {
					d.Folders = append(d.Folders, fo)
				}
				return nil
			}),
			tx.ForEachGlossary(func(g sim.Glossary) error {
				if in(g.CompanyID) {
					d.Glossaries = append(d.Glossaries, g)
				}
				return nil
			}),
			tx.ForEachStudioProject(company, func(p sim.StudioProject) error {
				if f.ProjectID == "" || p.ID == f.ProjectID {
					d.Projects = append(d.Projects, p)
				}
				return nil
			}),
			tx.ForEachVideo(f.ProjectID, func(v sim.Video) error {
				if in(v.CompanyID) {
					d.Videos = append(d.Videos, v)
				}
				return nil
			}),
		}
		if f.ProjectID == "" {
			steps = append(steps, tx.ForEachArtifact(func(a sim.Artifact) error {
				if in(a.CompanyID) {
					d.Artifacts = append(d.Artifacts, a)
				}
				return nil
			}))
		}
		return errors.Join(steps...)
	})
	return d, err
}

// NextDue returns the earliest pending transition of any resource (project,
// video or artifact); false when nothing is due, ever.
//
// Downloads in flight decide when their artifacts complete, so NextDue first
// waits for all of them (bounded; a *PendingError names what still runs).
func (e *Engine) NextDue(ctx context.Context) (sim.Transition, bool, error) {
	if pe := e.waitWork(ctx, farFuture, ""); pe != nil {
		pe.At = time.Time{}
		return sim.Transition{}, false, pe
	}
	var next sim.Transition
	found := false
	consider := func(t sim.Transition) {
		if !found || t.DueAt.Before(next.DueAt) {
			next, found = t, true
		}
	}
	err := e.store.View(ctx, func(tx sim.Tx) error {
		if ids, err := tx.DueProjects(farFuture, 1); err != nil {
			return err
		} else if len(ids) > 0 {
			p, err := tx.ProjectHead(ids[0])
			if err != nil {
				return err
			}
			consider(projectTransition(p))
		}
		if ids, err := tx.DueVideos(farFuture, 1); err != nil {
			return err
		} else if len(ids) > 0 {
			v, err := tx.Video(ids[0])
			if err != nil {
				return err
			}
			consider(videoTransition(v))
		}
		if ids, err := tx.DueArtifacts(farFuture, 1); err != nil {
			return err
		} else if len(ids) > 0 {
			a, err := tx.Artifact(ids[0])
			if err != nil {
				return err
			}
			consider(artifactTransition(a))
		}
		return nil
	})
	return next, found, err
}

// projectTransition, videoTransition and artifactTransition describe the
// pending transition of a resource whose DueAt is set, for the state dump
// and NextDue.
func projectTransition(p sim.Project) sim.Transition {
	to := sim.StatusReady
	if p.Outcome.Error {
		to = sim.StatusError
	}
	return sim.Transition{Resource: "project", ID: p.ID, From: string(p.Status), To: string(to), DueAt: p.DueAt}
}

func videoTransition(v sim.Video) sim.Transition {
	to := sim.VideoInProgress
	if v.Status == sim.VideoInProgress {
		to = sim.VideoCompleted
	}
	return sim.Transition{Resource: "video", ID: v.ID, From: v.Status, To: to, DueAt: v.DueAt}
}

func artifactTransition(a sim.Artifact) sim.Transition {
	to := sim.ArtifactStarted
	if a.Status == sim.ArtifactStarted {
		to = sim.ArtifactCompleted
		if a.Result.Fail != "" {
			to = sim.ArtifactFailed
		}
	}
	return sim.Transition{Resource: "artifact", ID: a.ID, From: a.Status, To: to, DueAt: a.DueAt}
}
