package server_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/simtest"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func tempDirs(t *testing.T, dir string) []string {
	t.Helper()
	var all []string
	for _, p := range []string{"dubsim-blobs-*", "dubsim-outputs-*"} {
		m, err := filepath.Glob(filepath.Join(dir, p))
		require.NoError(t, err)
		all = append(all, m...)
	}
	return all
}

// Close removes the temporary directories of an in-process instance (its
// blobs and rendered outputs), named after its process (fidelity HX4).
func TestCloseRemovesTempDirs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	in, err := simtest.Open(t.TempDir(), simtest.Options{Start: t0, Config: func(c *app.Config) { c.BlobDir = "" }})
	require.NoError(t, err)
	made := tempDirs(t, dir)
	require.Len(t, made, 2, "blobs and outputs")
	pid := strconv.Itoa(os.Getpid())
	for _, d := range made {
		assert.Regexp(t, `^dubsim-(blobs|outputs)-`+pid+`-\d+$`, filepath.Base(d))
	}
	require.NoError(t, in.Close())
	assert.Empty(t, tempDirs(t, dir))
}

// At start, the directories of ended processes are removed, those of live
// ones kept, and an older dubsim's (no process id) once a day old.
func TestRemoveStaleTempDirs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	ended := exec.Command("true")
	require.NoError(t, ended.Run())
	dead := strconv.Itoa(ended.Process.Pid)
	live := strconv.Itoa(os.Getpid())
	mk := func(name string, age time.Duration) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Join(p, "sub"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(p, "sub", "f"), []byte("x"), 0o600))
		at := time.Now().Add(-age)
		require.NoError(t, os.Chtimes(p, at, at))
		return p
	}
	mk("dubsim-outputs-"+dead+"-123", 0)
	mk("dubsim-blobs-"+dead+"-456", 0)
	keep := []string{mk("dubsim-outputs-"+live+"-789", 48*time.Hour), mk("dubsim-outputs-555", time.Hour), mk("dubsim-blobsx", 48*time.Hour)}
	mk("dubsim-outputs-666", 48*time.Hour)
	n, err := server.RemoveStaleTempDirs()
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	left, err := filepath.Glob(filepath.Join(dir, "dubsim-*"))
	require.NoError(t, err)
	assert.ElementsMatch(t, keep, left)
}
