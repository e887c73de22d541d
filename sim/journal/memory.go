package journal

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// DefaultMemory is the default bound of NewMemory.
const DefaultMemory = 32 << 20

// Memory bounds the bytes the journals of a process keep together: past
// it, the oldest entries of the largest journals go first. It is safe for
// concurrent use.
type Memory struct {
	limit int64
	used  atomic.Int64

	// mu guards journals and makes one reclaim run at a time. It is taken
	// before a journal's lock, never while one is held.
	mu       sync.Mutex
	journals map[*Journal]struct{}
}

// NewMemory returns a bound of limit bytes (limit <= 0: DefaultMemory).
func NewMemory(limit int64) *Memory {
	if limit <= 0 {
		limit = DefaultMemory
	}
	return &Memory{limit: limit, journals: map[*Journal]struct{}{}}
}

func (m *Memory) join(j *Journal) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.journals[j] = struct{}{}
}

// leave forgets j and what it holds.
func (m *Memory) leave(j *Journal) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.journals, j)
	j.clear()
}

// reclaim drops the oldest entries of the largest journals until the
// total is a sixteenth under the bound, a sixteenth of the largest at a
// time (at least one entry): the largest journals shrink evenly, and a
// process at its bound scans its journals (a few hundred at most,
// --sandbox-max) and holds mu once per many entries added, not once per
// entry or per few (a lock every request would wait for).
func (m *Memory) reclaim() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for low := m.limit - m.limit/16; m.used.Load() > low; {
		var largest *Journal
		var most int64
		for j := range m.journals {
			if b := j.bytes.Load(); b > most {
				largest, most = j, b
			}
		}
		if largest == nil || !largest.dropOldest(max(1, min(most/16, m.used.Load()-low))) {
			return
		}
	}
}

// Sizes of what an entry keeps besides the bytes of its strings: the Entry
// and its slot, and a map of a few strings (a group of 8 pairs with its
// control word, plus the map's header).
const (
	entryOverhead = int64(unsafe.Sizeof(Entry{})) + int64(unsafe.Sizeof((*Entry)(nil)))
	mapOverhead   = 48 + 8 + 8*2*int64(unsafe.Sizeof(""))
)

// size is the bytes e keeps, as Memory and Config.MaxBytes count them; the
// interface names and header keys are the program's constants.
func (e *Entry) size() int64 {
	n := entryOverhead + int64(len(e.Method)+len(e.Path)+len(e.RawQuery)+len(e.APIKey)+
		len(e.RequestBody)+len(e.ResponseBody)+len(e.Fault))
	if e.Headers != nil {
		n += mapOverhead
		for _, v := range e.Headers {
			n += int64(len(v))
		}
	}
	if e.Notes != nil {
		n += mapOverhead * int64(1+len(e.Notes)/8)
		for k, v := range e.Notes {
			n += int64(len(k) + len(v))
		}
	}
	return n
}
