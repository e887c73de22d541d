package statemachine

import (
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
)

// TestNextArtifact covers every artifact transition and the timestamp each
// one writes: created -> upload_started at StartAt; upload_started ->
// upload_completed or upload_failed at DoneAt once the result is known and
// no download is pending; both in one call when now is past DoneAt.
func TestNextArtifact(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	start, done := t0.Add(2*time.Second), t0.Add(7*time.Second)
	dur := 12.5
	base := sim.Artifact{ID: "a", Type: sim.ArtifactVideo, Status: sim.ArtifactCreated, CreatedAt: t0, UpdatedAt: t0,
		StartAt: start, DoneAt: done, DueAt: start,
		Result: sim.ArtifactResult{Known: true, Size: 4096, Duration: &dur}}
	with := func(f func(a *sim.Artifact)) sim.Artifact {
		a := base
		f(&a)
		return a
	}
	started := func(a *sim.Artifact) { a.Status, a.UpdatedAt, a.DueAt = sim.ArtifactStarted, start, done }
	type want struct {
		status  string
		updated time.Time
		due     time.Time
		size    *int64
		dur     *float64
		errMsg  string
	}
	size := int64(4096)
	tests := []struct {
		name string
		in   sim.Artifact
		now  time.Time
		want want
	}{
		{"created, before StartAt", base, start.Add(-time.Nanosecond),
			want{status: sim.ArtifactCreated, updated: t0, due: start}},
		{"created, at StartAt: upload_started, due at DoneAt", base, start,
			want{status: sim.ArtifactStarted, updated: start, due: done}},
		{"created, a download pending: upload_started, nothing due", with(func(a *sim.Artifact) { a.Pending = true }), done.Add(time.Hour),
			want{status: sim.ArtifactStarted, updated: start}},
		{"created, long past DoneAt: both transitions, stamped at DoneAt", base, done.Add(24 * time.Hour),
			want{status: sim.ArtifactCompleted, updated: done, size: &size, dur: &dur}},
		{"started, before DoneAt", with(started), done.Add(-time.Nanosecond),
			want{status: sim.ArtifactStarted, updated: start, due: done}},
		{"started, at DoneAt: completed with size and duration", with(started), done,
			want{status: sim.ArtifactCompleted, updated: done, size: &size, dur: &dur}},
		{"started, result not known yet (upload unresolved)", with(func(a *sim.Artifact) { started(a); a.Result.Known = false }), done.Add(time.Hour),
			want{status: sim.ArtifactStarted, updated: start, due: done}},
		{"started, a download pending", with(func(a *sim.Artifact) { started(a); a.Pending, a.DueAt = true, time.Time{} }), done.Add(time.Hour),
			want{status: sim.ArtifactStarted, updated: start}},
		{"started, failure known: upload_failed with the message, no size", with(func(a *sim.Artifact) { started(a); a.Result.Fail = "Processing failed" }), done,
			want{status: sim.ArtifactFailed, updated: done, errMsg: "Processing failed"}},
		{"a script: size, never a duration", with(func(a *sim.Artifact) { started(a); a.Type = sim.ArtifactScript }), done,
			want{status: sim.ArtifactCompleted, updated: done, size: &size}},
		{"no duration known: size only", with(func(a *sim.Artifact) { started(a); a.Result.Duration = nil }), done,
			want{status: sim.ArtifactCompleted, updated: done, size: &size}},
		{"DoneAt before StartAt (forced to end now): stamped at StartAt", with(func(a *sim.Artifact) { a.DoneAt = t0 }), start,
			want{status: sim.ArtifactCompleted, updated: start, size: &size, dur: &dur}},
		{"completed stays completed", with(func(a *sim.Artifact) { a.Status, a.UpdatedAt, a.DueAt = sim.ArtifactCompleted, done, time.Time{} }), done.Add(time.Hour),
			want{status: sim.ArtifactCompleted, updated: done}},
		{"failed stays failed", with(func(a *sim.Artifact) { a.Status, a.UpdatedAt, a.DueAt = sim.ArtifactFailed, done, time.Time{} }), done.Add(time.Hour),
			want{status: sim.ArtifactFailed, updated: done}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := NextArtifact(tc.in, tc.now)
			assert.Equal(t, tc.want.status, got.Status)
			assert.Equal(t, tc.want.updated, got.UpdatedAt, "updatedAt is the time of the last transition")
			assert.Equal(t, tc.want.due, got.DueAt, "the next due time (zero: none)")
			assert.Equal(t, tc.want.size, got.Size)
			assert.Equal(t, tc.want.dur, got.Duration)
			assert.Equal(t, tc.want.errMsg, got.ErrorMessage)
			assert.Equal(t, t0, got.CreatedAt, "createdAt never changes")
			again := NextArtifact(got, tc.now)
			assert.Equal(t, got, again, "applying the rule again at the same time changes nothing")
		})
	}
	t.Run("the input is not modified", func(t *testing.T) {
		t.Parallel()
		in := with(started)
		_ = NextArtifact(in, done)
		assert.Equal(t, with(started), in)
	})
}

