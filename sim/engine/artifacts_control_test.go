package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestArtifactAccess: an artifact is visible to its company only.
func TestArtifactAccess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newArtHarness(t, artOptions{})
	a := h.create(t, artKey, sim.NewArtifact{Name: "A", Type: sim.ArtifactVideo, URL: "https://cdn.test/a.mp4"})

	tests := []struct {
		name string
		key  string
		id   string
		code sim.Code
		msg  string
	}{
		{"the creator", artKey, a.ID, "", ""},
		{"a colleague of the same company", artColleague, a.ID, "", ""},
		{"another company", artOther, a.ID, sim.CodeAccessDenied, sim.MsgArtifactDenied},
		{"an unknown id", artKey, "0123456789abcdef01234567", sim.CodeNotFound, sim.MsgStudioNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := h.e.Artifacts.Artifact(ctx, h.caller(t, tc.key), tc.id)
			if tc.code == "" {
				require.NoError(t, err)
				assert.Equal(t, a, got)
				return
			}
			assert.Equal(t, tc.code, sim.ErrorCode(err))
			assert.EqualError(t, err, tc.msg)
		})
	}
}

// TestSettleFinishedArtifact: a finished artifact never changes again.
func TestSettleFinishedArtifact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newArtHarness(t, artOptions{})
	for _, status := range []string{sim.ArtifactCompleted, sim.ArtifactFailed} {
		a := sim.Artifact{ID: "a-" + status, Status: status, StartAt: t0, DoneAt: t0, DueAt: t0.Add(time.Second),
			Result: sim.ArtifactResult{Known: false}}
		require.NoError(t, h.st.Update(ctx, func(tx sim.Tx) error {
			got, err := h.e.Artifacts.settleArtifact(tx, a, t0.Add(time.Hour))
			assert.Equal(t, a, got, status)
			return err
		}))
	}
}

