// Package docs holds the user documentation; this test keeps its references
// true: every repository path the documentation names exists.
package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const root = ".."

// generated are paths the repository's own scripts and CI create (and git
// ignores): the documentation may name them though a clean checkout lacks them.
var generated = []string{".ci/bin", "bench/results", "bench/.prism", "dist"}

var (
	// A backticked token or a markdown link target.
	refRe = regexp.MustCompile("`([^`\\s]+)`|\\]\\(([^)\\s]+)\\)")
	// Tokens that are patterns, placeholders or commands, not paths.
	notPathRe = regexp.MustCompile(`[*<>{}…$?:=|\\]|X\.Y\.Z`)
	// A Go symbol after a package path: sim/media.Inspect.
	symbolRe = regexp.MustCompile(`\.([A-Z]\w*|[a-z]+[A-Z]\w*)(\.\w+)?$`)
)

// TestDocumentedPathsExist: a path in backticks that starts with one of the
// repository's top-level entries (sim/engine/projects.go, docs/k8s), a
// relative link, and a backticked markdown file name must exist.
func TestDocumentedPathsExist(t *testing.T) {
	t.Parallel()
	tops := map[string]bool{}
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, e := range entries {
		tops[e.Name()] = true
	}
	var docs []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == "dist" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			docs = append(docs, p)
		}
		return nil
	}))
	require.NotEmpty(t, docs)
	checked := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range refRe.FindAllStringSubmatch(line, -1) {
				path, ok := docPath(doc, m[1], m[2], tops)
				if !ok {
					continue
				}
				checked++
				rel, _ := filepath.Rel(root, path)
				if isGenerated(rel) {
					continue
				}
				_, err := os.Stat(path)
				assert.NoError(t, err, "%s:%d names %q, which is not in the repository", strings.TrimPrefix(doc, root+"/"), i+1, m[0])
			}
		}
	}
	t.Logf("%d paths checked in %d documents", checked, len(docs))
	assert.Greater(t, checked, 100, "the documentation names far more paths than this: is the pattern broken?")
}

// docPath is the file a reference names, if it names one: code is a
// backticked token, link a link target, of the document doc.
func docPath(doc, code, link string, tops map[string]bool) (string, bool) {
	tok := code
	if link != "" {
		tok = link
	}
	tok, _, _ = strings.Cut(tok, "#")
	if tok == "" || strings.Contains(tok, "://") || strings.HasPrefix(tok, "mailto") || notPathRe.MatchString(tok) {
		return "", false
	}
	if link != "" {
		return filepath.Join(filepath.Dir(doc), tok), true
	}
	first, _, nested := strings.Cut(tok, "/")
	switch {
	case nested && tops[first]:
		tok = strings.TrimSuffix(symbolRe.ReplaceAllString(tok, ""), "/")
		return filepath.Join(root, tok), true
	case !nested && strings.HasSuffix(tok, ".md") && !strings.HasPrefix(tok, "-"):
		// A markdown file named alone: beside the document, or at the root.
		if _, err := os.Stat(filepath.Join(filepath.Dir(doc), tok)); err == nil {
			return filepath.Join(filepath.Dir(doc), tok), true
		}
		return filepath.Join(root, tok), true
	}
	return "", false
}

func isGenerated(rel string) bool {
	for _, g := range generated {
		if rel == g || strings.HasPrefix(rel, g+"/") {
			return true
		}
	}
	return false
}
