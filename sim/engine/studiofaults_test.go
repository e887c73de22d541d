package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Store failures in the studio use cases: each is passed on, and the write
// it interrupted leaves nothing behind.

var errSPFault = errors.New("sp: injected store failure")

// spFault names the Tx method (or "<records>.<method>") that fails, and at which of its calls
// (1-based) in a transaction.
type spFault struct {
	method string
	call   int
}

// spFaultTx fails the named call of one method; every other call goes to
// the real transaction.
type spFaultTx struct {
	sim.Tx
	f     spFault
	calls map[string]int
}

func (t *spFaultTx) hit(method string) error {
	t.calls[method]++
	if method == t.f.method && t.calls[method] == t.f.call {
		return errSPFault
	}
	return nil
}

func (t *spFaultTx) NextSequence(name string) (uint64, error) {
	if err := t.hit("NextSequence"); err != nil {
		return 0, err
	}
	return t.Tx.NextSequence(name)
}

func (t *spFaultTx) UserByEmail(email string) (sim.User, error) {
	if err := t.hit("UserByEmail"); err != nil {
		return sim.User{}, err
	}
	return t.Tx.UserByEmail(email)
}

func (t *spFaultTx) DueVideos(now time.Time, limit int) ([]string, error) {
	if err := t.hit("DueVideos"); err != nil {
		return nil, err
	}
	return t.Tx.DueVideos(now, limit)
}

func (t *spFaultTx) DueArtifacts(now time.Time, limit int) ([]string, error) {
	if err := t.hit("DueArtifacts"); err != nil {
		return nil, err
	}
	return t.Tx.DueArtifacts(now, limit)
}

// faultRecords passes the calls of one kind of record through hit, named
// "<kind>.<method>" (for example "Companies.Put").
type faultRecords[T any] struct {
	sim.Records[T]
	t    *spFaultTx
	kind string
}

func (r faultRecords[T]) Get(id string) (T, error) {
	if err := r.t.hit(r.kind + ".Get"); err != nil {
		var zero T
		return zero, err
	}
	return r.Records.Get(id)
}

func (r faultRecords[T]) Put(v T) error {
	if err := r.t.hit(r.kind + ".Put"); err != nil {
		return err
	}
	return r.Records.Put(v)
}

func (r faultRecords[T]) ForEach(fn func(T) error) error {
	if err := r.t.hit(r.kind + ".ForEach"); err != nil {
		return err
	}
	return r.Records.ForEach(fn)
}

func (t *spFaultTx) Accounts() sim.Records[sim.Account] {
	return faultRecords[sim.Account]{t.Tx.Accounts(), t, "Accounts"}
}

func (t *spFaultTx) Companies() sim.Records[sim.Company] {
	return faultRecords[sim.Company]{t.Tx.Companies(), t, "Companies"}
}

func (t *spFaultTx) Users() sim.Records[sim.User] {
	return faultRecords[sim.User]{t.Tx.Users(), t, "Users"}
}

func (t *spFaultTx) Glossaries() sim.Records[sim.Glossary] {
	return faultRecords[sim.Glossary]{t.Tx.Glossaries(), t, "Glossaries"}
}

func (t *spFaultTx) Folders() sim.Records[sim.Folder] {
	return faultRecords[sim.Folder]{t.Tx.Folders(), t, "Folders"}
}

func (t *spFaultTx) StudioProjects() sim.Records[sim.StudioProject] {
	return faultRecords[sim.StudioProject]{t.Tx.StudioProjects(), t, "StudioProjects"}
}

func (t *spFaultTx) Videos() sim.Records[sim.Video] {
	return faultRecords[sim.Video]{t.Tx.Videos(), t, "Videos"}
}

func (t *spFaultTx) Artifacts() sim.Records[sim.Artifact] {
	return faultRecords[sim.Artifact]{t.Tx.Artifacts(), t, "Artifacts"}
}

// spFaultStore injects its fault, once set, into every write transaction
// (Update and Batch); reads pass through.
type spFaultStore struct {
	sim.Store
	mu sync.Mutex
	f  spFault
}

func (s *spFaultStore) set(f spFault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.f = f
}

