package server_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The ids the docs quote, by their formats: studio ids (24 lowercase hex
// characters), upload ids (UUIDs) and platform project ids (digits, where a
// project id goes).
var (
	docStudioID   = regexp.MustCompile(`\b[0-9a-f]{24}\b`)
	docUUID       = regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	docPlatformID = regexp.MustCompile(`(?:/projects/|"project_id":\s*"|\bproject )([0-9]{5,12})\b`)
	// A line that reports the creation of the id it quotes (a walkthrough's
	// sample output): the id is the preceding step's, not a stored one.
	docCreated = regexp.MustCompile(`^(?:created [a-z]+(?: [a-z]+)? |presigned upload: s3://\S*/)$`)
)

// docFiles are the files whose ids must resolve: the README, docs/*.md and
// every example.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"../../README.md"}
	for _, glob := range []string{"../../docs/*.md", "../../examples/*.md", "../../examples/*/*.sh", "../../examples/*/*.py", "../../examples/*/*.go"} {
		m, err := filepath.Glob(glob)
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.Greater(t, len(files), 5)
	return files
}

// TestDocIDsResolve: every id quoted in the README, docs/*.md and
// examples/ exists on a fresh default store (a fixture record), is the id
// the first project created on a fresh store gets (the walkthroughs'
// first step), or is quoted first on a line of sample output that reports
// its creation.
func TestDocIDsResolve(t *testing.T) {
	t.Parallel()
	in := start(t, nil)

	// The fresh store's studio records: every id in the dump.
	req, err := http.NewRequest("GET", in.url+"/_sim/studio", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	dump, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", dump)
	stored := map[string]bool{}
	for _, id := range docStudioID.FindAllString(string(dump), -1) {
		stored[id] = true
	}
	require.NotEmpty(t, stored)

	// The README's first request on a fresh store.
	st, m := in.call("POST", "/api/v1/projects", "dubsim-subscription", `{"name":"My Project","source_lang":"en","target_lang":"fr-FR",
		"source_video_url":"https://example.com/video.mp4","use_soundalike_voices":true}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	firstProject := m["project_id"].(string)
	st, _ = in.call("GET", "/_sim/projects/"+firstProject, "", "")
	require.Equal(t, http.StatusOK, st)

	checked := 0
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		name := strings.TrimPrefix(file, "../../")
		created := map[string]bool{}
		for n, line := range strings.Split(string(b), "\n") {
			where := name + ":" + strconv.Itoa(n+1)
			for _, loc := range docPlatformID.FindAllStringSubmatch(line, -1) {
				checked++
				if loc[1] != firstProject {
					t.Errorf("%s: platform project id %s: the first project on a fresh store is %s, and no other exists", where, loc[1], firstProject)
				}
			}
			for _, re := range []*regexp.Regexp{docStudioID, docUUID} {
				for _, loc := range re.FindAllStringIndex(line, -1) {
					checked++
					id := line[loc[0]:loc[1]]
					switch {
					case stored[id] || created[id]:
					case docCreated.MatchString(creationPrefix(line[:loc[0]])):
						created[id] = true
					default:
						t.Errorf("%s: id %s does not resolve on a fresh store and no step before it creates it", where, id)
					}
				}
			}
		}
	}
	require.Greater(t, checked, 10, "ids found in the docs")
}

// creationPrefix is the end of a line before an id, from its last
// "created" or "presigned upload" on.
func creationPrefix(s string) string {
	i := max(strings.LastIndex(s, "created "), strings.LastIndex(s, "presigned upload: "))
	if i < 0 {
		return s
	}
	return s[i:]
}
