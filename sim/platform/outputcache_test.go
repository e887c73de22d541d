package platform

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cacheRead opens key through c (rendering body when needed) and reads it.
func cacheRead(t *testing.T, c *OutputCache, key, body string, renders *atomic.Int32) (string, bool) {
	t.Helper()
	f, ok := c.open(key, int64(len(body)), func() io.Reader { renders.Add(1); return strings.NewReader(body) })
	if !ok {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	return string(b), true
}

func TestOutputCache(t *testing.T) {
	t.Parallel()
	t.Run("a repeated read renders once", func(t *testing.T) {
		t.Parallel()
		c := NewOutputCache(t.TempDir(), 100)
		var renders atomic.Int32
		for range 3 {
			got, ok := cacheRead(t, c, "p/1/a.wav", "audio", &renders)
			require.True(t, ok)
			assert.Equal(t, "audio", got)
		}
		assert.EqualValues(t, 1, renders.Load())
	})
	t.Run("the least recently used go past the limit", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		c := NewOutputCache(dir, 10)
		var renders atomic.Int32
		cacheRead(t, c, "a", "aaaa", &renders)
		cacheRead(t, c, "b", "bbbb", &renders)
		cacheRead(t, c, "a", "aaaa", &renders) // a is now the most recent
		cacheRead(t, c, "c", "cccc", &renders) // 12 bytes: b goes
		assert.EqualValues(t, 3, renders.Load())
		cacheRead(t, c, "a", "aaaa", &renders)
		assert.EqualValues(t, 3, renders.Load(), "a stayed")
		cacheRead(t, c, "b", "bbbb", &renders)
		assert.EqualValues(t, 4, renders.Load(), "b was rendered again")
		files, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Len(t, files, 2, "evicted files are removed")
		assert.LessOrEqual(t, c.size, int64(10))
	})
	t.Run("larger than the limit: not cached", func(t *testing.T) {
		t.Parallel()
		c := NewOutputCache(t.TempDir(), 3)
		var renders atomic.Int32
		_, ok := cacheRead(t, c, "big", "four", &renders)
		assert.False(t, ok)
		assert.Zero(t, renders.Load(), "the caller renders it")
	})
	t.Run("no cache", func(t *testing.T) {
		t.Parallel()
		var c *OutputCache
		var renders atomic.Int32
		_, ok := cacheRead(t, c, "k", "x", &renders)
		assert.False(t, ok)
		assert.NoError(t, c.Close())
	})
	t.Run("parallel reads of one key render once", func(t *testing.T) {
		t.Parallel()
		c := NewOutputCache(t.TempDir(), 100)
		var renders atomic.Int32
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				got, ok := cacheRead(t, c, "k", "same", &renders)
				assert.True(t, ok)
				assert.Equal(t, "same", got)
			})
		}
		wg.Wait()
		assert.EqualValues(t, 1, renders.Load())
	})
	t.Run("a file removed under the cache is rendered again", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		c := NewOutputCache(dir, 100)
		var renders atomic.Int32
		cacheRead(t, c, "k", "data", &renders)
		files, err := filepath.Glob(filepath.Join(dir, "output-*"))
		require.NoError(t, err)
		require.Len(t, files, 1)
		require.NoError(t, os.Remove(files[0]))
		got, ok := cacheRead(t, c, "k", "data", &renders)
		assert.True(t, ok)
		assert.Equal(t, "data", got)
		assert.EqualValues(t, 2, renders.Load())
	})
	t.Run("close removes the directory", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "outputs")
		c := NewOutputCache(dir, 100)
		var renders atomic.Int32
		cacheRead(t, c, "k", "data", &renders)
		require.NoError(t, c.Close())
		_, err := os.Stat(dir)
		assert.True(t, os.IsNotExist(err))
	})
}

// TestSharedOutputCache: APIs sharing an OutputCache keep their keys apart,
// share its bound, and each Close removes only its own files.
func TestSharedOutputCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	shared := NewOutputCache(dir, 10)
	a, b := &API{}, &API{}
	a.outputs, a.outputNS = shared, shared.namespace()
	b.outputs, b.outputNS = shared, shared.namespace()
	require.NotEqual(t, a.outputNS, b.outputNS)
	var renders atomic.Int32
	got, _ := cacheRead(t, a.outputs, a.outputNS+"p/1/a.wav", "aaaa", &renders)
	assert.Equal(t, "aaaa", got)
	got, _ = cacheRead(t, b.outputs, b.outputNS+"p/1/a.wav", "bbbb", &renders)
	assert.Equal(t, "bbbb", got, "the same project id in another API is another file")
	assert.EqualValues(t, 2, renders.Load())
	assert.EqualValues(t, 8, shared.size, "one bound for both")

	require.NoError(t, a.Close())
	files, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, files, 1, "a's Close removed a's file only")
	got, _ = cacheRead(t, b.outputs, b.outputNS+"p/1/a.wav", "bbbb", &renders)
	assert.Equal(t, "bbbb", got)
	assert.EqualValues(t, 2, renders.Load(), "b's file stayed cached")

	require.NoError(t, shared.Close())
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "the creator's Close removes the directory")
}
