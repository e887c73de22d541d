package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/blob"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/require"
)

// The harness of the upload and artifact tests: openHarness's engine with
// its studio parts (a fake StudioMedia, a fake Inspector, a real blob
// directory in t.TempDir()).

// artFile is what the fake inspector reads from a file's bytes.
type artFile struct {
	format string
	dur    time.Duration
	media  sim.MediaFormat
}

// The files the fake inspector knows, by content; any other content is not
// media (the inspector returns an error).
const (
	artWAV    = "RIFF 1.5 s of pcm audio, 44.1 kHz mono......."
	artWAV48  = "RIFF 2 s of pcm audio, 48 kHz mono"
	artMP4    = "ftyp 4 s of h264 1280x720 at 25 fps, aac audio"
	artMP4HD  = "ftyp 3 s of h264 1920x1080 at 25 fps, aac audio"
	artNotes  = "These are meeting notes, not a media file.\n"
	artHeader = "RIFF a header without a readable duration"
)

var artFiles = map[string]artFile{
	artWAV:   {"wav", 1500 * time.Millisecond, sim.MediaFormat{AudioCodec: "pcm_s16le", SampleRate: 44100, Channels: 1}},
	artWAV48: {"wav", 2 * time.Second, sim.MediaFormat{AudioCodec: "pcm_s16le", SampleRate: 48000, Channels: 1}},
	artMP4:   {"mp4", 4 * time.Second, sim.MediaFormat{VideoCodec: "h264", Width: 1280, Height: 720, FrameRate: 25000, AudioCodec: "aac", SampleRate: 48000, Channels: 2}},
	artMP4HD: {"mp4", 3 * time.Second, sim.MediaFormat{VideoCodec: "h264", Width: 1920, Height: 1080, FrameRate: 25000, AudioCodec: "aac", SampleRate: 48000, Channels: 2}},
}

// artInspect is the fake Inspector: it looks the whole content up in artFiles.
func artInspect(ra io.ReaderAt, size int64) (string, time.Duration, sim.MediaFormat, error) {
	b := make([]byte, size)
	if _, err := ra.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return "", 0, sim.MediaFormat{}, err
	}
	if string(b) == artHeader {
		return "wav", 0, sim.MediaFormat{}, errors.New("no duration in the header")
	}
	f, ok := artFiles[string(b)]
	if !ok {
		return "", 0, sim.MediaFormat{}, errors.New("not a media file")
	}
	return f.format, f.dur, f.media, nil
}

// artDerived is the duration the fake media derives for URLs absent from
// its derived table.
const artDerived = 120 * time.Second

// artMedia is the fake StudioMedia: fixture rules, the URLs dubsim may
// fetch (with their bodies or download errors), derived durations, and
// gates that hold a download in flight until closed.
// Tests fill its maps before the first download starts.
type artMedia struct {
	mu      sync.Mutex
	rules   map[string]sim.MediaRule
	bodies  map[string]string // URLs dubsim may fetch, with their bodies
	errs    map[string]error  // download errors of fetchable URLs
	derived map[string]time.Duration
	gates   map[string]chan struct{}
	// prefix is the part of a gated body sent before the gate.
	prefix map[string]int
	// started receives the URL of every download as it reaches the host.
	started chan string
}

func newArtMedia() *artMedia {
	return &artMedia{rules: map[string]sim.MediaRule{}, bodies: map[string]string{}, errs: map[string]error{},
		derived: map[string]time.Duration{}, gates: map[string]chan struct{}{}, prefix: map[string]int{}, started: make(chan string, 64)}
}

// gate holds the downloads of rawURL until the returned function is called.
func (m *artMedia) gate(rawURL string) (release func()) {
	ch := make(chan struct{})
	m.mu.Lock()
	m.gates[rawURL] = ch
	m.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

func (m *artMedia) Rule(rawURL string) (sim.MediaRule, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rules[rawURL]
	return r, ok
}

func (m *artMedia) MayFetchURL(rawURL string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, body := m.bodies[rawURL]
	_, fail := m.errs[rawURL]
	return body || fail
}

func (m *artMedia) Download(ctx context.Context, rawURL string, w io.Writer, limit int64) (int64, error) {
	m.mu.Lock()
	gate, body, err, pre := m.gates[rawURL], m.bodies[rawURL], m.errs[rawURL], m.prefix[rawURL]
	m.mu.Unlock()
	if int64(len(body)) > limit {
		return 0, fmt.Errorf("%s is larger than %d bytes", rawURL, limit)
	}
	// The prefix is sent (and counted) before the download is reported.
	n, werr := io.WriteString(w, body[:pre])
	if werr != nil {
		return int64(n), werr
	}
	select {
	case m.started <- rawURL:
	default: // nobody is counting the downloads
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return int64(n), ctx.Err()
		}
	}
	if err != nil {
		return int64(n), err
	}
	rest, werr := io.WriteString(w, body[pre:])
	return int64(n + rest), werr
}

func (m *artMedia) Derived(rawURL string) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d, ok := m.derived[rawURL]; ok {
		return d
	}
	return artDerived
}

