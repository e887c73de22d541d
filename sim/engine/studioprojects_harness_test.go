package engine

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/blob"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/require"
)

// Helpers of the studio project, video and account tests (prefix sp).

// Fixture keys (fixtures/accounts.json) and the studio records they belong
// to (fixtures/studio.json).
const (
	spKeyAlice = "dubsim-free"         // Alice Johnson, Acme Media
	spKeyBob   = "dubsim-subscription" // Bob Martinez, Acme Media
	spKeyGrace = "dubsim-enterprise"   // Grace Liu, Globex Studios (multi-language)
	spKeyPriya = "dubsim-pro"          // Priya Raman, Initech Learning

	spAcme    = "663266da5ec2709f7826386f"
	spGlobex  = "66b0bea45ec2709f78263870"
	spInitech = "67500bec5ec2709f78263871"

	spUserAlice = "6633800fe4e6d9a72a921bb6"
	spUserBob   = "665b0d25e4e6d9a72a921bb7"
	spUserCarol = "66ed2b50e4e6d9a72a921bb8"
	spUserPriya = "6750989de4e6d9a72a921bbd"

	spSummer     = "6800ed147125e1af62bc928c" // Acme, 3 videos
	spTutorials  = "6821e2967125e1af62bc928d" // Acme, 2 videos
	spWebinar    = "679cf3637125e1af62bc928e" // Acme, 2 videos
	spLongNight  = "67ed268e7125e1af62bc928f" // Globex
	spCompliance = "6814b3a77125e1af62bc9291" // Initech

	spHeroSpot  = "680179c50a4e53a77de3f4cf" // Summer, completed, es-ES fr-FR, guidance for both
	spBehind    = "682bc5cf0a4e53a77de3f4d0" // Summer, in_progress
	spSocialCut = "683b275c0a4e53a77de3f4d1" // Summer, new
	spAdvanced  = "683a9ad00a4e53a77de3f4d3" // Tutorials, new, no duration

	spAcmeTranslation    = "664dde2bbd76c09876a4bc5b"
	spAcmeVoices         = "673494a9bd76c09876a4bc5d"
	spAcmePronunciation  = "676604f4bd76c09876a4bc5e"
	spInitechTranslation = "6760869abd76c09876a4bc61"

	spUnknownID = "0123456789abcdef01234567"
)

// spMedia is a StudioMedia from a table: rules by exact URL, durations of
// the URLs it derives, and no network (no URL may be fetched).
type spMedia struct {
	rules   map[string]sim.MediaRule
	derived map[string]time.Duration
}

func (m spMedia) Rule(rawURL string) (sim.MediaRule, bool) {
	r, ok := m.rules[rawURL]
	return r, ok
}

func (spMedia) MayFetchURL(string) bool { return false }

func (spMedia) Download(context.Context, string, io.Writer, int64) (int64, error) {
	return 0, errors.New("spMedia: no network in these tests")
}

func (m spMedia) Derived(rawURL string) time.Duration {
	if d, ok := m.derived[rawURL]; ok {
		return d
	}
	return 90 * time.Second
}

// spInspect reads every non-empty file as a 10 s WAV.
func spInspect(_ io.ReaderAt, size int64) (string, time.Duration, sim.MediaFormat, error) {
	if size == 0 {
		return "", 0, sim.MediaFormat{}, errors.New("spInspect: empty file")
	}
	return "wav", 10 * time.Second, sim.MediaFormat{}, nil
}

// The URLs of spDefaultMedia and what the artifacts made of them become.
const (
	spClipURL   = "https://media.test/clip-2min.mp4" // rule: 120 s
	spMusicURL  = "https://media.test/music.wav"     // derived: 45 s
	spScriptURL = "https://media.test/script.srt"    // derived: 90 s (the default)
	spBrokenURL = "https://media.test/broken.mp4"    // rule: fails
	spClipSecs  = 120.0
	spMusicSecs = 45.0
)

func spDefaultMedia() spMedia {
	return spMedia{
		rules: map[string]sim.MediaRule{
			spClipURL:   {Pattern: spClipURL, DurationSeconds: spClipSecs},
			spBrokenURL: {Pattern: spBrokenURL, Fail: "Codec not supported"},
		},
		derived: map[string]time.Duration{spMusicURL: 45 * time.Second},
	}
}

// spHarness is newHarness with the studio parts wired: the fake media, the
// fake inspector and a blob directory in t.TempDir(). Its clock starts at t0
// and moves only when advanced.
func spHarness(t *testing.T) *harness {
	t.Helper()
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	return spHarnessWith(t, fx)
}

