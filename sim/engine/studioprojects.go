package engine

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/gencache"
)

// StudioProjects are the studio's projects, which hold videos, cached by id.
type StudioProjects struct {
	*core
	ids   *idgen
	cache gencache.Cache[sim.StudioProject]
}

func ownedStudioProject(tx sim.Tx, c sim.Caller, id string) (sim.StudioProject, error) {
	p, err := tx.StudioProjects().Get(id)
	if errors.Is(err, sim.ErrNotFound) {
		return p, studioMissing()
	}
	if err == nil && p.CompanyID != c.Company.ID {
		return p, sim.Errorf(sim.CodeAccessDenied, sim.MsgStudioDenied)
	}
	return p, err
}

// ListStudioProjects lists the caller's company's projects, newest first.
func (e *StudioProjects) ListStudioProjects(ctx context.Context, c sim.Caller) ([]sim.StudioProject, error) {
	out := []sim.StudioProject{}
	err := e.store.View(ctx, func(tx sim.Tx) error {
		return tx.ForEachStudioProject(c.Company.ID, func(p sim.StudioProject) error {
			out = append(out, p)
			return nil
		})
	})
	slices.SortStableFunc(out, func(a, b sim.StudioProject) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(b.ID, a.ID))
	})
	return out, err
}

// StudioProject returns a project of the caller's company.
func (e *StudioProjects) StudioProject(ctx context.Context, c sim.Caller, id string) (sim.StudioProject, error) {
	gen := e.writes.Load()
	if p, ok := e.cache.Get(id, gen); ok && p.CompanyID == c.Company.ID {
		return p, nil
	}
	p, err := in(ctx, e.store.View, func(tx sim.Tx) (sim.StudioProject, error) { return ownedStudioProject(tx, c, id) })
	if err == nil {
		e.cache.Put(id, p, gen)
	}
	return p, err
}

func applyProjectInput(tx sim.Tx, c sim.Caller, p *sim.StudioProject, in sim.StudioProjectInput) error {
	if in.Name != nil {
		p.Name = *in.Name
	}
	if in.ManagerEmail != nil {
		u, err := get(tx.UserByEmail, *in.ManagerEmail, nil, func() error { return sim.Errorf(sim.CodeValidation, sim.MsgManagerUnknown, *in.ManagerEmail) })
		if err != nil {
			return err
		}
		if u.CompanyID != c.Company.ID {
			return sim.Errorf(sim.CodeValidation, sim.MsgManagerOtherCompany, *in.ManagerEmail)
		}
		p.ManagerID = u.ID
	}
	for _, g := range []struct {
		field string
		in    *string
		dst   *string
		kind  sim.GlossaryKind
	}{
		{"translationsGlossaryId", in.TranslationsGlossaryID, &p.TranslationGlossary, sim.GlossaryTranslation},
		{"voicesGlossaryId", in.VoicesGlossaryID, &p.VoicesGlossary, sim.GlossaryVoices},
		{"pronunciationGlossaryId", in.PronunciationGlossaryID, &p.PronunciationGlossary, sim.GlossaryPronunciation},
	} {
		if g.in == nil {
			continue
		}
		if *g.in == "" {
			*g.dst = ""
			continue
		}
		gl, err := get(tx.Glossaries().Get, *g.in, nil, func() error { return sim.Errorf(sim.CodeValidation, sim.MsgGlossaryMissing, g.field, *g.in) })
		if err != nil {
			return err
		}
		if gl.CompanyID != c.Company.ID {
			return sim.Errorf(sim.CodeValidation, sim.MsgGlossaryOtherOrg, g.field, *g.in)
		}
		if gl.Kind != g.kind {
			return sim.Errorf(sim.CodeValidation, sim.MsgGlossaryKind, g.field, *g.in, gl.Kind, g.kind)
		}
		*g.dst = gl.ID
	}
	return nil
}

// CreateStudioProject creates a project in the caller's company.
func (e *StudioProjects) CreateStudioProject(ctx context.Context, c sim.Caller, input sim.StudioProjectInput, idem *sim.IdemWrite[sim.StudioProject]) (sim.StudioProject, error) {
	return in(ctx, e.batch, func(tx sim.Tx) (sim.StudioProject, error) {
		now := e.clock.Now()
		p := sim.StudioProject{CompanyID: c.Company.ID, Status: sim.StudioProjectStatusNew, ManagerID: c.User.ID,
			CreatedBy: c.User.ID, CreatedAt: now, UpdatedAt: now}
		if err := applyProjectInput(tx, c, &p, input); err != nil {
			return p, err
		}
		id, err := e.ids.studioID(tx, now)
		if err != nil {
			return p, err
		}
		p.ID = id
		if err := tx.StudioProjects().Put(p); err != nil {
			return p, err
		}
		return p, saveIdem(tx, idem, p, now)
	})
}

// UpdateStudioProject changes a project of the caller's company.
func (e *StudioProjects) UpdateStudioProject(ctx context.Context, c sim.Caller, id string, input sim.StudioProjectInput) (sim.StudioProject, error) {
	return in(ctx, e.update, func(tx sim.Tx) (sim.StudioProject, error) {
		p, err := ownedStudioProject(tx, c, id)
		if err != nil {
			return p, err
		}
		if err := applyProjectInput(tx, c, &p, input); err != nil {
			return p, err
		}
		p.UpdatedAt = e.clock.Now()
		return p, tx.StudioProjects().Put(p)
	})
}
