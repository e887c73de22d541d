package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shortWait bounds the waits for work of the tests that hold a download.
const shortWait = 20 * time.Millisecond

// TestArtifactDownloadPending: a download held in flight is listed by
// Work; a time that needs its result waits for it (bounded: a
// *sim.PendingError), a time before does not; the artifact stays
// upload_started until the download is recorded, then completes at start +
// processing time of the size, however late the download ended.
func TestArtifactDownloadPending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newArtHarness(t, artOptions{workWait: shortWait})
	const u = "https://fetch.test/slow.wav"
	h.media.bodies[u] = artWAV
	h.media.prefix[u] = 10
	release := h.media.gate(u)
	defer release()

	a := h.create(t, artKey, sim.NewArtifact{Name: "Slow", Type: sim.ArtifactAudio, URL: u})
	assert.True(t, a.Pending)
	require.Equal(t, u, h.media.nextDownload(t))
	start := t0.Add(sim.DefaultStudioTiming.ArtifactStart)
	needed := processingEnd(start, 0)
	want := sim.Work{Kind: WorkDownload, Resource: "artifact", ID: a.ID, URL: u, StartedAt: t0, NeededAt: needed,
		WaitingFor: waitBody, Bytes: 10}
	assert.Equal(t, []sim.Work{want}, h.e.Clock.Work())
	assert.Equal(t, "download of "+u+" for artifact "+a.ID+" (waiting for the rest of the body; 10 bytes so far)", want.String())

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		at   time.Time
		id   string
		want *sim.PendingError
	}{
		{"a time before the result is needed", ctx, needed.Add(-time.Nanosecond), a.ID, nil},
		{"another artifact", ctx, needed, "0123456789abcdef01234567", nil},
		{"the time it is needed", ctx, needed, a.ID, &sim.PendingError{At: needed, Waited: shortWait, Pending: []sim.Work{want}}},
		{"any artifact, later", ctx, needed.Add(time.Hour), "", &sim.PendingError{At: needed.Add(time.Hour), Waited: shortWait, Pending: []sim.Work{want}}},
		{"a canceled wait", canceled, needed, a.ID, &sim.PendingError{At: needed, Waited: shortWait, Pending: []sim.Work{want}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pe := h.e.Artifacts.work.waitFor(tc.ctx, tc.at, tc.id)
			assert.Equal(t, tc.want, pe)
		})
	}

	at, err := h.e.Clock.Advance(ctx, time.Hour)
	var pending *sim.PendingError
	require.ErrorAs(t, err, &pending, "the advance waited for the download in vain")
	assert.Equal(t, &sim.PendingError{At: at, Waited: shortWait, Pending: []sim.Work{want}}, pending)
	assert.EqualError(t, err, "after waiting 20ms, the clock moved to "+sim.StudioTime(at)+
		", but this background work the new time depends on is still running: "+want.String())

	got := h.get(t, artKey, a.ID)
	assert.Equal(t, sim.ArtifactStarted, got.Status, "processing waits for the download")
	assert.Equal(t, start, got.UpdatedAt)
	assert.True(t, got.Pending)
	assert.True(t, got.DueAt.IsZero(), "nothing is due until the download is recorded")

	release()
	h.e.Artifacts.WaitDownloads()
	assert.Empty(t, h.e.Clock.Work())
	assert.Nil(t, h.e.Artifacts.work.waitFor(ctx, at, ""))
	stored := h.stored(t, a.ID)
	assert.False(t, stored.Pending)
	assert.Equal(t, sim.ArtifactResult{Known: true, Origin: "media", Size: wavLen(), Duration: secs(1500 * time.Millisecond),
		Blob: "artifact-" + a.ID + "-0", Stored: wavLen()}, stored.Result)
	end := processingEnd(start, wavLen())
	assert.Equal(t, end, stored.DoneAt, "the end follows the size, not the real time the download took")
	assert.Equal(t, end, stored.DueAt)

	got = h.get(t, artKey, a.ID)
	require.Equal(t, sim.ArtifactCompleted, got.Status)
	assert.Equal(t, end, got.UpdatedAt)
	assert.Equal(t, ptr(wavLen()), got.Size)
	assert.Equal(t, secs(1500*time.Millisecond), got.Duration)
	f, size, err := h.blobs.Open(stored.Result.Blob)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Equal(t, wavLen(), size, "the download is kept as a blob")
}

