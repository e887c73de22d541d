package engine

import (
	"context"
	"errors"
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
		assert.ErrorIs(t, err, sim.ErrStorageQuota)
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

	h.e.core.quotaMu.Lock()
	defer h.e.core.quotaMu.Unlock()
	assert.Empty(t, h.e.core.reserved, "nothing in flight once done")
	assert.Zero(t, h.e.core.reservedTotal)
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
