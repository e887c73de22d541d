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

// Prefixes of the temporary directories of an instance: its blobs, when it
// has no blob directory, and its cache of rendered outputs. The name
// carries the process id (dubsim-outputs-<pid>-<random>), so a later start
// can tell the directories of a process that is gone (fidelity HX4).
const (
	blobsPrefix   = "dubsim-blobs-"
	outputsPrefix = "dubsim-outputs-"
	// dataPrefix: the temporary store of a run without --data (fidelity
	// EL5), with its blobs.
	dataPrefix = "dubsim-data-"
	// legacyAge: a directory named without a process id is removed once
	// untouched this long.
	legacyAge = 24 * time.Hour
)

func makeTempDir(prefix string) (string, error) {
	return os.MkdirTemp("", prefix+strconv.Itoa(os.Getpid())+"-")
}

// MakeTempBlobDir creates the blob directory of an instance that has none
// of its own; its builder removes it at Close.
func MakeTempBlobDir() (string, error) { return makeTempDir(blobsPrefix) }

// MakeTempOutputDir creates the directory of a cache of rendered outputs;
// its builder removes it at Close.
func MakeTempOutputDir() (string, error) { return makeTempDir(outputsPrefix) }

// MakeTempDataDir creates the directory of a temporary store (a run
// without a data file): the caller removes it at exit, and a later start
// removes it when the process that made it ended without doing so
// (RemoveStaleTempDirs).
func MakeTempDataDir() (string, error) { return makeTempDir(dataPrefix) }

// RemoveStaleTempDirs removes the temporary directories (blobs, rendered
// outputs, temporary stores) that instances left in the temporary directory when their
// process ended without closing them (a crash, kill -9): those whose
// process is gone, and those named without a process id untouched for 24
// hours. A directory of a live process is kept. It returns how many it
// removed.
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
// ("<pid>-<random>", or "<random>" without a process id) is left over.
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
