package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logRecord is one captured log record: its level, message and attributes.
type logRecord struct {
	level slog.Level
	msg   string
	attrs map[string]any
}

// captureLog is a slog.Handler that keeps every record.
type captureLog struct {
	mu   sync.Mutex
	recs []logRecord
}

func (h *captureLog) Enabled(context.Context, slog.Level) bool { return true }

func (h *captureLog) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{level: r.Level, msg: r.Message, attrs: map[string]any{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.Resolve().Any()
		return true
	})
	h.mu.Lock()
	h.recs = append(h.recs, rec)
	h.mu.Unlock()
	return nil
}

func (h *captureLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *captureLog) WithGroup(string) slog.Handler      { return h }

func (h *captureLog) find(msg string, match func(logRecord) bool) []logRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []logRecord
	for _, r := range h.recs {
		if r.msg == msg && (match == nil || match(r)) {
			out = append(out, r)
		}
	}
	return out
}

func withPath(method, path string) func(logRecord) bool {
	return func(r logRecord) bool { return r.attrs["method"] == method && r.attrs["path"] == path }
}

// one returns the single record that matches, failing otherwise.
func one(t *testing.T, recs []logRecord) logRecord {
	t.Helper()
	require.Len(t, recs, 1)
	return recs[0]
}

// TestAccessLog: one line a request with the method, path, status,
// duration, interface, account and, for a refusal, why; never a whole API
// key (fidelity EL1-EL3).
func TestAccessLog(t *testing.T) {
	t.Parallel()
	logs := &captureLog{}
	in := start(t, func(c *app.Config) { c.Log = slog.New(logs) })
	const key = "dubsim-enterprise"

	id := in.create(key, "https://cdn.test/a.mp4")
	r := one(t, logs.find("request", withPath("POST", "/api/v1/projects")))
	assert.Equal(t, slog.LevelInfo, r.level)
	assert.Equal(t, int64(http.StatusOK), r.attrs["status"])
	assert.Equal(t, "platform", r.attrs["interface"])
	assert.Equal(t, "body", r.attrs["routed_by"])
	assert.Equal(t, "enterprise", r.attrs["plan"])
	assert.NotEmpty(t, r.attrs["account"])
	assert.Equal(t, "dubsim…", r.attrs["key"])
	assert.IsType(t, float64(0), r.attrs["duration_ms"])
	assert.Positive(t, r.attrs["journal_seq"])
	assert.NotContains(t, r.attrs, "reason")

	st, _ := in.call("GET", "/api/v1/projects/"+id, "not-a-key-at-all", "")
	require.Equal(t, http.StatusUnauthorized, st)
	r = one(t, logs.find("request", withPath("GET", "/api/v1/projects/"+id)))
	assert.Equal(t, int64(http.StatusUnauthorized), r.attrs["status"])
	assert.Equal(t, sim.MsgInvalidAPIKey, r.attrs["reason"])
	assert.Equal(t, "unknown", r.attrs["account"])
	assert.Equal(t, "not-a-…", r.attrs["key"])

	// A control read is a DEBUG line; a refusal of the control guard,
	// which the journal does not record, still says why.
	in.call("GET", "/_sim/clock", "", "")
	assert.Equal(t, slog.LevelDebug, one(t, logs.find("request", withPath("GET", "/_sim/clock"))).level)
	req, err := http.NewRequest("GET", in.url+"/_sim/state", nil)
	require.NoError(t, err)
	req.Host = "evil.example"
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	r = one(t, logs.find("request", withPath("GET", "/_sim/state")))
	assert.Equal(t, int64(http.StatusForbidden), r.attrs["status"])
	assert.Equal(t, "control", r.attrs["interface"])
	assert.Contains(t, r.attrs["reason"], `Host "evil.example" is none of them`)
	assert.NotContains(t, r.attrs, "journal_seq", "not recorded by the journal")

	for _, rec := range logs.find("request", nil) {
		for k, v := range rec.attrs {
			s, _ := v.(string)
			assert.False(t, strings.Contains(s, key) || strings.Contains(s, "not-a-key-at-all"), "%s=%q holds a whole API key", k, s)
		}
	}
}

