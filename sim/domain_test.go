package sim_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGlobMatch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, pattern, s string
		want             bool
	}{
		{"exact", "https://example.com/video.mp4", "https://example.com/video.mp4", true},
		{"no star, different", "https://example.com/video.mp4", "https://example.com/video.mp5", false},
		{"no star, prefix only", "https://example.com/video", "https://example.com/video.mp4", false},
		{"no star, longer pattern", "https://example.com/video.mp4x", "https://example.com/video.mp4", false},
		{"star at start", "*://media.dubsim.test/fail", "https://media.dubsim.test/fail", true},
		{"star at start, empty run", "*abc", "abc", true},
		{"star at start, wrong tail", "*://media.dubsim.test/fail", "https://media.dubsim.test/failed", false},
		{"star at end", "https://media.dubsim.test/short*", "https://media.dubsim.test/short-clip.mp4?x=1", true},
		{"star at end, empty run", "abc*", "abc", true},
		{"star at end, wrong head", "https://media.dubsim.test/short*", "http://media.dubsim.test/short", false},
		{"star in the middle", "https://*.example.com/v.mp4", "https://cdn.example.com/v.mp4", true},
		{"star in the middle, no match", "https://*.example.com/v.mp4", "https://cdn.example.org/v.mp4", false},
		{"star crosses slashes", "https://host/*/v.mp4", "https://host/a/b/c/v.mp4", true},
		{"stars at both ends", "*media.dubsim.test*", "https://media.dubsim.test/x", true},
		{"several stars need backtracking", "*a*b*c", "xxaxxbxxbxxcxxc", true},
		{"several stars, last part missing", "*a*b*c", "xxaxxbxxbxx", false},
		{"only a star", "*", "anything/at/all", true},
		{"only a star, empty string", "*", "", true},
		{"double star", "a**b", "axyzb", true},
		{"empty pattern, empty string", "", "", true},
		{"empty pattern, non-empty string", "", "a", false},
		{"non-empty pattern, empty string", "a", "", false},
		{"question mark is literal", "a?c", "abc", false},
		{"question mark matches itself", "a?c", "a?c", true},
		{"case-sensitive", "HTTPS://X", "https://x", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, sim.GlobMatch(tc.pattern, tc.s))
			assert.Equal(t, tc.want, sim.MediaRule{Pattern: tc.pattern}.Matches(tc.s))
		})
	}
}

func TestGlobMatchPathological(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, pattern, s string
		want             bool
	}{
		{"a*a*a*a*b against a's", "a*a*a*a*b", strings.Repeat("a", 100_000), false},
		{"many stars against a's", strings.Repeat("a*", 40) + "b", strings.Repeat("a", 50_000), false},
		{"many stars, match at the very end", strings.Repeat("*a", 40) + "*b", strings.Repeat("a", 50_000) + "b", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			done := make(chan bool, 1)
			go func() { done <- sim.GlobMatch(tc.pattern, tc.s) }()
			// A backtracking matcher is exponential here and never returns;
			// the documented O(len(p)*len(s)) one takes milliseconds.
			select {
			case got := <-done:
				assert.Equal(t, tc.want, got)
			case <-time.After(20 * time.Second):
				t.Fatal("GlobMatch did not finish: exponential backtracking")
			}
		})
	}
}

func TestCostMinutes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		d    time.Duration
		want int64
	}{
		{"zero", 0, 1},
		{"negative", -time.Minute, 1},
		{"1 ms", time.Millisecond, 1},
		{"12 s", 12 * time.Second, 1},
		{"59.999 s", 59_999 * time.Millisecond, 1},
		{"60 s", 60 * time.Second, 1},
		{"60.001 s", 60_001 * time.Millisecond, 2},
		{"95 s", 95 * time.Second, 2},
		{"119.999 s", 119_999 * time.Millisecond, 2},
		{"120 s", 120 * time.Second, 2},
		{"600 s", 600 * time.Second, 10},
		{"600.5 s", 600_500 * time.Millisecond, 11},
		{"1 h", time.Hour, 60},
		{"2 h", 2 * time.Hour, 120},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, sim.CostMinutes(tc.d))
		})
	}
}

