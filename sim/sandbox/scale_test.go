package sandbox_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/tooltest"
	"github.com/dubsim/dubsim/sim/sandbox"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParallelSandboxScenarios: one process, many sandboxes, each driven at
// the same time by a client of its own through a whole scenario (create,
// project, advance, ready, output download, re-translation, advance, new
// translation, journal, state, delete). Every sandbox's project has the
// same id (the same explicit seed), its own name, clock start and translated text,
// so an answer from another sandbox fails the scenario that reads it. All
// exist at once (the cap: one more is a 429) before any goes on; at the
// end the manager holds none and their directory is empty. The long run
// (tooltest.Long) drives sandbox.DefaultMax of them under the default cap,
// the number sandboxes are sized for; by default 50, under a cap of 50.
func TestParallelSandboxScenarios(t *testing.T) {
	t.Parallel()
	scaleSandboxes, capped := 50, func(c *sandbox.Config) { c.Max = 50 }
	if tooltest.Long() {
		scaleSandboxes, capped = sandbox.DefaultMax, nil
	}
	e := newEnv(t, capped)
	var (
		created, done sync.WaitGroup
		goOn          = make(chan struct{})
		projectIDs    sync.Map // sandbox id -> its project id
	)
	created.Add(scaleSandboxes)
	done.Add(scaleSandboxes)
	for i := range scaleSandboxes {
		go func() {
			defer done.Done()
			s := &scenario{i: i, e: e}
			s.id = sandbox.NewID()
			s.c = caller{t: goT{t: t, name: "sandbox " + s.id}, hc: &http.Client{Transport: &http.Transport{}}, url: e.url}
			defer s.c.hc.CloseIdleConnections()
			ok := false
			defer func() {
				if !ok {
					created.Done()
				}
			}()
			s.create()
			ok = true
			created.Done()
			<-goOn
			s.run()
			projectIDs.Store(s.id, s.project)
		}()
	}
	created.Wait()
	if !t.Failed() {
		assert.Len(t, e.m.List(), scaleSandboxes, "all at once")
		st, m := e.json("POST", "/_sim/sandboxes", "", "")
		assert.Equal(t, http.StatusTooManyRequests, st, "one more than the cap: %v", m)
	}
	close(goOn)
	done.Wait()
	if t.Failed() {
		return
	}

	ids := map[string]bool{}
	projectIDs.Range(func(_, v any) bool { ids[v.(string)] = true; return true })
	assert.Len(t, ids, 1, "the same explicit seed: every sandbox's project has the same id")
	assert.Empty(t, e.m.List(), "every sandbox deleted")
	_, list := e.json("GET", "/_sim/sandboxes", "", "")
	assert.EqualValues(t, 0, list["total"])
	entries, err := os.ReadDir(e.cfg.Dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "no sandbox file left")
	// The default simulator saw the sandboxes resource (its reads are not
	// recorded) and, once each sandbox was gone, the read with its key,
	// refused; nothing else.
	_, j := e.json("GET", "/_sim/requests", "", "")
	counts := map[string]int{}
	for _, r := range j["requests"].([]any) {
		r := r.(map[string]any)
		counts[r["method"].(string)+" "+r["interface"].(string)]++
		if k := r["api_key"].(string); k != "" {
			assert.Regexp(t, `^sbx_[0-9a-hjkmnp-tv-z]{16}_dubsim-enterprise$`, k)
			assert.EqualValues(t, http.StatusUnauthorized, r["status"], "%v", r)
		}
	}
	assert.Equal(t, map[string]int{"PUT control": scaleSandboxes, "DELETE control": scaleSandboxes, "POST control": 1, "GET platform": scaleSandboxes}, counts)
	assert.Empty(t, e.projectNames("/_sim"))
}

