package sandbox

import (
	"runtime"
	"slices"
	"sync"
	"time"
)

// Hold takes sandbox id as a request in flight does; release ends it.
func Hold(m *Manager, id string) (release func(), ok bool) {
	sb := m.acquire(id, nil)
	if sb == nil {
		return nil, false
	}
	return func() { m.release(sb, nil) }, true
}

// Gone is closed once sb is closed.
func Gone(sb *Sandbox) <-chan struct{} { return sb.gone }

// AwaitInFlight returns once sb has n requests in flight. The count has
// no channel to wait on: it yields until then (a test's request reaches the
// handler within microseconds).
func AwaitInFlight(sb *Sandbox, n int) {
	for sb.inFlight() != n {
		runtime.Gosched()
	}
}

// TakeMakingPlaces takes every free place of m's creations; the returned
// function gives them back.
func TakeMakingPlaces(m *Manager) (giveBack func()) {
	n := 0
	for m.making.TryEnter() {
		n++
	}
	return func() {
		for range n {
			m.making.Leave()
		}
	}
}

// FreeMakingPlaces is the number of m's creation places free now.
func FreeMakingPlaces(m *Manager) int {
	n := 0
	for m.making.TryEnter() {
		n++
	}
	for range n {
		m.making.Leave()
	}
	return n
}

// KeepMakingPlaces makes m keep each creation's place after it until the
// returned function gives them all back; pauses lists how long each
// creation asked to keep its place.
func KeepMakingPlaces(m *Manager) (pauses func() []time.Duration, giveBack func()) {
	var mu sync.Mutex
	var ds []time.Duration
	var fs []func()
	m.making.after = func(d time.Duration, f func()) {
		mu.Lock()
		defer mu.Unlock()
		ds, fs = append(ds, d), append(fs, f)
	}
	return func() []time.Duration {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(ds)
		}, func() {
			mu.Lock()
			defer mu.Unlock()
			for _, f := range fs {
				f()
			}
			fs = nil
		}
}
