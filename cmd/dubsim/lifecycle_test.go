package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run2 is a dubsim started through run() whose banner and log the test
// reads.
type run2 struct {
	base   string
	banner string
	log    *proctest.Buffer
	stop   func() error
}

// startRun runs dubsim with args (no default flags but --addr), the
// environment env, and returns once the banner is complete.
func startRun(t *testing.T, env map[string]string, args ...string) *run2 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	logs := &proctest.Buffer{}
	go func() {
		err := run(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), func(k string) string { return env[k] }, pw, logs)
		pw.Close()
		errc <- err
	}()
	var banner strings.Builder
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		banner.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "  API keys:") {
			break
		}
	}
	if !strings.Contains(banner.String(), "API keys:") {
		cancel()
		t.Fatalf("dubsim did not start: %v\n%s", <-errc, logs.String())
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	m := regexp.MustCompile(`listening on (https?://\S+)`).FindStringSubmatch(banner.String())
	require.NotNil(t, m, banner.String())
	r := &run2{base: m[1], banner: banner.String(), log: logs}
	var once sync.Once
	var err error
	r.stop = func() error {
		once.Do(func() { cancel(); err = <-errc })
		return err
	}
	t.Cleanup(func() { _ = r.stop() })
	return r
}

func cacheEnv(t *testing.T) map[string]string {
	return map[string]string{"XDG_CACHE_HOME": t.TempDir()}
}

// Without --data the state lives in a temporary store the banner names and
// the stop removes; the banner names the dashboard and the control API.
func TestEphemeralByDefault(t *testing.T) {
	t.Parallel()
	r := startRun(t, cacheEnv(t), "--time-scale", "0", "--log-level", "off")
	m := regexp.MustCompile(`(?m)^  data:        temporary \((\S+)\), removed at exit; --data FILE or DUBSIM_DATA keeps the state across runs$`).FindStringSubmatch(r.banner)
	require.NotNil(t, m, r.banner)
	assert.Contains(t, r.banner, "  control API: "+r.base+"/_sim\n")
	assert.Contains(t, r.banner, "  dashboard:   "+r.base+"/_sim/ui/\n")
	dir := filepath.Dir(m[1])
	assert.True(t, strings.HasPrefix(filepath.Base(dir), "dubsim-data-"), dir)
	_, err := os.Stat(m[1])
	require.NoError(t, err, "the temporary store exists while dubsim runs")

	resp, err := http.Get(r.base + "/_sim/health")
	require.NoError(t, err)
	resp.Body.Close()
	require.NoError(t, r.stop())
	_, err = os.Stat(dir)
	assert.ErrorIs(t, err, os.ErrNotExist, "the temporary store is removed at exit")
}

// --data (or DUBSIM_DATA) keeps the state; the banner says new, then what
// a restart restored.
func TestDataFileRestored(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "keep.db")
	env := cacheEnv(t)
	env["DUBSIM_DATA"] = data
	r := startRun(t, env, "--time-scale", "0", "--log-level", "off")
	assert.Contains(t, r.banner, "  data file:   "+data+" (new)\n")
	in := &instance{base: r.base}
	status, body, _ := in.req(t, "POST", "/api/v1/projects", "dubsim-pro",
		`{"source_lang":"en","target_lang":"de-DE","source_video_url":"https://media.dubsim.test/short.mp4"}`)
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.NoError(t, r.stop())

	r = startRun(t, env, "--time-scale", "0", "--log-level", "off")
	assert.Regexp(t, `(?m)^  data file:   `+regexp.QuoteMeta(data)+` \(restored from an earlier run: \d+ accounts, 1 platform project(, \d+ [a-z ]+)*\)$`, r.banner)
	require.NoError(t, r.stop())
	_, err := os.Stat(data)
	assert.NoError(t, err, "a data file stays")
}