// TestForceArtifact: the control API decides how an artifact's processing
// ends, at once or at its planned time, with the size and duration kept or
// given.
func TestForceArtifact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const u = "https://cdn.test/film.mp4" // derived: 120 s of video
	size := videoBytes(120)
	start := t0.Add(sim.DefaultStudioTiming.ArtifactStart)
	planned := processingEnd(start, size)
	tests := []struct {
		name     string
		source   func(t *testing.T, h *artHarness) sim.NewArtifact
		before   time.Duration // advanced before forcing
		outcome  string
		message  string
		size     *int64
		duration *float64
		now      bool
		// At the force, then at the end.
		statusAtForce string
		status        string
		end           time.Time
		wantSize      *int64
		wantDuration  *float64
		errMsg        string
	}{
		{name: "ready at once", outcome: sim.ForceReady, now: true,
			statusAtForce: sim.ArtifactCompleted, status: sim.ArtifactCompleted, end: t0, wantSize: &size, wantDuration: secs(120 * time.Second)},
		{name: "error at once, with a message", outcome: sim.ForceError, message: "Corrupt upload", now: true,
			statusAtForce: sim.ArtifactFailed, status: sim.ArtifactFailed, end: t0, errMsg: "Corrupt upload"},
		{name: "error at once, the default message", outcome: sim.ForceError, now: true,
			statusAtForce: sim.ArtifactFailed, status: sim.ArtifactFailed, end: t0, errMsg: sim.DefaultForcedError},
		{name: "error at the planned end", outcome: sim.ForceError,
			statusAtForce: sim.ArtifactCreated, status: sim.ArtifactFailed, end: planned, errMsg: sim.DefaultForcedError},
		{name: "ready at the planned end, with a size and a duration", outcome: sim.ForceReady, size: ptr(int64(123456)), duration: ptr(42.5),
			statusAtForce: sim.ArtifactCreated, status: sim.ArtifactCompleted, end: planned, wantSize: ptr(int64(123456)), wantDuration: ptr(42.5)},
		{name: "ready at once, once started", before: 3 * time.Second, outcome: sim.ForceReady, now: true,
			statusAtForce: sim.ArtifactCompleted, status: sim.ArtifactCompleted, end: t0.Add(3 * time.Second), wantSize: &size, wantDuration: secs(120 * time.Second)},
		{name: "error at the planned end, once started", before: 3 * time.Second, outcome: sim.ForceError, message: "Late failure",
			statusAtForce: sim.ArtifactStarted, status: sim.ArtifactFailed, end: planned, errMsg: "Late failure"},
		{name: "ready over a fixture failure", source: func(t *testing.T, h *artHarness) sim.NewArtifact {
			return sim.NewArtifact{Name: "A", Type: sim.ArtifactAudio, URL: "https://media.test/fail.mp4"}
		}, outcome: sim.ForceReady, size: ptr(int64(5000)), duration: ptr(3.0), now: true,
			statusAtForce: sim.ArtifactCompleted, status: sim.ArtifactCompleted, end: t0, wantSize: ptr(int64(5000)), wantDuration: ptr(3.0)},
		{name: "ready over an upload not yet PUT", source: func(t *testing.T, h *artHarness) sim.NewArtifact {
			return sim.NewArtifact{Name: "A", Type: sim.ArtifactAudio, S3Path: h.upload(t, artKey, "a.wav", nil).S3Path}
		}, outcome: sim.ForceReady, duration: ptr(1.5),
			statusAtForce: sim.ArtifactCreated, status: sim.ArtifactCompleted, end: start.Add(sim.DefaultStudioTiming.ArtifactBase),
			wantSize: ptr(int64(0)), wantDuration: ptr(1.5)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newArtHarness(t, artOptions{})
			artRules(h.media)
			na := sim.NewArtifact{Name: "A", Type: sim.ArtifactVideo, URL: u}
			if tc.source != nil {
				na = tc.source(t, h)
			}
			a := h.create(t, artKey, na)
			h.advance(t, tc.before)

			forced, err := h.e.Outcomes.ForceArtifact(ctx, a.ID, tc.outcome, tc.message, tc.size, tc.duration, tc.now)
			require.NoError(t, err)
			assert.Equal(t, tc.statusAtForce, forced.Status)
			assert.Equal(t, "forced", forced.Result.Origin)
			assert.False(t, forced.Pending)
			assert.Equal(t, forced, h.stored(t, a.ID), "stored as answered")

			h.advance(t, time.Hour)
			got := h.get(t, artKey, a.ID)
			require.Equal(t, tc.status, got.Status, "%+v", got)
			assert.Equal(t, tc.end, got.UpdatedAt)
			assert.Equal(t, tc.wantSize, got.Size)
			assert.Equal(t, tc.wantDuration, got.Duration)
			assert.Equal(t, tc.errMsg, got.ErrorMessage)
		})
	}
}

