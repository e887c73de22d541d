package sim_test

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// realStart is the fake real time every clock test starts from. It is in a
// non-UTC zone on purpose: the simulated clock must hand out UTC.
var realStart = time.Date(2025, 3, 1, 12, 0, 0, 0, time.FixedZone("UTC+1", 3600))

// fakeReal is an injected source of real time: a closure over a variable the
// test moves (atomically, so the race detector accepts concurrent moves).
type fakeReal struct{ ns atomic.Int64 }

func newFakeReal(t time.Time) *fakeReal {
	f := &fakeReal{}
	f.ns.Store(t.UnixNano())
	return f
}

func (f *fakeReal) now() time.Time        { return time.Unix(0, f.ns.Load()).In(realStart.Location()) }
func (f *fakeReal) move(d time.Duration)  { f.ns.Add(int64(d)) }
func (f *fakeReal) fn() func() time.Time  { return f.now }
func ms(n int64) time.Duration            { return time.Duration(n) * time.Millisecond }
func since(c *sim.SimClock) time.Duration { return c.Now().Sub(realStart) }

// clockOp is one step of a clock scenario: move the fake real time, advance
// the clock, or change its scale; want is the simulated time after the step,
// as an offset from realStart.
type clockOp struct {
	real     time.Duration
	advance  *time.Duration
	setScale *float64
	want     time.Duration
}

func moveReal(d, want time.Duration) clockOp         { return clockOp{real: d, want: want} }
func advance(d, want time.Duration) clockOp          { return clockOp{advance: &d, want: want} }
func setScale(s float64, want time.Duration) clockOp { return clockOp{setScale: &s, want: want} }

func TestSimClockScenarios(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		scale float64
		ops   []clockOp
	}{
		{
			name:  "scale 1 follows real time",
			scale: 1,
			ops: []clockOp{
				moveReal(0, 0),
				moveReal(time.Second, time.Second),
				moveReal(90*time.Minute, 90*time.Minute+time.Second),
				moveReal(time.Nanosecond, 90*time.Minute+time.Second+time.Nanosecond),
			},
		},
		{
			name:  "scale 60 runs 60 times faster",
			scale: 60,
			ops: []clockOp{
				moveReal(time.Second, time.Minute),
				moveReal(time.Minute, 61*time.Minute),
				moveReal(ms(500), 61*time.Minute+30*time.Second),
			},
		},
		{
			name:  "scale 0.5 runs at half speed",
			scale: 0.5,
			ops: []clockOp{
				moveReal(10*time.Second, 5*time.Second),
				moveReal(time.Hour, 30*time.Minute+5*time.Second),
			},
		},
		{
			name:  "scale 0 is frozen and only Advance moves it",
			scale: 0,
			ops: []clockOp{
				moveReal(time.Hour, 0),
				advance(5*time.Minute, 5*time.Minute),
				moveReal(24*time.Hour, 5*time.Minute),
				advance(time.Nanosecond, 5*time.Minute+time.Nanosecond),
				moveReal(time.Second, 5*time.Minute+time.Nanosecond),
			},
		},
		{
			name:  "Advance adds exactly d on top of real time",
			scale: 1,
			ops: []clockOp{
				moveReal(time.Second, time.Second),
				advance(time.Nanosecond, time.Second+time.Nanosecond),
				advance(36*time.Hour, 36*time.Hour+time.Second+time.Nanosecond),
				moveReal(time.Second, 36*time.Hour+2*time.Second+time.Nanosecond),
			},
		},
		{
			name:  "Advance at scale 60 is not scaled",
			scale: 60,
			ops: []clockOp{
				advance(time.Minute, time.Minute),
				moveReal(time.Second, 2*time.Minute),
			},
		},
		{
			name:  "negative and zero Advance are ignored",
			scale: 0,
			ops: []clockOp{
				advance(time.Hour, time.Hour),
				advance(-30*time.Minute, time.Hour),
				advance(0, time.Hour),
				advance(-time.Nanosecond, time.Hour),
			},
		},
		{
			name:  "SetScale keeps continuity",
			scale: 1,
			ops: []clockOp{
				moveReal(10*time.Second, 10*time.Second),
				setScale(60, 10*time.Second),
				moveReal(time.Second, 70*time.Second),
				setScale(0, 70*time.Second),
				moveReal(time.Hour, 70*time.Second),
				setScale(1, 70*time.Second),
				moveReal(time.Second, 71*time.Second),
				setScale(0.5, 71*time.Second),
				moveReal(2*time.Second, 72*time.Second),
			},
		},
		{
			name:  "Now never goes backwards when real time does",
			scale: 1,
			ops: []clockOp{
				moveReal(10*time.Second, 10*time.Second),
				moveReal(-5*time.Second, 10*time.Second),
				moveReal(3*time.Second, 10*time.Second), // real is at 8 s
				moveReal(4*time.Second, 12*time.Second), // real is at 12 s
				moveReal(-time.Hour, 12*time.Second),
				advance(time.Second, 13*time.Second),
			},
		},
		{
			name:  "Now never goes backwards at scale 60",
			scale: 60,
			ops: []clockOp{
				moveReal(time.Second, time.Minute),
				moveReal(-2*time.Second, time.Minute),
				moveReal(2*time.Second, time.Minute), // real is back at 1 s
				moveReal(time.Second, 2*time.Minute),
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			real := newFakeReal(realStart)
			c := sim.NewSimClock(real.fn(), tc.scale)
			assert.Equal(t, tc.scale, c.Scale())
			prev := c.Now()
			assert.Equal(t, time.UTC, prev.Location(), "a new clock starts in UTC")
			assert.True(t, prev.Equal(realStart), "a new clock starts at real time")
			for i, op := range tc.ops {
				real.move(op.real)
				var got time.Time
				switch {
				case op.advance != nil:
					got = c.Advance(*op.advance)
					assert.True(t, got.Equal(c.Now()), "step %d: Advance returns the new time", i)
				case op.setScale != nil:
					c.SetScale(*op.setScale)
					assert.Equal(t, *op.setScale, c.Scale(), "step %d", i)
					got = c.Now()
				default:
					got = c.Now()
				}
				assert.Equal(t, op.want, got.Sub(realStart), "step %d", i)
				assert.Equal(t, time.UTC, got.Location(), "step %d", i)
				assert.False(t, got.Before(prev), "step %d: went backwards from %v to %v", i, prev, got)
				prev = got
			}
		})
	}
}

