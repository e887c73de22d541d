package store

import (
	"errors"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// LockWait is how long Open waits for the file's lock (bbolt's flock)
// before it gives up with ErrLocked: long enough for a dubsim that is
// stopping to let go of the file, short enough that a second instance on
// the same file fails at once instead of hanging.
const LockWait = 500 * time.Millisecond

// MsgLocked is the message of ErrLocked; %s is the path.
const MsgLocked = "store: %s is in use: another dubsim holds it (or a `dubsim check` of it is running). " +
	"Stop that one, or give this one another --data file (or none: a temporary store)"

// ErrLocked is wrapped by the error of Open when another process holds
// the file.
var ErrLocked = errors.New("store: data file in use by another process")

// Open opens (creating if needed) the store in the bbolt file at path. It
// refuses a file that is not a sound store (file.go): empty, truncated, not
// a bbolt file, or damaged where opening reads it; the error wraps
// ErrUnsound and says how to recover.
func Open(path string, opts ...Option) (*Store, error) {
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	// The freelist is synced at every commit (NoFreelistSync would make
	// commits on a large file cheaper, but every open would then scan the
	// whole file: 200 ms and 600 MB of touched pages for 100,000 projects);
	// the map freelist keeps allocation fast in a large file.
	bo := bolt.Options{Timeout: LockWait, FreelistType: bolt.FreelistMapType, NoSync: o.noSync}
	db, err := openBolt(path, 0o600, &bo, MsgLocked)
	if err != nil {
		return nil, err
	}
	b := &boltFile{db: db}
	s := &Store{kv: b, path: path}
	if err := guard(path, func() error {
		return db.Update(func(tx *bolt.Tx) error {
			for _, name := range allBuckets {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			return s.init(boltTx{tx}, o)
		})
	}); err != nil {
		_ = db.Close()
		if errors.Is(err, ErrUnsound) || errors.Is(err, ErrOtherSchema) {
			return nil, err
		}
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	b.commit = newCommitter(db)
	return s, nil
}

// openBolt opens the bbolt file at path once checkHeader finds it sound. A
// panic while bbolt reads a damaged page (its freelist, a bucket) becomes
// an error wrapping ErrUnsound (the file stays open until the process
// exits); a file another process holds, one wrapping ErrLocked with the
// message locked (%s is the path).
func openBolt(path string, mode os.FileMode, o *bolt.Options, locked string) (*bolt.DB, error) {
	if err := checkHeader(path); err != nil {
		return nil, err
	}
	var db *bolt.DB
	err := guard(path, func() (err error) {
		db, err = bolt.Open(path, mode, o)
		return err
	})
	switch {
	case err == nil || errors.Is(err, ErrUnsound):
		return db, err
	case errors.Is(err, bolt.ErrTimeout): //nolint:staticcheck // SA1019: the same error as bbolt/errors', which the import rule keeps out of sim/store
		return nil, refuse(ErrLocked, locked, path)
	}
	return nil, fmt.Errorf("store: open %s: %w", path, err)
}

// boltFile is the backend of a bbolt file.
type boltFile struct {
	db     *bolt.DB
	commit *committer
}

func (b *boltFile) view(fn func(kvTx) error) error {
	return b.db.View(func(tx *bolt.Tx) error { return fn(boltTx{tx}) })
}

func (b *boltFile) update(fn func(kvTx) error) error { return b.db.Update(appending(fn)) }

// batch shares a transaction among concurrent calls (group commit,
// batch.go): one disk sync for many writes.
func (b *boltFile) batch(fn func(kvTx) error) error { return b.commit.do(appending(fn)) }

// close commits the queued batch calls and closes the file.
func (b *boltFile) close() error {
	b.commit.close()
	return b.db.Close()
}

// appendFill is the fill percent of the buckets whose keys mostly come in
// increasing order (appendBuckets): bbolt splits a full page at its
// default 50%, which for appended keys leaves every page half empty, so a
// creation wrote twice the pages and the file grew twice as fast (and past
// its mmap size, whose growth stalls every transaction). The 10% left
// takes a record growing in place (a project's history).
const appendFill = 0.9

// appendBuckets are keyed by sequence (projects), by time (due indexes,
// idempotency expiry) or by ObjectId-like ids (studio records).
var appendBuckets = [][]byte{bProjects, bBodies, bDue, bIdemExp, bArtifacts, bArtifactsDue, bVideos, bVideosDue, bStudioProjects}

// appending adapts fn to a bolt read-write transaction, with the fill
// percent of the append buckets set (bbolt keeps it per bucket per
// transaction).
func appending(fn func(kvTx) error) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		for _, name := range appendBuckets {
			if b := tx.Bucket(name); b != nil {
				b.FillPercent = appendFill
			}
		}
		return fn(boltTx{tx})
	}
}

// boltTx is a bbolt transaction as a kvTx.
type boltTx struct{ tx *bolt.Tx }

func (t boltTx) get(bucket, key []byte) []byte       { return t.tx.Bucket(bucket).Get(key) }
func (t boltTx) put(bucket, key, value []byte) error { return t.tx.Bucket(bucket).Put(key, value) }
func (t boltTx) del(bucket, key []byte) error        { return t.tx.Bucket(bucket).Delete(key) }
func (t boltTx) count(bucket []byte) int             { return t.tx.Bucket(bucket).Stats().KeyN }

func (t boltTx) scan(bucket, from []byte, fn func(k, v []byte) (bool, error)) error {
	c := t.tx.Bucket(bucket).Cursor()
	for k, v := c.Seek(from); k != nil; k, v = c.Next() { // Seek(nil) is First
		if more, err := fn(k, v); err != nil || !more {
			return err
		}
	}
	return nil
}

func (t boltTx) clear(bucket []byte) error {
	if err := t.tx.DeleteBucket(bucket); err != nil {
		return err
	}
	_, err := t.tx.CreateBucket(bucket)
	return err
}
