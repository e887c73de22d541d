package httpx

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The minimum rate (fidelity HW5): after a grace of the idle timeout each
// byte buys 1/minRate seconds; the earlier of that and now+idle is the
// read deadline, and the rate's is recorded as such.
func TestIdleBodyDeadlineKeepsTheMinimumRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b := &idleBody{idle: 10 * time.Second, minRate: 100}
	assert.Equal(t, t0.Add(10*time.Second), b.deadline(t0), "the grace")
	assert.False(t, b.slow, "no byte yet: a stall, not a slow body")
	b.n = 5000 // 50 s bought
	assert.Equal(t, t0.Add(30*time.Second), b.deadline(t0.Add(20*time.Second)), "idle is the earlier")
	assert.False(t, b.slow)
	assert.Equal(t, t0.Add(60*time.Second), b.deadline(t0.Add(55*time.Second)), "the rate is the earlier")
	assert.True(t, b.slow)

	off := &idleBody{idle: 10 * time.Second}
	assert.Equal(t, t0.Add(10*time.Second), off.deadline(t0))
	assert.False(t, off.slow)

	e := &BodyError{Timeout: true, Slow: true, Idle: time.Minute, MinRate: 1024, Elapsed: 75 * time.Second, Read: 3000}
	assert.Equal(t, "The request body arrived too slowly: 3000 bytes in 1m15s, under the minimum of 1024 bytes per second after the first 1m0s; send the body faster", e.Message())
}
