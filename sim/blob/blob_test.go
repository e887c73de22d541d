package blob

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openDir opens a blob directory in a fresh temp dir.
func openDir(t testing.TB) *Dir {
	t.Helper()
	d, err := Open(filepath.Join(t.TempDir(), "blobs"))
	require.NoError(t, err)
	return d
}

// readBlob returns the content of blob name.
func readBlob(t *testing.T, d *Dir, name string) []byte {
	t.Helper()
	f, size, err := d.Open(name)
	require.NoError(t, err)
	defer f.Close()
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	assert.Equal(t, int64(len(b)), size, "size returned by Open")
	return b
}

// entries lists the directory's file names, temp files included.
func entries(t *testing.T, d *Dir) []string {
	t.Helper()
	es, err := os.ReadDir(d.Path())
	require.NoError(t, err)
	names := []string{}
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// patternReader yields n bytes repeating pattern, without holding them.
type patternReader struct {
	pattern []byte
	off     int   // position within pattern
	n       int64 // bytes left; < 0: endless
	read    int64 // bytes returned so far
}

func newPatternReader(n int64) *patternReader {
	p := make([]byte, 64<<10+7) // odd length: chunks do not line up with buffers
	for i := range p {
		p[i] = byte(i*31 + i>>8)
	}
	return &patternReader{pattern: p, n: n}
}

func (r *patternReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	if r.n > 0 && int64(len(p)) > r.n {
		p = p[:r.n]
	}
	done := 0
	for done < len(p) {
		c := copy(p[done:], r.pattern[r.off:])
		done += c
		r.off = (r.off + c) % len(r.pattern)
	}
	if r.n > 0 {
		r.n -= int64(done)
	}
	r.read += int64(done)
	return done, nil
}

// at is the byte the reader yields at offset off.
func (r *patternReader) at(off int64) byte { return r.pattern[off%int64(len(r.pattern))] }

// failingReader yields n bytes, then fails.
type failingReader struct {
	n   int
	err error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, r.err
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

func TestOpenCreatesDir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a", "b", "blobs")
	d, err := Open(dir)
	require.NoError(t, err)
	assert.Equal(t, dir, d.Path())
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())

	_, err = Open(dir) // an existing directory is fine
	require.NoError(t, err)

	_, err = Open("")
	require.Error(t, err)

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = Open(file)
	require.Error(t, err, "a regular file is not a directory")
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"one byte", []byte{0}},
		{"text", []byte("hello, dubbing")},
		{"several buffers", bytes.Repeat([]byte("0123456789abcdef"), (3*copyBufSize)/16+5)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := openDir(t)
			n, err := d.Write("a1b2.mp4", bytes.NewReader(tc.data), 1<<30)
			require.NoError(t, err)
			assert.Equal(t, int64(len(tc.data)), n)
			got := readBlob(t, d, "a1b2.mp4")
			assert.True(t, bytes.Equal(tc.data, got), "content differs: %d bytes read, %d written", len(got), len(tc.data))
			assert.Equal(t, []string{"a1b2.mp4"}, entries(t, d), "no temp file is left")
		})
	}
}

func TestWriteReplaces(t *testing.T) {
	t.Parallel()
	d := openDir(t)
	_, err := d.Write("x", strings.NewReader("first, longer content"), 100)
	require.NoError(t, err)
	_, err = d.Write("x", strings.NewReader("second"), 100)
	require.NoError(t, err)
	assert.Equal(t, "second", string(readBlob(t, d, "x")))
}

func TestWriteLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		size    int64 // < 0: endless reader
		limit   int64
		wantErr bool
	}{
		{"under", 99, 100, false},
		{"exactly at", 100, 100, false},
		{"one over", 101, 100, true},
		{"far over", 10 * copyBufSize, 100, true},
		{"endless reader", -1, 100, true},
		{"exactly at, several buffers", 3*copyBufSize + 1, 3*copyBufSize + 1, false},
		{"one over, several buffers", 3*copyBufSize + 2, 3*copyBufSize + 1, true},
		{"empty with limit 0", 0, 0, false},
		{"one byte with limit 0", 1, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := openDir(t)
			const old = "previous blob"
			_, err := d.Write("blob", strings.NewReader(old), 100)
			require.NoError(t, err)

			r := newPatternReader(tc.size)
			n, err := d.Write("blob", r, tc.limit)
			if !tc.wantErr {
				require.NoError(t, err)
				assert.Equal(t, tc.size, n)
				got := readBlob(t, d, "blob")
				require.Len(t, got, int(tc.size))
				for _, off := range []int64{0, tc.size / 2, tc.size - 1} {
					if off >= 0 && off < tc.size {
						assert.Equal(t, r.at(off), got[off], "byte at %d", off)
					}
				}
				return
			}
			require.ErrorIs(t, err, ErrTooLarge)
			assert.Contains(t, err.Error(), fmt.Sprintf("more than %d bytes", tc.limit))
			assert.Equal(t, tc.limit+1, r.read, "reading stops right after the limit is crossed")
			assert.Equal(t, old, string(readBlob(t, d, "blob")), "the previous blob is kept")
			assert.Equal(t, []string{"blob"}, entries(t, d), "no temp file is left")
		})
	}
	t.Run("negative limit", func(t *testing.T) {
		t.Parallel()
		d := openDir(t)
		_, err := d.Write("blob", strings.NewReader(""), -1)
		require.Error(t, err)
		assert.Empty(t, entries(t, d))
	})
}

