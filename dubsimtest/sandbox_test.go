package dubsimtest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/dubsimtest"
	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startDubsim runs the real binary (which serves sandboxes; the in-process
// Start does not) with args after the defaults.
func startDubsim(t *testing.T, args ...string) *proctest.Proc {
	t.Helper()
	args = append([]string{"--addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "dubsim.db"), "--log-level", "off"}, args...)
	return proctest.Start(t, proctest.Binary(t), nil, args...)
}

// sandboxList is GET /_sim/sandboxes of the process at base.
func sandboxList(t *testing.T, base, token string) (ids []string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/_sim/sandboxes", nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out struct {
		Sandboxes []struct {
			ID string `json:"id"`
		} `json:"sandboxes"`
		Total int `json:"total"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Len(t, out.Sandboxes, out.Total)
	for _, s := range out.Sandboxes {
		ids = append(ids, s.ID)
	}
	return ids
}

var sandboxID = regexp.MustCompile(`^[0-9a-hjkmnp-tv-z]{16}$`)

// TestConnectParallel: 20 parallel tests on one dubsim, each with its own
// sandbox, clock (each at its own start) and journal; nothing of one is
// seen by another, and each sandbox is gone once its test ends.
func TestConnectParallel(t *testing.T) {
	t.Parallel()
	p := startDubsim(t)
	const n = 20
	t.Run("group", func(t *testing.T) {
		for i := range n {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				start := t0.Add(time.Duration(i) * 24 * time.Hour)
				sb := dubsimtest.Connect(t, p.Base, dubsimtest.WithStart(start))
				assert.Regexp(t, sandboxID, sb.ID)
				assert.Equal(t, p.Base+"/sbx/"+sb.ID, sb.BaseURL)
				assert.Equal(t, sb.BaseURL, sb.Client.BaseURL())
				assert.Equal(t, sb.BaseURL+"/_sim", sb.ControlURL)
				key := sb.Key(dubsimtest.KeyPro)
				assert.Equal(t, "sbx_"+sb.ID+"_"+dubsimtest.KeyPro, key)
				assert.Len(t, sb.Keys, 5, "%v", sb.Keys)
				assert.Empty(t, sb.Key("no-such-account"))

				ck := dubsimtest.Must(sb.Clock.Get(ctx))(t)
				assert.Equal(t, dubsimtest.Clock{Now: start, Frozen: true}, ck)

				// Created by key at the shared address, read by path.
				st, m := callAt(t, p.Base, "POST", "/api/v1/projects", key, `{"source_lang":"en","target_lang":"de-DE","source_video_url":"`+shortVideo+`"}`)
				require.Equal(t, http.StatusOK, st, "%v", m)
				id := m["project_id"].(string)
				st, m = callAt(t, sb.BaseURL, "GET", "/api/v1/projects/"+id, key, "")
				require.Equal(t, http.StatusOK, st, "%v", m)
				assert.Equal(t, "in_progress", m["status"])

				now := dubsimtest.Must(sb.Clock.Advance(ctx, time.Hour))(t)
				assert.Equal(t, start.Add(time.Hour), now, "only this test moves this clock")
				st, m = callAt(t, p.Base, "GET", "/api/v1/projects/"+id, key, "")
				require.Equal(t, http.StatusOK, st, "%v", m)
				assert.Equal(t, "ready", m["status"])

				reqs := dubsimtest.Must(sb.Journal.Requests(ctx, dubsimtest.RequestFilter{}))(t)
				var api []string
				for _, r := range reqs {
					if r.Interface == "control" {
						assert.NotEqual(t, "PUT", r.Method, "the creation is the shared dubsim's: %+v", r)
						continue
					}
					assert.Equal(t, key, r.APIKey, "%+v", r)
					api = append(api, r.Method+" "+r.Path)
				}
				assert.Equal(t, []string{"GET /api/v1/projects/" + id, "GET /api/v1/projects/" + id, "POST /api/v1/projects"}, api,
					"this sandbox's journal holds its own requests, newest first")
				assert.Contains(t, sandboxList(t, p.Base, ""), sb.ID)
			})
		}
	})
	assert.Empty(t, sandboxList(t, p.Base, ""), "every sandbox is deleted at its test's cleanup")
	c := dubsimtest.NewClient(p.Base)
	reqs := dubsimtest.Must(c.Journal.Requests(t.Context(), dubsimtest.RequestFilter{Path: "/api/*"}))(t)
	assert.Empty(t, reqs, "the shared dubsim's own journal holds none of the sandboxes' requests")
	puts := dubsimtest.Must(c.Journal.Requests(t.Context(), dubsimtest.RequestFilter{Method: "PUT", Path: "/_sim/sandboxes/*"}))(t)
	assert.Len(t, puts, n)
	dels := dubsimtest.Must(c.Journal.Requests(t.Context(), dubsimtest.RequestFilter{Method: "DELETE", Path: "/_sim/sandboxes/*"}))(t)
	assert.Len(t, dels, n)
}

// TestSandboxInterfaceURLs: a sandbox's PlatformURL and StudioURL serve
// each interface of that sandbox alone, and the links of their answers
// lead back under them.
func TestSandboxInterfaceURLs(t *testing.T) {
	t.Parallel()
	p := startDubsim(t)
	sb := dubsimtest.Connect(t, p.Base, dubsimtest.WithStart(t0))
	assert.Equal(t, sb.BaseURL+"/platform", sb.PlatformURL)
	assert.Equal(t, sb.BaseURL+"/studio", sb.StudioURL)
	key := sb.Key(dubsimtest.KeyPro)

	st, m := callAt(t, sb.PlatformURL, "POST", "/api/v1/projects", key, `{"name":"Marketing"}`)
	require.Equal(t, http.StatusBadRequest, st, "%v", m)
	assert.Equal(t, "source_lang is required", m["message"], "the platform's create")
	st, m = callAt(t, sb.StudioURL, "POST", "/api/v1/projects", key, `{"name":"Marketing"}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	assert.Equal(t, sb.StudioURL+"/projects/"+m["id"].(string), m["projectUrl"])

	st, m = callAt(t, sb.PlatformURL, "POST", "/api/v1/projects", key, `{"source_lang":"en","target_lang":"de-DE","source_video_url":"`+shortVideo+`"}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	id := m["project_id"].(string)
	dubsimtest.Must(sb.Clock.Advance(t.Context(), time.Hour))(t)
	st, m = callAt(t, sb.PlatformURL, "GET", "/api/v1/projects/"+id, key, "")
	require.Equal(t, http.StatusOK, st, "%v", m)
	audio := m["output_tts_audio_url"].(string)
	assert.True(t, strings.HasPrefix(audio, sb.PlatformURL+"/files/projects/"+id+"/"), audio)
	resp, err := http.Get(audio)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the link leads back to the sandbox")
}

// recTB records what Connect asks of its testing.TB: fatal errors, errors
// and cleanups, which the test runs itself.
type recTB struct {
	testing.TB
	fatal    string
	errs     []string
	cleanups []func()
}

func (r *recTB) Helper()                        {}
func (r *recTB) Fatalf(format string, a ...any) { r.fatal = fmt.Sprintf(format, a...) }
func (r *recTB) Errorf(format string, a ...any) { r.errs = append(r.errs, fmt.Sprintf(format, a...)) }
func (r *recTB) Cleanup(f func())               { r.cleanups = append(r.cleanups, f) }

func (r *recTB) runCleanups() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// TestConnectOptions: the control token, a running clock, the seed, a
// sandbox deleted before its cleanup, options that do not apply, and a
// dubsim that refuses.
func TestConnectOptions(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token"
	p := startDubsim(t, "--control-token", token)
	ctx := t.Context()

	t.Run("token", func(t *testing.T) {
		sb := dubsimtest.Connect(t, p.Base, dubsimtest.WithControlToken(token), dubsimtest.WithStart(t0))
		assert.Equal(t, t0, dubsimtest.Must(sb.Clock.Get(ctx))(t).Now, "the sandbox's client sends the token")
		assert.Equal(t, token, sb.Token)

		rec := &recTB{TB: t}
		assert.Nil(t, dubsimtest.Connect(rec, p.Base))
		assert.Contains(t, rec.fatal, "401 UnauthorizedError")
		assert.Empty(t, rec.cleanups, "nothing to delete")
	})

	t.Run("time scale", func(t *testing.T) {
		sb := dubsimtest.Connect(t, p.Base, dubsimtest.WithControlToken(token), dubsimtest.WithTimeScale(60))
		ck := dubsimtest.Must(sb.Clock.Get(ctx))(t)
		assert.False(t, ck.Frozen)
		assert.Equal(t, float64(60), ck.TimeScale)
	})

	t.Run("seed", func(t *testing.T) {
		// The same seed and start give the same project ids; another seed
		// other ids.
		project := func(seed uint64) string {
			sb := dubsimtest.Connect(t, p.Base, dubsimtest.WithControlToken(token), dubsimtest.WithStart(t0), dubsimtest.WithSeed(seed))
			st, m := callAt(t, sb.BaseURL, "POST", "/api/v1/projects", sb.Key(dubsimtest.KeyPro), `{"source_lang":"en","target_lang":"de-DE","source_video_url":"`+shortVideo+`"}`)
			require.Equal(t, http.StatusOK, st, "%v", m)
			return m["project_id"].(string)
		}
		a, b, c := project(7), project(7), project(8)
		assert.Equal(t, a, b)
		assert.NotEqual(t, a, c)
	})

	t.Run("cleanup", func(t *testing.T) {
		rec := &recTB{TB: t}
		sb := dubsimtest.Connect(rec, p.Base, dubsimtest.WithControlToken(token))
		require.Empty(t, rec.fatal)
		require.Len(t, rec.cleanups, 1)
		assert.Contains(t, sandboxList(t, p.Base, token), sb.ID)
		rec.runCleanups()
		assert.Empty(t, rec.errs)
		assert.NotContains(t, sandboxList(t, p.Base, token), sb.ID, "deleted at cleanup")
		rec.runCleanups()
		assert.Empty(t, rec.errs, "a sandbox deleted already (or expired) is no error at cleanup")

		rec = &recTB{TB: t}
		sb = dubsimtest.Connect(rec, p.Base, dubsimtest.WithControlToken(token))
		require.Empty(t, rec.fatal)
		sb.Token = "" // the sandbox's own client; the cleanup keeps the token it was given
		rec.runCleanups()
		assert.Empty(t, rec.errs)
		assert.NotContains(t, sandboxList(t, p.Base, token), sb.ID)

		// A cleanup that cannot delete is an error of the test.
		q := startDubsim(t)
		rec = &recTB{TB: t}
		sb = dubsimtest.Connect(rec, q.Base)
		require.Empty(t, rec.fatal)
		q.Kill(t)
		rec.runCleanups()
		require.Len(t, rec.errs, 1)
		assert.Contains(t, rec.errs[0], "deleting sandbox "+sb.ID)
	})

	t.Run("options of a process", func(t *testing.T) {
		for _, opt := range []dubsimtest.Option{dubsimtest.WithFixtures(t.TempDir()), dubsimtest.WithAddr("127.0.0.1:0")} {
			rec := &recTB{TB: t}
			assert.Nil(t, dubsimtest.Connect(rec, p.Base, dubsimtest.WithControlToken(token), opt))
			assert.Contains(t, rec.fatal, "configure a process")
		}
	})

	t.Run("no sandboxes", func(t *testing.T) {
		off := startDubsim(t, "--sandbox-max", "0")
		rec := &recTB{TB: t}
		assert.Nil(t, dubsimtest.Connect(rec, off.Base))
		assert.Contains(t, rec.fatal, "404")

		full := startDubsim(t, "--sandbox-max", "1")
		dubsimtest.Connect(t, full.Base)
		rec = &recTB{TB: t}
		assert.Nil(t, dubsimtest.Connect(rec, full.Base))
		assert.Contains(t, rec.fatal, "429 SandboxLimitError")
	})

	assert.Empty(t, sandboxList(t, p.Base, token))
}
