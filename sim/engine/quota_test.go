package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Uploads count against the company's quota and the total one; a file that
// would pass either is refused (and not stored) with a QuotaError naming
// it, and a replaced file does not count twice.
func TestUploadQuotas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newArtHarness(t, artOptions{quota: sim.BlobQuota{Total: 25, PerCompany: 15}})
	put := func(key string, size int) (sim.Upload, error) {
		u := h.upload(t, key, "a.wav", nil)
		return h.e.Uploads.ReceiveUpload(ctx, u.ID, strings.NewReader(strings.Repeat("x", size)))
	}
	reason := func(err error) string {
		var qe *sim.QuotaError
		require.True(t, errors.As(err, &qe), "a QuotaError: %v", err)
		return qe.Reason
	}

	first, err := put(artKey, 10)
	require.NoError(t, err)
	_, err = put(artColleague, 6) // the same company: 16 > 15
	assert.Equal(t, "the files of your company would exceed its storage quota of 0.000000015 GB", reason(err))
	_, err = put(artColleague, 5) // 15: at the quota
	require.NoError(t, err)
	_, err = put(artKey, 0)
	assert.Contains(t, reason(err), "your company", "nothing left: even an empty file")

	again, err := h.e.Uploads.ReceiveUpload(ctx, first.ID, strings.NewReader(strings.Repeat("y", 10)))
	require.NoError(t, err, "a replaced file does not count twice")
	assert.Equal(t, int64(10), again.Size)

	_, err = put(artOther, 10) // another company: 25 in all
	require.NoError(t, err)
	_, err = put(artOther, 1)
	assert.Equal(t, "the files stored by this simulator would exceed its storage quota of 0.000000025 GB", reason(err))
	got, err := h.e.Uploads.Upload(ctx, first.ID)
	require.NoError(t, err)
	assert.True(t, got.Uploaded)

	h.e.Artifacts.quota.pool.mu.Lock()
	defer h.e.Artifacts.quota.pool.mu.Unlock()
	assert.Empty(t, h.e.Artifacts.quota.reserved, "nothing in flight once done")
	assert.Zero(t, h.e.Artifacts.quota.pool.reservedTotal)
}

// A company may have PresignsPerCompany uploads outstanding; a used one no
// longer counts, nor does another company's.
func TestPresignsPerCompany(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newArtHarness(t, artOptions{quota: sim.BlobQuota{PresignsPerCompany: 2}})
	u := h.upload(t, artKey, "a.wav", nil)
	h.upload(t, artColleague, "b.wav", nil)
	_, err := h.e.Uploads.PresignUpload(ctx, h.caller(t, artKey), "c.wav")
	assert.Equal(t, sim.CodeForbidden, sim.ErrorCode(err))
	assert.Equal(t, "At most 2 presigned uploads may be outstanding per company; upload to the ones you have or let them expire (24 hours)", sim.ErrorMessage(err))
	h.upload(t, artOther, "d.wav", nil)

	_, err = h.e.Uploads.ReceiveUpload(ctx, u.ID, strings.NewReader("x"))
	require.NoError(t, err)
	h.upload(t, artKey, "e.wav", nil)
}

