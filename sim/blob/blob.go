package blob

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"
)

// MaxNameLen is the longest blob name accepted.
const MaxNameLen = 200

// ErrTooLarge means the reader given to Write yielded more bytes than the limit.
var ErrTooLarge = errors.New("blob: too large")

// ErrInvalidName means a blob name is empty, too long, "." or "..", or has a
// character other than ASCII letters, digits, '.', '_' and '-'.
var ErrInvalidName = errors.New("blob: invalid name")

// tempPattern names the files Write streams into before renaming them. Its
// '~' is not allowed in blob names, so a temp file never shadows a blob.
const tempPattern = "tmp~*"

const copyBufSize = 1 << 20

var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// Dir is a directory of blobs. It is safe for concurrent use; concurrent
// writes of one name leave one of the written contents.
type Dir struct {
	dir string
}

// Open returns the blob directory dir, creating it if needed, and removes
// the temporary files a crash in the middle of a Write left behind (only
// those: their names cannot be blob names). The directory belongs to one
// process, as the data file it goes with does.
func Open(dir string) (*Dir, error) {
	if dir == "" {
		return nil, errors.New("blob: empty directory name")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	d := &Dir{dir: dir}
	if err := d.removeTemps(); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *Dir) removeTemps() error {
	names, err := filepath.Glob(filepath.Join(d.dir, tempPattern))
	if err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	var errs []error
	for _, name := range names {
		if fi, err := os.Lstat(name); err == nil && fi.Mode().IsRegular() {
			if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("blob: removing temporary files: %w", err)
	}
	return nil
}

// Path returns the directory holding the blobs.
func (d *Dir) Path() string { return d.dir }

// CheckName returns an error wrapping ErrInvalidName unless name is a valid
// blob name: 1 to MaxNameLen characters among ASCII letters, digits, '.',
// '_' and '-', and neither "." nor "..".
func CheckName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrInvalidName)
	case len(name) > MaxNameLen:
		return fmt.Errorf("%w: %d characters, more than %d", ErrInvalidName, len(name), MaxNameLen)
	case name == "." || name == "..":
		return fmt.Errorf("%w %q", ErrInvalidName, name)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !nameChar(c) {
			return fmt.Errorf("%w %q: character %q at offset %d is not a letter, digit, '.', '_' or '-'", ErrInvalidName, name, c, i)
		}
	}
	return nil
}

func nameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// Write stores the bytes of r as the blob name, replacing any blob of that
// name, and returns their count. It streams r into a temporary file of the
// directory, syncs it and renames it to name, so name holds either the
// previous blob or the whole new one.
//
// When r yields more than limit bytes, Write stops reading as soon as the
// limit is crossed (it reads at most limit+1 bytes), stores nothing and
// returns an error wrapping ErrTooLarge. On any error no temporary file is
// left behind and the returned count is the number of bytes read.
func (d *Dir) Write(name string, r io.Reader, limit int64) (n int64, err error) {
	if err := CheckName(name); err != nil {
		return 0, err
	}
	if limit < 0 {
		return 0, fmt.Errorf("blob: negative limit %d", limit)
	}
	f, err := os.CreateTemp(d.dir, tempPattern)
	if err != nil {
		return 0, fmt.Errorf("blob: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close() // may already be closed; the first error is kept
			_ = os.Remove(tmp)
		}
	}()

	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	// The wrappers hide ReadFrom and WriteTo, so the copy goes through the
	// pooled buffer; the limit reader never asks r for more than limit+1.
	n, err = io.CopyBuffer(writerOnly{f}, io.LimitReader(readerOnly{r}, min(limit, math.MaxInt64-1)+1), *bp)
	if err != nil {
		return n, fmt.Errorf("blob %s: %w", name, err)
	}
	if n > limit {
		return n, fmt.Errorf("%w: %s has more than %d bytes", ErrTooLarge, name, limit)
	}
	rename := func() error { return os.Rename(tmp, filepath.Join(d.dir, name)) }
	for _, step := range []func() error{f.Sync, f.Close, rename} {
		if err = step(); err != nil {
			return n, fmt.Errorf("blob %s: %w", name, err)
		}
	}
	return n, nil
}

type writerOnly struct{ io.Writer }

type readerOnly struct{ io.Reader }

// Open opens the blob name for reading and returns it with its size. The
// caller closes the file. A missing blob gives an error wrapping
// fs.ErrNotExist.
func (d *Dir) Open(name string) (*os.File, int64, error) {
	if err := CheckName(name); err != nil {
		return nil, 0, err
	}
	f, err := os.Open(filepath.Join(d.dir, name))
	if err != nil {
		return nil, 0, fmt.Errorf("blob %s: %w", name, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("blob %s: %w", name, err)
	}
	return f, fi.Size(), nil
}

// Remove deletes the blob name; a missing blob is not an error. A reader
// that has the blob open keeps reading it.
func (d *Dir) Remove(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(d.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blob %s: %w", name, err)
	}
	return nil
}

// Clear deletes every blob and every temporary file left by an interrupted
// Write, and keeps the directory. A Write in progress then fails.
func (d *Dir) Clear() error {
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, os.RemoveAll(filepath.Join(d.dir, e.Name()))) // Join drops nils
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("blob: clear %s: %w", d.dir, err)
	}
	return nil
}
