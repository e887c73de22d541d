// Package consumer_test builds a module outside this repository against
// the tagged modules, as a user would get them: the closest this machine
// comes to publishing.
package consumer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

const (
	mainPath = "github.com/dubsim/dubsim"
	tcDir    = "contrib/testcontainers"
	tcPath   = mainPath + "/" + tcDir
	// version is the tag of both modules: v0.1.0 for the main module,
	// contrib/testcontainers/v0.1.0 in Git for the nested one.
	version = "v0.1.0"
)

// TestConsumerModule lays out a file-based module proxy (GOPROXY=file://,
// the layout of the GOPROXY protocol: @v/list, .info, .mod, .zip) holding
// github.com/dubsim/dubsim and its nested module contrib/testcontainers
// at v0.1.0, made from this working tree (the files Git tracks or would:
// git ls-files -co --exclude-standard), then runs go mod tidy and go test
// in testdata/consumer, a module with no replace directive. Third-party
// modules come from the local module cache when it holds them, else from
// the machine's GOPROXY; checksums of the dubsim modules are not looked up
// (GONOSUMDB), those of every other module are. The module cache is
// moduleCache's: the dubsim modules are removed from it first, which keeps
// an earlier run's v0.1.0 out.
func TestConsumerModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module from a file proxy (about a minute)")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	files := trackedFiles(t, root)
	proxy := t.TempDir()
	writeModule(t, proxy, root, mainPath, "", files)
	writeModule(t, proxy, root, tcPath, tcDir, files)
	var layout []string
	require.NoError(t, filepath.WalkDir(proxy, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(proxy, p)
			layout = append(layout, filepath.ToSlash(rel))
		}
		return err
	}))
	t.Logf("file proxy %s:\n%s", proxy, strings.Join(layout, "\n"))

	work := filepath.Join(t.TempDir(), "consumer")
	require.NoError(t, os.CopyFS(work, os.DirFS("testdata/consumer")))
	modcache := moduleCache(t)

	vars := goEnv(t, "GOMODCACHE", "GOPROXY")
	shared, upstream := vars[0], vars[1]
	env := append(os.Environ(),
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(shared, "cache", "download"))+","+upstream,
		// -trimpath: the build cache then serves packages of a module
		// cache at another path, as this one is new every run.
		"GONOSUMDB="+mainPath, "GONOPROXY=", "GOPRIVATE=", "GOFLAGS=-mod=mod -trimpath -modcacherw", "GOWORK=off",
		"GOTOOLCHAIN=local", "GOMODCACHE="+modcache,
		// The go command indexes a module of the module cache once per
		// path and version, taking it to be immutable; this tree's v0.1.0
		// changes between runs, and an index of an earlier one names
		// imports it no longer has (or lacks new ones: "could not import").
		"GODEBUG=goindex=0",
	)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	run := func(args ...string) string {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir, cmd.Env = work, env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
		return string(out)
	}
	run("mod", "tidy")
	gomod, err := os.ReadFile(filepath.Join(work, "go.mod"))
	require.NoError(t, err)
	t.Logf("consumer go.mod after go mod tidy:\n%s", gomod)
	assert.NotContains(t, string(gomod), "replace")
	assert.Contains(t, string(gomod), "\t"+mainPath+" "+version+"\n")
	assert.Contains(t, string(gomod), "\t"+tcPath+" "+version+"\n")

	out := run("test", "-count=1", "-v", "./...")
	t.Logf("go test -v ./... in the consumer:\n%s", out)
	assert.Contains(t, out, "--- PASS: TestInProcess")
	assert.Regexp(t, `--- (PASS|SKIP): TestContainer`, out)
	// The build used the proxy's copy, not this checkout.
	list := run("list", "-m", "-f", "{{.Path}} {{.Version}} {{.Dir}}", mainPath, tcPath)
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		assert.Contains(t, line, " "+version+" "+modcache, "module from the proxy: %s", line)
	}
	// And from this run's proxy: the module cache holds the zips written
	// above, not an earlier run's.
	for _, path := range []string{mainPath, tcPath} {
		esc, err := module.EscapePath(path)
		require.NoError(t, err)
		zip := filepath.Join(filepath.FromSlash(esc), "@v", version+".zip")
		want, err := os.ReadFile(filepath.Join(proxy, zip))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(modcache, "cache", "download", zip))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want, got), "%s@%s in the module cache is the zip of this run's proxy", path, version)
	}
}