// scenario is one sandbox's client in TestParallelSandboxScenarios.
type scenario struct {
	i       int
	e       *env
	c       caller
	id      string
	base    string // the sandbox's base_url
	key     string // its dubsim-enterprise key (re-translation enabled)
	start   time.Time
	project string
}

// scenarioStart is sandbox i's clock start: a different minute each.
func scenarioStart(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }

func (s *scenario) create() {
	t := s.c.t
	s.start = scenarioStart(s.i)
	st, v := s.c.json("PUT", "/_sim/sandboxes/"+s.id, "", `{"seed":0,"start":"`+s.start.Format(time.RFC3339)+`"}`)
	require.Equal(t, http.StatusCreated, st, "%v", v)
	require.Equal(t, s.id, v["id"])
	s.base = v["base_url"].(string)
	require.Equal(t, s.e.url+"/sbx/"+s.id, s.base)
	s.key = v["api_keys"].(map[string]any)["dubsim-enterprise"].(string)
	require.Equal(t, "sbx_"+s.id+"_dubsim-enterprise", s.key)
}

// The requests of a scenario to its sandbox, in order, as its journal
// records them, each path as the sandbox serves it (without /sbx/<id>; the
// journal reads, GET /_sim/state and the sandboxes resource are not
// recorded there).
var scenarioJournal = []string{
	"POST /api/v1/projects",
	"GET /api/v1/projects/{project}",
	"POST /_sim/clock/advance",
	"GET /api/v1/projects/{project}",
	"GET {output}",
	"POST /api/v1/projects/{project}/translations",
	"POST /_sim/clock/advance",
	"GET /api/v1/projects/{project}",
}