// The banner counts what a data file held: accounts and platform projects
// always, other records when there are some; one is singular, any other
// number (zero too) plural.
func TestDataBannerCounts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		restored []store.BucketCount
		want     string
	}{
		{"none", []store.BucketCount{{Bucket: "accounts"}, {Bucket: "projects"}, {Bucket: "videos"}}, "0 accounts, 0 platform projects"},
		{"one", []store.BucketCount{{Bucket: "accounts", N: 1}, {Bucket: "projects", N: 1}, {Bucket: "companies", N: 1}}, "1 account, 1 platform project, 1 company"},
		{"many", []store.BucketCount{{Bucket: "accounts", N: 3}, {Bucket: "projects", N: 2}, {Bucket: "studio_projects", N: 12}}, "3 accounts, 2 platform projects, 12 studio projects"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			dataBanner(&b, &dataFile{path: "keep.db", restored: tc.restored})
			assert.Equal(t, "  data file:   keep.db (restored from an earlier run: "+tc.want+")\n", b.String())
		})
	}
}

// A second dubsim on the same data file fails at once, saying why.
func TestSecondInstanceOnTheSameFile(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "d.db")
	first := startRun(t, cacheEnv(t), "--data", data, "--time-scale", "0", "--log-level", "off")
	defer func() { assert.NoError(t, first.stop()) }()

	var out strings.Builder
	began := time.Now()
	err := run(t.Context(), []string{"--addr", "127.0.0.1:0", "--data", data, "--log-level", "off"}, func(string) string { return "" }, &out, io.Discard)
	require.Error(t, err)
	assert.Less(t, time.Since(began), 5*time.Second, "it does not wait for the lock")
	assert.Contains(t, err.Error(), data+" is in use: another dubsim holds it")
	assert.NotContains(t, out.String(), "listening on")
}

// logRecords parses the JSON log lines.
func logRecords(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), "a log line is one JSON object: %s", line)
		out = append(out, m)
	}
	return out
}

func findRecord(recs []map[string]any, msg string) map[string]any {
	for _, r := range recs {
		if r["msg"] == msg {
			return r
		}
	}
	return nil
}

// A stop says what was still running, gives open requests the grace, then
// closes them, and is no error (exit 0).
func TestShutdownGraceAndLine(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	media := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case entered <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		http.NotFound(w, r)
	}))
	defer media.Close()
	defer close(release)

	r := startRun(t, cacheEnv(t), "--time-scale", "0", "--log-format", "json", "--shutdown-grace", "100ms")
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest("POST", r.base+"/api/v1/projects", strings.NewReader(
			`{"source_lang":"en","target_lang":"de-DE","source_video_url":"`+media.URL+`/slow.mp4"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer dubsim-pro")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-entered // the creation is in its handler, probing the source video
	require.NoError(t, r.stop(), "a signal-initiated stop is no error, even past the grace")
	assert.Error(t, <-done, "the open request's connection was closed")

	recs := logRecords(t, r.log.String())
	down := findRecord(recs, "shutting down")
	require.NotNil(t, down, r.log.String())
	assert.Equal(t, float64(1), down["open_requests"])
	assert.Equal(t, float64(0), down["background_downloads"])
	assert.Equal(t, "100ms", down["grace"])
	cut := findRecord(recs, "shutdown grace passed: closing the connections of the requests still open")
	require.NotNil(t, cut, r.log.String())
	assert.Equal(t, "WARN", cut["level"])
	assert.Equal(t, float64(1), cut["open_requests"])
	assert.NotNil(t, findRecord(recs, "stopped"))
}

// An idle stop waits for nothing and says so.
func TestShutdownIdle(t *testing.T) {
	t.Parallel()
	r := startRun(t, cacheEnv(t), "--time-scale", "0")
	require.NoError(t, r.stop())
	assert.Regexp(t, `level=INFO msg="shutting down" open_requests=0 background_downloads=0 grace=10s`, r.log.String())
	assert.NotContains(t, r.log.String(), "grace passed")
}