func (s *spFaultStore) wrap(fn func(sim.Tx) error) func(sim.Tx) error {
	s.mu.Lock()
	f := s.f
	s.mu.Unlock()
	if f.method == "" {
		return fn
	}
	return func(tx sim.Tx) error { return fn(&spFaultTx{Tx: tx, f: f, calls: map[string]int{}}) }
}

func (s *spFaultStore) Update(ctx context.Context, fn func(sim.Tx) error) error {
	return s.Store.Update(ctx, s.wrap(fn))
}

func (s *spFaultStore) Batch(ctx context.Context, fn func(sim.Tx) error) error {
	return s.Store.Batch(ctx, s.wrap(fn))
}

// spSnapshot is every account and studio record, read straight from the
// store.
type spSnapshot struct {
	Accounts   []sim.Account
	Companies  []sim.Company
	Users      []sim.User
	Glossaries []sim.Glossary
	Folders    []sim.Folder
	Projects   []sim.StudioProject
	Videos     []sim.Video
	Artifacts  []sim.Artifact
}

func spSnap(t *testing.T, h *harness) spSnapshot {
	t.Helper()
	var s spSnapshot
	require.NoError(t, h.st.View(context.Background(), func(tx sim.Tx) error {
		return errors.Join(
			tx.Accounts().ForEach(func(a sim.Account) error { s.Accounts = append(s.Accounts, a); return nil }),
			tx.Companies().ForEach(func(c sim.Company) error { s.Companies = append(s.Companies, c); return nil }),
			tx.Users().ForEach(func(u sim.User) error { s.Users = append(s.Users, u); return nil }),
			tx.Glossaries().ForEach(func(g sim.Glossary) error { s.Glossaries = append(s.Glossaries, g); return nil }),
			tx.Folders().ForEach(func(f sim.Folder) error { s.Folders = append(s.Folders, f); return nil }),
			tx.ForEachStudioProject("", func(p sim.StudioProject) error { s.Projects = append(s.Projects, p); return nil }),
			tx.ForEachVideo("", func(v sim.Video) error { s.Videos = append(s.Videos, v); return nil }),
			tx.Artifacts().ForEach(func(a sim.Artifact) error { s.Artifacts = append(s.Artifacts, a); return nil }),
		)
	}))
	return s
}

