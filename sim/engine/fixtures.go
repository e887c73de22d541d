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
// follow it, set by Data.
type fixtureSet struct {
	cur    atomic.Pointer[sim.Fixtures]
	files  fs.FS      // of the startup fixtures
	mu     sync.Mutex // serialises the loads at run time
	loaded fs.FS      // of the fixtures loaded at run time (nil: files)
}

func (f *fixtureSet) get() *sim.Fixtures { return f.cur.Load() }

func (f *fixtureSet) catalog() *sim.Catalog { return f.get().Catalog }

// Fixtures returns the fixture set in use.
func (e *Data) Fixtures() *sim.Fixtures { return e.fixtures.get() }

// Catalog returns the options and voices in use.
func (e *Data) Catalog() *sim.Catalog { return e.fixtures.catalog() }

// Generation changes after every committed write transaction: a value read
// before a read of the store still equals it afterwards only if no write
// committed in between.
func (e *Data) Generation() uint64 { return e.writes.Load() }

// Changes is Generation without the periodic clock saves: it changes when a
// reader of the data or of the clock could see something new.
func (e *Data) Changes() uint64 { return e.changes.Load() }

// Reset deletes every project, account and idempotency record and restores
// the fixture accounts. The clock and id sequences carry on.
func (e *Data) Reset(ctx context.Context) error {
	return e.update(ctx, func(tx sim.Tx) error {
		if err := tx.ResetData(); err != nil {
			return err
		}
		if err := saveOutcomeRules(tx, nil); err != nil { // test set-up, like the data they name
			return err
		}
		if e.blobs != nil {
			if err := e.blobs.Clear(); err != nil {
				return err
			}
		}
		return e.seed(tx, e.clock.Now(), false)
	})
}

// seed stores the fixture set's studio records (records already stored keep
// their state), then its accounts: anew, or with keep only those missing.
func (e *Data) seed(tx sim.Tx, now time.Time, keep bool) error {
	fx := e.fixtures.get()
	seed := fx.Studio.Materialize(now)
	accounts := make([]sim.Account, 0, len(fx.Accounts))
	for _, spec := range fx.Accounts {
		accounts = append(accounts, accountFrom(spec, now, true))
	}
	return errors.Join(
		putEach(tx.Companies(), true, func(c sim.Company) string { return c.ID }, seed.Companies),
		putEach(tx.Users(), true, func(u sim.User) string { return u.ID }, seed.Users),
		putEach(tx.Glossaries(), true, func(g sim.Glossary) string { return g.ID }, seed.Glossaries),
		putEach(tx.Folders(), true, func(f sim.Folder) string { return f.ID }, seed.Folders),
		putEach(tx.StudioProjects(), true, func(p sim.StudioProject) string { return p.ID }, seed.Projects),
		putEach(tx.Videos(), true, func(v sim.Video) string { return v.ID }, seed.Videos),
		putEach(tx.Accounts(), keep, func(a sim.Account) string { return a.APIKey }, accounts))
}

// putEach puts every record of vs into r; with keep, not those r holds.
func putEach[T any](r sim.Records[T], keep bool, key func(T) string, vs []T) error {
	for _, v := range vs {
		if keep {
			if _, err := r.Get(key(v)); err == nil {
				continue
			} else if !errors.Is(err, sim.ErrNotFound) {
				return err
			}
		}
		if err := r.Put(v); err != nil {
			return err
		}
	}
	return nil
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
		err := e.seed(tx, now, false)
		if err == nil {
			err = e.accounts.ensureUsers(tx, now)
		}
		if err != nil {
			e.fixtures.cur.Store(prev)
		}
		return err
	})
}

// LoadFixtureFiles lays fixture files (any subset, each in the shape of its
// file) over the fixture set in use, or over the startup set when
// fromStartup is true, entry by entry (fixtures.Merge), and applies the
// result with SetFixtures. fromStartup with no files restores the startup
// set.
func (e *Data) LoadFixtureFiles(ctx context.Context, files map[string][]byte, fromStartup bool) (*sim.Fixtures, error) {
	if e.fixtures.files == nil {
		return nil, errors.New("engine: no fixture file set configured")
	}
	e.fixtures.mu.Lock() // each load merges over the set the previous one left
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
