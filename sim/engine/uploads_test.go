package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPresignUpload: a slot is a UUID keyed by the store's secret under the temp path of the
// upload bucket, owned by the caller's company, valid 24 hours from now.
func TestPresignUpload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newArtHarness(t, artOptions{})
	h.advance(t, time.Minute)
	now := h.e.Clock.Now()
	c := h.caller(t, artKey)

	u, err := h.e.Uploads.PresignUpload(ctx, c, "take 1.wav")
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, u.ID)
	assert.Equal(t, "s3://"+sim.UploadBucket+"/temp/"+u.ID+"/take 1.wav", u.S3Path)
	assert.Equal(t, "take 1.wav", u.FileName)
	assert.Equal(t, artKey, u.APIKey)
	assert.Equal(t, c.Company.ID, u.CompanyID)
	assert.Equal(t, now, u.CreatedAt)
	assert.Equal(t, now.Add(24*time.Hour), u.ExpiresAt)
	assert.False(t, u.Uploaded)

	got, err := h.e.Uploads.Upload(ctx, u.ID)
	require.NoError(t, err)
	assert.Equal(t, u, got, "stored as answered")

	u2, err := h.e.Uploads.PresignUpload(ctx, c, "take 1.wav")
	require.NoError(t, err)
	assert.NotEqual(t, u.ID, u2.ID, "every slot has its own id")

	_, err = h.e.Uploads.Upload(ctx, "00000000-0000-4000-8000-000000000000")
	assert.ErrorIs(t, err, sim.ErrNotFound)
}

// TestUploadSignature: the signature is a function of the store's secret,
// the slot's id, file name and expiry: the same for the same slot (also
// after the store is reopened), another when any of them changes, and
// another from another store of the same seed (were it the seed's, anyone
// could sign any slot).
func TestUploadSignature(t *testing.T) {
	t.Parallel()
	h := newArtHarness(t, artOptions{})
	u := h.upload(t, artKey, "a.wav", nil)
	sig := h.e.Uploads.UploadSignature(u)
	assert.Regexp(t, `^[0-9a-f]{64}$`, sig)
	assert.Equal(t, sig, h.e.Uploads.UploadSignature(u), "deterministic")
	assert.NotEqual(t, sim.NewIDs(7).Token(32, "presign", u.ID, u.FileName, fmt.Sprint(u.ExpiresAt.Unix())), sig,
		"not the seed's signature")
	{
		other := newArtHarness(t, artOptions{})
		assert.NotEqual(t, sig, other.e.Uploads.UploadSignature(u), "another store of the same seed signs otherwise")
		ou := other.upload(t, artKey, "a.wav", nil)
		assert.NotEqual(t, u.ID, ou.ID, "and names its first slot otherwise")
	}
	{
		h.closeEng()
		require.NoError(t, h.st.Close())
		again := openArtHarness(t, h.path, filepath.Join(filepath.Dir(h.path), "blobs"), newArtMedia(), artOptions{}, h.clock)
		assert.Equal(t, sig, again.e.Uploads.UploadSignature(u), "the reopened store signs alike")
	}

	for _, tc := range []struct {
		name   string
		change func(*sim.Upload)
	}{
		{"another id", func(u *sim.Upload) { u.ID = "00000000-0000-4000-8000-000000000000" }},
		{"another file name", func(u *sim.Upload) { u.FileName = "b.wav" }},
		{"another expiry", func(u *sim.Upload) { u.ExpiresAt = u.ExpiresAt.Add(time.Second) }},
	} {
		other := u
		tc.change(&other)
		assert.NotEqual(t, sig, h.e.Uploads.UploadSignature(other), tc.name)
	}
}