// moduleCache is the consumer's module cache, locked for t: one kept
// between runs in the user's cache directory, since extracting the
// third-party modules (310 MB: testcontainers, moby, otel, ...) into an
// empty one was most of the test's work. The dubsim modules are removed
// from it first (it is written with -modcacherw, so they can be), so that
// every run extracts this tree's v0.1.0 from the file proxy; the
// third-party modules in it are verified against go.sum and the checksum
// database as any module cache's are.
func moduleCache(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "dubsim-consumer-modcache")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	require.NoError(t, err)
	t.Cleanup(func() { _ = lock.Close() }) // and so unlocked
	require.NoError(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_EX), "lock %s", lock.Name())
	for _, d := range []string{filepath.Join(dir, "github.com", "dubsim"), filepath.Join(dir, "cache", "download", "github.com", "dubsim")} {
		require.NoError(t, os.RemoveAll(d))
	}
	return dir
}

// trackedFiles lists the files of the working tree that Git tracks or
// would (not ignored), relative to root, with forward slashes.
func trackedFiles(t *testing.T, root string) []string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed to list the module's files: %v", err)
	}
	cmd := exec.Command("git", "-C", root, "ls-files", "-z", "-co", "--exclude-standard")
	out, err := cmd.Output()
	require.NoError(t, err, "git ls-files (is %s a Git checkout?)", root)
	var files []string
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if st, err := os.Lstat(filepath.Join(root, f)); err == nil && st.Mode().IsRegular() {
			files = append(files, f) // a tracked file deleted in the tree is left out
		}
	}
	require.NotEmpty(t, files)
	return files
}

// writeModule writes the proxy files of the module at dir (relative to
// root; "" is root) at version: @v/list, .info, .mod and the .zip, whose
// entries x/mod/zip names <path>@<version>/... and from which it leaves
// out what a module zip must not hold (nested modules, vendor, .git).
func writeModule(t *testing.T, proxy, root, path, dir string, files []string) {
	t.Helper()
	esc, err := module.EscapePath(path)
	require.NoError(t, err)
	vdir := filepath.Join(proxy, filepath.FromSlash(esc), "@v")
	require.NoError(t, os.MkdirAll(vdir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(vdir, "list"), []byte(version+"\n"), 0o644))
	info, err := json.Marshal(map[string]string{"Version": version, "Time": "2026-01-01T00:00:00Z"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(vdir, version+".info"), info, 0o644))
	modDir := filepath.Join(root, filepath.FromSlash(dir))
	gomod, err := os.ReadFile(filepath.Join(modDir, "go.mod"))
	require.NoError(t, err)
	require.NotContains(t, string(gomod), "replace", "a published go.mod with a replace directive works nowhere else")
	require.NoError(t, os.WriteFile(filepath.Join(vdir, version+".mod"), gomod, 0o644))

	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	var zfiles []modzip.File
	for _, f := range files {
		if rel, ok := strings.CutPrefix(f, prefix); ok {
			zfiles = append(zfiles, osFile{path: rel, file: filepath.Join(modDir, filepath.FromSlash(rel))})
		}
	}
	var buf bytes.Buffer
	require.NoError(t, modzip.Create(&buf, module.Version{Path: path, Version: version}, zfiles))
	require.NoError(t, os.WriteFile(filepath.Join(vdir, version+".zip"), buf.Bytes(), 0o644))
	t.Logf("%s@%s: %d files in the tree, zip of %d bytes", path, version, len(zfiles), buf.Len())
}

// osFile is a file of the working tree for modzip.Create.
type osFile struct{ path, file string }

func (f osFile) Path() string                 { return f.path }
func (f osFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.file) }
func (f osFile) Open() (io.ReadCloser, error) { return os.Open(f.file) }

// goEnv is the values of the go command's variables names, in order,
// from one go env.
func goEnv(t *testing.T, names ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"env"}, names...)...).Output()
	require.NoError(t, err)
	values := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, values, len(names), "go env %v: %q", names, out)
	return values
}
