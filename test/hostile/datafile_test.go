package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// A data file that is not a sound store: a 0-byte file (bbolt would start
// it fresh without a word), a file truncated to half (a SIGBUS when a page
// past its end is mapped), a damaged page (a panic in the background
// sweep). dubsim refuses the first two at once with a message that says
// how to recover, and keeps serving with the third.

// datafileProjects is how many projects datafileMake creates.
const datafileProjects = 150

var (
	datafileOnce sync.Once
	datafileGood []byte
	datafileErr  error
)

// datafileMake returns the bytes of a data file the real binary wrote:
// it starts dubsim, creates an account and datafileProjects projects
// through the API, and stops it with SIGTERM. Built once per test binary,
// by the first test that asks; the tests that ask while it runs wait.
func datafileMake(t *testing.T) []byte {
	t.Helper()
	datafileOnce.Do(func() {
		// What the others are told if a step fails t and ends this early.
		datafileErr = errors.New("making the data file failed (see the test that made it)")
		dir, err := os.MkdirTemp("", "dubsim-datafile-")
		if err != nil {
			datafileErr = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "dubsim.db")
		p := proctest.Start(t, proctest.Binary(t), nil, "--addr", "127.0.0.1:0", "--data", path, "--log-level", "off")
		var acct struct {
			APIKey string `json:"api_key"`
		}
		status, body := call(t, "POST", p.Base+"/_sim/accounts", "", `{"plan":"enterprise","balance_minutes":100000}`)
		require.Equal(t, http.StatusCreated, status, body)
		require.NoError(t, json.Unmarshal([]byte(body), &acct))
		// Eight at a time: the store commits the creations that meet in one
		// write, where one at a time each waited for its own.
		counts, bodies := sendMany(t, datafileProjects, 8, func(i int) *http.Request {
			req, err := http.NewRequest(http.MethodPost, p.Base+"/api/v1/projects", strings.NewReader(fmt.Sprintf(
				`{"name":"datafile-project-%04d","source_lang":"en","target_lang":"fr-FR","source_video_url":"https://example.com/v.mp4"}`, i)))
			if err != nil {
				panic(err) // the URL is built above: a bad one is the test's error
			}
			req.Header.Set("Authorization", "Bearer "+acct.APIKey)
			req.Header.Set("Content-Type", "application/json")
			return req
		})
		require.Equal(t, map[int]int{http.StatusOK: datafileProjects}, counts, "%v", bodies)
		p.Terminate(t)
		datafileGood, datafileErr = os.ReadFile(path)
	})
	require.NoError(t, datafileErr)
	return datafileGood
}

// datafileRefused runs dubsim on path and expects it to exit with status 1
// within 10 s, before listening, with want on stderr and no panic or
// signal.
func datafileRefused(t *testing.T, path string, want ...string) {
	t.Helper()
	bin := proctest.Binary(t) // built before the 10 s start: the first build can take longer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--addr", "127.0.0.1:0", "--data", path, "--log-level", "error")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "dubsim on %s: %v (it should exit with an error)\nstderr:\n%.1000s", path, err, stderr.String())
	errText := strings.TrimSpace(stderr.String())
	t.Logf("exit status %d after %v: %.300s", exit.ExitCode(), time.Since(start).Round(time.Millisecond), errText)
	assert.Equal(t, 1, exit.ExitCode(), "exit status (2 is a Go panic or fault, -1 a signal)")
	assert.False(t, strings.Contains(stdout.String(), "listening on"), "it must not serve")
	for _, s := range []string{"panic", "SIGBUS", "goroutine ", "fatal error"} {
		assert.False(t, strings.Contains(errText, s), "stderr has %q", s)
	}
	for _, s := range want {
		assert.True(t, strings.Contains(errText, s), "stderr lacks %q", s)
	}
}

func TestDatafileEmptyIsRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "dubsim.db")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	datafileRefused(t, path, "dubsim: store: "+path+" is empty (0 bytes)", "will not overwrite it", "move it away", "restore the file from a backup")
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Zero(t, st.Size(), "the empty file is left as it was")
}

