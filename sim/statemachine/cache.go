package statemachine

import "sync"

// genCache keeps values read from the store under one rule: an entry is
// served only while the engine's write generation (Engine.Generation) is
// what it was before the value was read, so a cached value is never older
// than the last committed write. Values are shared between readers: they
// must not be modified.
type genCache[V any] struct {
	mu      sync.RWMutex
	entries map[string]genEntry[V]
	size    int // at this many entries the map starts over: crude but bounded
}

type genEntry[V any] struct {
	v   V
	gen uint64
}

func (c *genCache[V]) get(key string, gen uint64) (V, bool) {
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	return e.v, ok && e.gen == gen
}

func (c *genCache[V]) put(key string, v V, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= c.size {
		c.entries = make(map[string]genEntry[V], 64)
	}
	c.entries[key] = genEntry[V]{v: v, gen: gen}
}
