package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/dubsim/dubsim/sim"
	bolt "go.etcd.io/bbolt"
)

// Open refuses a file that is not a sound store before bbolt maps it: bbolt
// would silently initialize an empty file (a 0-byte file lost its 10,173
// projects without a word), and it reads the pages of a truncated file
// through its memory map, where a page past the end of the file is a SIGBUS
// that no recover catches. checkHeader reads the two meta pages with
// bounded reads instead and compares the file's size with what they say.

// The messages of a file Open refuses (fidelity HD1-HD4); %[1]s is the path.
const (
	MsgEmptyFile = "store: %[1]s is empty (0 bytes), not a dubsim data file: dubsim will not overwrite it with a new store. " +
		"To start fresh, move it away (or delete it); to recover the data, restore the file from a backup"
	MsgTruncated = "store: %[1]s is truncated: %[2]s. " +
		"dubsim will not open it; to recover the data, restore the file from a backup; to start fresh, move it away"
	MsgNotStore = "store: %[1]s is not a dubsim data file (%[2]s). " +
		"dubsim will not overwrite it; check --data, or move the file away to start fresh"
	MsgDamaged = "store: %[1]s is damaged (%[2]v). " +
		"Run `dubsim check --data %[1]s` for details; to recover the data, restore the file from a backup; to start fresh, move it away"
)

// ErrUnsound is wrapped by the errors of a file Open or Check refuses (empty,
// truncated, not a bbolt file, damaged).
var ErrUnsound = errors.New("store: not a sound data file")

// The layout of a bbolt file (go.etcd.io/bbolt, internal/common): pages
// 0 and 1 are meta pages, each a 16-byte page header (id, flags, count,
// overflow) and then the meta, in the machine's byte order.
const (
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	pageHeaderSize = 16
	// metaSize is the meta through its checksum: magic, version, page
	// size, flags (4 bytes each), root bucket (16), freelist, high-water
	// page id, transaction id (8 each), checksum (8).
	metaSize     = 64
	metaSumBytes = 56 // the checksum covers everything before it
	// minPageSize and maxPageSize bound the page sizes bbolt looks for
	// (1 KB to 16 MB).
	minPageSize = 1 << 10
	maxPageSize = 1 << 24
)

// boltMeta is the part of a meta page checkHeader needs.
type boltMeta struct {
	pageSize uint32
	pgid     uint64 // the high-water mark: pages below it are in use
}

// parseMeta decodes the meta in the page at the start of b; the error says
// why it is not a valid meta.
func parseMeta(b []byte) (boltMeta, error) {
	if len(b) < pageHeaderSize+metaSize {
		return boltMeta{}, errors.New("too short")
	}
	m := b[pageHeaderSize : pageHeaderSize+metaSize]
	ne := binary.NativeEndian
	if ne.Uint32(m[0:]) != boltMagic {
		return boltMeta{}, errors.New("no bbolt magic number")
	}
	if v := ne.Uint32(m[4:]); v != boltVersion {
		return boltMeta{}, fmt.Errorf("bbolt format version %d, this dubsim reads %d", v, boltVersion)
	}
	h := fnv.New64a()
	_, _ = h.Write(m[:metaSumBytes])
	if h.Sum64() != ne.Uint64(m[metaSumBytes:]) {
		return boltMeta{}, errors.New("meta page checksum mismatch")
	}
	meta := boltMeta{pageSize: ne.Uint32(m[8:]), pgid: ne.Uint64(m[40:])}
	if ps := meta.pageSize; ps < minPageSize || ps > maxPageSize || ps&(ps-1) != 0 {
		return boltMeta{}, fmt.Errorf("page size %d", ps)
	}
	return meta, nil
}

// checkHeader returns nil when path does not exist (Open creates it) or is
// a bbolt file whose meta pages agree with its size; otherwise an error
// wrapping ErrUnsound.
func checkHeader(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if !st.Mode().IsRegular() {
		return refuse(ErrUnsound, MsgNotStore, path, "not a regular file")
	}
	size := st.Size()
	if size == 0 {
		return refuse(ErrUnsound, MsgEmptyFile, path)
	}
	read := func(off int64, n int) []byte {
		b := make([]byte, n)
		k, err := f.ReadAt(b, off)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil
		}
		return b[:k]
	}

	// Meta page 0 is at the start; meta page 1 one page further, where
	// the page size may only be known from it (bbolt looks at every
	// power of two from 1 KB the same way).
	var metas []boltMeta
	m0, err0 := parseMeta(read(0, pageHeaderSize+metaSize))
	if err0 == nil {
		metas = append(metas, m0)
	}
	for ps := int64(minPageSize); ps <= maxPageSize && ps < size; ps <<= 1 {
		if err0 == nil && ps != int64(m0.pageSize) {
			continue
		}
		if m1, err := parseMeta(read(ps, pageHeaderSize+metaSize)); err == nil && int64(m1.pageSize) == ps {
			metas = append(metas, m1)
			break
		}
	}
	if len(metas) == 0 {
		if size < pageHeaderSize+metaSize {
			return refuse(ErrUnsound, MsgNotStore, path, fmt.Sprintf("%d bytes, too short for a header", size))
		}
		return refuse(ErrUnsound, MsgNotStore, path, "no valid bbolt meta page: "+err0.Error())
	}
	ps := int64(metas[0].pageSize) // meta page 1 was only looked for at meta page 0's size
	var pages uint64
	for _, m := range metas {
		pages = max(pages, m.pgid)
	}
	switch {
	case size%ps != 0:
		return refuse(ErrUnsound, MsgTruncated, path, fmt.Sprintf("%d bytes is not a whole number of %d-byte pages", size, ps))
	case pages > uint64(size/ps) || size < 2*ps:
		return refuse(ErrUnsound, MsgTruncated, path, fmt.Sprintf("%d bytes (%d pages of %d bytes), but its header says it holds %d pages", size, size/ps, ps, max(pages, 2)))
	}
	return nil
}

