package server_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDownloadedArtifactsAfterOneAdvance: with the clock frozen, artifacts
// made from URLs that dubsim really downloads (one URL, or fragments of
// two) are completed by a single clock advance through the control API,
// whatever the real time the download takes relative to the advance, and
// their updatedAt is when processing ended (start + processing time of the
// size), not the time the clock was advanced to. This was flaky: the advance
// did not wait for the download, and the completion was stamped at the new
// clock time. 50 rounds on one instance, each a new artifact.
func TestDownloadedArtifactsAfterOneAdvance(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	const key = "dubsim-free"
	wav := refWAVBytes(t, 180, 1500*time.Millisecond)
	dur := wavDuration(t, wav)
	media := mediaServer(t, wav)
	for round := range 50 {
		var body map[string]any
		size, want := int64(len(wav)), dur
		var release func()
		switch round % 3 {
		case 0: // the download is held until the advance is under way
			slow, requests, rel := blockingMedia(t, wav)
			body = map[string]any{"name": "Slow", "type": "audio", "url": fmt.Sprintf("%s/slow-%d.wav", slow.URL, round)}
			release = func() {
				nextRequest(t, requests)
				rel()
			}
		case 1: // fragments of two URLs
			body = map[string]any{"name": "Frags", "type": "audio", "fragments": []any{
				map[string]any{"url": fmt.Sprintf("%s/a-%d.wav", media.URL, round), "startTime": 0},
				map[string]any{"url": fmt.Sprintf("%s/b-%d.wav", media.URL, round), "startTime": dur}}}
			size, want = 2*size, 2*dur
		default: // one URL served at once
			body = map[string]any{"name": "Fast", "type": "audio", "url": fmt.Sprintf("%s/fast-%d.wav", media.URL, round)}
		}
		a := createArtifact(t, in, key, body)
		id := a["id"].(string)
		require.Equal(t, sim.ArtifactCreated, a["status"])
		created := studioTimeOf(t, a["createdAt"])
		if release != nil {
			go release()
		}

		st, clk := in.call("POST", "/_sim/clock/advance", "", `{"seconds":86400}`)
		require.Equal(t, http.StatusOK, st, "round %d: %v", round, clk)

		a = getArtifact(t, in, key, id)
		require.Equal(t, sim.ArtifactCompleted, a["status"], "round %d: %v", round, a)
		done := created.Add(sim.DefaultStudioTiming.ArtifactStart).Add(sim.DefaultStudioTiming.ArtifactProcessing(size))
		assert.Equal(t, sim.StudioTime(done), a["updatedAt"], "round %d: updatedAt is when processing ended", round)
		assert.Equal(t, float64(size), a["size"], "round %d", round)
		assert.InDelta(t, want, a["duration"], 1e-6, "round %d", round)
	}
}

// TestArtifactReadWaitsForItsDownload: a read of an artifact at a time its
// completion may already be due waits for the download in flight, so the
// answer depends on simulated time only.
func TestArtifactReadWaitsForItsDownload(t *testing.T) {
	t.Parallel()
	var clock *sim.SimClock
	in := start(t, func(c *app.Config) { clock = c.Clock })
	const key = "dubsim-free"
	wav := refWAVBytes(t, 180, time.Second)
	slow, requests, release := blockingMedia(t, wav)
	a := createArtifact(t, in, key, map[string]any{"name": "Slow", "type": "audio", "url": slow.URL + "/slow.wav"})
	id := a["id"].(string)
	created := studioTimeOf(t, a["createdAt"])

	// Before the earliest time processing can end, nothing waits.
	studioAdvance(t, in, sim.DefaultStudioTiming.ArtifactStart)
	assert.Equal(t, sim.ArtifactStarted, getArtifact(t, in, key, id)["status"])
	st, w := in.call("GET", "/_sim/work", "", "")
	require.Equal(t, http.StatusOK, st)
	require.Len(t, w["work"], 1, "%v", w)
	item := w["work"].([]any)[0].(map[string]any)
	assert.Equal(t, id, item["id"])
	assert.Equal(t, "download", item["kind"])
	assert.Equal(t, slow.URL+"/slow.wav", item["url"])

	// The clock moves on without the control API (as a running clock
	// would); the read waits for the download.
	clock.Advance(time.Hour)
	go func() {
		nextRequest(t, requests)
		release()
	}()
	a = getArtifact(t, in, key, id)
	require.Equal(t, sim.ArtifactCompleted, a["status"], "%v", a)
	done := created.Add(sim.DefaultStudioTiming.ArtifactStart).Add(sim.DefaultStudioTiming.ArtifactProcessing(int64(len(wav))))
	assert.Equal(t, sim.StudioTime(done), a["updatedAt"])
	st, w = in.call("GET", "/_sim/work", "", "")
	require.Equal(t, http.StatusOK, st)
	assert.Empty(t, w["work"])
}