func TestDatafileTruncatedIsRefused(t *testing.T) {
	t.Parallel()
	good := datafileMake(t)
	for _, size := range []int{len(good) / 2, len(good)/2 + 100, 4096 + 80, 5000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dubsim.db")
			require.NoError(t, os.WriteFile(path, good[:size], 0o600))
			datafileRefused(t, path, "dubsim: store: "+path+" is truncated", "restore the file from a backup", "move it away")
		})
	}
}

func TestDatafileGarbageIsRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "dubsim.db")
	require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte("not a database\n"), 1000), 0o600))
	datafileRefused(t, path, "dubsim: store: "+path+" is not a dubsim data file", "move the file away")
}

// datafileDamage overwrites the page of file that holds the head of the
// project named name (a leaf bbolt still uses, found with its page
// listing) with a fixed pattern, and returns that page's number.
func datafileDamage(t *testing.T, path, name string) int {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	db, err := bolt.Open(path, 0o600, nil) // read-only would not load the freelist Page needs
	require.NoError(t, err)
	pageSize := db.Info().PageSize
	target := -1
	require.NoError(t, db.View(func(tx *bolt.Tx) error {
		for id := 2; id < len(raw)/pageSize; id++ {
			info, err := tx.Page(id)
			if err != nil || info == nil || info.Type != "leaf" {
				continue
			}
			if bytes.Contains(raw[id*pageSize:(id+1+info.OverflowCount)*pageSize], []byte(name)) {
				target = id
				return nil
			}
		}
		return nil
	}))
	require.NoError(t, db.Close())
	require.GreaterOrEqual(t, target, 2, "no live leaf page holds %q", name)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(bytes.Repeat([]byte{0xA5}, pageSize), int64(target*pageSize))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return target
}

// A damaged page among the projects: a panic in the ticker (the main
// goroutine) would end the process on every start. Requests that read the
// page answer 500 in the envelope, the sweep skips the records it cannot
// read and reports them once, and the process keeps serving.
func TestDatafileDamagedPageKeepsServing(t *testing.T) {
	t.Parallel()
	good := datafileMake(t)
	path := filepath.Join(t.TempDir(), "dubsim.db")
	require.NoError(t, os.WriteFile(path, good, 0o600))
	page := datafileDamage(t, path, "datafile-project-0100")
	t.Logf("damaged page %d of %d", page, len(good)/4096)

	p := proctest.Start(t, proctest.Binary(t), nil, "--addr", "127.0.0.1:0", "--data", path, "--log-level", "error")
	status, body := call(t, "POST", p.Base+"/_sim/clock/advance", "", `{"seconds":3600}`)
	t.Logf("advance: %d %s", status, body)
	assert.Equal(t, http.StatusOK, status, body)

	skips := strings.Count(p.Stderr(), "skipping a damaged record")
	// The ticker sweeps five times a second: a second of it.
	for range 10 {
		if !p.Alive() {
			break
		}
		status, _ := call(t, "GET", p.Base+"/_sim/health", "", "")
		assert.Equal(t, http.StatusOK, status)
		time.Sleep(100 * time.Millisecond)
	}
	require.True(t, p.Alive(), "dubsim died:\n%.1000s", p.Stderr())

	// The state dump reads every project, the damaged page too.
	status, body = call(t, "GET", p.Base+"/_sim/state", "", "")
	assert.Equal(t, http.StatusInternalServerError, status, "%.300s", body)
	assert.Contains(t, body, `"error"`, "the answer is an error envelope")

	stderr := p.Stderr()
	t.Logf("%d damaged records skipped; stderr: %d bytes", skips, len(stderr))
	assert.Positive(t, skips, "the sweep reports the records it skips:\n%.2000s", stderr)
	assert.Equal(t, skips, strings.Count(stderr, "skipping a damaged record"), "each reported once, not on every tick")
	assert.LessOrEqual(t, strings.Count(stderr, "transition sweep failed"), 1)
	assert.NotContains(t, stderr, "fatal error")
	assert.True(t, p.Alive())
	p.Terminate(t)
}
