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

// spFault names the Tx method that fails, and at which of its calls
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

func (t *spFaultTx) Account(key string) (sim.Account, error) {
	if err := t.hit("Account"); err != nil {
		return sim.Account{}, err
	}
	return t.Tx.Account(key)
}

func (t *spFaultTx) PutAccount(a sim.Account) error {
	if err := t.hit("PutAccount"); err != nil {
		return err
	}
	return t.Tx.PutAccount(a)
}

func (t *spFaultTx) ForEachAccount(fn func(sim.Account) error) error {
	if err := t.hit("ForEachAccount"); err != nil {
		return err
	}
	return t.Tx.ForEachAccount(fn)
}

func (t *spFaultTx) Company(id string) (sim.Company, error) {
	if err := t.hit("Company"); err != nil {
		return sim.Company{}, err
	}
	return t.Tx.Company(id)
}

func (t *spFaultTx) PutCompany(c sim.Company) error {
	if err := t.hit("PutCompany"); err != nil {
		return err
	}
	return t.Tx.PutCompany(c)
}

func (t *spFaultTx) User(id string) (sim.User, error) {
	if err := t.hit("User"); err != nil {
		return sim.User{}, err
	}
	return t.Tx.User(id)
}

func (t *spFaultTx) PutUser(u sim.User) error {
	if err := t.hit("PutUser"); err != nil {
		return err
	}
	return t.Tx.PutUser(u)
}

func (t *spFaultTx) UserByEmail(email string) (sim.User, error) {
	if err := t.hit("UserByEmail"); err != nil {
		return sim.User{}, err
	}
	return t.Tx.UserByEmail(email)
}

func (t *spFaultTx) Glossary(id string) (sim.Glossary, error) {
	if err := t.hit("Glossary"); err != nil {
		return sim.Glossary{}, err
	}
	return t.Tx.Glossary(id)
}

func (t *spFaultTx) Folder(id string) (sim.Folder, error) {
	if err := t.hit("Folder"); err != nil {
		return sim.Folder{}, err
	}
	return t.Tx.Folder(id)
}

func (t *spFaultTx) StudioProject(id string) (sim.StudioProject, error) {
	if err := t.hit("StudioProject"); err != nil {
		return sim.StudioProject{}, err
	}
	return t.Tx.StudioProject(id)
}

func (t *spFaultTx) PutStudioProject(p sim.StudioProject) error {
	if err := t.hit("PutStudioProject"); err != nil {
		return err
	}
	return t.Tx.PutStudioProject(p)
}

func (t *spFaultTx) Video(id string) (sim.Video, error) {
	if err := t.hit("Video"); err != nil {
		return sim.Video{}, err
	}
	return t.Tx.Video(id)
}

func (t *spFaultTx) PutVideo(v sim.Video) error {
	if err := t.hit("PutVideo"); err != nil {
		return err
	}
	return t.Tx.PutVideo(v)
}

func (t *spFaultTx) DueVideos(now time.Time, limit int) ([]string, error) {
	if err := t.hit("DueVideos"); err != nil {
		return nil, err
	}
	return t.Tx.DueVideos(now, limit)
}

func (t *spFaultTx) Artifact(id string) (sim.Artifact, error) {
	if err := t.hit("Artifact"); err != nil {
		return sim.Artifact{}, err
	}
	return t.Tx.Artifact(id)
}

func (t *spFaultTx) PutArtifact(a sim.Artifact) error {
	if err := t.hit("PutArtifact"); err != nil {
		return err
	}
	return t.Tx.PutArtifact(a)
}

