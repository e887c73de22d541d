package sim

import (
	"math"
	"sync"
	"time"
)

// ClockState is what survives a restart: the simulated time last handed out
// and its offset from real time at that moment.
type ClockState struct {
	Last   time.Time     `json:"last"`
	Offset time.Duration `json:"offset"`
	Scale  float64       `json:"scale"`
}

// SimClock is simulated time, which dubsim reads in place of time.Now: real
// time scaled by Scale plus every manual advance. It never goes backwards,
// also across a restart. A scale of 0 freezes it: time then moves only
// through Advance.
type SimClock struct {
	mu         sync.Mutex
	real       func() time.Time
	anchorReal time.Time
	anchorSim  time.Time
	scale      float64
	last       time.Time
	advanced   time.Duration // every manual advance since the process started
}

// NewSimClock starts a clock at real time with the given scale; real is
// time.Now in production.
func NewSimClock(real func() time.Time, scale float64) *SimClock {
	now := real()
	// last stays zero until a time is handed out, so that Restore resumes at
	// real time plus the persisted offset also when that offset is negative
	// (a frozen or slowed clock) instead of jumping forward to real time.
	return &SimClock{real: real, anchorReal: now, anchorSim: now.UTC(), scale: scale}
}

// Restore continues from a persisted state: simulated time resumes at real
// time plus the persisted offset (downtime passes at real speed), never
// before the last time handed out. The scale is not restored.
func (c *SimClock) Restore(st ClockState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.real()
	sim := now.Add(st.Offset).UTC()
	if sim.Before(st.Last) {
		sim = st.Last.UTC()
	}
	if sim.Before(c.last) {
		sim = c.last
	}
	c.anchorReal, c.anchorSim, c.last = now, sim, sim
}

// StandingAt is a state Restore resumes at exactly t, whatever the real
// time: an offset far in the past, so that "never before Last" decides.
func StandingAt(t time.Time) ClockState {
	return ClockState{Last: t, Offset: math.MinInt64 / 2}
}

func (c *SimClock) nowLocked() time.Time {
	elapsed := c.real().Sub(c.anchorReal)
	t := c.anchorSim.Add(time.Duration(float64(elapsed) * c.scale))
	if t.Before(c.last) {
		t = c.last
	}
	c.last = t
	return t
}

// Now returns the current simulated time in UTC.
func (c *SimClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nowLocked()
}

// Advance moves simulated time forward by d (negative d is ignored) and
// returns the new time.
func (c *SimClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.nowLocked()
	if d > 0 {
		now = now.Add(d)
		c.advanced += d
	}
	c.anchorReal, c.anchorSim, c.last = c.real(), now, now
	return now
}

// Wall is real time plus every manual advance since the process started:
// windows on it pass both for a client that waits and for a test that
// advances the clock, whatever the scale.
func (c *SimClock) Wall() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.real().Add(c.advanced)
}

// SetScale changes the speed of simulated time from now on (0 freezes it).
func (c *SimClock) SetScale(scale float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.nowLocked()
	c.anchorReal, c.anchorSim, c.scale = c.real(), now, scale
}

// Scale returns the current time scale.
func (c *SimClock) Scale() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.scale
}

// State returns what to persist to resume without going backwards.
func (c *SimClock) State() ClockState {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.nowLocked()
	return ClockState{Last: now, Offset: now.Sub(c.real()), Scale: c.scale}
}