// TestForceArtifactRefusals: an unknown outcome or artifact, and an
// artifact that has finished, are refused and change nothing.
func TestForceArtifactRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newArtHarness(t, artOptions{})
	done := h.create(t, artKey, sim.NewArtifact{Name: "A", Type: sim.ArtifactVideo, URL: "https://cdn.test/a.mp4"})
	failed := h.create(t, artKey, sim.NewArtifact{Name: "B", Type: sim.ArtifactVideo, URL: "https://cdn.test/b.mp4"})
	open := h.create(t, artKey, sim.NewArtifact{Name: "C", Type: sim.ArtifactVideo, URL: "https://cdn.test/c.mp4"})
	_, err := h.e.Outcomes.ForceArtifact(ctx, done.ID, sim.ForceReady, "", nil, nil, true)
	require.NoError(t, err)
	_, err = h.e.Outcomes.ForceArtifact(ctx, failed.ID, sim.ForceError, "", nil, nil, true)
	require.NoError(t, err)
	before := map[string]sim.Artifact{}
	for _, id := range []string{done.ID, failed.ID, open.ID} {
		before[id] = h.stored(t, id)
	}

	tests := []struct {
		name, id, outcome string
		code              sim.Code
		msg               string
	}{
		{"a completed artifact", done.ID, sim.ForceError, sim.CodeConflict,
			fmt.Sprintf(sim.MsgArtifactFinished, done.ID, "upload_completed")},
		{"a failed artifact", failed.ID, sim.ForceReady, sim.CodeConflict,
			fmt.Sprintf(sim.MsgArtifactFinished, failed.ID, "upload_failed")},
		{"an unknown artifact", "0123456789abcdef01234567", sim.ForceReady, sim.CodeNotFound, fmt.Sprintf(sim.MsgArtifactNotFound, "0123456789abcdef01234567")},
		{"an unknown outcome", open.ID, "maybe", sim.CodeValidation, fmt.Sprintf(sim.MsgOutcome, "error", "ready", "maybe")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.e.Outcomes.ForceArtifact(ctx, tc.id, tc.outcome, "", nil, nil, true)
			assert.Equal(t, tc.code, sim.ErrorCode(err))
			assert.EqualError(t, err, tc.msg)
		})
	}
	for id, a := range before {
		assert.Equal(t, a, h.stored(t, id), "refusals change nothing")
	}
}

// TestArtifactOutcomeRules: rules with resource "artifact" decide how the
// next matching artifacts end (by API key, or by a pattern matched against
// the url, the s3Path or the first fragment), one use each; project rules
// leave artifacts alone.
func TestArtifactOutcomeRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newArtHarness(t, artOptions{})
	artRules(h.media)
	const fetchFirst = "https://fetch.test/frag-first.mp4"
	h.media.bodies[fetchFirst] = artMP4
	for _, r := range []sim.OutcomeRule{
		{Resource: sim.RuleArtifact, Outcome: sim.ForceError, ErrorMessage: "Transcoding cluster unavailable", Remaining: 2, SourceURLPattern: "*/flaky/*"},
		{Resource: sim.RuleArtifact, Outcome: sim.ForceReady, Remaining: 1, SourceURLPattern: "https://media.test/fail*"},
		{Resource: sim.RuleArtifact, Outcome: sim.ForceError, Remaining: 1, APIKey: artOther},
		{Resource: sim.RuleProject, Outcome: sim.ForceError, Remaining: 5, SourceURLPattern: "*/project-only/*"},
		{Resource: sim.RuleArtifact, Outcome: sim.ForceError, Remaining: 1, SourceURLPattern: "s3://client-bucket/*"},
		{Resource: sim.RuleArtifact, Outcome: sim.ForceReady, Remaining: 1, SourceURLPattern: "*/frag-first.mp4"},
	} {
		_, err := h.e.Outcomes.AddOutcomeRule(ctx, r)
		require.NoError(t, err)
	}
	video := func(url string) sim.NewArtifact { return sim.NewArtifact{Name: "A", Type: sim.ArtifactVideo, URL: url} }
	derived := videoBytes(120)
	tests := []struct {
		name   string
		key    string
		na     sim.NewArtifact
		status string
		msg    string
		size   int64 // the size processing time follows
	}{
		{"an error rule by URL pattern", artKey, video("https://cdn.test/flaky/1.mp4"), sim.ArtifactFailed, "Transcoding cluster unavailable", derived},
		{"its second use", artKey, video("https://cdn.test/flaky/2.mp4"), sim.ArtifactFailed, "Transcoding cluster unavailable", derived},
		{"used up", artKey, video("https://cdn.test/flaky/3.mp4"), sim.ArtifactCompleted, "", derived},
		{"a ready rule over a fixture failure", artKey, video("https://media.test/fail.mp4"), sim.ArtifactCompleted, "", 0},
		{"project rules do not apply to artifacts", artKey, video("https://cdn.test/project-only/x.mp4"), sim.ArtifactCompleted, "", derived},
		{"a rule of an API key, default message", artOther, sim.NewArtifact{Name: "A", Type: sim.ArtifactAudio, URL: "https://cdn.test/any.wav"},
			sim.ArtifactFailed, sim.DefaultForcedError, audioBytes(120)},
		{"a rule of an s3Path, over the missing credentials", artKey, sim.NewArtifact{Name: "A", Type: sim.ArtifactVideo, S3Path: "s3://client-bucket/a.mp4"},
			sim.ArtifactFailed, sim.DefaultForcedError, 0},
		{"a rule of the first fragment: no download", artKey, sim.NewArtifact{Name: "A", Type: sim.ArtifactVideo,
			Fragments: []sim.Fragment{{URL: fetchFirst}, {URL: "https://cdn.test/outro.mp4", StartTime: 4}}}, sim.ArtifactCompleted, "", derived},
	}
	ids := make([]string, len(tests))
	for i, tc := range tests {
		a := h.create(t, tc.key, tc.na)
		assert.False(t, a.Pending, tc.name)
		ids[i] = a.ID
	}
	assert.Empty(t, h.e.Clock.Work(), "the rule decided: nothing to download")

	rules, err := h.e.Outcomes.OutcomeRules(ctx)
	require.NoError(t, err)
	require.Len(t, rules, 1, "the artifact rules are used up: %v", rules)
	assert.Equal(t, sim.RuleProject, rules[0].Resource)
	assert.Equal(t, 5, rules[0].Remaining)

	h.advance(t, time.Hour)
	start := t0.Add(sim.DefaultStudioTiming.ArtifactStart)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := h.get(t, tc.key, ids[i])
			require.Equal(t, tc.status, got.Status, "%+v", got)
			assert.Equal(t, tc.msg, got.ErrorMessage)
			assert.Equal(t, processingEnd(start, tc.size), got.UpdatedAt)
			if tc.status == sim.ArtifactCompleted {
				require.NotNil(t, got.Size)
				assert.Equal(t, tc.size, *got.Size)
			}
		})
	}
}

