package engine

import (
	"context"
	"errors"
	"sort"

	"github.com/dubsim/dubsim/sim"
)

// State returns the dump, projects newest first.
func (e *Data) State(ctx context.Context, f sim.StateFilter) (sim.State, error) {
	if _, err := e.tick(ctx); err != nil { // show settled state: every due transition applied
		return sim.State{}, err
	}
	now := e.clock.Now()
	limit := f.Limit
	if limit <= 0 {
		limit = 1000
	}
	st := sim.State{Now: now.UTC().Format("2006-01-02T15:04:05.000Z"), TimeScale: e.clock.Scale(), Frozen: e.frozenNow(),
		Accounts: []sim.Account{}, Projects: []sim.ProjectState{}, PendingTransitions: []sim.Transition{}}
	fx := e.fixtureSet()
	st.Fixtures = map[string]int{"accounts": len(fx.Accounts), "source_langs": len(fx.Catalog.SourceLangs),
		"target_langs": len(fx.Catalog.TargetLangs), "media_rules": len(fx.MediaRules)}
	for _, vs := range fx.Catalog.Voices {
		st.Fixtures["voices"] += len(vs)
	}
	err := e.store.View(ctx, func(tx sim.Tx) error {
		if err := tx.ForEachAccount(func(a sim.Account) error {
			if f.APIKey == "" || a.APIKey == f.APIKey {
				st.Accounts = append(st.Accounts, a)
			}
			return nil
		}); err != nil {
			return err
		}
		// Filter and order on the project heads; read the bodies (history)
		// of the projects shown only.
		var heads []sim.Project
		if err := tx.ForEachProjectHead(func(p sim.Project) error {
			if f.APIKey != "" && p.APIKey != f.APIKey {
				return nil
			}
			heads = append(heads, p)
			return nil
		}); err != nil {
			return err
		}
		sort.SliceStable(heads, func(i, j int) bool { return heads[i].CreatedAt.After(heads[j].CreatedAt) })
		for i, p := range heads {
			if !p.DueAt.IsZero() {
				st.PendingTransitions = append(st.PendingTransitions, projectTransition(p))
			}
			if i >= limit {
				st.Truncated = true
				continue
			}
			full, err := tx.Project(p.ID)
			if err != nil {
				return err
			}
			st.Projects = append(st.Projects, projectState(full))
		}
		rules, err := loadOutcomeRules(tx)
		if err != nil {
			return err
		}
		st.OutcomeRules = append([]sim.OutcomeRule{}, rules...)
		st.IdempotencyKeys = tx.CountIdempotency()
		return studioState(tx, &st)
	})
	sort.SliceStable(st.PendingTransitions, func(i, j int) bool { return st.PendingTransitions[i].DueAt.Before(st.PendingTransitions[j].DueAt) })
	sort.Slice(st.Accounts, func(i, j int) bool { return st.Accounts[i].APIKey < st.Accounts[j].APIKey })
	return st, err
}

// projectState is a project as the state dump shows it.
func projectState(p sim.Project) sim.ProjectState {
	ps := sim.ProjectState{ID: p.ID, APIKey: p.APIKey, Name: p.Name, Status: string(p.Status), SourceVideoURL: p.SourceVideoURL,
		SourceLang: p.SourceLang, TargetLang: p.TargetLang, DurationMS: p.DurationMS, DurationSource: p.DurationSource,
		CostMinutes: p.CostMinutes, Refunded: p.Refunded, CreatedAt: p.CreatedAt, ErrorMessage: p.ErrorMessage,
		TranslationsCount: p.TranslationsCount, OutputGeneration: p.OutputGen, RetranslationRun: p.Pending != nil, History: p.History}
	if !p.DueAt.IsZero() {
		d := p.DueAt
		ps.DueAt = &d
		ps.PlannedOutcome, ps.PlannedError = p.PlannedOutcome()
	}
	if !p.CompletedAt.IsZero() {
		c := p.CompletedAt
		ps.CompletedAt = &c
	}
	return ps
}

// studioState adds the studio counts and pending studio transitions.
func studioState(tx sim.Tx, st *sim.State) error {
	st.Studio = map[string]int{}
	count := func(name string) func() { return func() { st.Studio[name]++ } }
	steps := []error{
		tx.ForEachCompany(func(sim.Company) error { count("companies")(); return nil }),
		tx.ForEachUser(func(sim.User) error { count("users")(); return nil }),
		tx.ForEachGlossary(func(sim.Glossary) error { count("glossaries")(); return nil }),
		tx.ForEachFolder(func(sim.Folder) error { count("folders")(); return nil }),
		tx.ForEachStudioProject("", func(sim.StudioProject) error { count("studio_projects")(); return nil }),
		tx.ForEachUpload(func(sim.Upload) error { count("uploads")(); return nil }),
		tx.ForEachVideo("", func(v sim.Video) error {
			count("videos")()
			if !v.DueAt.IsZero() {
				st.PendingTransitions = append(st.PendingTransitions, videoTransition(v))
			}
			return nil
		}),
		tx.ForEachArtifact(func(a sim.Artifact) error {
			count("artifacts")()
			if !a.DueAt.IsZero() {
				st.PendingTransitions = append(st.PendingTransitions, artifactTransition(a))
			}
			return nil
		}),
	}
	return errors.Join(steps...)
}

// StudioDump returns the studio records f selects, with every due
// transition applied first (as the state dump does). A ProjectID that names
// no studio project is a not-found error.
func (e *Data) StudioDump(ctx context.Context, f sim.StudioFilter) (sim.StudioDump, error) {
	if _, err := e.tick(ctx); err != nil {
		return sim.StudioDump{}, err
	}
	d := sim.StudioDump{Companies: []sim.Company{}, Users: []sim.User{}, Folders: []sim.Folder{},
		Glossaries: []sim.Glossary{}, Projects: []sim.StudioProject{}, Videos: []sim.Video{}, Artifacts: []sim.Artifact{}}
	err := e.store.View(ctx, func(tx sim.Tx) error {
		company := f.CompanyID
		if f.ProjectID != "" {
			p, err := tx.StudioProject(f.ProjectID)
			if errors.Is(err, sim.ErrNotFound) || (err == nil && company != "" && p.CompanyID != company) {
				return sim.Errorf(sim.CodeNotFound, sim.MsgStudioProjectNotFound, f.ProjectID)
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