func TestSimClockStateRestore(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// old runs on a clock at oldScale before State is taken.
		oldScale float64
		old      []clockOp
		// gap is how far real time moves between State and the new clock's
		// start (negative: the machine's clock was set back).
		gap       time.Duration
		newScale  float64
		beforeNow bool // the new clock hands out a time before Restore
		// want is the new clock's time right after Restore, as an offset
		// from realStart; after is the real time moved next and wantAfter
		// the time then.
		want, after, wantAfter time.Duration
	}{
		{
			name: "downtime passes at real speed", oldScale: 60,
			old: []clockOp{moveReal(time.Minute, time.Hour), advance(time.Hour, 2*time.Hour)},
			gap: 10 * time.Minute, newScale: 60,
			want: 2*time.Hour + 10*time.Minute, after: time.Second, wantAfter: 2*time.Hour + 10*time.Minute + time.Minute,
		},
		{
			name: "the new scale applies, not the old one", oldScale: 60,
			old: []clockOp{moveReal(time.Minute, time.Hour)},
			gap: 0, newScale: 1,
			want: time.Hour, after: time.Minute, wantAfter: time.Hour + time.Minute,
		},
		{
			name: "real clock set back across the restart", oldScale: 1,
			old: []clockOp{moveReal(time.Hour, time.Hour), advance(time.Hour, 2*time.Hour)},
			gap: -3 * time.Hour, newScale: 1,
			want: 2 * time.Hour, after: time.Second, wantAfter: 2*time.Hour + time.Second,
		},
		{
			name: "restart immediately", oldScale: 1,
			old: []clockOp{advance(24*time.Hour, 24*time.Hour)},
			gap: 0, newScale: 1,
			want: 24 * time.Hour, after: 0, wantAfter: 24 * time.Hour,
		},
		{
			// A frozen clock lags real time: its offset is negative. The
			// restored clock resumes at real+offset, not at real time.
			name: "frozen clock keeps a negative offset", oldScale: 0,
			old: []clockOp{moveReal(time.Hour, 0), advance(10*time.Minute, 10*time.Minute)},
			gap: time.Minute, newScale: 0,
			want: 11 * time.Minute, after: time.Hour, wantAfter: 11 * time.Minute,
		},
		{
			name: "slow clock keeps a negative offset", oldScale: 0.5,
			old: []clockOp{moveReal(2*time.Hour, time.Hour)},
			gap: 10 * time.Minute, newScale: 0.5,
			want: time.Hour + 10*time.Minute, after: 2 * time.Minute, wantAfter: time.Hour + 11*time.Minute,
		},
		{
			// The new clock already handed out a time later than the
			// persisted one: Restore must not take it back.
			name: "never before a time the new clock handed out", oldScale: 1,
			old: []clockOp{moveReal(time.Second, time.Second)},
			gap: 0, newScale: 3600, beforeNow: true,
			want: time.Hour + time.Second, after: time.Second, wantAfter: 2*time.Hour + time.Second,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			real := newFakeReal(realStart)
			old := sim.NewSimClock(real.fn(), tc.oldScale)
			for _, op := range tc.old {
				real.move(op.real)
				if op.advance != nil {
					old.Advance(*op.advance)
				}
			}
			oldLast := old.Now()
			st := old.State()
			require.Equal(t, tc.old[len(tc.old)-1].want, oldLast.Sub(realStart), "old clock")
			assert.True(t, st.Last.Equal(oldLast))
			assert.Equal(t, tc.oldScale, st.Scale)

			// Persist and reload the state as the engine does.
			raw, err := json.Marshal(st)
			require.NoError(t, err)
			var loaded sim.ClockState
			require.NoError(t, json.Unmarshal(raw, &loaded))

			real.move(tc.gap)
			fresh := sim.NewSimClock(real.fn(), tc.newScale)
			var handed time.Time
			if tc.beforeNow {
				real.move(time.Second)
				handed = fresh.Now()
			}
			fresh.Restore(loaded)
			got := fresh.Now()
			assert.Equal(t, tc.want, got.Sub(realStart), "right after Restore")
			assert.False(t, got.Before(oldLast), "restored clock went back before the old clock's last time")
			assert.False(t, got.Before(handed), "Restore took back a time the clock had handed out")
			assert.Equal(t, tc.newScale, fresh.Scale(), "the scale is not restored")

			real.move(tc.after)
			assert.Equal(t, tc.wantAfter, since(fresh), "after real time moves")
		})
	}
}

