package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// History belongs to git: code comments, configuration and documentation
// say what is true and why, without issue numbers or accounts of what
// changed.
var historyRes = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bissues? [0-9]+\b`),
	regexp.MustCompile(`(?i)\buntil now\b|\bused to\b`),
}

// skipDirs are directory names whose files are not the repository's own
// words: dependencies, fixtures of tests, build output.
var skipDirs = map[string]bool{".git": true, "node_modules": true, "testdata": true, "dist": true}

// TestNoIssueNumbersOrHistory: no tracked text file names an issue number
// or narrates history ("until now", "used to").
func TestNoIssueNumbersOrHistory(t *testing.T) {
	t.Parallel()
	self, err := filepath.Abs("words_test.go")
	require.NoError(t, err)
	files := trackedFiles(t)
	require.NotEmpty(t, files)
	for _, rel := range files {
		if skipped(rel) {
			continue
		}
		path := filepath.Join(root, rel)
		if abs, err := filepath.Abs(path); err == nil && abs == self {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil || bytes.IndexByte(b, 0) >= 0 {
			continue // gone from the work tree, or binary
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, len(b)+1)
		for n := 1; sc.Scan(); n++ {
			for _, re := range historyRes {
				if m := re.FindString(sc.Text()); m != "" {
					t.Errorf("%s:%d: %q: say what is true and why; history belongs to git", rel, n, m)
				}
			}
		}
	}
}

// trackedFiles lists the repository's files, slash-separated and relative
// to root: git's list when git knows the tree, else every file under root.
func trackedFiles(t *testing.T) []string {
	if out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output(); err == nil && len(out) > 0 {
		return strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	}
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if skipDirs[d.Name()] || isGenerated(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, rel)
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

// skipped says whether a file lies under a directory of skipDirs or a
// generated one.
func skipped(rel string) bool {
	if isGenerated(rel) {
		return true
	}
	parts := strings.Split(rel, "/")
	for _, p := range parts[:len(parts)-1] {
		if skipDirs[p] {
			return true
		}
	}
	return false
}
