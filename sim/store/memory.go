package store

import (
	"bytes"
	"errors"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/google/btree"
)

// backend is what the store needs of a key-value store: buckets of keys
// in byte order, read and written in transactions (bolt.go: the bbolt file;
// memory.go: memory). A write transaction whose fn returns an error leaves
// nothing behind.
type backend interface {
	view(fn func(kvTx) error) error
	update(fn func(kvTx) error) error
	// batch is update for independent writes that concurrent calls may
	// share; fn may run more than once.
	batch(fn func(kvTx) error) error
	close() error
}

// kvTx is one transaction of a backend. Every bucket of allBuckets exists.
type kvTx interface {
	// get returns nil for a missing key; the value is valid until the
	// transaction ends and must not be modified.
	get(bucket, key []byte) []byte
	put(bucket, key, value []byte) error
	del(bucket, key []byte) error
	// scan visits the entries from the first key at or after from (every
	// entry when from is nil), in key order, while fn returns true. fn must
	// not write to bucket.
	scan(bucket, from []byte, fn func(k, v []byte) (bool, error)) error
	count(bucket []byte) int
	clear(bucket []byte) error
}

// errReadOnly answers a write in a View transaction.
var errReadOnly = errors.New("store: write in a read-only transaction")

// memory is the in-memory backend: one B-tree per bucket. A write
// transaction works on lazy copies (btree.Clone) of the trees it writes and
// publishes them when it commits, so readers never wait for a writer and
// never see half a transaction.
type memory struct {
	write     sync.Mutex              // one write transaction at a time
	committed atomic.Pointer[buckets] // the trees of the last commit
}

type buckets = map[string]*btree.BTreeG[entry]

type entry struct{ k, v []byte }

func lessEntry(a, b entry) bool { return bytes.Compare(a.k, b.k) < 0 }

func newMemory() *memory {
	b := make(buckets, len(allBuckets))
	for _, name := range allBuckets {
		b[string(name)] = btree.NewG(16, lessEntry)
	}
	m := &memory{}
	m.committed.Store(&b)
	return m
}

func (m *memory) view(fn func(kvTx) error) error {
	return fn(&memTx{base: *m.committed.Load()})
}

func (m *memory) update(fn func(kvTx) error) error {
	m.write.Lock()
	defer m.write.Unlock()
	t := &memTx{base: *m.committed.Load(), own: buckets{}}
	if err := fn(t); err != nil {
		return err
	}
	next := maps.Clone(t.base)
	maps.Copy(next, t.own)
	m.committed.Store(&next)
	return nil
}

// batch is update: without a disk sync to share, a batch gains nothing.
func (m *memory) batch(fn func(kvTx) error) error { return m.update(fn) }

func (m *memory) close() error { return nil }

// memTx reads the trees of base, or the copies in own it has written to
// (own is nil in a read transaction).
type memTx struct {
	base, own buckets
}

func (t *memTx) tree(bucket []byte) *btree.BTreeG[entry] {
	if tree, ok := t.own[string(bucket)]; ok {
		return tree
	}
	return t.base[string(bucket)]
}

func (t *memTx) writable(bucket []byte) (*btree.BTreeG[entry], error) {
	if t.own == nil {
		return nil, errReadOnly
	}
	if tree, ok := t.own[string(bucket)]; ok {
		return tree, nil
	}
	tree := t.base[string(bucket)].Clone()
	t.own[string(bucket)] = tree
	return tree, nil
}

func (t *memTx) get(bucket, key []byte) []byte {
	e, ok := t.tree(bucket).Get(entry{k: key})
	if !ok {
		return nil
	}
	if e.v == nil {
		return []byte{} // present, empty: as bbolt answers
	}
	return e.v
}

func (t *memTx) put(bucket, key, value []byte) error {
	tree, err := t.writable(bucket)
	if err != nil {
		return err
	}
	tree.ReplaceOrInsert(entry{k: bytes.Clone(key), v: bytes.Clone(value)})
	return nil
}

func (t *memTx) del(bucket, key []byte) error {
	tree, err := t.writable(bucket)
	if err != nil {
		return err
	}
	tree.Delete(entry{k: key})
	return nil
}

func (t *memTx) scan(bucket, from []byte, fn func(k, v []byte) (bool, error)) error {
	tree := t.tree(bucket)
	if _, ok := t.own[string(bucket)]; ok {
		// A write of fn to the tree would break the iteration; a lazy copy
		// of this transaction's own tree costs nothing until then.
		tree = tree.Clone()
	}
	var err error
	tree.AscendGreaterOrEqual(entry{k: from}, func(e entry) bool {
		var more bool
		more, err = fn(e.k, e.v)
		return more && err == nil
	})
	return err
}

func (t *memTx) count(bucket []byte) int { return t.tree(bucket).Len() }

func (t *memTx) clear(bucket []byte) error {
	if t.own == nil {
		return errReadOnly
	}
	t.own[string(bucket)] = btree.NewG(16, lessEntry)
	return nil
}
