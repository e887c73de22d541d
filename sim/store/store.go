package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// SchemaVersion is the version of the stored layout. Open refuses a file
// of any other version: nothing is migrated (fidelity DS1).
const SchemaVersion = 4

// MsgOtherSchema is the error of a store written in another layout; %[1]s
// is the path, %[2]d the file's schema version, %[3]d SchemaVersion.
const MsgOtherSchema = "store: %[1]s was written by another dubsim version (store schema %[2]d, this one reads %[3]d): " +
	"move it away (or give another --data file) to start fresh, or open it with the dubsim that wrote it"

// ErrOtherSchema is wrapped by the error of Open for a file of another
// schema version.
var ErrOtherSchema = errors.New("store: data file of another schema version")

// refusal is an error with a message of its own that wraps kind
// (ErrOtherSchema, ErrLocked, ErrUnsound).
type refusal struct {
	kind error
	msg  string
}

func (e *refusal) Error() string { return e.msg }
func (e *refusal) Unwrap() error { return e.kind }

func refuse(kind error, format string, args ...any) error {
	return &refusal{kind: kind, msg: fmt.Sprintf(format, args...)}
}

var (
	bMeta     = []byte("_meta")
	bAccounts = []byte("accounts")
	bProjects = []byte("projects")
	bBodies   = []byte("project_bodies")
	bDue      = []byte("projects_due")
	bIdem     = []byte("idempotency")
	bIdemExp  = []byte("idempotency_by_time")
	bSeq      = []byte("sequences")
	// allData are the buckets ResetData empties; allBuckets every bucket.
	allData    = append([][]byte{bAccounts, bProjects, bBodies, bDue, bIdem, bIdemExp}, studioData...)
	allBuckets = append([][]byte{bMeta, bSeq}, allData...)
	keySchema  = []byte("schema_version")
	// keyKeySeed is the key of the id permutation (IDKey), which
	// projectKey inverts, and keySecret the store's random secret: both are
	// made with the store and never change, since the ids, the keys of
	// stored projects, and the generated keys and upload signatures handed
	// out depend on them.
	keyKeySeed = []byte("project_key_seed")
	keySecret  = []byte("secret")
)

// SecretBytes is the length of a store's secret.
const SecretBytes = 32

// Store is the sim.Store over a backend: a bbolt file (Open) or memory
// (OpenMemory).
type Store struct {
	kv   backend
	path string // "" in memory
	// keys inverts project ids to the sequence numbers they were made from.
	keys   *sim.IDs
	secret []byte
}

var _ sim.Store = (*Store)(nil)

type options struct {
	noSync  bool
	keySeed *uint64 // nil: drawn from crypto/rand
}

// Option configures Open and OpenMemory.
type Option func(*options)

// NoSync skips fsync after each commit: faster, but a machine crash can lose
// recent writes. For tests and throwaway stores.
func NoSync() Option { return func(o *options) { o.noSync = true } }

// KeySeed is the key of the id permutation of a new store (IDKey): the
// explicit seed of a simulator, which makes its ids reproducible. Without
// it a new store draws its key from crypto/rand, so that no two stores make
// the same ids. A file keeps the key it was made with; the option only
// counts for a new file.
func KeySeed(seed uint64) Option {
	return func(o *options) { o.keySeed = &seed }
}

// OpenMemory makes a store held in memory, gone when the process ends.
func OpenMemory(opts ...Option) (*Store, error) {
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	s := &Store{kv: newMemory()}
	if err := s.kv.update(func(tx kvTx) error { return s.init(tx, o) }); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return s, nil
}

// init reads the metadata of the store (schema version, id key, secret),
// writing them when the store is new.
func (s *Store) init(tx kvTx, o options) error {
	v := tx.get(bMeta, keySchema)
	made := v == nil
	if !made {
		if len(v) != 8 {
			return fmt.Errorf("malformed schema version %x, this dubsim reads %d", v, SchemaVersion)
		}
		if version := binary.BigEndian.Uint64(v); version != SchemaVersion {
			return refuse(ErrOtherSchema, MsgOtherSchema, s.path, version, SchemaVersion)
		}
	}
	key, err := metaValue(tx, keyKeySeed, 8, made, func(b []byte) {
		if o.keySeed != nil {
			binary.BigEndian.PutUint64(b, *o.keySeed)
		} else {
			_, _ = rand.Read(b) // never fails
		}
	})
	if err != nil {
		return err
	}
	s.keys = sim.NewIDs(binary.BigEndian.Uint64(key))
	s.secret, err = metaValue(tx, keySecret, SecretBytes, made, func(b []byte) { _, _ = rand.Read(b) })
	if err != nil {
		return err
	}
	return tx.put(bMeta, keySchema, be64(SchemaVersion))
}