func TestSimClockConcurrent(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		scale float64
	}{
		{"frozen", 0},
		{"real time", 1},
		{"fast", 1000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const (
				workers  = 8
				advances = 200
				step     = time.Second
				realStep = time.Millisecond
			)
			real := newFakeReal(realStart)
			c := sim.NewSimClock(real.fn(), tc.scale)
			var wg sync.WaitGroup
			var backwards atomic.Int64
			for range workers {
				wg.Go(func() { // readers: Now is monotonic in every goroutine
					prev := c.Now()
					for range advances {
						now := c.Now()
						if now.Before(prev) {
							backwards.Add(1)
						}
						prev = now
					}
				})
				wg.Go(func() {
					for range advances {
						c.Advance(step)
					}
				})
				wg.Go(func() {
					for range advances {
						real.move(realStep)
						c.SetScale(tc.scale)
					}
				})
			}
			wg.Wait()
			assert.Zero(t, backwards.Load(), "Now went backwards")
			elapsed := since(c)
			advanced := workers * advances * step
			realMoved := time.Duration(float64(workers*advances*realStep) * tc.scale)
			// Every advance counts; real time can only add to it.
			assert.GreaterOrEqual(t, elapsed, advanced)
			assert.LessOrEqual(t, elapsed, advanced+realMoved)
			if tc.scale == 0 {
				assert.Equal(t, advanced, elapsed, "a frozen clock moves only by its advances")
			}
		})
	}
}