// TestArtifactDownloadBeforeTheStart: a download recorded while the
// artifact is still created leaves the start due first.
func TestArtifactDownloadBeforeTheStart(t *testing.T) {
	t.Parallel()
	h := newArtHarness(t, artOptions{})
	const u = "https://fetch.test/clip.mp4"
	h.media.bodies[u] = artMP4
	a := h.create(t, artKey, sim.NewArtifact{Name: "Clip", Type: sim.ArtifactVideo, URL: u})
	h.e.Artifacts.WaitDownloads()
	stored := h.stored(t, a.ID)
	assert.Equal(t, sim.ArtifactCreated, stored.Status)
	assert.False(t, stored.Pending)
	assert.Equal(t, a.StartAt, stored.DueAt, "the start is due first")
	assert.Equal(t, processingEnd(a.StartAt, int64(len(artMP4))), stored.DoneAt)
}

// TestForceArtifactWhileDownloading: a forced outcome ends the wait for a
// download; the download's result, when it comes, changes nothing.
func TestForceArtifactWhileDownloading(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newArtHarness(t, artOptions{workWait: shortWait})
	const u = "https://fetch.test/slow.mp4"
	h.media.bodies[u] = artMP4
	release := h.media.gate(u)
	defer release()
	a := h.create(t, artKey, sim.NewArtifact{Name: "Slow", Type: sim.ArtifactVideo, URL: u})
	require.Equal(t, u, h.media.nextDownload(t))
	h.clock.Advance(10 * time.Second) // no sweep: the download is still in flight

	forced, err := h.e.Outcomes.ForceArtifact(ctx, a.ID, sim.ForceError, "Upstream timeout", nil, nil, true)
	require.NoError(t, err)
	assert.Equal(t, sim.ArtifactFailed, forced.Status)
	assert.Equal(t, "Upstream timeout", forced.ErrorMessage)
	assert.Equal(t, t0.Add(10*time.Second), forced.UpdatedAt)
	assert.False(t, forced.Pending)

	release()
	h.e.Artifacts.WaitDownloads()
	assert.Equal(t, forced, h.stored(t, a.ID), "the download's result came too late")
	assert.Equal(t, forced, h.get(t, artKey, a.ID))
}

// TestArtifactDownloadResumesAfterRestart: an engine closed while a
// download runs leaves the artifact pending; an engine opened on the same
// store downloads it again at Start, resolving the other parts with the
// creator's credentials as they are then, and ends it at start +
// processing time.
func TestArtifactDownloadResumesAfterRestart(t *testing.T) {
	t.Parallel()
	const u = "https://fetch.test/slow.wav"
	const outro = "s3://client-bucket/outro.mp4"
	tests := []struct {
		name string
		na   sim.NewArtifact
		// before runs on the first engine once the artifact exists.
		before   func(t *testing.T, h *artHarness)
		status   string
		size     int64
		duration *float64
		errMsg   string
	}{
		{"a URL", sim.NewArtifact{Name: "Slow", Type: sim.ArtifactAudio, URL: u}, nil,
			sim.ArtifactCompleted, wavLen(), secs(1500 * time.Millisecond), ""},
		{"fragments with a bucket fragment", sim.NewArtifact{Name: "Slow", Type: sim.ArtifactVideo,
			Fragments: []sim.Fragment{{URL: u}, {S3Path: outro, StartTime: 1.5}}}, nil,
			sim.ArtifactCompleted, wavLen() + videoBytes(120), secs(121500 * time.Millisecond), ""},
		{"fragments whose bucket credentials were removed meanwhile", sim.NewArtifact{Name: "Slow", Type: sim.ArtifactVideo,
			Fragments: []sim.Fragment{{URL: u}, {S3Path: outro, StartTime: 1.5}}}, func(t *testing.T, h *artHarness) {
			_, err := h.e.Accounts.SetAccountStudio(context.Background(), artKey, sim.AccountStudioChange{SetStorage: true})
			require.NoError(t, err)
		}, sim.ArtifactFailed, wavLen(), nil, fmt.Sprintf(sim.MsgNoCredentials, "client-bucket")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir := t.TempDir()
			path, blobDir := filepath.Join(dir, "dubsim.db"), filepath.Join(dir, "blobs")
			media := newArtMedia()
			media.bodies[u] = artWAV
			release := media.gate(u)
			defer release()
			opts := artOptions{workWait: shortWait}

			h := openArtHarness(t, path, blobDir, media, opts, sim.NewSimClock(func() time.Time { return t0 }, 0))
			h.storage(t, artKey, "client-bucket")
			a := h.create(t, artKey, tc.na)
			require.Equal(t, u, media.nextDownload(t), "the download is under way")
			if tc.before != nil {
				tc.before(t, h)
			}
			at, err := h.e.Clock.Advance(ctx, time.Hour)
			var pending *sim.PendingError
			require.ErrorAs(t, err, &pending)
			require.Len(t, pending.Pending, 1)
			assert.Equal(t, a.ID, pending.Pending[0].ID)
			h.closeEng() // stops the download
			assert.Empty(t, h.e.Clock.Work())
			stored := h.stored(t, a.ID)
			assert.Equal(t, sim.ArtifactStarted, stored.Status)
			assert.True(t, stored.Pending, "a stopped download is not recorded")
			require.NoError(t, h.st.Close())

			h = openArtHarness(t, path, blobDir, media, opts, sim.NewSimClock(func() time.Time { return t0 }, 0))
			require.Equal(t, u, media.nextDownload(t), "Start resumed the download")
			assert.Equal(t, at, h.e.Clock.Now(), "the clock resumes where it stopped")
			work := h.e.Clock.Work()
			require.Len(t, work, 1)
			assert.Equal(t, a.ID, work[0].ID)
			assert.Equal(t, at, work[0].StartedAt)
			assert.Equal(t, processingEnd(a.StartAt, 0), work[0].NeededAt)
			release()
			h.e.Artifacts.WaitDownloads()

			got := h.get(t, artKey, a.ID)
			require.Equal(t, tc.status, got.Status, "%+v", got)
			assert.Equal(t, processingEnd(a.StartAt, tc.size), got.UpdatedAt)
			assert.Equal(t, tc.errMsg, got.ErrorMessage)
			assert.Equal(t, tc.duration, got.Duration)
			if tc.status == sim.ArtifactCompleted {
				assert.Equal(t, ptr(tc.size), got.Size)
			}
		})
	}
}