// TestRateLimitWindowsEnd: with the clock frozen, a studio key over its
// limit gets 429 with Retry-After N; a client that waits N seconds of real
// time gets through, and so does a test that advances the clock by N
// seconds instead. (Windows of simulated time never ended with a frozen
// clock.) Real time is the instance's injected source, moved by the test.
func TestRateLimitWindowsEnd(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"wait", "advance"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			real := t0.Add(20 * time.Second) // 40 s before the minute ends
			wall := func() time.Time { mu.Lock(); defer mu.Unlock(); return real }
			in := start(t, func(c *app.Config) { c.Clock = sim.NewSimClock(wall, 0) })
			st, m := in.call("POST", "/_sim/accounts", "", `{"api_key":"limited","plan":"pro","rate_limit":{"per_minute":2,"per_day":0}}`)
			require.Equal(t, http.StatusCreated, st, "%v", m)
			for range 2 {
				st, _, body := getWithHeaders(t, in, "/api/v1/projects", "limited")
				require.Equal(t, http.StatusOK, st, body)
			}
			st, hdr, body := getWithHeaders(t, in, "/api/v1/projects", "limited")
			require.Equal(t, http.StatusTooManyRequests, st, body)
			assert.Equal(t, "40", hdr.Get("Retry-After"))
			assert.JSONEq(t, `{"error":"Rate limit exceeded: 2 requests per minute per API key; retry after 40 seconds"}`, body)

			// One second short of Retry-After: still refused.
			step := func(d time.Duration) {
				if how == "wait" {
					mu.Lock()
					real = real.Add(d)
					mu.Unlock()
					return
				}
				st, m := in.call("POST", "/_sim/clock/advance", "", fmt.Sprintf(`{"seconds":%g}`, d.Seconds()))
				require.Equal(t, http.StatusOK, st, "%v", m)
			}
			step(39 * time.Second)
			st, hdr, body = getWithHeaders(t, in, "/api/v1/projects", "limited")
			require.Equal(t, http.StatusTooManyRequests, st, body)
			assert.Equal(t, "1", hdr.Get("Retry-After"))
			step(time.Second)
			st, _, body = getWithHeaders(t, in, "/api/v1/projects", "limited")
			assert.Equal(t, http.StatusOK, st, body)
		})
	}
}

// getWithHeaders GETs path with key and returns the status, the headers and
// the body.
func getWithHeaders(t testing.TB, in *inst, path, key string) (int, http.Header, string) {
	t.Helper()
	a := tagged(t, in.url, "", http.MethodGet, path, key, "", nil)
	return a.status, a.header, string(a.body)
}