// A reader failing mid-stream leaves neither the blob nor a temp file, and
// an existing blob of that name is kept.
func TestWriteAtomic(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset by peer")
	for _, failAt := range []int{0, 1, copyBufSize - 1, copyBufSize, 2*copyBufSize + 3} {
		t.Run(fmt.Sprintf("fails after %d bytes", failAt), func(t *testing.T) {
			t.Parallel()
			d := openDir(t)
			_, err := d.Write("kept", strings.NewReader("kept"), 10)
			require.NoError(t, err)

			_, err = d.Write("new", &failingReader{n: failAt, err: boom}, 1<<30)
			require.ErrorIs(t, err, boom)
			_, _, err = d.Open("new")
			require.ErrorIs(t, err, fs.ErrNotExist)

			_, err = d.Write("kept", &failingReader{n: failAt, err: boom}, 1<<30)
			require.ErrorIs(t, err, boom)
			assert.Equal(t, "kept", string(readBlob(t, d, "kept")))

			assert.Equal(t, []string{"kept"}, entries(t, d), "no temp file is left")
		})
	}
}

// Concurrent writes of one name leave one whole content.
func TestWriteConcurrent(t *testing.T) {
	t.Parallel()
	d := openDir(t)
	const writers = 8
	size := copyBufSize + 100
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			_, err := d.Write("same", bytes.NewReader(bytes.Repeat([]byte{byte('a' + i)}, size)), 1<<30)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	got := readBlob(t, d, "same")
	require.Len(t, got, size)
	assert.Equal(t, bytes.Repeat(got[:1], size), got, "one writer's whole content")
	assert.Equal(t, []string{"same"}, entries(t, d))
}

func TestNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		valid bool
	}{
		{"a", true},
		{"0123456789abcdef0123456789abcdef", true},
		{"550e8400-e29b-41d4-a716-446655440000", true},
		{"upload_01.MP4", true},
		{".hidden", true},
		{"...", true},
		{"a..b", true},
		{strings.Repeat("x", MaxNameLen), true},
		{"", false},
		{".", false},
		{"..", false},
		{strings.Repeat("x", MaxNameLen+1), false},
		{"a/b", false},
		{"../escape", false},
		{"/abs", false},
		{`a\b`, false},
		{"a b", false},
		{"tmp~123", false},
		{"a:b", false},
		{"a\x00b", false},
		{"é", false},
		{"a*", false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%.40q", tc.name), func(t *testing.T) {
			t.Parallel()
			d := openDir(t)
			err := CheckName(tc.name)
			_, werr := d.Write(tc.name, strings.NewReader("data"), 10)
			_, _, oerr := d.Open(tc.name)
			rerr := d.Remove(tc.name)
			if tc.valid {
				require.NoError(t, err)
				require.NoError(t, werr)
				require.NoError(t, oerr)
				require.NoError(t, rerr)
				assert.Empty(t, entries(t, d))
				return
			}
			for _, err := range []error{err, werr, oerr, rerr} {
				assert.ErrorIs(t, err, ErrInvalidName)
			}
			assert.Empty(t, entries(t, d), "nothing is written")
		})
	}
}

func TestOpenMissing(t *testing.T) {
	t.Parallel()
	d := openDir(t)
	f, size, err := d.Open("nope")
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.Nil(t, f)
	assert.Zero(t, size)
	assert.Contains(t, err.Error(), "nope")
}

func TestRemove(t *testing.T) {
	t.Parallel()
	d := openDir(t)
	_, err := d.Write("a", strings.NewReader("A"), 10)
	require.NoError(t, err)
	_, err = d.Write("b", strings.NewReader("B"), 10)
	require.NoError(t, err)

	require.NoError(t, d.Remove("a"))
	_, _, err = d.Open("a")
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.Equal(t, "B", string(readBlob(t, d, "b")))

	require.NoError(t, d.Remove("a"), "a missing blob is not an error")
	require.NoError(t, d.Remove("never-written"))
}

