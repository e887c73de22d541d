package engine

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
)

// Data is the simulator's data set as a whole: the fixtures in use, reset,
// the state dumps and the write generation.
type Data struct {
	*core
	fixtures *fixtureSet
	accounts *Accounts
	sweeper  *sweeper
	blobs    Blobs
}

// fixtureSet is the fixture set in use, read by the services whose rules
// follow it (accounts' plans, the catalogue of voices and options), set by
// Data.
type fixtureSet struct {
	cur atomic.Pointer[sim.Fixtures]
	// files is the file set the startup fixtures were loaded from; loaded
	// the file set of the fixtures in use once fixtures were loaded at run
	// time (nil: files); mu serialises those loads.
	files  fs.FS
	mu     sync.Mutex
	loaded fs.FS
}

func (f *fixtureSet) get() *sim.Fixtures { return f.cur.Load() }

// catalog is the options and voices in use.
func (f *fixtureSet) catalog() *sim.Catalog { return f.get().Catalog }

// Fixtures returns the fixture set in use.
func (e *Data) Fixtures() *sim.Fixtures { return e.fixtures.get() }

// Catalog returns the options and voices in use.
func (e *Data) Catalog() *sim.Catalog { return e.fixtures.catalog() }

// Generation changes after every committed write transaction: a value read
// before a read of the store still equals it afterwards only if no write
// committed in between (the rule of the engine's caches and of the platform
// API's rendered answers).
func (e *Data) Generation() uint64 { return e.writes.Load() }

// Changes is Generation without the periodic clock saves (Clock.SaveClock):
// it changes when a reader of the data or of the clock (a write, a sweep
// that applied transitions, a clock advance, freeze, resume or scale) could
// see something new. The dashboard's event stream follows it.
func (e *Data) Changes() uint64 { return e.changes.Load() }

// Reset deletes every project, account and idempotency record and restores
// the fixture accounts. The clock and id sequences carry on.
func (e *Data) Reset(ctx context.Context) error {
	return e.update(ctx, func(tx sim.Tx) error {
		if err := tx.ResetData(); err != nil {
			return err
		}
		// Forced-outcome rules are test set-up, like the data they name.
		if err := saveOutcomeRules(tx, nil); err != nil {
			return err
		}
		if e.blobs != nil {
			if err := e.blobs.Clear(); err != nil {
				return err
			}
		}
		now := e.clock.Now()
		if err := e.seedStudio(tx, now); err != nil {
			return err
		}
		for _, spec := range e.fixtures.get().Accounts {
			if err := tx.PutAccount(accountFrom(spec, now, true)); err != nil {
				return err
			}
		}
		return nil
	})
}

// seedStudio stores the fixture studio data (companies, users, glossaries,
// folders, projects, videos); records already stored keep their state.
func (e *Data) seedStudio(tx sim.Tx, now time.Time) error {
	st := e.fixtures.get().Studio
	if st == nil {
		return nil
	}
	seed := st.Materialize(now)
	for _, c := range seed.Companies {
		if err := putIfMissing(tx.Company, tx.PutCompany, c.ID, c); err != nil {
			return err
		}
	}
	for _, u := range seed.Users {
		if err := putIfMissing(tx.User, tx.PutUser, u.ID, u); err != nil {
			return err
		}
	}
	for _, g := range seed.Glossaries {
		if err := putIfMissing(tx.Glossary, tx.PutGlossary, g.ID, g); err != nil {
			return err
		}
	}
	for _, f := range seed.Folders {
		if err := putIfMissing(tx.Folder, tx.PutFolder, f.ID, f); err != nil {
			return err
		}
	}
	for _, p := range seed.Projects {
		if err := putIfMissing(tx.StudioProject, tx.PutStudioProject, p.ID, p); err != nil {
			return err
		}
	}
	for _, v := range seed.Videos {
		if err := putIfMissing(tx.Video, tx.PutVideo, v.ID, v); err != nil {
			return err
		}
	}
	return nil
}

func putIfMissing[T any](get func(string) (T, error), put func(T) error, id string, v T) error {
	if _, err := get(id); err == nil {
		return nil
	} else if !errors.Is(err, sim.ErrNotFound) {
		return err
	}
	return put(v)
}

// SetFixtures replaces the fixture set in use: catalogue and media rules
// take effect at once; the set's accounts are created, or reset to their
// fixture state when they exist.
func (e *Data) SetFixtures(ctx context.Context, fx *sim.Fixtures) error {
	fx = ownFixtures(e.accounts.apiKeys, fx)
	return e.update(ctx, func(tx sim.Tx) error {
		now := e.clock.Now()
		prev := e.fixtures.get()
		e.fixtures.cur.Store(fx)
		// Studio records of the new set are added (existing ones keep their
		// state), before the accounts that name its users.
		if err := e.seedStudio(tx, now); err != nil {
			e.fixtures.cur.Store(prev)
			return err
		}
		for _, spec := range fx.Accounts {
			if err := tx.PutAccount(accountFrom(spec, now, true)); err != nil {
				e.fixtures.cur.Store(prev)
				return err
			}
		}
		if err := e.accounts.ensureUsers(tx, now); err != nil {
			e.fixtures.cur.Store(prev)
			return err
		}
		return nil
	})
}

// LoadFixtureFiles lays fixture files (accounts.json, options.json,
// voices.json, media.json, studio.json; any subset, each in the shape of
// its file) over the fixture set in use, or over the startup set when
// fromStartup is true, entry by entry (fixtures.Merge: accounts by
// api_key, media rules by pattern, options and voices by key, studio
// records by id), and applies the result with SetFixtures. The merged set
// is the base of the next call; fromStartup with no files restores the
// startup set.
func (e *Data) LoadFixtureFiles(ctx context.Context, files map[string][]byte, fromStartup bool) (*sim.Fixtures, error) {
	if e.fixtures.files == nil {
		return nil, errors.New("engine: no fixture file set configured")
	}
	// One load at a time: each merges over the set the previous one left.
	e.fixtures.mu.Lock()
	defer e.fixtures.mu.Unlock()
	base := e.fixtures.loaded
	if base == nil || fromStartup {
		base = e.fixtures.files
	}
	merged, err := fixtures.Merge(base, files)
	if err != nil {
		return nil, sim.Errorf(sim.CodeValidation, "%v", err)
	}
	fx, err := fixtures.Load(merged)
	if err != nil {
		return nil, sim.Errorf(sim.CodeValidation, "%v", err)
	}
	if err := e.SetFixtures(ctx, fx); err != nil {
		return nil, err
	}
	e.fixtures.loaded = merged
	return fx, nil
}