// TestNextVideo covers the automatic video lifecycle and its timestamps:
// new -> in_progress at DueAt, in_progress -> completed after the
// processing time of its duration, both in one call when far past, and a
// video whose status a client wrote (zero DueAt) never moves.
func TestNextVideo(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	timing := sim.DefaultStudioTiming // in_progress lasts 10 min + 1 min per minute of video
	begin := t0.Add(timing.VideoStart)
	ninety := 90.0
	procNone, procNinety := timing.VideoProcessing(0), timing.VideoProcessing(90*time.Second)
	base := sim.Video{ID: "v", Status: sim.VideoNew, CreatedAt: t0, UpdatedAt: t0, DueAt: begin, DurationSeconds: &ninety}
	with := func(f func(v *sim.Video)) sim.Video {
		v := base
		f(&v)
		return v
	}
	tests := []struct {
		name    string
		in      sim.Video
		now     time.Time
		status  string
		updated time.Time
		due     time.Time
	}{
		{"new, before DueAt", base, begin.Add(-time.Nanosecond), sim.VideoNew, t0, begin},
		{"new, at DueAt: in_progress, due after processing of 90 s of video", base, begin,
			sim.VideoInProgress, begin, begin.Add(procNinety)},
		{"in_progress, at its due time: completed", with(func(v *sim.Video) {
			v.Status, v.UpdatedAt, v.DueAt = sim.VideoInProgress, begin, begin.Add(procNinety)
		}), begin.Add(procNinety), sim.VideoCompleted, begin.Add(procNinety), time.Time{}},
		{"new, far past: both transitions, each stamped at its own time", base, begin.Add(24 * time.Hour),
			sim.VideoCompleted, begin.Add(procNinety), time.Time{}},
		{"no duration: the base processing time", with(func(v *sim.Video) { v.DurationSeconds = nil }), begin.Add(procNone),
			sim.VideoCompleted, begin.Add(procNone), time.Time{}},
		{"status written by a client (zero DueAt): stays", with(func(v *sim.Video) {
			v.Status, v.UpdatedAt, v.DueAt = "needs_review", begin, time.Time{}
		}), begin.Add(24 * time.Hour), "needs_review", begin, time.Time{}},
		{"another status with a due time: unscheduled, stamped at that time", with(func(v *sim.Video) { v.Status = sim.VideoCompleted }), begin,
			sim.VideoCompleted, begin, time.Time{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := NextVideo(tc.in, tc.now, timing)
			assert.Equal(t, tc.status, got.Status)
			assert.Equal(t, tc.updated, got.UpdatedAt, "updatedAt is the time of the last transition")
			assert.Equal(t, tc.due, got.DueAt)
			assert.Equal(t, t0, got.CreatedAt, "createdAt never changes")
			assert.Equal(t, got, NextVideo(got, tc.now, timing), "applying the rule again at the same time changes nothing")
		})
	}
}