// A reader keeps reading a blob that is removed or replaced meanwhile.
func TestOpenSurvivesRemoveAndReplace(t *testing.T) {
	t.Parallel()
	d := openDir(t)
	_, err := d.Write("a", strings.NewReader("old"), 10)
	require.NoError(t, err)
	f, _, err := d.Open("a")
	require.NoError(t, err)
	defer f.Close()
	_, err = d.Write("a", strings.NewReader("new"), 10)
	require.NoError(t, err)
	require.NoError(t, d.Remove("a"))
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	assert.Equal(t, "old", string(b))
}

func TestClear(t *testing.T) {
	t.Parallel()
	d := openDir(t)
	for _, name := range []string{"a", "b.wav", "c-1"} {
		_, err := d.Write(name, strings.NewReader(name), 10)
		require.NoError(t, err)
	}
	// What an interrupted Write leaves, and stray entries.
	require.NoError(t, os.WriteFile(filepath.Join(d.Path(), "tmp~12345"), []byte("partial"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(d.Path(), "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(d.Path(), "sub", "f"), nil, 0o600))

	require.NoError(t, d.Clear())
	assert.Empty(t, entries(t, d))
	fi, err := os.Stat(d.Path())
	require.NoError(t, err, "the directory is kept")
	assert.True(t, fi.IsDir())

	require.NoError(t, d.Clear(), "clearing an empty directory")
	_, err = d.Write("a", strings.NewReader("again"), 10)
	require.NoError(t, err, "the directory is usable after Clear")
	assert.Equal(t, "again", string(readBlob(t, d, "a")))
}

// TestWriteBoundedMemory streams 256 MiB (sixteen times the bound) through
// Write and checks the heap does not grow with the size. It is not parallel: memory statistics are
// process-wide, and sequential tests run before the parallel ones resume.
func TestWriteBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 256 MiB to disk; skipped with -short")
	}
	const size = 256 << 20
	dir := t.TempDir()
	var st syscall.Statfs_t
	require.NoError(t, syscall.Statfs(dir, &st))
	if free := st.Bavail * uint64(st.Bsize); free < 1<<30 {
		t.Skipf("needs 1 GiB free in %s for a 256 MiB blob, has %d MiB", dir, free>>20)
	}
	d, err := Open(dir)
	require.NoError(t, err)
	r := newPatternReader(size)

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n, err := d.Write("big", r, size)
	runtime.ReadMemStats(&after)

	require.NoError(t, err)
	alloc := after.TotalAlloc - before.TotalAlloc
	inuse := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("wrote %d bytes; allocated %d bytes (%.2f MiB), heap in use grew by %d bytes (%.2f MiB)",
		n, alloc, float64(alloc)/(1<<20), inuse, float64(inuse)/(1<<20))
	assert.Equal(t, int64(size), n)
	assert.Less(t, alloc, uint64(16<<20), "total allocation")
	assert.Less(t, inuse, int64(16<<20), "heap in use")

	f, got, err := d.Open("big")
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, int64(size), got)
	b := make([]byte, 1)
	for _, off := range []int64{0, size / 3, size - 1} {
		_, err := f.ReadAt(b, off)
		require.NoError(t, err)
		assert.Equal(t, r.at(off), b[0], "byte at %d", off)
	}
	require.NoError(t, d.Remove("big"))
}

func BenchmarkWrite(b *testing.B) {
	const size = 64 << 20
	d := openDir(b)
	b.SetBytes(size)
	b.ReportAllocs()
	r := newPatternReader(size)
	for b.Loop() {
		*r = patternReader{pattern: r.pattern, n: size}
		if _, err := d.Write("bench", r, size); err != nil {
			b.Fatal(err)
		}
	}
}

// Open removes the temporary files a crash mid-Write left, and keeps the
// blobs and anything else.
func TestOpenRemovesCrashTemps(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "blobs")
	d, err := Open(dir)
	require.NoError(t, err)
	_, err = d.Write("upload-1", strings.NewReader("kept"), 100)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tmp~123"), bytes.Repeat([]byte("x"), 1000), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tmp-not-ours"), []byte("x"), 0o600))

	d, err = Open(dir)
	require.NoError(t, err)
	assert.Equal(t, []byte("kept"), readBlob(t, d, "upload-1"))
	_, err = os.Stat(filepath.Join(dir, "tmp~123"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, err = os.Stat(filepath.Join(dir, "tmp-not-ours"))
	assert.NoError(t, err)
}