// Downloaded artifacts count toward the quotas like uploads (fidelity HX2):
// a download that would pass one fails the artifact, naming the quota, and
// keeps no file; one that fits counts against the next upload.
func TestDownloadQuotas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	size := int(wavLen())
	h := newArtHarness(t, artOptions{quota: sim.BlobQuota{PerCompany: int64(2*size + 5)}})
	const u = "https://fetch.test/a.wav"
	h.media.bodies[u] = artWAV

	first := h.create(t, artKey, sim.NewArtifact{Name: "A", Type: sim.ArtifactAudio, URL: u})
	h.e.Artifacts.WaitDownloads()
	assert.Equal(t, wavLen(), h.stored(t, first.ID).Result.Stored)
	upload := h.upload(t, artColleague, "b.wav", nil)
	_, err := h.e.Uploads.ReceiveUpload(ctx, upload.ID, strings.NewReader(strings.Repeat("x", size)))
	require.NoError(t, err)

	second := h.create(t, artKey, sim.NewArtifact{Name: "B", Type: sim.ArtifactAudio, URL: u})
	h.e.Artifacts.WaitDownloads()
	got := h.stored(t, second.ID)
	assert.Equal(t, "download of "+u+" failed: the files of your company would exceed its storage quota of "+gb(int64(2*size+5)), got.Result.Fail)
	assert.Zero(t, got.Result.Stored)
	assert.Empty(t, got.Result.Blob)
	_, _, err = h.blobs.Open("artifact-" + second.ID + "-0")
	assert.Error(t, err, "the file of a failed download is not kept")

	other := h.create(t, artOther, sim.NewArtifact{Name: "C", Type: sim.ArtifactAudio, URL: u})
	h.e.Artifacts.WaitDownloads()
	assert.Empty(t, h.stored(t, other.ID).Result.Fail, "another company has its own quota")

	upload = h.upload(t, artKey, "c.wav", nil)
	_, err = h.e.Uploads.ReceiveUpload(ctx, upload.ID, strings.NewReader(strings.Repeat("x", 6)))
	var qe *sim.QuotaError
	assert.ErrorAs(t, err, &qe, "the downloaded file counts against an upload")

	h.e.Artifacts.quota.pool.mu.Lock()
	defer h.e.Artifacts.quota.pool.mu.Unlock()
	assert.Empty(t, h.e.Artifacts.quota.reserved, "nothing in flight once done")
}

// A company may have DownloadsPerCompany downloads pending (fidelity HX1);
// the next creation is refused, another company's is not, and a finished
// download frees its place.
func TestDownloadsPerCompany(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newArtHarness(t, artOptions{quota: sim.BlobQuota{DownloadsPerCompany: 2}})
	const u = "https://fetch.test/slow.wav"
	h.media.bodies[u] = artWAV
	release := h.media.gate(u)
	defer release()
	na := sim.NewArtifact{Name: "Slow", Type: sim.ArtifactAudio, URL: u}
	h.create(t, artKey, na)
	h.create(t, artColleague, sim.NewArtifact{Name: "Frags", Type: sim.ArtifactAudio, Fragments: []sim.Fragment{{URL: u}, {URL: u}}})
	_, err := h.e.Artifacts.CreateArtifact(ctx, h.caller(t, artKey), na, nil)
	assert.Equal(t, sim.CodeForbidden, sim.ErrorCode(err))
	assert.Equal(t, "At most 2 artifact downloads may be pending per company; create more once some have finished (their status leaves created)", sim.ErrorMessage(err))
	h.create(t, artOther, na)
	h.create(t, artKey, sim.NewArtifact{Name: "Derived", Type: sim.ArtifactAudio, URL: "https://elsewhere.test/x.wav"})

	release()
	h.e.Artifacts.WaitDownloads()
	h.create(t, artKey, na)
	h.e.Artifacts.WaitDownloads()
	h.e.Artifacts.pendingMu.Lock()
	defer h.e.Artifacts.pendingMu.Unlock()
	assert.Empty(t, h.e.Artifacts.pending, "nothing pending once done")
}

// Without FetchErrorDetail, a downloaded file that is not media is failed
// like an unreachable URL (fidelity HX3).
func TestDownloadGenericError(t *testing.T) {
	t.Parallel()
	h := newArtHarness(t, artOptions{genericErrors: true})
	const u = "https://fetch.test/notes.mp4"
	h.media.bodies[u] = artNotes
	a := h.create(t, artKey, sim.NewArtifact{Name: "Notes", Type: sim.ArtifactVideo, URL: u})
	h.e.Artifacts.WaitDownloads()
	assert.Equal(t, fmt.Sprintf(sim.MsgDownloadUnreadable, u), h.stored(t, a.ID).Result.Fail)
}