// spHarnessWith is spHarness with the given fixture set.
func spHarnessWith(t *testing.T, fx *sim.Fixtures) *harness {
	t.Helper()
	return spOpen(t, fx, nil)
}

// spOpen opens a harness whose engine reaches the store through wrap (when
// not nil); h.st is the store itself.
func spOpen(t *testing.T, fx *sim.Fixtures, wrap func(sim.Store) sim.Store) *harness {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "dubsim.db")
	st, err := store.Open(path, store.NoSync(), store.KeySeed(7))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	var es sim.Store = st
	if wrap != nil {
		es = wrap(st)
	}
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	require.NoError(t, err)
	clock := sim.NewSimClock(func() time.Time { return t0 }, 0)
	e := New(Config{Store: es, Clock: clock, IDs: sim.NewIDs(7), Prober: fakeProber{}, Timing: sim.DefaultTiming, Fixtures: fx,
		Media: spDefaultMedia(), Inspect: spInspect, Blobs: blobs})
	require.NoError(t, e.Start(context.Background()))
	t.Cleanup(e.Close)
	return &harness{e: e, st: st, clock: clock, path: path}
}

// spCaller returns the studio identity of a key.
func spCaller(t *testing.T, h *harness, key string) sim.Caller {
	t.Helper()
	c, err := h.e.Accounts.Caller(context.Background(), key)
	require.NoError(t, err)
	return c
}

// spArtifact creates an artifact of typ from url; it is in status created.
func spArtifact(t *testing.T, h *harness, c sim.Caller, typ, url string) sim.Artifact {
	t.Helper()
	a, err := h.e.Artifacts.CreateArtifact(context.Background(), c, sim.NewArtifact{Name: "sp " + typ, Type: typ, URL: url}, nil)
	require.NoError(t, err)
	require.Equal(t, sim.ArtifactCreated, a.Status)
	return a
}

// spArtifactDone is when an artifact of typ lasting d, created at created,
// finishes processing (sim.DefaultStudioTiming, derived size).
func spArtifactDone(created time.Time, typ string, d time.Duration) time.Time {
	tm := sim.DefaultStudioTiming
	return created.Add(tm.ArtifactStart + tm.ArtifactProcessing(derivedSize(typ, d)))
}

// spReadyArtifact creates an artifact and advances the clock to the end of
// its processing; it is then upload_completed.
func spReadyArtifact(t *testing.T, h *harness, c sim.Caller, typ, url string, d time.Duration) sim.Artifact {
	t.Helper()
	ctx := context.Background()
	a := spArtifact(t, h, c, typ, url)
	done := spArtifactDone(a.CreatedAt, typ, d)
	require.Equal(t, done, a.DoneAt, "the harness's processing model")
	_, err := h.e.Clock.Advance(ctx, done.Sub(h.e.Clock.Now()))
	require.NoError(t, err)
	a, err = h.e.Artifacts.Artifact(ctx, c, a.ID)
	require.NoError(t, err)
	require.Equal(t, sim.ArtifactCompleted, a.Status)
	return a
}

// spNewVideo is a valid video creation from src.
func spNewVideo(name, src string) sim.NewVideo {
	return sim.NewVideo{Name: name, WorkflowType: "dubbing", SourceArtifactID: src, SourceLanguage: "en", TargetLanguages: []string{"es-ES", "fr-FR"}}
}

// spStoredVideo reads a video straight from the store (no transition applied).
func spStoredVideo(t *testing.T, h *harness, id string) sim.Video {
	t.Helper()
	var v sim.Video
	require.NoError(t, h.st.View(context.Background(), func(tx sim.Tx) error {
		var err error
		v, err = tx.Videos().Get(id)
		return err
	}))
	return v
}

// spStoredProject reads a studio project straight from the store.
func spStoredProject(t *testing.T, h *harness, id string) sim.StudioProject {
	t.Helper()
	var p sim.StudioProject
	require.NoError(t, h.st.View(context.Background(), func(tx sim.Tx) error {
		var err error
		p, err = tx.StudioProjects().Get(id)
		return err
	}))
	return p
}

// spIDs returns the ids of a list of records.
func spIDs[T any](list []T, id func(T) string) []string {
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, id(x))
	}
	return out
}

func spVideoID(v sim.Video) string           { return v.ID }
func spProjectID(p sim.StudioProject) string { return p.ID }