// metaValue returns the n-byte value of key in _meta. A new store (made)
// stores what fill writes first; in an existing one, a value missing or
// of another length is damage.
func metaValue(tx kvTx, key []byte, n int, made bool, fill func([]byte)) ([]byte, error) {
	v := tx.get(bMeta, key)
	switch {
	case v == nil && made:
		v = make([]byte, n)
		fill(v)
		return v, tx.put(bMeta, key, v)
	case v == nil:
		return nil, fmt.Errorf("schema version %d without %s", SchemaVersion, key)
	case len(v) != n:
		return nil, fmt.Errorf("malformed %s: %d bytes, want %d", key, len(v), n)
	}
	return bytes.Clone(v), nil
}

// Secret returns the store's random secret (see sim.Store).
func (s *Store) Secret() []byte { return bytes.Clone(s.secret) }

// IDKey returns the key of the store's id permutation (see sim.Store).
func (s *Store) IDKey() uint64 { return s.keys.Seed() }

// Close commits the queued Batch calls and closes the file.
func (s *Store) Close() error { return s.kv.close() }

// View runs fn in a read-only transaction.
func (s *Store) View(ctx context.Context, fn func(sim.Tx) error) error {
	return s.run(ctx, s.kv.view, fn)
}

// Batch runs fn in a read-write transaction that concurrent Batch calls
// may share (group commit, batch.go): one disk sync for many writes. fn may
// run more than once.
func (s *Store) Batch(ctx context.Context, fn func(sim.Tx) error) error {
	return s.run(ctx, s.kv.batch, fn)
}

// Update runs fn in a read-write transaction; an error rolls it back.
func (s *Store) Update(ctx context.Context, fn func(sim.Tx) error) error {
	return s.run(ctx, s.kv.update, fn)
}

// run runs fn as a sim.Tx in a transaction of kind, unless ctx is done.
func (s *Store) run(ctx context.Context, kind func(func(kvTx) error) error, fn func(sim.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return kind(func(tx kvTx) error {
		st := &storeTx{txn: txn{kv: tx, s: s}}
		t := &st.txn
		st.platformTx = platformTx{t}
		st.accounts = records[sim.Account]{t, &accountTable}
		st.companies = records[sim.Company]{t, &companyTable}
		st.users = records[sim.User]{t, &userTable}
		st.glossaries = records[sim.Glossary]{t, &glossaryTable}
		st.folders = records[sim.Folder]{t, &folderTable}
		st.studioProjects = records[sim.StudioProject]{t, &studioProjectTable}
		st.videos = records[sim.Video]{t, &videoTable}
		st.artifacts = records[sim.Artifact]{t, &artifactTable}
		st.uploads = records[sim.Upload]{t, &uploadTable}
		return fn(st)
	})
}

// storeTx is a transaction as a sim.Tx: its views over one txn, made in
// one allocation, so that handing out a sim.Records allocates nothing.
type storeTx struct {
	txn
	platformTx
	accounts       records[sim.Account]
	companies      records[sim.Company]
	users          records[sim.User]
	glossaries     records[sim.Glossary]
	folders        records[sim.Folder]
	studioProjects records[sim.StudioProject]
	videos         records[sim.Video]
	artifacts      records[sim.Artifact]
	uploads        records[sim.Upload]
}

var _ sim.Tx = (*storeTx)(nil)

func (t *storeTx) Accounts() sim.Records[sim.Account]             { return &t.accounts }
func (t *storeTx) Companies() sim.Records[sim.Company]            { return &t.companies }
func (t *storeTx) Users() sim.Records[sim.User]                   { return &t.users }
func (t *storeTx) Glossaries() sim.Records[sim.Glossary]          { return &t.glossaries }
func (t *storeTx) Folders() sim.Records[sim.Folder]               { return &t.folders }
func (t *storeTx) StudioProjects() sim.Records[sim.StudioProject] { return &t.studioProjects }
func (t *storeTx) Videos() sim.Records[sim.Video]                 { return &t.videos }
func (t *storeTx) Artifacts() sim.Records[sim.Artifact]           { return &t.artifacts }
func (t *storeTx) Uploads() sim.Records[sim.Upload]               { return &t.uploads }

// countedBuckets are the records Counts reports, in its order.
var countedBuckets = [][]byte{bAccounts, bProjects, bCompanies, bStudioProjects, bVideos, bArtifacts, bUploads}

// Counts returns how many records the store holds of each kind a user
// recognises (accounts, platform projects, companies, studio projects,
// videos, artifacts, uploads), in that order: the banner says what an
// existing data file restored. It reads the pages of those buckets, not
// their values; a damaged page is an error, not a panic.
func (s *Store) Counts() ([]BucketCount, error) {
	out := make([]BucketCount, 0, len(countedBuckets))
	err := guard(s.path, func() error {
		return s.kv.view(func(tx kvTx) error {
			for _, name := range countedBuckets {
				out = append(out, BucketCount{Bucket: string(name), N: tx.count(name)})
			}
			return nil
		})
	})
	return out, err
}

// envelope wraps every stored value with its version. D holds a pointer to
// the typed value, so encoding and decoding take one pass each.
type envelope struct {
	V int `json:"v"`
	D any `json:"d"`
}

const valueVersion = 1

// encode stores v: a pointer to a record of a binary type (codec.go) in
// the binary form, anything else as versioned JSON.
func encode(v any) ([]byte, error) {
	c := codec{b: append(make([]byte, 0, 256), binTag)}
	if c.record(v) {
		return c.b, nil
	}
	return json.Marshal(envelope{V: valueVersion, D: v})
}

// decode reads a record into v, a pointer. A record of a binary type must
// be in the binary form.
func decode(b []byte, v any) error {
	rest, bin := bytes.CutPrefix(b, []byte{binTag})
	c := codec{reading: true, b: rest}
	if !bin {
		// Made once: most reads of a JSON record come through here.
		c.b, c.err = nil, errNotBinary
	}
	if c.record(v) {
		if c.err == nil && len(c.b) != 0 {
			c.fail("%d trailing bytes", len(c.b))
		}
		return c.err
	}
	e := envelope{D: v}
	if err := json.Unmarshal(b, &e); err != nil {
		return fmt.Errorf("%w: %w", errCorrupt, err)
	}
	if e.V != valueVersion {
		return fmt.Errorf("store: value version %d not supported", e.V)
	}
	return nil
}

func be64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}