// guard runs fn, turning a panic (and a memory fault, which bbolt can meet
// reading a damaged page through its map) into an error that wraps
// ErrUnsound and names path.
func guard(path string, fn func() error) error {
	err := recovered(fn)
	var pe panicError
	if errors.As(err, &pe) {
		return refuse(ErrUnsound, MsgDamaged, path, pe.v)
	}
	return err
}

type panicError struct{ v any }

func (e panicError) Error() string { return fmt.Sprintf("bbolt panicked: %v", e.v) }

// recovered runs fn, turning a panic or a memory fault into a panicError.
func recovered(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = panicError{r}
		}
	}()
	return fn()
}

// CheckReport is what Check found in a data file.
type CheckReport struct {
	Size     int64
	PageSize int
	// Records counts the records of each bucket of checkedBuckets.
	Records []BucketCount
	// Problems are bbolt's consistency errors, then the records that do
	// not decode; empty for a sound file.
	Problems []string
}

// BucketCount is the number of records of one bucket.
type BucketCount struct {
	Bucket string
	N      int
}

// maxProblems bounds the problems Check lists.
const maxProblems = 100

// checkedBuckets are the buckets of records Check decodes.
var checkedBuckets = []struct {
	name   []byte
	decode func([]byte) error
}{
	{bAccounts, decodeAs[sim.Account]},
	{bProjects, decodeAs[sim.Project]},
	{bBodies, decodeAs[projectBody]},
	{bIdem, decodeAs[sim.IdemRecord]},
	{bCompanies, decodeAs[sim.Company]},
	{bUsers, decodeAs[sim.User]},
	{bGlossaries, decodeAs[sim.Glossary]},
	{bFolders, decodeAs[sim.Folder]},
	{bStudioProjects, decodeAs[sim.StudioProject]},
	{bVideos, decodeAs[sim.Video]},
	{bArtifacts, decodeAs[sim.Artifact]},
	{bUploads, decodeAs[sim.Upload]},
}

func decodeAs[T any](b []byte) error {
	var v T
	return decode(b, &v)
}

const msgCheckLocked = "store: %s is in use (a running dubsim holds it): stop it first, or check a copy"

// Check opens the data file at path read-only (waiting at most a second
// for a dubsim that has it open) and reports what is wrong with it: the
// header (as Open checks it), bbolt's consistency check and the decoding of
// every record. The error is for a file it cannot read at all (missing,
// empty, truncated, not a bbolt file, in use) or of another schema version.
func Check(path string) (CheckReport, error) {
	var r CheckReport
	st, err := os.Stat(path)
	if err != nil {
		return r, fmt.Errorf("store: %w", err)
	}
	r.Size = st.Size()
	db, err := openBolt(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: time.Second}, msgCheckLocked)
	if err != nil {
		return r, err
	}
	defer db.Close()
	r.PageSize = db.Info().PageSize
	problem := func(format string, args ...any) {
		if len(r.Problems) < maxProblems {
			r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
		}
	}
	err = db.View(func(tx *bolt.Tx) error {
		var version []byte
		_ = recovered(func() error { // a damaged page is the consistency check's to report
			if b := tx.Bucket(bMeta); b != nil {
				version = b.Get(keySchema)
			}
			return nil
		})
		if len(version) == 8 && binary.BigEndian.Uint64(version) != SchemaVersion {
			return refuse(ErrOtherSchema, MsgOtherSchema, path, binary.BigEndian.Uint64(version), SchemaVersion)
		}
		if err := recovered(func() error {
			for err := range tx.Check() {
				problem("bbolt: %v", err)
			}
			return nil
		}); err != nil {
			problem("bbolt: consistency check stopped: %v", err)
		}
		for _, cb := range checkedBuckets {
			n := 0
			if err := recovered(func() error {
				b := tx.Bucket(cb.name)
				if b == nil {
					return nil
				}
				return b.ForEach(func(k, v []byte) error {
					n++
					if err := cb.decode(v); err != nil {
						problem("%s %q: %v", cb.name, k, err)
					}
					return nil
				})
			}); err != nil {
				problem("%s: reading stopped after %d records: %v", cb.name, n, err)
			}
			r.Records = append(r.Records, BucketCount{Bucket: string(cb.name), N: n})
		}
		return nil
	})
	return r, err
}