func (s *scenario) run() {
	t := s.c.t
	name := "p-" + s.id
	// Create, by key on the usual path.
	st, m := s.c.json("POST", "/api/v1/projects", s.key, `{"name":"`+name+`","source_lang":"en","target_lang":"fr-FR","source_video_url":"https://media.dubsim.test/short.mp4"}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	s.project = m["project_id"].(string)
	// Read it through the path form: in progress, due after its start.
	st, m = s.c.json("GET", "/sbx/"+s.id+"/api/v1/projects/"+s.project, s.key, "")
	require.Equal(t, http.StatusOK, st, "%v", m)
	require.Equal(t, name, m["name"])
	require.Equal(t, "in_progress", m["status"])
	// Advance its clock: its own start plus an hour.
	st, m = s.c.json("POST", "/sbx/"+s.id+"/_sim/clock/advance", "", `{"seconds":3600}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	assert.Equal(t, s.start.Add(time.Hour).Format("2006-01-02T15:04:05.000Z"), m["now"])
	// Ready, with an output that leads back to this sandbox.
	st, m = s.c.json("GET", "/api/v1/projects/"+s.project, s.key, "")
	require.Equal(t, http.StatusOK, st, "%v", m)
	require.Equal(t, "ready", m["status"], "%v", m)
	require.Equal(t, name, m["name"])
	out := m["output_tts_audio_url"].(string)
	require.True(t, strings.HasPrefix(out, s.base+"/"), out)
	st, _, wav := s.c.do("GET", out, "", "")
	require.Equal(t, http.StatusOK, st, "%s", wav)
	require.Greater(t, len(wav), 44)
	assert.Equal(t, "RIFF", string(wav[:4]))
	assert.Equal(t, "WAVE", string(wav[8:12]))
	// Re-translate with this sandbox's own text.
	text := "Bonjour " + s.id
	st, m = s.c.json("POST", "/api/v1/projects/"+s.project+"/translations", s.key,
		`{"target_script":[{"start_ms":100,"end_ms":1544,"text":"`+text+`","speaker_id":1}],`+
			`"target_speakers":[{"speaker_id":1,"voice_key":"53f154:fr-FR-DeniseNeural","style":"feminine"}]}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	assert.Equal(t, s.project, m["project_id"])
	assert.EqualValues(t, 1, m["translations_count"])
	st, m = s.c.json("POST", "/_sim/sandboxes/"+s.id+"/clock/advance", "", `{"seconds":3600}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	assert.Equal(t, s.start.Add(2*time.Hour).Format("2006-01-02T15:04:05.000Z"), m["now"])
	var p struct {
		Name, Status string
		Video        string `json:"output_video_url"`
		Script       []struct {
			Text string `json:"text"`
		} `json:"output_target_script"`
	}
	st, _, raw := s.c.do("GET", "/sbx/"+s.id+"/api/v1/projects/"+s.project, s.key, "")
	require.Equal(t, http.StatusOK, st, "%s", raw)
	require.NoError(t, json.Unmarshal(raw, &p))
	require.Equal(t, "ready", p.Status)
	assert.Equal(t, name, p.Name)
	assert.True(t, strings.HasPrefix(p.Video, s.base+"/"), p.Video)
	assert.Contains(t, p.Video, "/"+s.project+"/2/", "the second translation's outputs")
	require.Len(t, p.Script, 1)
	assert.Equal(t, text, p.Script[0].Text)

	// Its state: its own project, and no key but its own.
	st, _, raw = s.c.do("GET", "/sbx/"+s.id+"/_sim/state", "", "")
	require.Equal(t, http.StatusOK, st, "%s", raw)
	var state struct {
		Projects []struct {
			Name string `json:"name"`
		} `json:"projects"`
	}
	require.NoError(t, json.Unmarshal(raw, &state))
	require.Len(t, state.Projects, 1)
	assert.Equal(t, name, state.Projects[0].Name)
	for _, k := range sbxKey.FindAllString(string(raw), -1) {
		require.Equal(t, "sbx_"+s.id+"_", k, "a key of another sandbox in its state")
	}

	// Its journal: exactly its own requests, with its own key.
	s.checkJournal(out)

	st, _, raw = s.c.do("DELETE", "/_sim/sandboxes/"+s.id, "", "")
	require.Equal(t, http.StatusNoContent, st, "%s", raw)
	st, _, _ = s.c.do("GET", "/_sim/sandboxes/"+s.id, "", "")
	assert.Equal(t, http.StatusNotFound, st)
	st, _, _ = s.c.do("GET", "/api/v1/projects/"+s.project, s.key, "")
	assert.Equal(t, http.StatusUnauthorized, st, "its key is unknown once it is gone")
}

var sbxKey = regexp.MustCompile(`sbx_[0-9a-hjkmnp-tv-z]{16}_`)

func (s *scenario) checkJournal(output string) {
	t := s.c.t
	st, j := s.c.json("GET", "/sbx/"+s.id+"/_sim/requests", "", "")
	require.Equal(t, http.StatusOK, st, "%v", j)
	entries := j["requests"].([]any)
	// The journal records a path as the sandbox serves it; also accepted:
	// as the client sent it (the design's wish), with its own id only.
	own := strings.NewReplacer("/_sim/sandboxes/"+s.id+"/", "/_sim/", "/sbx/"+s.id+"/", "/")
	var got []string
	keys := map[string]int{}
	for i := len(entries) - 1; i >= 0; i-- { // oldest first
		r := entries[i].(map[string]any)
		got = append(got, r["method"].(string)+" "+own.Replace(r["path"].(string)))
		keys[r["api_key"].(string)]++
	}
	u, err := url.Parse(output)
	require.NoError(t, err)
	want := make([]string, len(scenarioJournal))
	for i, w := range scenarioJournal {
		w = strings.ReplaceAll(w, "{project}", s.project)
		want[i] = strings.ReplaceAll(w, "{output}", strings.TrimPrefix(u.Path, "/sbx/"+s.id))
	}
	assert.Equal(t, want, got, "its journal holds its own requests, in order")
	assert.Equal(t, map[string]int{s.key: 5, "": 3}, keys, "the keys in its journal: its own, and none on control calls and the download")
}