// timeKey orders keys by time: 8 bytes of Unix seconds (sign bit flipped,
// so the byte order is the time order for any year) and 4 bytes of
// nanoseconds, then the suffix.
func timeKey(t time.Time, suffix string) []byte {
	k := make([]byte, timeKeyLen, timeKeyLen+len(suffix))
	binary.BigEndian.PutUint64(k, uint64(t.Unix())^(1<<63))
	binary.BigEndian.PutUint32(k[8:], uint32(t.Nanosecond()))
	return append(k, suffix...)
}

const timeKeyLen = 12

// txn is one transaction; the records live in its views (storeTx).
type txn struct {
	kv kvTx
	s  *Store
}

// getAs reads the record of key in bucket; sim.ErrNotFound when there is
// none.
func getAs[T any](t *txn, bucket []byte, key string) (T, error) {
	var v T
	return v, t.getKey(bucket, []byte(key), &v)
}

func (t *txn) getKey(bucket, key []byte, v any) error {
	b := t.kv.get(bucket, key)
	if b == nil {
		return sim.ErrNotFound
	}
	return decode(b, v)
}

// put stores v (a pointer for the binary types) under key.
func (t *txn) put(bucket, key []byte, v any) error {
	b, err := encode(v)
	if err != nil {
		return err
	}
	return t.kv.put(bucket, key, b)
}

func forEach[T any](t *txn, bucket []byte, fn func(T) error) error {
	return t.kv.scan(bucket, nil, func(_, raw []byte) (bool, error) {
		var v T
		if err := decode(raw, &v); err != nil {
			return false, err
		}
		return true, fn(v)
	})
}

// reindex moves an entry of the index bucket from old to new (nil: no
// entry); val is the entry's value.
func (t *txn) reindex(bucket, old, new, val []byte) error {
	if bytes.Equal(old, new) {
		return nil
	}
	if old != nil {
		if err := t.kv.del(bucket, old); err != nil {
			return err
		}
	}
	if new == nil {
		return nil
	}
	return t.kv.put(bucket, new, val)
}

// dueIDs returns up to limit ids of a due index whose time is at or before
// now, earliest first; id turns the rest of a key into the id.
func (t *txn) dueIDs(bucket []byte, now time.Time, limit int, id func([]byte) string) ([]string, error) {
	var ids []string
	limitKey := timeKey(now, "")
	err := t.kv.scan(bucket, nil, func(k, _ []byte) (bool, error) {
		if len(ids) >= limit || len(k) < timeKeyLen || bytes.Compare(k[:timeKeyLen], limitKey) > 0 {
			return false, nil
		}
		ids = append(ids, id(k[timeKeyLen:]))
		return true, nil
	})
	return ids, err
}

// collect returns copies of the keys of bucket from the first at or after
// from while keep says so: keys to delete after the scan.
func (t *txn) collect(bucket, from []byte, keep func(k, v []byte) (bool, error)) ([][]byte, error) {
	var keys [][]byte
	err := t.kv.scan(bucket, from, func(k, v []byte) (bool, error) {
		ok, err := keep(k, v)
		if ok && err == nil {
			keys = append(keys, bytes.Clone(k))
		}
		return ok, err
	})
	return keys, err
}