// TestEventLog: lifecycle transitions are logged once each when applied,
// by the sweep of a clock advance or by a forced outcome (fidelity EL4).
func TestEventLog(t *testing.T) {
	t.Parallel()
	logs := &captureLog{}
	in := start(t, func(c *app.Config) { c.Log = slog.New(logs) })
	const key = "dubsim-enterprise"
	ready := in.create(key, "https://cdn.test/a.mp4")
	failed := in.create(key, "https://cdn.test/b.mp4")
	st, _ := in.call("POST", "/_sim/projects/"+failed+"/outcome", "", `{"outcome":"error","error_message":"Transcription failed"}`)
	require.Equal(t, http.StatusOK, st)
	assert.Empty(t, logs.find("project ready", nil), "nothing is due yet")

	st, _ = in.call("POST", "/_sim/clock/advance", "", `{"seconds":3600}`)
	require.Equal(t, http.StatusOK, st)
	in.project(key, ready) // a read after the sweep applies nothing again
	r := one(t, logs.find("project ready", nil))
	assert.Equal(t, slog.LevelInfo, r.level)
	assert.Equal(t, ready, r.attrs["id"])
	assert.Equal(t, "in_progress", r.attrs["from"])
	assert.NotContains(t, r.attrs, "reason")
	assert.NotZero(t, r.attrs["sim_time"])
	r = one(t, logs.find("project error", nil))
	assert.Equal(t, failed, r.attrs["id"])
	assert.Equal(t, "Transcription failed", r.attrs["reason"])
	msgs := []string{}
	for _, rec := range logs.find("request", nil) {
		msgs = append(msgs, rec.attrs["path"].(string))
	}
	assert.True(t, slices.Contains(msgs, "/_sim/clock/advance"), "%v", msgs)
}

// TestEventLogStudio: an artifact's and a video's lifecycle are logged,
// the starts at DEBUG and the ends at INFO, with the company. (A sweep that
// finds several steps due at once applies and reports them as one
// transition, created to upload_completed.)
func TestEventLogStudio(t *testing.T) {
	t.Parallel()
	logs := &captureLog{}
	in := start(t, func(c *app.Config) { c.Log = slog.New(logs) })
	const key = "dubsim-free"
	pid := studioProject(t, in, key)
	art := createArtifact(t, in, key, map[string]any{"name": "Source", "type": "video", "url": "https://cdn.test/episode-1.mp4"})["id"].(string)
	studioAdvance(t, in, sim.DefaultStudioTiming.ArtifactStart)
	started := one(t, logs.find("artifact upload_started", nil))
	assert.Equal(t, slog.LevelDebug, started.level)
	assert.Equal(t, "created", started.attrs["from"])
	studioAdvance(t, in, time.Hour)
	done := one(t, logs.find("artifact upload_completed", nil))
	assert.Equal(t, slog.LevelInfo, done.level)
	assert.Equal(t, art, done.attrs["id"])
	assert.Equal(t, "upload_started", done.attrs["from"])
	assert.NotEmpty(t, done.attrs["company"])

	video := createVideo(t, in, key, pid, art)["id"].(string)
	studioAdvance(t, in, sim.DefaultStudioTiming.VideoStart)
	studioAdvance(t, in, 24*time.Hour)
	assert.Equal(t, slog.LevelDebug, one(t, logs.find("video in_progress", nil)).level)
	r := one(t, logs.find("video completed", nil))
	assert.Equal(t, slog.LevelInfo, r.level)
	assert.Equal(t, video, r.attrs["id"])
	assert.Equal(t, done.attrs["company"], r.attrs["company"])
}
