package sandbox

import "runtime"

// Hold takes sandbox id as a request in flight does; release ends it.
func Hold(m *Manager, id string) (release func(), ok bool) {
	sb := m.acquire(id)
	if sb == nil {
		return nil, false
	}
	return func() { m.release(sb) }, true
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

// TakeMakingPlaces takes every place of m's creations; the returned
// function gives them back.
func TakeMakingPlaces(m *Manager) (giveBack func()) {
	n := m.making.Size()
	for range n {
		m.making.TryEnter()
	}
	return func() {
		for range n {
			m.making.Leave()
		}
	}
}