// TestReceiveUpload: a PUT stores the body as a blob and records its size,
// and the format, duration and encoding its header gives; a later PUT
// replaces it.
func TestReceiveUpload(t *testing.T) {
	t.Parallel()
	wav := artFiles[artWAV]
	tests := []struct {
		name     string
		opts     artOptions
		bodies   []string // PUT in turn; the last one counts
		format   string
		duration *float64
		media    sim.MediaFormat
	}{
		{"a WAV", artOptions{}, []string{artWAV}, "wav", secs(wav.dur), wav.media},
		{"an MP4", artOptions{}, []string{artMP4}, "mp4", secs(artFiles[artMP4].dur), artFiles[artMP4].media},
		{"bytes that are not media", artOptions{}, []string{artNotes}, "", nil, sim.MediaFormat{}},
		{"a header without a duration", artOptions{}, []string{artHeader}, "wav", nil, sim.MediaFormat{}},
		{"an empty body", artOptions{}, []string{""}, "", nil, sim.MediaFormat{}},
		{"a second PUT replaces the first", artOptions{}, []string{artNotes, artWAV}, "wav", secs(wav.dur), wav.media},
		{"no inspector: bytes only", artOptions{noInspect: true}, []string{artWAV}, "", nil, sim.MediaFormat{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			h := newArtHarness(t, tc.opts)
			slot := h.upload(t, artKey, "file.bin", nil)
			var u sim.Upload
			for i, body := range tc.bodies {
				h.clock.Advance(time.Second)
				var err error
				u, err = h.e.Uploads.ReceiveUpload(ctx, slot.ID, strings.NewReader(body))
				require.NoError(t, err, "PUT %d", i)
			}
			last := tc.bodies[len(tc.bodies)-1]
			assert.True(t, u.Uploaded)
			assert.Equal(t, t0.Add(time.Duration(len(tc.bodies))*time.Second), u.UploadedAt, "the time of the last PUT")
			assert.Equal(t, int64(len(last)), u.Size)
			assert.Equal(t, "upload-"+slot.ID, u.Blob)
			assert.Equal(t, tc.format, u.Format)
			assert.Equal(t, tc.duration, u.Duration)
			assert.Equal(t, tc.media, u.Media)
			assert.Equal(t, slot.S3Path, u.S3Path, "the slot keeps its path")
			assert.Equal(t, slot.ExpiresAt, u.ExpiresAt)

			stored, err := h.e.Uploads.Upload(ctx, slot.ID)
			require.NoError(t, err)
			assert.Equal(t, u, stored)
			f, size, err := h.blobs.Open(u.Blob)
			require.NoError(t, err)
			defer f.Close()
			assert.Equal(t, int64(len(last)), size)
			b := make([]byte, size)
			_, err = f.ReadAt(b, 0)
			if size > 0 {
				require.NoError(t, err)
			}
			assert.Equal(t, last, string(b), "the blob holds the last body")
		})
	}
}

// TestReceiveUploadRefusals: without a blob directory nothing is stored;
// a PUT to an unknown slot changes no slot.
func TestReceiveUploadRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	h := newArtHarness(t, artOptions{noBlobs: true})
	u := h.upload(t, artKey, "a.wav", nil)
	_, err := h.e.Uploads.ReceiveUpload(ctx, u.ID, strings.NewReader(artWAV))
	assert.EqualError(t, err, "uploads need a blob directory")
	got, err := h.e.Uploads.Upload(ctx, u.ID)
	require.NoError(t, err)
	assert.False(t, got.Uploaded)

	h = newArtHarness(t, artOptions{})
	_, err = h.e.Uploads.ReceiveUpload(ctx, "00000000-0000-4000-8000-000000000000", strings.NewReader(artWAV))
	assert.ErrorIs(t, err, sim.ErrNotFound)
}

// TestInspectBlob: what an upload or download records of a stored file.
func TestInspectBlob(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		opts     artOptions
		content  *string // nil: no such blob
		format   string
		duration *float64
		media    sim.MediaFormat
	}{
		{"a media file", artOptions{}, ptr(artMP4), "mp4", secs(4 * time.Second), artFiles[artMP4].media},
		{"not media", artOptions{}, ptr(artNotes), "", nil, sim.MediaFormat{}},
		{"a format without a duration", artOptions{}, ptr(artHeader), "wav", nil, sim.MediaFormat{}},
		{"no such blob", artOptions{}, nil, "", nil, sim.MediaFormat{}},
		{"no inspector", artOptions{noInspect: true}, ptr(artMP4), "", nil, sim.MediaFormat{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newArtHarness(t, tc.opts)
			if tc.content != nil {
				_, err := h.blobs.Write("probe", strings.NewReader(*tc.content), 1<<20)
				require.NoError(t, err)
			}
			format, dur, mf := h.e.Uploads.files.read("probe")
			assert.Equal(t, tc.format, format)
			assert.Equal(t, tc.duration, dur)
			assert.Equal(t, tc.media, mf)
		})
	}
}

