package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dubsim/dubsim/sim"
	bolt "go.etcd.io/bbolt"
)

// SchemaVersion is the version of the stored layout. Version 3 keys
// projects by sequence number (projectKey); Open migrates version 2 files.
const SchemaVersion = 3

var (
	bMeta     = []byte("_meta")
	bAccounts = []byte("accounts")
	bProjects = []byte("projects")
	bBodies   = []byte("project_bodies")
	bDue      = []byte("projects_due")
	bIdem     = []byte("idempotency")
	bIdemExp  = []byte("idempotency_by_time")
	bSeq      = []byte("sequences")
	// allData are the buckets Open creates (also in a file written before
	// they existed) and ResetData empties.
	allData   = append([][]byte{bAccounts, bProjects, bBodies, bDue, bIdem, bIdemExp}, studioData...)
	keySchema = []byte("schema_version")
	// keyKeySeed is the key of the id permutation (IDKey), which
	// projectKey inverts, recorded when the file is made: the ids made and
	// the keys of stored projects depend on it, so it never changes for a
	// file.
	keyKeySeed = []byte("project_key_seed")
	// keySecret is the store's random secret (SecretBytes, from
	// crypto/rand), made when the file is made, or at the first open of a
	// file made before it existed, and never changed: the generated keys
	// and upload signatures stored or handed out depend on it.
	keySecret = []byte("secret")
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

type lockedError struct{ path string }

func (e *lockedError) Error() string        { return fmt.Sprintf(MsgLocked, e.path) }
func (e *lockedError) Is(target error) bool { return target == ErrLocked }

// SecretBytes is the length of a store's secret.
const SecretBytes = 32

// Store is the bbolt-backed sim.Store.
type Store struct {
	db     *bolt.DB
	commit *committer
	// keys inverts project ids to the sequence numbers they were made from.
	keys *sim.IDs
	// secret is the value of keySecret.
	secret []byte
}

type options struct {
	bolt       bolt.Options
	keySeed    uint64
	keySeedSet bool
}

// Option configures Open.
type Option func(*options)

// NoSync skips fsync after each commit: faster, but a machine crash can lose
// recent writes. For tests and throwaway stores.
func NoSync() Option { return func(o *options) { o.bolt.NoSync = true } }

// KeySeed is the key of the id permutation of a new file (IDKey): the
// explicit seed of a simulator, which makes its ids reproducible. Without
// it a new file draws its key from crypto/rand, so that no two stores make
// the same ids. A file keeps the key it was made with; the option only
// counts for a new file (or one migrated from schema 2).
func KeySeed(seed uint64) Option {
	return func(o *options) { o.keySeed, o.keySeedSet = seed, true }
}

// Open opens (creating if needed) the store at path. It refuses a file that
// is not a sound store (file.go): empty, truncated, not a bbolt file, or
// damaged where opening reads it; the error wraps ErrUnsound and says how
// to recover.
func Open(path string, opts ...Option) (s *Store, err error) {
	// The freelist is synced at every commit (NoFreelistSync would make
	// commits on a large file cheaper, but every open would then scan the
	// whole file: 200 ms and 600 MB of touched pages for 100,000 projects);
	// the map freelist keeps allocation fast in a large file.
	o := options{bolt: bolt.Options{Timeout: LockWait, FreelistType: bolt.FreelistMapType}}
	for _, opt := range opts {
		opt(&o)
	}
	if err := checkHeader(path); err != nil {
		return nil, err
	}
	// A panic while bbolt reads a damaged page (its freelist, a bucket)
	// becomes an error; the file stays open until the process exits.
	var db *bolt.DB
	if err := guard(path, func() (err error) {
		db, err = bolt.Open(path, 0o600, &o.bolt)
		return err
	}); err != nil {
		if errors.Is(err, ErrUnsound) {
			return nil, err
		}
		if errors.Is(err, bolt.ErrTimeout) { //nolint:staticcheck // SA1019: the same error as bbolt/errors', which the import rule keeps out of sim/store
			return nil, &lockedError{path: path}
		}
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	s = &Store{db: db}
	if err := guard(path, func() error {
		return db.Update(func(tx *bolt.Tx) error {
			for _, name := range append([][]byte{bMeta, bSeq}, allData...) {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			meta := tx.Bucket(bMeta)
			version := uint64(SchemaVersion) // a new file
			if v := meta.Get(keySchema); v != nil {
				if len(v) != 8 {
					return fmt.Errorf("malformed schema version %x, this dubsim reads %d", v, SchemaVersion)
				}
				version = binary.BigEndian.Uint64(v)
				if version != SchemaVersion && version != 2 {
					return fmt.Errorf("schema version %d, this dubsim reads %d (and migrates 2)", version, SchemaVersion)
				}
			}
			switch v := meta.Get(keyKeySeed); {
			case v == nil && version == SchemaVersion && meta.Get(keySchema) != nil:
				return fmt.Errorf("schema version %d without %s", version, keyKeySeed)
			case v == nil:
				key := o.keySeed
				// A schema 2 file's ids were made with the seed it was
				// given, 0 by default.
				if !o.keySeedSet && version == SchemaVersion {
					var b [8]byte
					if _, err := rand.Read(b[:]); err != nil {
						return fmt.Errorf("making the id key: %w", err)
					}
					key = binary.BigEndian.Uint64(b[:])
				}
				if err := meta.Put(keyKeySeed, be64(key)); err != nil {
					return err
				}
				s.keys = sim.NewIDs(key)
			case len(v) != 8:
				return fmt.Errorf("malformed %s %x", keyKeySeed, v)
			default:
				s.keys = sim.NewIDs(binary.BigEndian.Uint64(v))
			}
			sec, err := secret(meta)
			if err != nil {
				return err
			}
			s.secret = sec
			if version == 2 {
				if err := s.migrateKeys(tx); err != nil {
					return fmt.Errorf("migrating schema 2 to %d: %w", SchemaVersion, err)
				}
			}
			return meta.Put(keySchema, be64(SchemaVersion))
		})
	}); err != nil {
		_ = db.Close()
		if errors.Is(err, ErrUnsound) {
			return nil, err
		}
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	s.commit = newCommitter(db)
	return s, nil
}

// secret reads the store's secret from the meta bucket, making and storing
// one when there is none (a new file, or one made before secrets existed).
func secret(meta *bolt.Bucket) ([]byte, error) {
	if v := meta.Get(keySecret); v != nil {
		if len(v) != SecretBytes {
			return nil, fmt.Errorf("malformed %s: %d bytes, want %d", keySecret, len(v), SecretBytes)
		}
		return bytes.Clone(v), nil
	}
	v := make([]byte, SecretBytes)
	if _, err := rand.Read(v); err != nil {
		return nil, fmt.Errorf("making the store secret: %w", err)
	}
	return v, meta.Put(keySecret, v)
}

// Secret returns the store's random secret (see sim.Store).
func (s *Store) Secret() []byte { return bytes.Clone(s.secret) }

// IDKey returns the key of the store's id permutation (see sim.Store).
func (s *Store) IDKey() uint64 { return s.keys.Seed() }

// Close commits the queued Batch calls and closes the file.
func (s *Store) Close() error {
	s.commit.close()
	return s.db.Close()
}

// Path returns the file path.
func (s *Store) Path() string { return s.db.Path() }

// View runs fn in a read-only transaction.
func (s *Store) View(ctx context.Context, fn func(sim.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.View(func(tx *bolt.Tx) error { return fn(&txn{tx: tx, s: s}) })
}

// Batch runs fn in a read-write transaction that concurrent Batch calls
// may share (group commit, batch.go): one disk sync for many writes. fn may
// run more than once.
func (s *Store) Batch(ctx context.Context, fn func(sim.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.commit.do(s.wrap(fn))
}

// Update runs fn in a read-write transaction; an error rolls it back.
func (s *Store) Update(ctx context.Context, fn func(sim.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.Update(s.wrap(fn))
}

// projectKey is the key of project id in the projects and project_bodies
// buckets: the eight big-endian bytes of the sequence number the id was made
// from (below 2^30, so the first byte is 0), which keeps creations at the end
// of the B+tree; any other string after a 0xFF byte. The mapping is one to
// one, and values hold the id, so nothing reads it back.
func (s *Store) projectKey(id string) []byte {
	if seq, ok := s.keys.PlatformProjectSeq(id); ok {
		return be64(seq)
	}
	return append([]byte{0xFF}, id...)
}

// projectID is the inverse of projectKey.
func (s *Store) projectID(key []byte) string {
	if len(key) == 8 && key[0] == 0 {
		return s.keys.PlatformProjectID(binary.BigEndian.Uint64(key))
	}
	if len(key) > 0 && key[0] == 0xFF {
		return string(key[1:])
	}
	return string(key) // not a key projectKey makes
}

// migrateKeys re-keys the projects, project_bodies and projects_due buckets
// of a schema 2 file, whose keys were (or ended with) the ids.
func (s *Store) migrateKeys(tx *bolt.Tx) error {
	for _, name := range [][]byte{bProjects, bBodies, bDue} {
		type kv struct{ k, v []byte }
		var all []kv
		if err := tx.Bucket(name).ForEach(func(k, v []byte) error {
			var nk []byte
			switch {
			case !bytes.Equal(name, bDue):
				nk = s.projectKey(string(k))
			case len(k) >= timeKeyLen:
				nk = append(bytes.Clone(k[:timeKeyLen]), s.projectKey(string(k[timeKeyLen:]))...)
			default:
				return fmt.Errorf("malformed due key %x", k)
			}
			all = append(all, kv{nk, bytes.Clone(v)})
			return nil
		}); err != nil {
			return err
		}
		if err := tx.DeleteBucket(name); err != nil {
			return err
		}
		b, err := tx.CreateBucket(name)
		if err != nil {
			return err
		}
		b.FillPercent = appendFill
		slices.SortFunc(all, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
		for _, e := range all {
			if err := b.Put(e.k, e.v); err != nil {
				return err
			}
		}
	}
	return nil
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

// envelope wraps every stored value with its version. D holds a pointer to
// the typed value, so encoding and decoding take one pass each.
type envelope struct {
	V int `json:"v"`
	D any `json:"d"`
}

const valueVersion = 1

func encode(v any) ([]byte, error) {
	if b, ok := binEncode(v); ok {
		return b, nil
	}
	return json.Marshal(envelope{V: valueVersion, D: v})
}

func decode(b []byte, v any) error {
	if len(b) > 0 && b[0] == binTag {
		return binDecode(b, v)
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

type txn struct {
	tx *bolt.Tx
	s  *Store
}

var _ sim.Tx = (*txn)(nil)

func (t *txn) get(bucket []byte, key string, v any) error {
	return t.getKey(bucket, []byte(key), v)
}

func (t *txn) getKey(bucket, key []byte, v any) error {
	b := t.tx.Bucket(bucket).Get(key)
	if b == nil {
		return sim.ErrNotFound
	}
	return decode(b, v)
}

func (t *txn) put(bucket []byte, key string, v any) error {
	return t.putKey(bucket, []byte(key), v)
}

func (t *txn) putKey(bucket, key []byte, v any) error {
	b, err := encode(v)
	if err != nil {
		return err
	}
	return t.tx.Bucket(bucket).Put(key, b)
}

func forEach[T any](t *txn, bucket []byte, fn func(T) error) error {
	return t.tx.Bucket(bucket).ForEach(func(_, raw []byte) error {
		var v T
		if err := decode(raw, &v); err != nil {
			return err
		}
		return fn(v)
	})
}

func (t *txn) Account(key string) (sim.Account, error) {
	var a sim.Account
	return a, t.get(bAccounts, key, &a)
}

func (t *txn) PutAccount(a sim.Account) error { return t.put(bAccounts, a.APIKey, a) }

func (t *txn) ForEachAccount(fn func(sim.Account) error) error {
	return forEach(t, bAccounts, fn)
}

// A project is stored in up to two records under projectKey: the head
// (every scalar field and the history) in "projects" and the body (scripts,
// speakers, the client's script input, pending re-translation) in
// "project_bodies", so reads that need no script stay cheap however long
// the video. A project without any of those (one just created from a URL)
// has no body record, one record fewer for a creation to write.
type projectBody struct {
	ScriptInput  *sim.ScriptInput   `json:"script_input,omitempty"`
	SourceScript []sim.Segment      `json:"source_script"`
	TargetScript []sim.Segment      `json:"target_script"`
	Speakers     []sim.Speaker      `json:"speakers"`
	Pending      *sim.Retranslation `json:"pending,omitempty"`
	// History is read from bodies written before it moved to the head.
	History []sim.Event `json:"history,omitempty"`
}

func (b projectBody) empty() bool {
	return b.ScriptInput == nil && b.SourceScript == nil && b.TargetScript == nil && b.Speakers == nil && b.Pending == nil && b.History == nil
}

func split(p sim.Project) (sim.Project, projectBody) {
	b := projectBody{ScriptInput: p.ScriptInput, SourceScript: p.SourceScript, TargetScript: p.TargetScript, Speakers: p.Speakers, Pending: p.Pending}
	p.ScriptInput, p.SourceScript, p.TargetScript, p.Speakers, p.Pending = nil, nil, nil, nil, nil
	return p, b
}

func (t *txn) ProjectHead(id string) (sim.Project, error) {
	var p sim.Project
	return p, t.getKey(bProjects, t.s.projectKey(id), &p)
}

func (t *txn) withBody(p sim.Project) (sim.Project, error) {
	var b projectBody
	if err := t.getKey(bBodies, t.s.projectKey(p.ID), &b); err != nil && !errors.Is(err, sim.ErrNotFound) {
		return p, err
	}
	p.ScriptInput, p.SourceScript, p.TargetScript, p.Speakers, p.Pending = b.ScriptInput, b.SourceScript, b.TargetScript, b.Speakers, b.Pending
	if b.History != nil {
		p.History = b.History
	}
	return p, nil
}

func (t *txn) Project(id string) (sim.Project, error) {
	p, err := t.ProjectHead(id)
	if err != nil {
		return p, err
	}
	return t.withBody(p)
}

// dueKey is a project's key in the due index: the due time, then the
// project key, so projects due at the same time (all of them, while the
// clock stands still) follow in creation order.
func (s *Store) dueKey(p sim.Project) []byte {
	if p.Status != sim.StatusInProgress || p.DueAt.IsZero() {
		return nil
	}
	return append(timeKey(p.DueAt, ""), s.projectKey(p.ID)...)
}

func (t *txn) PutProject(p sim.Project) error {
	if p.ID == "" {
		return errors.New("store: project without id")
	}
	due := t.tx.Bucket(bDue)
	old, err := t.ProjectHead(p.ID)
	existed := err == nil
	switch {
	case existed:
		if k := t.s.dueKey(old); k != nil {
			if err := due.Delete(k); err != nil {
				return err
			}
		}
	case !errors.Is(err, sim.ErrNotFound):
		return err
	}
	if k := t.s.dueKey(p); k != nil {
		if err := due.Put(k, nil); err != nil {
			return err
		}
	}
	key := t.s.projectKey(p.ID)
	head, body := split(p)
	switch {
	case body.empty() && existed:
		if err := t.tx.Bucket(bBodies).Delete(key); err != nil {
			return err
		}
	case body.empty():
	default:
		if err := t.putKey(bBodies, key, body); err != nil {
			return err
		}
	}
	return t.putKey(bProjects, key, head)
}

func (t *txn) DeleteProject(id string) error {
	p, err := t.ProjectHead(id)
	if err != nil {
		return err
	}
	if k := t.s.dueKey(p); k != nil {
		if err := t.tx.Bucket(bDue).Delete(k); err != nil {
			return err
		}
	}
	key := t.s.projectKey(id)
	if err := t.tx.Bucket(bBodies).Delete(key); err != nil {
		return err
	}
	return t.tx.Bucket(bProjects).Delete(key)
}

func (t *txn) ForEachProjectHead(fn func(sim.Project) error) error {
	return forEach(t, bProjects, fn)
}

func (t *txn) ForEachProject(fn func(sim.Project) error) error {
	return forEach(t, bProjects, func(p sim.Project) error {
		p, err := t.withBody(p)
		if err != nil {
			return err
		}
		return fn(p)
	})
}

// dueIDs returns up to limit ids of a due index whose time is at or before
// now, earliest first; id turns the rest of a key into the id.
func (t *txn) dueIDs(bucket []byte, now time.Time, limit int, id func([]byte) string) ([]string, error) {
	var ids []string
	limitKey := timeKey(now, "")
	c := t.tx.Bucket(bucket).Cursor()
	for k, _ := c.First(); k != nil && len(ids) < limit; k, _ = c.Next() {
		if len(k) < timeKeyLen || bytes.Compare(k[:timeKeyLen], limitKey) > 0 {
			break
		}
		ids = append(ids, id(k[timeKeyLen:]))
	}
	return ids, nil
}

func (t *txn) DueProjects(now time.Time, limit int) ([]string, error) {
	return t.dueIDs(bDue, now, limit, t.s.projectID)
}

// plainID is the id of a due index whose keys end with the id itself.
func plainID(k []byte) string { return string(k) }

func (t *txn) NextSequence(name string) (uint64, error) {
	b := t.tx.Bucket(bSeq)
	var n uint64
	if v := b.Get([]byte(name)); len(v) == 8 {
		n = binary.BigEndian.Uint64(v)
	}
	n++
	return n, b.Put([]byte(name), be64(n))
}

func idemKey(scope, key string) string { return scope + "\x00" + key }

func (t *txn) Idempotency(scope, key string) (sim.IdemRecord, error) {
	var r sim.IdemRecord
	return r, t.get(bIdem, idemKey(scope, key), &r)
}

func (t *txn) PutIdempotency(scope, key string, rec sim.IdemRecord) error {
	k := idemKey(scope, key)
	var old sim.IdemRecord
	if err := t.get(bIdem, k, &old); err == nil {
		if err := t.tx.Bucket(bIdemExp).Delete(timeKey(old.CreatedAt, k)); err != nil {
			return err
		}
	}
	if err := t.tx.Bucket(bIdemExp).Put(timeKey(rec.CreatedAt, k), nil); err != nil {
		return err
	}
	return t.put(bIdem, k, rec)
}

func (t *txn) DeleteIdempotencyScope(scope string) (int, error) {
	prefix := []byte(scope + "\x00")
	idem, exp := t.tx.Bucket(bIdem), t.tx.Bucket(bIdemExp)
	var dead [][]byte
	var deadExp [][]byte
	c := idem.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var rec sim.IdemRecord
		if err := decode(v, &rec); err != nil {
			return 0, err
		}
		dead = append(dead, bytes.Clone(k))
		deadExp = append(deadExp, timeKey(rec.CreatedAt, string(k)))
	}
	for i, k := range dead {
		if err := idem.Delete(k); err != nil {
			return 0, err
		}
		if err := exp.Delete(deadExp[i]); err != nil {
			return 0, err
		}
	}
	return len(dead), nil
}

func (t *txn) CountIdempotency() int { return t.tx.Bucket(bIdem).Stats().KeyN }

func (t *txn) PurgeIdempotency(cutoff time.Time) (int, error) {
	exp, idem := t.tx.Bucket(bIdemExp), t.tx.Bucket(bIdem)
	limitKey := timeKey(cutoff, "")
	var dead [][]byte
	c := exp.Cursor()
	for k, _ := c.First(); k != nil && bytes.Compare(k, limitKey) < 0; k, _ = c.Next() {
		dead = append(dead, bytes.Clone(k))
	}
	for _, k := range dead {
		if err := exp.Delete(k); err != nil {
			return 0, err
		}
		if err := idem.Delete(k[timeKeyLen:]); err != nil {
			return 0, err
		}
	}
	return len(dead), nil
}

func (t *txn) Meta(key string) ([]byte, error) {
	v := t.tx.Bucket(bMeta).Get([]byte(key))
	if v == nil {
		return nil, sim.ErrNotFound
	}
	return bytes.Clone(v), nil
}

func (t *txn) PutMeta(key string, value []byte) error {
	if key == string(keySchema) {
		return errors.New("store: schema version is read-only")
	}
	return t.tx.Bucket(bMeta).Put([]byte(key), value)
}

func (t *txn) ResetData() error {
	for _, name := range allData {
		if err := t.tx.DeleteBucket(name); err != nil {
			return err
		}
		if _, err := t.tx.CreateBucket(name); err != nil {
			return err
		}
	}
	return nil
}

// countedBuckets are the records Counts reports, in its order.
var countedBuckets = [][]byte{bAccounts, bProjects, bCompanies, bStudioProjects, bVideos, bArtifacts, bUploads}

// Counts returns how many records the store holds of each kind a user
// recognises (accounts, platform projects, companies, studio projects,
// videos, artifacts, uploads), in that order: the banner says what an
// existing data file restored. It reads the pages of those buckets, not
// their values; a damaged page is an error, not a panic.
func (s *Store) Counts() ([]BucketCount, error) {
	out := make([]BucketCount, 0, len(countedBuckets))
	err := guard(s.db.Path(), func() error {
		return s.db.View(func(tx *bolt.Tx) error { return countBuckets(tx, &out) })
	})
	return out, err
}

func countBuckets(tx *bolt.Tx, out *[]BucketCount) error {
	for _, name := range countedBuckets {
		n := 0
		if b := tx.Bucket(name); b != nil {
			n = b.Stats().KeyN
		}
		*out = append(*out, BucketCount{Bucket: string(name), N: n})
	}
	return nil
}
