package engine

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// receiptIdem renders a receipt as a handler would, counting the renders.
func receiptIdem(key string, renders *int) *sim.IdemWrite[sim.Receipt] {
	return &sim.IdemWrite[sim.Receipt]{Scope: "scope", Key: key, Fingerprint: "fp-" + key,
		Render: func(rc sim.Receipt) (int, string, []byte, error) {
			*renders++
			return http.StatusCreated, "application/json", []byte(`{"project_id":"` + rc.ProjectID + `"}`), nil
		}}
}

// A creation passed an idempotency record stores it in its own transaction:
// the record is there as soon as the use case returns, with the answer
// rendered from the committed result; a refused creation stores none.
func TestIdempotencyRecordIsStoredWithTheWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, nil)
	rich := h.account(t, sim.PlanPro, 100, true)
	poor := h.account(t, sim.PlanPro, 0, true)

	renders := 0
	rc, err := h.e.Projects.CreateProject(ctx, rich, newProject("https://v/a"), receiptIdem("k1", &renders))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, renders, 1)
	rec, found, err := h.e.Idempotency.IdempotencyLookup(ctx, "scope", "k1")
	require.NoError(t, err)
	require.True(t, found, "the record is stored by the creation itself")
	assert.Equal(t, sim.IdemRecord{Fingerprint: "fp-k1", Status: http.StatusCreated, ContentType: "application/json",
		Body: []byte(`{"project_id":"` + rc.ProjectID + `"}`), CreatedAt: t0}, rec)

	_, err = h.e.Projects.CreateProject(ctx, poor, newProject("https://v/b"), receiptIdem("k2", &renders))
	require.Equal(t, sim.CodePaymentRequired, sim.ErrorCode(err))
	_, found, err = h.e.Idempotency.IdempotencyLookup(ctx, "scope", "k2")
	require.NoError(t, err)
	assert.False(t, found, "a refused creation stores no record")

	_, err = h.e.Projects.CreateProject(ctx, rich, newProject("https://v/c"), nil)
	require.NoError(t, err, "no record asked for")
}

// A re-translation stores its record likewise; a dry run never does.
func TestIdempotencyRecordOfARetranslation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, nil)
	key := h.account(t, sim.PlanPro, 100, true)
	rc, err := h.e.Projects.CreateProject(ctx, key, newProject("https://v/r"), nil)
	require.NoError(t, err)
	_, err = h.e.Clock.Advance(ctx, time.Hour)
	require.NoError(t, err)
	in := sim.RetranslationInput{
		TargetScript:   []sim.SegmentInput{seg(100, 400, "Au revoir le monde, mes amis, et merci!", 1)},
		TargetSpeakers: []sim.SpeakerInput{spk(1, "feminine", frVoice)},
	}

	renders := 0
	_, err = h.e.Projects.Retranslate(ctx, key, rc.ProjectID, in, true, receiptIdem("dry", &renders))
	require.NoError(t, err)
	_, found, err := h.e.Idempotency.IdempotencyLookup(ctx, "scope", "dry")
	require.NoError(t, err)
	assert.False(t, found, "a dry run writes nothing")

	rr, err := h.e.Projects.Retranslate(ctx, key, rc.ProjectID, in, false, receiptIdem("real", &renders))
	require.NoError(t, err)
	rec, found, err := h.e.Idempotency.IdempotencyLookup(ctx, "scope", "real")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, `{"project_id":"`+rr.ProjectID+`"}`, string(rec.Body))
}
