package engine

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// State returns a page of the dump, projects newest first (ties in id
// order), with every due transition applied first. Its memory follows the
// page, not the store: projects are ordered on their heads, only the page's
// and the first MaxStateList accounts and pending transitions are kept,
// then the page's bodies are read.
func (e *Data) State(ctx context.Context, f sim.StateFilter) (sim.State, error) {
	after, err := parseStateCursor(f.Cursor)
	if err != nil {
		return sim.State{}, err
	}
	if _, err := e.sweeper.sweep(ctx, e.clock.Now()); err != nil {
		return sim.State{}, err
	}
	now := e.clock.Now()
	limit := f.Limit
	if limit <= 0 {
		limit = sim.DefaultStateLimit
	}
	limit = min(limit, sim.MaxStateLimit)
	st := sim.State{Now: now.UTC().Format("2006-01-02T15:04:05.000Z"), TimeScale: e.clock.Scale(), Frozen: e.frozenNow(),
		Accounts: []sim.Account{}, Projects: []sim.ProjectState{}, PendingTransitions: []sim.Transition{}}
	fx := e.fixtures.get()
	st.Fixtures = map[string]int{"accounts": len(fx.Accounts), "source_langs": len(fx.Catalog.SourceLangs),
		"target_langs": len(fx.Catalog.TargetLangs), "media_rules": len(fx.MediaRules)}
	for _, vs := range fx.Catalog.Voices {
		st.Fixtures["voices"] += len(vs)
	}
	accounts := newFirstN(sim.MaxStateList, func(a, b sim.Account) bool { return a.APIKey < b.APIKey })
	pending := newFirstN(sim.MaxStateList, pendingBefore)
	page := newFirstN(limit+1, func(a, b stateKey) bool { return a.before(b) })
	err = e.store.View(ctx, func(tx sim.Tx) error {
		if err := tx.Accounts().ForEach(func(a sim.Account) error {
			if f.APIKey == "" || a.APIKey == f.APIKey {
				accounts.add(a)
			}
			return nil
		}); err != nil {
			return err
		}
		seq := 0
		if err := tx.ForEachProjectHead(func(p sim.Project) error {
			if f.APIKey != "" && p.APIKey != f.APIKey {
				return nil
			}
			k := stateKey{created: p.CreatedAt, id: p.ID}
			if !p.DueAt.IsZero() {
				pending.add(pendingEntry{tr: projectTransition(p), key: k, seq: seq})
				seq++
			}
			if after == nil || after.before(k) {
				page.add(k)
			}
			return nil
		}); err != nil {
			return err
		}
		keys := page.sorted()
		if len(keys) > limit {
			keys = keys[:limit]
			st.Truncated = true
			st.NextCursor = keys[limit-1].cursor()
		}
		for _, k := range keys {
			full, err := tx.Project(k.id)
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
		return studioState(tx, &st, pending)
	})
	st.Accounts = append(st.Accounts, accounts.sorted()...)
	for _, p := range pending.sorted() {
		st.PendingTransitions = append(st.PendingTransitions, p.tr)
	}
	if accounts.total > len(st.Accounts) {
		st.AccountsTotal, st.Truncated = accounts.total, true
	}
	if pending.total > len(st.PendingTransitions) {
		st.PendingTransitionsTotal, st.Truncated = pending.total, true
	}
	return st, err
}

// stateKey is a project's place in the dump: newest first, then by id.
type stateKey struct {
	created time.Time
	id      string
}

func (a stateKey) before(b stateKey) bool {
	return cmp.Or(b.created.Compare(a.created), strings.Compare(a.id, b.id)) < 0
}

// cursor is the next_cursor of a page that ends with a.
func (a stateKey) cursor() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(a.created.UnixNano(), 10) + "." + a.id))
}