// TestArtifactDownloadStoppedBeforeASlot: a download waiting for a slot
// when the engine closes ends without a result; it resumes at the next
// Start.
func TestArtifactDownloadStoppedBeforeASlot(t *testing.T) {
	t.Parallel()
	h := newArtHarness(t, artOptions{workWait: shortWait})
	urls := make([]string, maxDownloads+1)
	for i := range urls { // the fake media is set up before any download runs
		urls[i] = fmt.Sprintf("https://fetch.test/%d.wav", i)
		h.media.bodies[urls[i]] = artWAV
		defer h.media.gate(urls[i])()
	}
	var ids []string
	for _, u := range urls {
		ids = append(ids, h.create(t, artKey, sim.NewArtifact{Name: "A", Type: sim.ArtifactAudio, URL: u}).ID)
	}
	for range maxDownloads {
		h.media.nextDownload(t)
	}
	work := h.e.Clock.Work()
	require.Len(t, work, maxDownloads+1)
	slots := 0
	for _, w := range work {
		if w.WaitingFor == fmt.Sprintf(waitSlot, maxDownloads) {
			slots++
		}
	}
	assert.Equal(t, 1, slots, "one download waits for a slot: %v", work)
	h.closeEng()
	assert.Empty(t, h.e.Clock.Work())
	for _, id := range ids {
		assert.True(t, h.stored(t, id).Pending, id)
	}
}

// TestRestartDownloadsStoreError: Start reports a store that cannot be read.
func TestRestartDownloadsStoreError(t *testing.T) {
	t.Parallel()
	h := newArtHarness(t, artOptions{})
	require.NoError(t, h.st.Close())
	err := h.e.Artifacts.restartDownloads(context.Background())
	require.Error(t, err)
	assert.False(t, errors.Is(err, sim.ErrNotFound))
}

// TestArtifactDownloadsShareTheProcess: engines of one QuotaPool run at
// most its download slots at once together; a download of another engine
// waits for one, and runs when it is freed.
func TestArtifactDownloadsShareTheProcess(t *testing.T) {
	t.Parallel()
	pool := newQuotaPool(1)
	a, b := newArtHarness(t, artOptions{workWait: shortWait, pool: pool}), newArtHarness(t, artOptions{workWait: shortWait, pool: pool})
	const u = "https://fetch.test/a.wav"
	for _, h := range []*artHarness{a, b} {
		h.media.bodies[u] = artWAV
	}
	release := a.media.gate(u)
	a.create(t, artKey, sim.NewArtifact{Name: "A", Type: sim.ArtifactAudio, URL: u})
	require.Equal(t, u, a.media.nextDownload(t), "a's download runs")

	b.create(t, artKey, sim.NewArtifact{Name: "B", Type: sim.ArtifactAudio, URL: u})
	require.Eventually(t, func() bool {
		work := b.e.Clock.Work()
		return len(work) == 1 && work[0].WaitingFor == fmt.Sprintf(waitShared, 1)
	}, 10*time.Second, time.Millisecond, "b's download waits for the process's slot")

	release()
	require.Equal(t, u, b.media.nextDownload(t), "b's download runs once a's ends")
	a.e.Artifacts.WaitDownloads()
	b.e.Artifacts.WaitDownloads()
}
