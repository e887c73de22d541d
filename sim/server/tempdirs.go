package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Prefixes of the temporary directories of an instance, named
// <prefix><pid>-<random> so that a later start can tell those of a process
// that is gone (fidelity HX4, EL5).
const (
	blobsPrefix   = "dubsim-blobs-"
	outputsPrefix = "dubsim-outputs-"
	dataPrefix    = "dubsim-data-"
	legacyAge     = 24 * time.Hour // of a directory named without a process id
)

func makeTempDir(prefix string) (string, error) {
	return os.MkdirTemp("", prefix+strconv.Itoa(os.Getpid())+"-")
}

// MakeTempBlobDir creates the blob directory of an instance without one.
func MakeTempBlobDir() (string, error) { return makeTempDir(blobsPrefix) }

// MakeTempOutputDir creates the directory of a cache of rendered outputs.
func MakeTempOutputDir() (string, error) { return makeTempDir(outputsPrefix) }

// MakeTempDataDir creates the directory of a temporary store.
func MakeTempDataDir() (string, error) { return makeTempDir(dataPrefix) }

// RemoveStaleTempDirs removes the temporary directories of processes that
// are gone (a crash, kill -9), and those named without a process id once
// untouched for legacyAge; it returns how many it removed.
func RemoveStaleTempDirs() (int, error) {
	removed := 0
	var errs []error
	for _, prefix := range []string{blobsPrefix, outputsPrefix, dataPrefix} {
		names, err := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"))
		if err != nil {
			return removed, err
		}
		for _, name := range names {
			fi, err := os.Lstat(name)
			if err != nil || !fi.IsDir() || !staleTempDir(strings.TrimPrefix(filepath.Base(name), prefix), fi.ModTime()) {
				continue
			}
			if err := os.RemoveAll(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("removing %s: %w", name, err))
				continue
			}
			removed++
		}
	}
	return removed, errors.Join(errs...)
}

// staleTempDir tells whether a directory whose name ends in rest
// ("<pid>-<random>", or "<random>") is left over.
func staleTempDir(rest string, modified time.Time) bool {
	pid, _, ok := strings.Cut(rest, "-")
	if !ok {
		return time.Since(modified) > legacyAge
	}
	n, err := strconv.Atoi(pid)
	if err != nil || n <= 0 {
		return false
	}
	return n != os.Getpid() && !processAlive(n)
}
