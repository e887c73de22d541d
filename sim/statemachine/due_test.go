package statemachine

import (
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
)

// The due rules are the one place that says when a resource has a
// transition to apply; each is checked at the edges of its due time.
func TestDue(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	before, after := t0.Add(-time.Nanosecond), t0.Add(time.Hour)
	tests := []struct {
		name string
		due  func(now time.Time) bool
		want [3]bool // at before, at t0, at after
	}{
		{"project in progress", func(now time.Time) bool {
			return ProjectDue(sim.Project{Status: sim.StatusInProgress, DueAt: t0}, now)
		}, [3]bool{false, true, true}},
		{"project in progress without a due time", func(now time.Time) bool {
			return ProjectDue(sim.Project{Status: sim.StatusInProgress}, now)
		}, [3]bool{false, false, false}},
		{"ready project with a stale due time", func(now time.Time) bool {
			return ProjectDue(sim.Project{Status: sim.StatusReady, DueAt: t0}, now)
		}, [3]bool{false, false, false}},
		{"artifact", func(now time.Time) bool { return ArtifactDue(sim.Artifact{DueAt: t0}, now) }, [3]bool{false, true, true}},
		{"artifact waiting for a download", func(now time.Time) bool { return ArtifactDue(sim.Artifact{}, now) }, [3]bool{false, false, false}},
		{"video", func(now time.Time) bool { return VideoDue(sim.Video{DueAt: t0}, now) }, [3]bool{false, true, true}},
		{"video whose status a client wrote", func(now time.Time) bool { return VideoDue(sim.Video{}, now) }, [3]bool{false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, [3]bool{tt.due(before), tt.due(t0), tt.due(after)})
		})
	}
	// Due agrees with Next: a project is due exactly when Next changes it.
	p := sim.Project{ID: "p", Status: sim.StatusInProgress, DueAt: t0, CreatedAt: t0.Add(-time.Hour)}
	for _, now := range []time.Time{before, t0, after} {
		np, _ := Next(p, now)
		assert.Equal(t, ProjectDue(p, now), np.Status != p.Status, "at %s", now)
	}
}

func TestVideoDueAfter(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	timing := sim.DefaultStudioTiming
	ninety := 90.0
	v := sim.Video{DurationSeconds: &ninety}
	tests := []struct {
		name   string
		v      sim.Video
		status string
		want   time.Time
	}{
		{"new waits the start delay", v, sim.VideoNew, at.Add(timing.VideoStart)},
		{"in_progress lasts the processing of its duration", v, sim.VideoInProgress, at.Add(timing.VideoProcessing(90 * time.Second))},
		{"in_progress without a duration: the base time", sim.Video{}, sim.VideoInProgress, at.Add(timing.VideoProcessing(0))},
		{"completed does not move", v, sim.VideoCompleted, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, VideoDueAfter(tt.v, tt.status, at, timing))
		})
	}
}