func TestParseS3(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in    string
		bucket, key string
		ok          bool
	}{
		{"bucket and key", "s3://b/k", "b", "k", true},
		{"nested key", "s3://client-bucket/films/2026/a.mp4", "client-bucket", "films/2026/a.mp4", true},
		{"not s3", "https://b/k", "", "", false},
		{"no key", "s3://bucket", "bucket", "", false},
		{"empty key", "s3://bucket/", "bucket", "", false},
		{"no bucket", "s3:///key", "", "key", false},
		{"empty", "", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bucket, key, ok := parseS3(tc.in)
			assert.Equal(t, tc.bucket, bucket)
			assert.Equal(t, tc.key, key)
			assert.Equal(t, tc.ok, ok)
		})
	}
}

func TestUploadIDOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, bucket, key string
		id                string
		ok                bool
	}{
		{"a temp path", sim.UploadBucket, "temp/abc/file.wav", "abc", true},
		{"a file name with slashes", sim.UploadBucket, "temp/abc/dir/file.wav", "abc", true},
		{"another bucket", "client-bucket", "temp/abc/file.wav", "", false},
		{"not under temp", sim.UploadBucket, "uploads/abc/file.wav", "", false},
		{"no file name", sim.UploadBucket, "temp/abc", "", false},
		{"empty key", sim.UploadBucket, "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, ok := uploadIDOf(tc.bucket, tc.key)
			assert.Equal(t, tc.id, id)
			assert.Equal(t, tc.ok, ok)
		})
	}
}

func TestFileNameOf(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, url, want string }{
		{"a file", "https://cdn.test/films/trailer.mp4", "trailer.mp4"},
		{"query and fragment dropped", "https://cdn.test/a/b.wav?sig=1#t=3", "b.wav"},
		{"a fragment only", "https://cdn.test/a/c.wav#x", "c.wav"},
		{"trailing slash", "https://cdn.test/films/", "films"},
		{"host only", "https://cdn.test", "source"},
		{"host and slash", "https://cdn.test/", "source"},
		{"no scheme", "cdn.test/x/y.mp4", "y.mp4"},
		{"a dot segment", "https://cdn.test/a/.", "source"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, fileNameOf(tc.url))
		})
	}
}

// TestFileNameOfDotDot: a URL ending in ".." names no file, as one ending
// in "." does not; the stored path would end in "/..".
func TestFileNameOfDotDot(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "source", fileNameOf("https://cdn.test/a/.."))
	assert.Equal(t, "source", baseName("folder/.."), "a bucket key ending in ..")
	assert.Equal(t, "clip.mp4", baseName("folder/clip.mp4"))
}

func TestDerivedSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, typ string
		d         time.Duration
		want      int64
	}{
		{"a video at 2.5 Mbit/s", sim.ArtifactVideo, 12 * time.Second, 12 * 2_500_000 / 8},
		{"an audio at 128 kbit/s", sim.ArtifactAudio, 12 * time.Second, 12 * 128_000 / 8},
		{"a script: 48 KiB whatever its duration", sim.ArtifactScript, time.Hour, 48 << 10},
		{"an unknown type counts as video", "other", 2 * time.Second, 2 * 2_500_000 / 8},
		{"half a second of audio", sim.ArtifactAudio, 500 * time.Millisecond, 8000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, derivedSize(tc.typ, tc.d))
		})
	}
}

// TestDerivedDurations: the fake media decides when it is wired; without
// it, a duration from 30 s to 15 min derived from the URL and the seed.
func TestDerivedDurations(t *testing.T) {
	t.Parallel()
	h := newArtHarness(t, artOptions{})
	h.media.derived["https://cdn.test/a.mp4"] = 42 * time.Second
	assert.Equal(t, 42*time.Second, h.e.Artifacts.derived("https://cdn.test/a.mp4"))
	assert.Equal(t, artDerived, h.e.Artifacts.derived("https://cdn.test/b.mp4"))

	urls := []string{"https://cdn.test/a.mp4", "https://cdn.test/b.mp4", "s3://client/c.mp4", "https://cdn.test/d.mp4"}
	derive := func() []time.Duration {
		h := newArtHarness(t, artOptions{noMedia: true})
		ds := make([]time.Duration, len(urls))
		for i, u := range urls {
			ds[i] = h.e.Artifacts.derived(u)
		}
		return ds
	}
	got := derive()
	seen := map[time.Duration]bool{}
	for i, d := range got {
		assert.GreaterOrEqual(t, d, 30*time.Second, urls[i])
		assert.Less(t, d, 900*time.Second, urls[i])
		assert.Zero(t, d%time.Second, "whole seconds")
		seen[d] = true
	}
	assert.Greater(t, len(seen), 1, "durations differ by URL")
	assert.Equal(t, got, derive(), "the same seed derives alike")
}