func parseStateCursor(c string) (*stateKey, error) {
	if c == "" {
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(c)
	nanos, id, ok := strings.Cut(string(raw), ".")
	n, perr := strconv.ParseInt(nanos, 10, 64)
	if err != nil || !ok || perr != nil || id == "" {
		return nil, sim.Errorf(sim.CodeValidation, sim.MsgStateCursor, c)
	}
	return &stateKey{created: time.Unix(0, n), id: id}, nil
}

// pendingEntry is a pending transition with its place among those of the
// same time: projects first (in dump order), then videos, then artifacts,
// each in store order.
type pendingEntry struct {
	tr   sim.Transition
	kind int // 0 project, 1 video, 2 artifact
	key  stateKey
	seq  int
}

func pendingBefore(a, b pendingEntry) bool {
	switch {
	case !a.tr.DueAt.Equal(b.tr.DueAt):
		return a.tr.DueAt.Before(b.tr.DueAt)
	case a.kind != b.kind:
		return a.kind < b.kind
	case a.kind == 0:
		return a.key.before(b.key)
	}
	return a.seq < b.seq
}

// firstN keeps the n first items by less of those added, and counts them
// all: it trims to n whenever it holds 2n, so its memory is 2n items
// whatever is added. less must be a total order.
type firstN[T any] struct {
	n     int
	less  func(a, b T) bool
	items []T
	total int
}

func newFirstN[T any](n int, less func(a, b T) bool) *firstN[T] {
	return &firstN[T]{n: n, less: less}
}

func (f *firstN[T]) add(x T) {
	f.total++
	f.items = append(f.items, x)
	if len(f.items) >= 2*f.n {
		f.sorted()
	}
}

func (f *firstN[T]) sorted() []T {
	slices.SortFunc(f.items, func(a, b T) int {
		switch {
		case f.less(a, b):
			return -1
		case f.less(b, a):
			return 1
		}
		return 0
	})
	f.items = f.items[:min(len(f.items), f.n)]
	return f.items
}

func projectState(p sim.Project) sim.ProjectState {
	ps := sim.ProjectState{ID: p.ID, APIKey: p.APIKey, Name: p.Name, Status: string(p.Status), SourceVideoURL: p.SourceVideoURL,
		SourceLang: p.SourceLang, TargetLang: p.TargetLang, DurationMS: p.DurationMS, DurationSource: p.DurationSource,
		CostMinutes: p.CostMinutes, Refunded: p.Refunded, CreatedAt: p.CreatedAt, ErrorMessage: p.ErrorMessage,
		TranslationsCount: p.TranslationsCount, OutputGeneration: p.OutputGen, RetranslationRun: p.Pending != nil, History: p.History}
	if !p.DueAt.IsZero() {
		ps.DueAt = new(p.DueAt)
		ps.PlannedOutcome, ps.PlannedError = p.PlannedOutcome()
	}
	if !p.CompletedAt.IsZero() {
		ps.CompletedAt = new(p.CompletedAt)
	}
	return ps
}

// studioState adds the studio counts and pending studio transitions.
func studioState(tx sim.Tx, st *sim.State, pending *firstN[pendingEntry]) error {
	n := map[string]int{}
	st.Studio = n
	seq := 0
	due := func(kind int, tr sim.Transition) {
		if !tr.DueAt.IsZero() {
			pending.add(pendingEntry{tr: tr, kind: kind, seq: seq})
			seq++
		}
	}
	return errors.Join(
		tx.Companies().ForEach(func(sim.Company) error { n["companies"]++; return nil }),
		tx.Users().ForEach(func(sim.User) error { n["users"]++; return nil }),
		tx.Glossaries().ForEach(func(sim.Glossary) error { n["glossaries"]++; return nil }),
		tx.Folders().ForEach(func(sim.Folder) error { n["folders"]++; return nil }),
		tx.ForEachStudioProject("", func(sim.StudioProject) error { n["studio_projects"]++; return nil }),
		tx.Uploads().ForEach(func(sim.Upload) error { n["uploads"]++; return nil }),
		tx.ForEachVideo("", func(v sim.Video) error {
			n["videos"]++
			due(1, videoTransition(v))
			return nil
		}),
		tx.Artifacts().ForEach(func(a sim.Artifact) error {
			n["artifacts"]++
			due(2, artifactTransition(a))
			return nil
		}),
	)
}

// StudioDump returns the studio records f selects, with every due
// transition applied first. Each list keeps its first sim.MaxStateList
// records (in id order); a cut list sets Truncated and its count in Totals.
func (e *Data) StudioDump(ctx context.Context, f sim.StudioFilter) (sim.StudioDump, error) {
	if _, err := e.sweeper.sweep(ctx, e.clock.Now()); err != nil {
		return sim.StudioDump{}, err
	}
	d := &sim.StudioDump{Companies: []sim.Company{}, Users: []sim.User{}, Folders: []sim.Folder{},
		Glossaries: []sim.Glossary{}, Projects: []sim.StudioProject{}, Videos: []sim.Video{}, Artifacts: []sim.Artifact{}}
	err := e.store.View(ctx, func(tx sim.Tx) error {
		company := f.CompanyID
		if f.ProjectID != "" {
			p, err := get(tx.StudioProjects().Get, f.ProjectID, func(p sim.StudioProject) bool { return company == "" || p.CompanyID == company },
				func() error { return sim.Errorf(sim.CodeNotFound, sim.MsgStudioProjectNotFound, f.ProjectID) })
			if err != nil {
				return err
			}
			company = p.CompanyID
		}
		in := func(c string) bool { return company == "" || c == company }
		steps := []error{
			tx.Companies().ForEach(keepIf(d, "companies", &d.Companies, func(c sim.Company) bool { return in(c.ID) })),
			tx.Users().ForEach(keepIf(d, "users", &d.Users, func(u sim.User) bool { return in(u.CompanyID) })),
			tx.Folders().ForEach(keepIf(d, "folders", &d.Folders, func(fo sim.Folder) bool { return in(fo.CompanyID) })),
			tx.Glossaries().ForEach(keepIf(d, "glossaries", &d.Glossaries, func(g sim.Glossary) bool { return in(g.CompanyID) })),
			tx.ForEachStudioProject(company, keepIf(d, "projects", &d.Projects, func(p sim.StudioProject) bool {
				return f.ProjectID == "" || p.ID == f.ProjectID
			})),
			tx.ForEachVideo(f.ProjectID, keepIf(d, "videos", &d.Videos, func(v sim.Video) bool { return in(v.CompanyID) })),
		}
		if f.ProjectID == "" {
			steps = append(steps, tx.Artifacts().ForEach(keepIf(d, "artifacts", &d.Artifacts, func(a sim.Artifact) bool { return in(a.CompanyID) })))
		}
		return errors.Join(steps...)
	})
	return *d, err
}

// keepIf is a ForEach callback that keeps the records ok selects.
func keepIf[T any](d *sim.StudioDump, name string, list *[]T, ok func(T) bool) func(T) error {
	return func(x T) error {
		if ok(x) {
			*list = keep(d, name, *list, x)
		}
		return nil
	}
}

// keep appends x to list while it holds fewer than sim.MaxStateList
// records, and counts it in d's totals either way.
func keep[T any](d *sim.StudioDump, name string, list []T, x T) []T {
	if len(list) < sim.MaxStateList {
		return append(list, x)
	}
	if d.Totals == nil {
		d.Totals = map[string]int{}
	}
	if d.Totals[name] == 0 {
		d.Totals[name] = len(list)
	}
	d.Totals[name]++
	d.Truncated = true
	return list
}
