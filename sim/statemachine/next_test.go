package statemachine

import (
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
)

func TestNext(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	due := t0.Add(time.Minute)
	base := sim.Project{ID: "100000001", APIKey: "k", Status: sim.StatusInProgress, DueAt: due, CostMinutes: 7,
		TargetScript: []sim.Segment{{StartMS: 0, EndMS: 1000, Text: "old", SpeakerID: 1}}}
	pending := &sim.Retranslation{
		TargetScript:   []sim.Segment{{StartMS: 10, EndMS: 900, Text: "new", SpeakerID: 2}},
		TargetSpeakers: []sim.Speaker{{SpeakerID: 2, Style: sim.StyleFeminine, VoiceKey: "v"}},
		MixingMode:     sim.MixVoiceoverOnly, TTSVolume: "louder", UseFixedTimings: true,
	}
	with := func(f func(p *sim.Project)) sim.Project {
		p := base
		f(&p)
		return p
	}
	tests := []struct {
		name        string
		in          sim.Project
		now         time.Time
		wantStatus  sim.ProjectStatus
		wantGen     int
		wantRefund  int64
		wantMessage string
		wantText    string
	}{
		{name: "not yet due", in: base, now: due.Add(-time.Nanosecond), wantStatus: sim.StatusInProgress, wantText: "old"},
		{name: "due exactly: ready", in: base, now: due, wantStatus: sim.StatusReady, wantGen: 1, wantText: "old"},
		{name: "long past due: ready at due time", in: base, now: due.Add(time.Hour), wantStatus: sim.StatusReady, wantGen: 1, wantText: "old"},
		{name: "first run fails: refund", in: with(func(p *sim.Project) { p.Outcome = sim.Outcome{Error: true, Message: "boom"} }),
			now: due, wantStatus: sim.StatusError, wantRefund: 7, wantMessage: "boom", wantText: "old"},
		{name: "failed after an earlier success: no refund", in: with(func(p *sim.Project) {
			p.OutputGen = 1
			p.Outcome = sim.Outcome{Error: true, Message: "boom"}
		}), now: due, wantStatus: sim.StatusError, wantGen: 1, wantMessage: "boom", wantText: "old"},
		{name: "already refunded: no second refund", in: with(func(p *sim.Project) {
			p.Refunded = true
			p.Outcome = sim.Outcome{Error: true, Message: "boom"}
		}), now: due, wantStatus: sim.StatusError, wantMessage: "boom", wantText: "old"},
		{name: "re-translation applied", in: with(func(p *sim.Project) { p.OutputGen = 1; p.Pending = pending }),
			now: due, wantStatus: sim.StatusReady, wantGen: 2, wantText: "new"},
		{name: "ready stays ready", in: with(func(p *sim.Project) { p.Status = sim.StatusReady; p.DueAt = time.Time{} }),
			now: due.Add(time.Hour), wantStatus: sim.StatusReady, wantText: "old"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, refund := Next(tc.in, tc.now)
			assert.Equal(t, tc.wantStatus, got.Status)
			assert.Equal(t, tc.wantGen, got.OutputGen)
			assert.Equal(t, tc.wantMessage, got.ErrorMessage)
			assert.Equal(t, tc.wantText, got.TargetScript[0].Text)
			assert.Equal(t, tc.wantRefund, refund)
			if tc.wantStatus == sim.StatusInProgress {
				assert.Equal(t, tc.in, got, "nothing due: project unchanged")
				return
			}
			if tc.in.Status == sim.StatusInProgress {
				assert.True(t, got.DueAt.IsZero(), "due time cleared")
				assert.Nil(t, got.Pending)
				assert.Equal(t, sim.Outcome{}, got.Outcome)
				assert.Len(t, got.History, len(tc.in.History)+1+int(min(tc.wantRefund, 1)))
			}
			if tc.wantStatus == sim.StatusReady && tc.in.Status == sim.StatusInProgress {
				assert.Equal(t, due, got.CompletedAt, "completion is stamped at the due time, not when observed")
			}
			if tc.in.Pending != nil {
				assert.Equal(t, pending.TargetSpeakers, got.Speakers)
				assert.Equal(t, sim.MixVoiceoverOnly, got.MixingMode)
				assert.Equal(t, "louder", got.TTSVolume)
			}
		})
	}
}

func TestNextDoesNotAliasHistory(t *testing.T) {
	t.Parallel()
	hist := make([]sim.Event, 1, 4)
	p := sim.Project{Status: sim.StatusInProgress, DueAt: time.Unix(10, 0), History: hist}
	got, _ := Next(p, time.Unix(20, 0))
	got.History[0].Kind = "changed"
	assert.Empty(t, hist[0].Kind, "Next must not write into the input's backing array")
}