func (t *spFaultTx) DueArtifacts(now time.Time, limit int) ([]string, error) {
	if err := t.hit("DueArtifacts"); err != nil {
		return nil, err
	}
	return t.Tx.DueArtifacts(now, limit)
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
			tx.ForEachAccount(func(a sim.Account) error { s.Accounts = append(s.Accounts, a); return nil }),
			tx.ForEachCompany(func(c sim.Company) error { s.Companies = append(s.Companies, c); return nil }),
			tx.ForEachUser(func(u sim.User) error { s.Users = append(s.Users, u); return nil }),
			tx.ForEachGlossary(func(g sim.Glossary) error { s.Glossaries = append(s.Glossaries, g); return nil }),
			tx.ForEachFolder(func(f sim.Folder) error { s.Folders = append(s.Folders, f); return nil }),
			tx.ForEachStudioProject("", func(p sim.StudioProject) error { s.Projects = append(s.Projects, p); return nil }),
			tx.ForEachVideo("", func(v sim.Video) error { s.Videos = append(s.Videos, v); return nil }),
			tx.ForEachArtifact(func(a sim.Artifact) error { s.Artifacts = append(s.Artifacts, a); return nil }),
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
				tx.PutArtifact(sim.Artifact{ID: spUnknownID, CompanyID: spAcme, Type: sim.ArtifactVideo, Status: sim.ArtifactStarted,
					Pending: true, StartAt: t0, DoneAt: t0, DueAt: t0, CreatedAt: t0, UpdatedAt: t0}),
				tx.PutAccount(sim.Account{APIKey: "sp-orphan", Name: "Orphan", Plan: sim.PlanPro}),
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
		{name: "account: storing the company", fault: spFault{"PutCompany", 1}, run: newCompany},
		{name: "account: checking the email", fault: spFault{"UserByEmail", 1}, run: newCompany},
		{name: "account: storing the user", fault: spFault{"PutUser", 1}, run: newCompany},
		{name: "account: reading the company joined", fault: spFault{"Company", 1}, run: func(s scene) error {
			_, err := s.h.e.Accounts.CreateAccount(context.Background(), sim.AccountSpec{APIKey: "sp-new", Plan: sim.PlanPro, CompanyID: spAcme})
			return err
		}},
		{name: "account: reading the user named", fault: spFault{"User", 1}, run: func(s scene) error {
			return inTx(s, func(tx sim.Tx) error {
				a := sim.Account{APIKey: "sp-new", UserID: spUserAlice}
				return s.h.e.Accounts.placeAccount(tx, &a, "", "", t0)
			})
		}},
		{name: "seed: companies", fault: spFault{"Company", 1}, run: func(s scene) error {
			return inTx(s, func(tx sim.Tx) error { return s.h.e.Data.seed(tx, t0, true) })
		}},
		{name: "seed: users", fault: spFault{"User", 2}, run: func(s scene) error {
			return inTx(s, func(tx sim.Tx) error { return s.h.e.Data.seed(tx, t0, true) })
		}},
		{name: "seed: glossaries", fault: spFault{"Glossary", 3}, run: func(s scene) error {
			return inTx(s, func(tx sim.Tx) error { return s.h.e.Data.seed(tx, t0, true) })
		}},
		{name: "seed: folders", fault: spFault{"Folder", 1}, run: func(s scene) error {
			return inTx(s, func(tx sim.Tx) error { return s.h.e.Data.seed(tx, t0, true) })
		}},
		{name: "seed: projects", fault: spFault{"StudioProject", 6}, run: func(s scene) error {
			return inTx(s, func(tx sim.Tx) error { return s.h.e.Data.seed(tx, t0, true) })
		}},
		{name: "seed: videos", fault: spFault{"Video", 15}, run: func(s scene) error {
			return inTx(s, func(tx sim.Tx) error { return s.h.e.Data.seed(tx, t0, true) })
		}},
		{name: "start: listing the accounts", fault: spFault{"ForEachAccount", 1}, run: func(s scene) error { return s.h.e.Start(context.Background()) }},
		{name: "start: placing an orphan", fault: spFault{"NextSequence", 1}, run: func(s scene) error { return s.h.e.Start(context.Background()) }},
		{name: "start: storing an orphan", fault: spFault{"PutAccount", 1}, run: func(s scene) error {
			return inTx(s, func(tx sim.Tx) error { return s.h.e.Accounts.ensureUsers(tx, t0) })
		}},
		{name: "account studio settings", fault: spFault{"Account", 1}, run: func(s scene) error {
			_, err := s.h.e.Accounts.SetAccountStudio(context.Background(), spKeyAlice, sim.AccountStudioChange{SetRateLimit: true, RateLimit: &sim.RateLimit{PerDay: 1}})
			return err
		}},
		{name: "project: its id", fault: spFault{"NextSequence", 1}, run: func(s scene) error {
			_, err := s.h.e.StudioProjects.CreateStudioProject(context.Background(), s.alice, sim.StudioProjectInput{Name: ptr("X")}, nil)
			return err
		}},
		{name: "project: storing it", fault: spFault{"PutStudioProject", 1}, run: func(s scene) error {
			_, err := s.h.e.StudioProjects.CreateStudioProject(context.Background(), s.alice, sim.StudioProjectInput{Name: ptr("X")}, nil)
			return err
		}},
		{name: "project: its manager", fault: spFault{"UserByEmail", 1}, run: func(s scene) error {
			_, err := s.h.e.StudioProjects.CreateStudioProject(context.Background(), s.alice, sim.StudioProjectInput{ManagerEmail: ptr("bob.martinez@acme-media.example")}, nil)
			return err
		}},
		{name: "project: its glossary", fault: spFault{"Glossary", 1}, run: func(s scene) error {
			_, err := s.h.e.StudioProjects.UpdateStudioProject(context.Background(), s.alice, spSummer, sim.StudioProjectInput{TranslationsGlossaryID: ptr(spAcmeTranslation)})
			return err
		}},
		{name: "video: settling a due artifact", fault: spFault{"PutArtifact", 1}, run: newVideo(true)},
		{name: "video: reading its source", fault: spFault{"Artifact", 2}, run: newVideo(false)},
		{name: "video: its id", fault: spFault{"NextSequence", 1}, run: newVideo(false)},
		{name: "video: storing it", fault: spFault{"PutVideo", 1}, run: newVideo(false)},
		{name: "videos: the project, when settling", fault: spFault{"StudioProject", 1}, run: func(s scene) error {
			_, err := s.h.e.Videos.ListVideos(context.Background(), s.alice, spSummer)
			return err
		}},
		{name: "videos: storing a move", fault: spFault{"PutVideo", 1}, run: func(s scene) error {
			_, err := s.h.e.Videos.ListVideos(context.Background(), s.alice, spSummer)
			return err
		}},
		{name: "video read: the project, when settling", fault: spFault{"StudioProject", 1}, run: func(s scene) error {
			_, err := s.h.e.Videos.Video(context.Background(), s.alice, spSummer, s.dueVideo.ID)
			return err
		}},
		{name: "video update: storing the due move", fault: spFault{"PutVideo", 1}, run: func(s scene) error {
			_, err := s.h.e.Videos.UpdateVideo(context.Background(), s.alice, spSummer, s.dueVideo.ID, sim.VideoUpdate{Name: ptr("X")})
			return err
		}},
		{name: "video status: reading it", fault: spFault{"Video", 1}, run: func(s scene) error {
			_, err := s.h.e.Videos.SetVideoStatus(context.Background(), s.dueVideo.ID, sim.VideoCompleted, false)
			return err
		}},
		{name: "sweep: due artifacts", fault: spFault{"DueArtifacts", 1}, run: sweep},
		{name: "sweep: reading an artifact", fault: spFault{"Artifact", 1}, run: sweep},
		{name: "sweep: unscheduling a stuck artifact", fault: spFault{"PutArtifact", 1}, run: sweep},
		{name: "sweep: moving an artifact", fault: spFault{"PutArtifact", 2}, run: sweep},
		{name: "sweep: due videos", fault: spFault{"DueVideos", 1}, run: sweep},
		{name: "sweep: reading a video", fault: spFault{"Video", 1}, run: sweep},
		{name: "sweep: moving a video", fault: spFault{"PutVideo", 1}, run: sweep},
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