func TestStudioStoreFailuresArePassedOn(t *testing.T) {
	t.Parallel()
	// The scene every case starts from: a completed source artifact, an
	// artifact and a video due but not yet moved, an artifact stuck (due,
	// unable to move), an account with no user.
	type scene struct {
		h        *harness
		fs       *spFaultStore
		alice    sim.Caller
		src      sim.Artifact
		dueArt   sim.Artifact
		dueVideo sim.Video
	}
	setup := func(t *testing.T) scene {
		var fs *spFaultStore
		fx, err := fixtures.Load(fixtures.FS)
		require.NoError(t, err)
		h := spOpen(t, fx, func(st sim.Store) sim.Store { fs = &spFaultStore{Store: st}; return fs })
		ctx := context.Background()
		alice := spCaller(t, h, spKeyAlice)
		src := spReadyArtifact(t, h, alice, sim.ArtifactVideo, spClipURL, spClipSecs*time.Second)
		v, err := h.e.Videos.CreateVideo(ctx, alice, spSummer, spNewVideo("Due", src.ID), nil)
		require.NoError(t, err)
		a := spArtifact(t, h, alice, sim.ArtifactAudio, spMusicURL)
		require.NoError(t, h.st.Update(ctx, func(tx sim.Tx) error {
			return errors.Join(
				tx.Artifacts().Put(sim.Artifact{ID: spUnknownID, CompanyID: spAcme, Type: sim.ArtifactVideo, Status: sim.ArtifactStarted,
					Pending: true, StartAt: t0, DoneAt: t0, DueAt: t0, CreatedAt: t0, UpdatedAt: t0}),
				tx.Accounts().Put(sim.Account{APIKey: "sp-orphan", Name: "Orphan", Plan: sim.PlanPro}),
			)
		}))
		h.clock.Advance(sim.DefaultStudioTiming.VideoStart) // both due, not swept
		return scene{h: h, fs: fs, alice: alice, src: src, dueArt: a, dueVideo: v}
	}
	inTx := func(s scene, fn func(tx sim.Tx) error) error { return s.fs.Update(context.Background(), fn) }
	newCompany := func(s scene) error {
		_, err := s.h.e.Accounts.CreateAccount(context.Background(), sim.AccountSpec{APIKey: "sp-new", Name: "New", Plan: sim.PlanPro})
		return err
	}
	newVideo := func(bg bool) func(s scene) error {
		return func(s scene) error {
			nv := spNewVideo("Clip", s.src.ID)
			if bg {
				nv.BackgroundArtifactID = s.dueArt.ID
			}
			_, err := s.h.e.Videos.CreateVideo(context.Background(), s.alice, spSummer, nv, nil)
			return err
		}
	}
	sweep := func(s scene) error {
		_, err := s.h.e.Clock.sweeper.sweep(context.Background(), s.h.e.Clock.Now())
		return err
	}
	cases := []struct {
		name  string
		fault spFault
		run   func(s scene) error
	}{
		{name: "account: the company id", fault: spFault{"NextSequence", 1}, run: newCompany},
		{name: "account: the user id", fault: spFault{"NextSequence", 2}, run: newCompany},
		{name: "account: storing the company", fault: spFault{"Companies.Put", 1}, run: newCompany},
		{name: "account: checking the email", fault: spFault{"UserByEmail", 1}, run: newCompany},
		{name: "account: storing the user", fault: spFault{"Users.Put", 1}, run: newCompany},
		{name: "account: reading the company joined", fault: spFault{"Companies.Get", 1}, run: func(s scene) error {
			_, err := s.h.e.Accounts.CreateAccount(context.Background(), sim.AccountSpec{APIKey: "sp-new", Plan: sim.PlanPro, CompanyID: spAcme})
			return err
		}},
		{name: "account: reading the user named", fault: spFault{"Users.Get", 1}, run: func(s scene) error {
			return inTx(s, func(tx sim.Tx) error {
				a := sim.Account{APIKey: "sp-new", UserID: spUserAlice}
				return s.h.e.Accounts.placeAccount(tx, &a, "", "", t0)
			})
		}},
		{name: "seed: companies", fault: spFault{"Companies.Get", 1}, run: func(s scene) error {
			return inTx(s, func(tx sim.Tx) error { return s.h.e.Data.seed(tx, t0, true) })
		}},
		{name: "seed: users", fault: spFault{"Users.Get", 2}, run: func(s scene) error {
			return inTx(s, func(tx sim.Tx) error { return s.h.e.Data.seed(tx, t0, true) })
		}},
		{name: "seed: glossaries", fault: spFault{"Glossaries.Get", 3}, run: func(s scene) error {
			return inTx(s, func(tx sim.Tx) error { return s.h.e.Data.seed(tx, t0, true) })
		}},
		{name: "seed: folders", fault: spFault{"Folders.Get", 1}, run: func(s scene) error {
			return inTx(s, func(tx sim.Tx) error { return s.h.e.Data.seed(tx, t0, true) })
		}},
		{name: "seed: projects", fault: spFault{"StudioProjects.Get", 6}, run: func(s scene) error {
			return inTx(s, func(tx sim.Tx) error { return s.h.e.Data.seed(tx, t0, true) })
		}},
		{name: "seed: videos", fault: spFault{"Videos.Get", 15}, run: func(s scene) error {
			return inTx(s, func(tx sim.Tx) error { return s.h.e.Data.seed(tx, t0, true) })
		}},
		{name: "start: listing the accounts", fault: spFault{"Accounts.ForEach", 1}, run: func(s scene) error { return s.h.e.Start(context.Background()) }},
		{name: "start: placing an orphan", fault: spFault{"NextSequence", 1}, run: func(s scene) error { return s.h.e.Start(context.Background()) }},
		{name: "start: storing an orphan", fault: spFault{"Accounts.Put", 1}, run: func(s scene) error {
			return inTx(s, func(tx sim.Tx) error { return s.h.e.Accounts.ensureUsers(tx, t0) })
		}},
		{name: "account studio settings", fault: spFault{"Accounts.Get", 1}, run: func(s scene) error {
			_, err := s.h.e.Accounts.SetAccountStudio(context.Background(), spKeyAlice, sim.AccountStudioChange{SetRateLimit: true, RateLimit: &sim.RateLimit{PerDay: 1}})
			return err
		}},
		{name: "project: its id", fault: spFault{"NextSequence", 1}, run: func(s scene) error {
			_, err := s.h.e.StudioProjects.CreateStudioProject(context.Background(), s.alice, sim.StudioProjectInput{Name: ptr("X")}, nil)
			return err
		}},
		{name: "project: storing it", fault: spFault{"StudioProjects.Put", 1}, run: func(s scene) error {
			_, err := s.h.e.StudioProjects.CreateStudioProject(context.Background(), s.alice, sim.StudioProjectInput{Name: ptr("X")}, nil)
			return err
		}},
		{name: "project: its manager", fault: spFault{"UserByEmail", 1}, run: func(s scene) error {
			_, err := s.h.e.StudioProjects.CreateStudioProject(context.Background(), s.alice, sim.StudioProjectInput{ManagerEmail: ptr("bob.martinez@acme-media.example")}, nil)
			return err
		}},
		{name: "project: its glossary", fault: spFault{"Glossaries.Get", 1}, run: func(s scene) error {
			_, err := s.h.e.StudioProjects.UpdateStudioProject(context.Background(), s.alice, spSummer, sim.StudioProjectInput{TranslationsGlossaryID: ptr(spAcmeTranslation)})
			return err
		}},
		{name: "video: settling a due artifact", fault: spFault{"Artifacts.Put", 1}, run: newVideo(true)},
		{name: "video: reading its source", fault: spFault{"Artifacts.Get", 2}, run: newVideo(false)},
		{name: "video: its id", fault: spFault{"NextSequence", 1}, run: newVideo(false)},
		{name: "video: storing it", fault: spFault{"Videos.Put", 1}, run: newVideo(false)},
		{name: "videos: the project, when settling", fault: spFault{"StudioProjects.Get", 1}, run: func(s scene) error {
			_, err := s.h.e.Videos.ListVideos(context.Background(), s.alice, spSummer)
			return err
		}},
		{name: "videos: storing a move", fault: spFault{"Videos.Put", 1}, run: func(s scene) error {
			_, err := s.h.e.Videos.ListVideos(context.Background(), s.alice, spSummer)
			return err
		}},
		{name: "video read: the project, when settling", fault: spFault{"StudioProjects.Get", 1}, run: func(s scene) error {
			_, err := s.h.e.Videos.Video(context.Background(), s.alice, spSummer, s.dueVideo.ID)
			return err
		}},
		{name: "video update: storing the due move", fault: spFault{"Videos.Put", 1}, run: func(s scene) error {
			_, err := s.h.e.Videos.UpdateVideo(context.Background(), s.alice, spSummer, s.dueVideo.ID, sim.VideoUpdate{Name: ptr("X")})
			return err
		}},
		{name: "video status: reading it", fault: spFault{"Videos.Get", 1}, run: func(s scene) error {
			_, err := s.h.e.Videos.SetVideoStatus(context.Background(), s.dueVideo.ID, sim.VideoCompleted, false)
			return err
		}},
		{name: "sweep: due artifacts", fault: spFault{"DueArtifacts", 1}, run: sweep},
		{name: "sweep: reading an artifact", fault: spFault{"Artifacts.Get", 1}, run: sweep},
		{name: "sweep: unscheduling a stuck artifact", fault: spFault{"Artifacts.Put", 1}, run: sweep},
		{name: "sweep: moving an artifact", fault: spFault{"Artifacts.Put", 2}, run: sweep},
		{name: "sweep: due videos", fault: spFault{"DueVideos", 1}, run: sweep},
		{name: "sweep: reading a video", fault: spFault{"Videos.Get", 1}, run: sweep},
		{name: "sweep: moving a video", fault: spFault{"Videos.Put", 1}, run: sweep},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := setup(t)
			before := spSnap(t, s.h)
			s.fs.set(tc.fault)
			err := tc.run(s)
			s.fs.set(spFault{})
			assert.ErrorIs(t, err, errSPFault)
			assert.Equal(t, before, spSnap(t, s.h), "the interrupted write left nothing behind")
		})
	}
}
