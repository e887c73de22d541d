package platform

import (
	"container/list"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultOutputCacheBytes bounds the disk the output cache uses.
const DefaultOutputCacheBytes = 1 << 30

// OutputCache keeps rendered output files on disk, so a repeated download
// costs a read, not a synthesis (a two-hour project's WAV is 317 MB and
// about 4 s of CPU; fidelity HO1), least recently used removed past the
// limit. The APIs of a process share it, one disk bound: each API's keys
// carry its own prefix.
type OutputCache struct {
	dir   string
	limit int64
	next  atomic.Uint64 // the last namespace handed out

	mu       sync.Mutex
	size     int64
	lru      *list.List               // of *outputEntry, most recent first
	entries  map[string]*list.Element // by key
	inflight map[string]chan struct{} // renders under way, by key
}

type outputEntry struct {
	key  string
	path string
	size int64
}

// NewOutputCache returns an output cache in dir bounded to limit bytes
// (zero or negative: DefaultOutputCacheBytes).
func NewOutputCache(dir string, limit int64) *OutputCache {
	if limit <= 0 {
		limit = DefaultOutputCacheBytes
	}
	return &OutputCache{dir: dir, limit: limit, lru: list.New(), entries: map[string]*list.Element{}, inflight: map[string]chan struct{}{}}
}

// open returns the cached file of key, rendered first when missing (one
// render per key at a time); false when it cannot be cached (over the
// limit, or the disk refused it): the caller serves render's output.
func (c *OutputCache) open(key string, size int64, render func() io.Reader) (*os.File, bool) {
	if c == nil || size > c.limit {
		return nil, false
	}
	for {
		c.mu.Lock()
		if el, hit := c.entries[key]; hit {
			c.lru.MoveToFront(el)
			path := el.Value.(*outputEntry).path
			c.mu.Unlock()
			f, err := os.Open(path)
			if err == nil {
				return f, true
			}
			c.drop(key) // removed under us: render again
			continue
		}
		if wait, busy := c.inflight[key]; busy {
			c.mu.Unlock()
			<-wait
			continue
		}
		done := make(chan struct{})
		c.inflight[key] = done
		c.mu.Unlock()
		path, werr := c.write(render())
		c.mu.Lock()
		delete(c.inflight, key)
		close(done)
		if werr != nil {
			c.mu.Unlock()
			return nil, false // serve it uncached
		}
		el := c.lru.PushFront(&outputEntry{key: key, path: path, size: size})
		c.entries[key] = el
		c.size += size
		for c.size > c.limit && c.lru.Len() > 1 {
			c.evictLocked(c.lru.Back())
		}
		c.mu.Unlock()
	}
}

func (c *OutputCache) write(r io.Reader) (string, error) {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(c.dir, "output-*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, r)
	err = errors.Join(err, f.Close())
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

func (c *OutputCache) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.evictLocked(el)
	}
}

func (c *OutputCache) evictLocked(el *list.Element) {
	e := el.Value.(*outputEntry)
	c.lru.Remove(el)
	delete(c.entries, e.key)
	c.size -= e.size
	// An open file stays readable after its name is removed (POSIX).
	_ = os.Remove(e.path)
}

// dropPrefix removes the cached files whose key starts with prefix.
func (c *OutputCache) dropPrefix(prefix string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, el := range c.entries {
		if strings.HasPrefix(key, prefix) {
			c.evictLocked(el)
		}
	}
}

// namespace is a key prefix no other API of the cache has.
func (c *OutputCache) namespace() string {
	return strconv.FormatUint(c.next.Add(1), 10) + ":"
}

// Close removes every cached file and the directory.
func (c *OutputCache) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.lru.Len() > 0 {
		c.evictLocked(c.lru.Back())
	}
	return os.RemoveAll(filepath.Clean(c.dir))
}