// nextDownload returns the URL of the next download to reach the host.
func (m *artMedia) nextDownload(t *testing.T) string {
	t.Helper()
	select {
	case u := <-m.started:
		return u
	case <-time.After(DefaultWorkWait):
		t.Fatal("no download reached the host")
		return ""
	}
}

// artOptions configure an artHarness; the zero value has every studio part.
type artOptions struct {
	noMedia, noInspect, noBlobs bool
	workWait                    time.Duration
	quota                       sim.BlobQuota
	genericErrors               bool // FetchErrorDetail off
	pool                        *QuotaPool
}

type artHarness struct {
	*harness
	media    *artMedia
	blobs    *blob.Dir
	closeEng func()
}

// newArtHarness opens an engine with its studio parts on a new store.
func newArtHarness(t *testing.T, opts artOptions) *artHarness {
	t.Helper()
	dir := t.TempDir()
	return openArtHarness(t, filepath.Join(dir, "dubsim.db"), filepath.Join(dir, "blobs"), newArtMedia(), opts,
		sim.NewSimClock(func() time.Time { return t0 }, 0))
}

// openArtHarness opens (or reopens) an engine on the store at path and the
// blob directory blobDir, as openHarness does, with media as its
// StudioMedia. The engine is closed (downloads stopped) before its store.
func openArtHarness(t *testing.T, path, blobDir string, media *artMedia, opts artOptions, clock *sim.SimClock) *artHarness {
	t.Helper()
	st, err := store.Open(path, store.NoSync(), store.KeySeed(7))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	b, err := blob.Open(blobDir)
	require.NoError(t, err)
	cfg := Config{Store: st, Clock: clock, IDs: sim.NewIDs(7), Prober: fakeProber{}, Timing: sim.DefaultTiming, Fixtures: fx,
		WorkWait: opts.workWait, Quota: opts.quota, QuotaPool: opts.pool, FetchErrorDetail: !opts.genericErrors}
	if !opts.noMedia {
		cfg.Media = media
	}
	if !opts.noInspect {
		cfg.Inspect = artInspect
	}
	if !opts.noBlobs {
		cfg.Blobs = b
	}
	e := New(cfg)
	var once sync.Once
	closeEng := func() { once.Do(e.Close) }
	t.Cleanup(closeEng)
	require.NoError(t, e.Start(context.Background()))
	return &artHarness{harness: &harness{e: e, st: st, clock: clock, path: path}, media: media, blobs: b, closeEng: closeEng}
}

// The fixture keys used: free and subscription share a company, pro is in
// another.
const (
	artKey       = "dubsim-free"
	artColleague = "dubsim-subscription"
	artOther     = "dubsim-pro"
)

// caller returns the studio identity of a key.
func (h *artHarness) caller(t *testing.T, key string) sim.Caller {
	t.Helper()
	c, err := h.e.Accounts.Caller(context.Background(), key)
	require.NoError(t, err)
	return c
}

// storage gives key storage credentials for buckets (any bucket when none).
func (h *artHarness) storage(t *testing.T, key string, buckets ...string) {
	t.Helper()
	_, err := h.e.Accounts.SetAccountStudio(context.Background(), key, sim.AccountStudioChange{SetStorage: true,
		Storage: &sim.StorageCredentials{AccessKeyID: "AKIA" + key, SecretAccessKey: "secret", Buckets: buckets}})
	require.NoError(t, err)
}

// upload presigns fileName for key and, unless content is nil, PUTs it.
func (h *artHarness) upload(t *testing.T, key, fileName string, content *string) sim.Upload {
	t.Helper()
	ctx := context.Background()
	u, err := h.e.Uploads.PresignUpload(ctx, h.caller(t, key), fileName)
	require.NoError(t, err)
	if content == nil {
		return u
	}
	u, err = h.e.Uploads.ReceiveUpload(ctx, u.ID, strings.NewReader(*content))
	require.NoError(t, err)
	return u
}

// create creates an artifact for key.
func (h *artHarness) create(t *testing.T, key string, na sim.NewArtifact) sim.Artifact {
	t.Helper()
	a, err := h.e.Artifacts.CreateArtifact(context.Background(), h.caller(t, key), na, nil)
	require.NoError(t, err)
	return a
}

// get reads an artifact of key's company (with its due transitions applied).
func (h *artHarness) get(t *testing.T, key, id string) sim.Artifact {
	t.Helper()
	a, err := h.e.Artifacts.Artifact(context.Background(), h.caller(t, key), id)
	require.NoError(t, err)
	return a
}

// advance moves the clock and sweeps, as the control API does.
func (h *artHarness) advance(t *testing.T, d time.Duration) {
	t.Helper()
	_, err := h.e.Clock.Advance(context.Background(), d)
	require.NoError(t, err)
}

// stored reads an artifact straight from the store (no settling).
func (h *artHarness) stored(t *testing.T, id string) sim.Artifact {
	t.Helper()
	var a sim.Artifact
	require.NoError(t, h.st.View(context.Background(), func(tx sim.Tx) error {
		var err error
		a, err = tx.Artifacts().Get(id)
		return err
	}))
	return a
}

// processingEnd is when an artifact started at start with a file of size
// bytes ends processing.
func processingEnd(start time.Time, size int64) time.Time {
	return start.Add(sim.DefaultStudioTiming.ArtifactProcessing(size))
}