// TestApplyArtifactRulesKeepsUses: a rule with uses left stays, one fewer.
func TestApplyArtifactRulesKeepsUses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newArtHarness(t, artOptions{})
	_, err := h.e.Outcomes.AddOutcomeRule(ctx, sim.OutcomeRule{Resource: sim.RuleArtifact, Outcome: sim.ForceError, Remaining: 3, ErrorMessage: "boom"})
	require.NoError(t, err)
	tests := []struct {
		name      string
		a         sim.Artifact
		result    sim.ArtifactResult
		remaining int
	}{
		{"a matching artifact", sim.Artifact{APIKey: artKey, SourceURL: "https://x/y"},
			sim.ArtifactResult{Known: true, Origin: "forced", Fail: "boom"}, 2},
		{"another", sim.Artifact{APIKey: artOther, SourcePath: "s3://b/k"},
			sim.ArtifactResult{Known: true, Origin: "forced", Fail: "boom"}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.a
			require.NoError(t, h.st.Update(ctx, func(tx sim.Tx) error { return applyArtifactRules(tx, &a) }))
			assert.Equal(t, tc.result, a.Result)
			rules, err := h.e.Outcomes.OutcomeRules(ctx)
			require.NoError(t, err)
			require.Len(t, rules, 1)
			assert.Equal(t, tc.remaining, rules[0].Remaining)
		})
	}
	t.Run("no rules: nothing changes", func(t *testing.T) {
		bare := newArtHarness(t, artOptions{})
		a := sim.Artifact{APIKey: artKey, SourceURL: "https://x/y"}
		require.NoError(t, bare.st.Update(ctx, func(tx sim.Tx) error { return applyArtifactRules(tx, &a) }))
		assert.Equal(t, sim.ArtifactResult{}, a.Result)
	})
}
