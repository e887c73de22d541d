package gencache

import "sync"

// Cache is a bounded map of values by key, each with the generation it was
// read at. The zero value is ready; Size bounds it (at that many entries
// the map starts over: crude but bounded).
type Cache[V any] struct {
	Size int

	mu      sync.RWMutex
	entries map[string]entry[V]
}

type entry[V any] struct {
	v   V
	gen uint64
}

// Get returns the value of key if it was read at generation gen.
func (c *Cache[V]) Get(key string, gen uint64) (V, bool) {
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	return e.v, ok && e.gen == gen
}

// Put keeps v for key, read at generation gen.
func (c *Cache[V]) Put(key string, v V, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= c.Size {
		c.entries = make(map[string]entry[V], 64)
	}
	c.entries[key] = entry[V]{v: v, gen: gen}
}