func TestTiming(t *testing.T) {
	t.Parallel()
	custom := sim.Timing{Base: time.Second, PerMinute: 2 * time.Second, RetransBase: 3 * time.Second, RetransPerMinute: 4 * time.Second}
	cases := []struct {
		name                    string
		timing                  sim.Timing
		source                  time.Duration
		processing, retranslate time.Duration
	}{
		{"default, empty source", sim.DefaultTiming, 0, 60 * time.Second, 30 * time.Second},
		{"default, 10 min", sim.DefaultTiming, 10 * time.Minute, 6 * time.Minute, 130 * time.Second},
		{"default, 90 s pro rata", sim.DefaultTiming, 90 * time.Second, 105 * time.Second, 45 * time.Second},
		{"default, 2 h", sim.DefaultTiming, 2 * time.Hour, 61 * time.Minute, 30*time.Second + 20*time.Minute},
		{"custom, 30 s", custom, 30 * time.Second, 2 * time.Second, 5 * time.Second},
		{"custom, 3 min", custom, 3 * time.Minute, 7 * time.Second, 15 * time.Second},
		{"zero model", sim.Timing{}, time.Hour, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.processing, tc.timing.Processing(tc.source), "Processing")
			assert.Equal(t, tc.retranslate, tc.timing.Retranslation(tc.source), "Retranslation")
		})
	}
}

func TestPlatformTime(t *testing.T) {
	t.Parallel()
	tokyo := time.FixedZone("JST", 9*3600)
	cases := []struct {
		name string
		t    time.Time
		want string
	}{
		{"whole second UTC", time.Date(2024, 6, 5, 12, 0, 0, 0, time.UTC), "2024-06-05T12:00:00Z"},
		{"milliseconds are dropped", time.Date(2024, 6, 5, 12, 0, 0, 123_000_000, time.UTC), "2024-06-05T12:00:00Z"},
		{"truncated, not rounded", time.Date(2024, 6, 5, 12, 0, 59, 999_999_999, time.UTC), "2024-06-05T12:00:59Z"},
		{"other zone is converted to UTC", time.Date(2024, 6, 5, 9, 30, 15, 500, tokyo), "2024-06-05T00:30:15Z"},
		{"zone crossing the date", time.Date(2024, 1, 1, 3, 0, 0, 0, tokyo), "2023-12-31T18:00:00Z"},
		{"single-digit fields are padded", time.Date(2025, 2, 3, 4, 5, 6, 0, time.UTC), "2025-02-03T04:05:06Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := sim.PlatformTime(tc.t)
			assert.Equal(t, tc.want, got)
			back, err := time.Parse(time.RFC3339, got)
			require.NoError(t, err)
			assert.True(t, back.Equal(tc.t.Truncate(time.Second)), "round trip to the second")
		})
	}
}

func TestPlan(t *testing.T) {
	t.Parallel()
	cases := []struct {
		plan  sim.Plan
		rank  int
		valid bool
	}{
		{sim.PlanNone, 0, true},
		{sim.PlanSubscription, 1, true},
		{sim.PlanPro, 2, true},
		{sim.PlanEnterprise, 3, true},
		{"gold", -1, false},
		{"", -1, false},
		{"Pro", -1, false},
	}
	for _, tc := range cases {
		t.Run(string(tc.plan), func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.rank, tc.plan.Rank())
			assert.Equal(t, tc.valid, tc.plan.Valid())
			assert.True(t, tc.plan.AtLeast(tc.plan), "a plan grants its own access")
			assert.Equal(t, tc.valid, tc.plan.AtLeast(sim.PlanNone))
			assert.Equal(t, tc.rank >= 2, tc.plan.AtLeast(sim.PlanPro))
		})
	}
}

type foreignError struct{}

func (foreignError) Error() string { return "foreign" }

func TestErrorCode(t *testing.T) {
	t.Parallel()
	notFound := sim.Errorf(sim.CodeNotFound, sim.MsgUnknownVoice, "v1")
	cases := []struct {
		name    string
		err     error
		code    sim.Code
		message string
	}{
		{"nil", nil, "", ""},
		{"domain error", notFound, sim.CodeNotFound, "Unknown voice v1"},
		{"domain error as a value of type *Error", &sim.Error{Code: sim.CodeConflict, Message: "busy"}, sim.CodeConflict, "busy"},
		{"wrapped once", fmt.Errorf("engine: %w", notFound), sim.CodeNotFound, "Unknown voice v1"},
		{"wrapped twice", fmt.Errorf("api: %w", fmt.Errorf("engine: %w", sim.Errorf(sim.CodeValidation, sim.MsgRequired, "name"))), sim.CodeValidation, "name is required"},
		{"joined", errors.Join(errors.New("x"), sim.Errorf(sim.CodePaymentRequired, "pay")), sim.CodePaymentRequired, "pay"},
		{"foreign", errors.New("disk on fire"), sim.CodeInternal, ""},
		{"foreign type", foreignError{}, sim.CodeInternal, ""},
		{"store sentinel is foreign", sim.ErrNotFound, sim.CodeInternal, ""},
		{"wrapped foreign", fmt.Errorf("ctx: %w", errors.New("io")), sim.CodeInternal, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.code, sim.ErrorCode(tc.err))
			assert.Equal(t, tc.message, sim.ErrorMessage(tc.err))
		})
	}
	assert.Equal(t, "Unknown voice v1", notFound.Error())
}