// TestOneTruthPerFact: each fact the control API, the state dump and the
// dashboard's data show has one value everywhere.
func TestOneTruthPerFact(t *testing.T) {
	t.Parallel()
	t.Run("a clock at scale 0 is frozen", func(t *testing.T) {
		t.Parallel()
		in := start(t, nil) // --time-scale 0
		_, clk := in.call("GET", "/_sim/clock", "", "")
		assert.Equal(t, true, clk["frozen"], "%v", clk)
		assert.Equal(t, float64(0), clk["time_scale"])
		_, st := in.call("GET", "/_sim/state", "", "")
		assert.Equal(t, true, st["frozen"], "the state dump says the same")
		_, clk = in.call("POST", "/_sim/clock/resume", "", "")
		assert.Equal(t, false, clk["frozen"], "%v", clk)
		assert.Equal(t, float64(1), clk["time_scale"], "resume makes time run")
	})
	t.Run("planned outcome", func(t *testing.T) {
		t.Parallel()
		in := start(t, nil)
		st, rc := in.call("POST", "/api/v1/projects", "dubsim-pro",
			`{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://example.com/video.mp4"}`)
		require.Equal(t, http.StatusOK, st, "%v", rc)
		id := rc["project_id"].(string)
		st, forced := in.call("POST", "/_sim/projects/"+id+"/outcome", "", `{"outcome":"error","error_message":"No speech"}`)
		require.Equal(t, http.StatusOK, st, "%v", forced)
		_, detail := in.call("GET", "/_sim/projects/"+id, "", "")
		_, dump := in.call("GET", "/_sim/state", "", "")
		var inDump map[string]any
		for _, p := range dump["projects"].([]any) {
			if p := p.(map[string]any); p["id"] == id {
				inDump = p
			}
		}
		require.NotNil(t, inDump, "the project is in the state dump")
		for name, view := range map[string]map[string]any{"forced-outcome answer": forced, "project detail": detail, "state dump": inDump} {
			assert.Equal(t, "error", view["planned_outcome"], "%s: %v", name, view)
		}
		assert.Equal(t, "No speech", detail["planned_error_message"])
		assert.Equal(t, "No speech", inDump["planned_error_message"])
	})
	t.Run("a spent fault rule stays listed", func(t *testing.T) {
		t.Parallel()
		in := start(t, nil)
		st, rule := in.call("POST", "/_sim/faults", "", `{"id":"once","count":1,"path":"/api/v1/balance","action":{"type":"error","status":503}}`)
		require.Equal(t, http.StatusCreated, st, "%v", rule)
		st, _ = in.call("GET", "/api/v1/balance", "dubsim-pro", "")
		require.Equal(t, http.StatusServiceUnavailable, st)
		st, _ = in.call("GET", "/api/v1/balance", "dubsim-pro", "")
		require.Equal(t, http.StatusOK, st, "fired once")
		_, list := in.call("GET", "/_sim/faults", "", "")
		require.Len(t, list["rules"], 1, "%v", list)
		r := list["rules"].([]any)[0].(map[string]any)
		assert.Equal(t, "once", r["id"])
		assert.Equal(t, "spent", r["state"])
		assert.Equal(t, float64(1), r["hits"])
		assert.Equal(t, float64(0), r["remaining"])
		st, _ = in.call("DELETE", "/_sim/faults", "", "")
		require.Equal(t, http.StatusOK, st)
		_, list = in.call("GET", "/_sim/faults", "", "")
		assert.Empty(t, list["rules"], "cleared")
	})
	t.Run("Date is simulated time", func(t *testing.T) {
		t.Parallel()
		in := start(t, nil)
		studioAdvance(t, in, 36*time.Hour)
		for _, path := range []string{"/api/v1/balance", "/api/v1/projects", "/_sim/clock", "/api/v1/nope"} {
			_, hdr, _ := getWithHeaders(t, in, path, "dubsim-pro")
			assert.Equal(t, t0.Add(36*time.Hour).Format(http.TimeFormat), hdr.Get("Date"), path)
		}
		real := start(t, func(c *app.Config) { c.DateHeader = server.DateReal })
		_, hdr, _ := getWithHeaders(t, real, "/api/v1/balance", "dubsim-pro")
		d, err := http.ParseTime(hdr.Get("Date"))
		require.NoError(t, err)
		assert.NotEqual(t, t0.Format(http.TimeFormat), d.Format(http.TimeFormat), "real time with --date-header real")
	})
}
