package journal_test

import (
	"bytes"
	"flag"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata")

const createBody = `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://example.com/video.mp4"}`

func multipartBody(t *testing.T) (body, contentType string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	require.NoError(t, mw.WriteField("text", "Hello world"))
	require.NoError(t, mw.WriteField("language", "en-US"))
	fw, err := mw.CreateFormFile("reference_audio_files", "ref.wav")
	require.NoError(t, err)
	_, _ = fw.Write([]byte("RIFF\x00\x00\x00\x00WAVEfmt "))
	require.NoError(t, mw.Close())
	return b.String(), mw.FormDataContentType()
}

// readyProject creates a project and lets it finish.
func readyProject(c *client, api *fakeAPI) string {
	id := c.createProject()
	api.set(id, sim.StatusReady)
	return id
}

// control is a request to the control API (no API key), as a test harness
// sends it.
func control(c *client, method, path, body string) {
	key := c.key
	c.key = ""
	defer func() { c.key = key }()
	c.do(method, path, body)
}

func ruleCounts(r journal.Report) map[string]int {
	out := map[string]int{}
	for _, f := range r.Findings {
		out[f.Rule] = f.Count
	}
	return out
}

// TestReportRules scripts a client against a stub of the API for each
// rule; every case lists exactly the findings it must produce, so a rule
// that fires where it should not fails the case too.
func TestReportRules(t *testing.T) {
	t.Parallel()
	projectPath := func(id string) string { return "/api/v1/projects/" + id }
	tests := []struct {
		name     string
		script   func(t *testing.T, c *client, api *fakeAPI)
		want     map[string]int
		excerpt  string // of the first example of the first finding, when set
		observed string // of the first finding, when set
	}{
		{"json without content type", func(t *testing.T, c *client, api *fakeAPI) {
			c.do("POST", "/api/v1/projects", createBody, "Content-Type", "text/plain")
			c.do("POST", "/api/v1/projects", `{"name":"two"}`, "Content-Type", "")
		}, map[string]int{journal.RuleJSONWithoutContentType: 2},
			`Content-Type "text/plain"; body {"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://example.co...`,
			"2 of 2 POST/PATCH requests with a body"},
		{"+json and charset are JSON", func(t *testing.T, c *client, api *fakeAPI) {
			c.do("POST", "/api/v1/projects", createBody, "Content-Type", "application/json; charset=utf-8")
			c.do("PATCH", "/api/v1/projects/1", `{"name":"x"}`, "Content-Type", "application/merge-patch+json")
		}, map[string]int{}, "", ""},
		{"cloning with a JSON body", func(t *testing.T, c *client, api *fakeAPI) {
			body, ct := multipartBody(t)
			c.do("POST", "/api/v1/cloning/synthesize", body, "Content-Type", ct)
			c.do("POST", "/api/v1/cloning/synthesize", `{"text":"Hello","language":"en-US"}`)
		}, map[string]int{journal.RuleCloningNotMultipart: 1},
			`Content-Type "application/json"; body {"text":"Hello","language":"en-US"}`, "1 of 2 voice cloning requests"},
		{"post without idempotency key", func(t *testing.T, c *client, api *fakeAPI) {
			c.autoIdem = false
			id := readyProject(c, api)
			c.do("POST", projectPath(id)+"/validate-translation-request", retranslationBody(sim.VoiceSoundalike))
			c.do("POST", projectPath(id)+"/translations", retranslationBody(sim.VoiceSoundalike), "Idempotency-Key", "r-1")
		}, map[string]int{journal.RulePostWithoutIdempotency: 1},
			"no Idempotency-Key; answered 200", "1 of 2 POSTs without the header (/api/v1/projects 1)"},
		{"retry without change", func(t *testing.T, c *client, api *fakeAPI) {
			c.do("GET", projectPath("999"), "")
			c.do("GET", projectPath("999"), "")
			c.do("DELETE", projectPath("998"), "")
			c.do("DELETE", projectPath("998"), "")
			c.do("DELETE", projectPath("998"), "")
		}, map[string]int{journal.RuleRetryWithoutChange: 3},
			`identical to #1, which was answered 404 "Project not found"; answered 404 again`, "3 identical retries after a 4xx answer"},
		{"retry after 409 and 429 invited", func(t *testing.T, c *client, api *fakeAPI) {
			api.failNext("POST /api/v1/projects", "409")
			api.failNext("POST /api/v1/projects", "409")
			c.do("POST", "/api/v1/projects", createBody, "Idempotency-Key", "same")
			c.do("POST", "/api/v1/projects", createBody, "Idempotency-Key", "same")
			api.failNext("GET /api/v1/balance", "429")
			api.failNext("GET /api/v1/balance", "429")
			c.gap = 6 * time.Second
			c.do("GET", "/api/v1/balance", "")
			c.do("GET", "/api/v1/balance", "")
		}, map[string]int{}, "", ""},
		{"retry that got another answer", func(t *testing.T, c *client, api *fakeAPI) {
			id := c.createProject()
			c.do("DELETE", projectPath(id), "")
			api.set(id, sim.StatusReady)
			c.do("DELETE", projectPath(id), "")
		}, map[string]int{journal.RuleActionWhileInProgress: 1}, "", ""},
		{"polling too fast", func(t *testing.T, c *client, api *fakeAPI) {
			id := c.createProject()
			c.gap = 500 * time.Millisecond
			for i := 0; i < 4; i++ {
				c.do("GET", projectPath(id), "")
			}
		}, map[string]int{journal.RulePollingTooFast: 3}, "540ms after #2",
			"3 reads sooner than 2s after the previous read of the same resource; shortest interval 540ms (GET /api/v1/projects/100000001)"},
		{"fast reads of different resources, or across a clock advance", func(t *testing.T, c *client, api *fakeAPI) {
			a, b := c.createProject(), c.createProject()
			c.gap = 100 * time.Millisecond
			c.do("GET", projectPath(a), "")
			c.do("GET", projectPath(b), "")
			control(c, "POST", "/_sim/clock/advance", `{"seconds":600}`)
			c.do("GET", projectPath(a), "")
			c.do("GET", "/api/v1/balance", "")
			c.do("GET", "/api/v1/balance", "")
		}, map[string]int{}, "", ""},
		{"ignored retry after", func(t *testing.T, c *client, api *fakeAPI) {
			api.failNext("GET /api/v1/balance", "429")
			c.do("GET", "/api/v1/balance", "")
			c.gap = time.Second
			c.do("GET", "/api/v1/voices", "")
			c.do("GET", "/api/v1/balance", "")
			c.gap = 4 * time.Second
			c.do("GET", "/api/v1/balance", "")
		}, map[string]int{journal.RuleIgnoredRetryAfter: 2},
			"sent 1s after the 429 of #1 (Retry-After: 5), 4s too early", "2 requests before the Retry-After elapsed; up to 4s too early"},
		{"retry after a 429 across a clock advance", func(t *testing.T, c *client, api *fakeAPI) {
			api.failNext("GET /api/v1/balance", "429")
			c.do("GET", "/api/v1/balance", "")
			c.gap = time.Second
			control(c, "POST", "/_sim/clock/advance", `{"seconds":5}`)
			c.do("GET", "/api/v1/balance", "")
		}, map[string]int{}, "", ""},
		{"request after delete", func(t *testing.T, c *client, api *fakeAPI) {
			id := readyProject(c, api)
			c.do("DELETE", projectPath(id), "")
			c.do("GET", projectPath(id), "")
			c.do("POST", projectPath(id)+"/translations", retranslationBody(sim.VoiceSoundalike))
		}, map[string]int{journal.RuleRequestAfterDelete: 2},
			`project 100000001 was deleted by #2; answered 404 "Project not found"`, "2 requests on 1 deleted project"},
		{"refused delete does not delete", func(t *testing.T, c *client, api *fakeAPI) {
			id := c.createProject()
			c.do("DELETE", projectPath(id), "")
			c.do("GET", projectPath(id), "")
		}, map[string]int{journal.RuleActionWhileInProgress: 1}, `answered 400 "Cannot delete project while processing is in progress"`,
			"1 request refused (1 delete, 0 re-translations)"},
		{"catalogue voice without reading the catalogue", func(t *testing.T, c *client, api *fakeAPI) {
			id := readyProject(c, api)
			c.do("POST", projectPath(id)+"/validate-translation-request", retranslationBody(catalogueVoice))
			c.do("GET", "/api/v1/voices", "")
			c.do("POST", projectPath(id)+"/translations", retranslationBody(catalogueVoice))
		}, map[string]int{journal.RuleVoiceNotFromCatalogue: 1},
			`voice_key "f4fb50:fr-FR-AlainNeural" sent before any successful GET /api/v1/voices`, "1 re-translation or validation request"},
		{"unknown voice after reading the catalogue", func(t *testing.T, c *client, api *fakeAPI) {
			id := readyProject(c, api)
			c.do("GET", "/api/v1/voices", "")
			c.do("POST", projectPath(id)+"/translations", retranslationBody("made-up:fr-FR-Nobody"))
		}, map[string]int{journal.RuleVoiceNotFromCatalogue: 1}, `answered 400 "Unknown voice made-up:fr-FR-Nobody"`, ""},
		{"special voices need no catalogue", func(t *testing.T, c *client, api *fakeAPI) {
			id := readyProject(c, api)
			c.do("POST", projectPath(id)+"/validate-translation-request", retranslationBody(sim.VoiceSoundalike))
			c.do("POST", projectPath(id)+"/translations", retranslationBody(sim.VoiceEmotionalTransfer))
		}, map[string]int{}, "", ""},
		{"action while in progress", func(t *testing.T, c *client, api *fakeAPI) {
			id := c.createProject()
			c.do("POST", projectPath(id)+"/translations", retranslationBody(sim.VoiceSoundalike))
			c.do("DELETE", projectPath(id), "")
			api.set(id, sim.StatusError)
			c.do("POST", projectPath(id)+"/translations", retranslationBody(sim.VoiceSoundalike))
		}, map[string]int{journal.RuleActionWhileInProgress: 3},
			`answered 400 "Project 100000001 cannot be re-translated while its status is in_progress; re-translation needs status ready"`,
			"3 requests refused (1 delete, 2 re-translations)"},
		{"failed creation never checked", func(t *testing.T, c *client, api *fakeAPI) {
			api.failNext("POST /api/v1/projects", "500")
			c.do("POST", "/api/v1/projects", createBody)
			c.do("GET", "/api/v1/voices", "")
		}, map[string]int{journal.RuleUnverifiedFailure: 1},
			`answered 500 "Injected 500"; no later GET of /api/v1/projects/* or /api/v1/balance`, "1 failed change never checked"},
		{"dropped delete and truncated re-translation never checked", func(t *testing.T, c *client, api *fakeAPI) {
			a, b := readyProject(c, api), readyProject(c, api)
			api.failNext("DELETE "+projectPath(a), "abort")
			c.do("DELETE", projectPath(a), "")
			api.failNext("POST "+projectPath(b)+"/translations", "truncate")
			c.do("POST", projectPath(b)+"/translations", retranslationBody(sim.VoiceSoundalike))
			c.do("GET", projectPath(a)+"/videos", "") // not the project itself
			c.do("GET", "/api/v1/balance", "")
		}, map[string]int{journal.RuleUnverifiedFailure: 2},
			"connection dropped; no later GET of /api/v1/projects/100000001", ""},
		{"failures checked", func(t *testing.T, c *client, api *fakeAPI) {
			api.failNext("POST /api/v1/projects", "503")
			c.do("POST", "/api/v1/projects", createBody)
			c.do("GET", "/api/v1/balance", "")
			id := readyProject(c, api)
			api.failNext("DELETE "+projectPath(id), "abort")
			c.do("DELETE", projectPath(id), "")
			c.do("GET", projectPath(id), "")
			api.failNext("POST /api/v1/projects", "500")
			c.do("POST", "/api/v1/projects", createBody, "Idempotency-Key", "create-1")
			c.do("POST", "/api/v1/projects", createBody, "Idempotency-Key", "create-1")
			api.failNext("POST "+projectPath(id)+"/validate-translation-request", "500")
			c.do("POST", projectPath(id)+"/validate-translation-request", retranslationBody(sim.VoiceSoundalike))
		}, map[string]int{}, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j, api, c := setup(t, journal.Config{})
			tc.script(t, c, api)
			// Another key's mistakes never show in this key's report.
			other := &client{t: t, h: c.h, key: "other", clock: c.clock}
			other.do("POST", "/api/v1/projects", createBody, "Content-Type", "text/plain")
			rep := j.Report("k")
			assert.Equal(t, tc.want, ruleCounts(rep))
			if tc.excerpt != "" {
				require.NotEmpty(t, rep.Findings)
				require.NotEmpty(t, rep.Findings[0].Examples)
				assert.Equal(t, tc.excerpt, rep.Findings[0].Examples[0].Excerpt)
			}
			if tc.observed != "" {
				require.NotEmpty(t, rep.Findings)
				assert.Equal(t, tc.observed, rep.Findings[0].Observed)
			}
			for _, f := range rep.Findings {
				assert.NotEmpty(t, f.Title)
				assert.NotEmpty(t, f.Detail)
				assert.LessOrEqual(t, len(f.Examples), 3)
				assert.Equal(t, min(f.Count, 3), len(f.Examples))
			}
		})
	}
}

// cleanScript is a client that follows every rule.
func cleanScript(c *client, api *fakeAPI) {
	c.do("GET", "/api/v1/voices", "")
	c.do("GET", "/api/v1/balance", "")
	id := c.createProject()
	c.do("GET", "/api/v1/projects/"+id, "")
	c.do("GET", "/api/v1/projects/"+id, "")
	api.set(id, sim.StatusReady)
	c.do("GET", "/api/v1/projects/"+id, "")
	c.do("POST", "/api/v1/projects/"+id+"/validate-translation-request", retranslationBody(catalogueVoice))
	c.do("POST", "/api/v1/projects/"+id+"/translations", retranslationBody(catalogueVoice))
	c.do("GET", "/api/v1/projects/"+id, "")
	api.set(id, sim.StatusReady)
	c.do("GET", "/api/v1/projects/"+id, "")
	c.do("DELETE", "/api/v1/projects/"+id, "")
}

func TestReportCleanClient(t *testing.T) {
	t.Parallel()
	j, api, c := setup(t, journal.Config{})
	cleanScript(c, api)
	rep := j.Report("k")
	assert.Empty(t, rep.Findings)
	assert.NotNil(t, rep.Findings, "findings is always an array")
	assert.Equal(t, journal.Summary{
		Requests: 11, FirstSeq: 1, LastSeq: 11,
		ByEndpoint: map[string]int{
			"GET /api/v1/voices": 1, "GET /api/v1/balance": 1, "POST /api/v1/projects": 1, "GET /api/v1/projects/{project_id}": 5,
			"POST /api/v1/projects/{project_id}/validate-translation-request": 1, "POST /api/v1/projects/{project_id}/translations": 1,
			"DELETE /api/v1/projects/{project_id}": 1,
		},
		ByStatusClass: map[string]int{"2xx": 11},
	}, rep.Summary)
	text := rep.Text()
	assert.Contains(t, text, "Findings: 0 (0 errors, 0 warnings)\n\nNo findings.\n")
	assert.True(t, strings.HasSuffix(text, "No findings.\n"))
}

func TestReportUnknownKey(t *testing.T) {
	t.Parallel()
	j, api, c := setup(t, journal.Config{})
	cleanScript(c, api)
	rep := j.Report("nobody")
	assert.Equal(t, 0, rep.Summary.Requests)
	assert.Equal(t, "Conformance report for API key \"nobody\"\nGenerated at 2026-02-04T12:00:33.440Z\n\n"+
		"Requests analysed: 0 (the journal holds no request with this API key)\nFindings: 0 (0 errors, 0 warnings)\n\nNo findings.\n", rep.Text())
}

func TestReportMinPollInterval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		min  time.Duration
		want int
	}{
		{"default 2s: 3s apart is fine", 0, 0},
		{"10s: 3s apart is too fast", 10 * time.Second, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j, _, c := setup(t, journal.Config{MinPollInterval: tc.min})
			id := c.createProject()
			for i := 0; i < 3; i++ {
				c.do("GET", "/api/v1/projects/"+id, "")
			}
			assert.Equal(t, tc.want, ruleCounts(j.Report("k"))[journal.RulePollingTooFast])
		})
	}
}

func TestReportNotesDroppedRequests(t *testing.T) {
	t.Parallel()
	// Room for the last four requests of the script.
	pj, papi, pc := setup(t, journal.Config{})
	cleanScript(pc, papi)
	var last4 int64
	for _, e := range pj.Entries(journal.Filter{Limit: 4}) {
		last4 += journal.Size(e)
	}
	j, api, c := setup(t, journal.Config{MaxBytes: last4})
	cleanScript(c, api)
	rep := j.Report("k")
	assert.Equal(t, uint64(7), rep.Summary.JournalDropped)
	assert.Equal(t, 4, rep.Summary.Requests)
	assert.Contains(t, rep.Text(), "Note: the journal has dropped 7 older requests (of every key); this report covers only the requests\nit still holds.\n")
}

// TestReportText compares the text form of a report with several findings
// with testdata/report.golden (go test ./sim/journal -update rewrites it).
func TestReportText(t *testing.T) {
	t.Parallel()
	j, api, c := setup(t, journal.Config{})
	c.autoIdem = false
	c.do("POST", "/api/v1/projects", createBody, "Content-Type", "text/plain", "User-Agent", "sloppy-client/0.1")
	id := c.createProject()
	c.gap = 700 * time.Millisecond
	for i := 0; i < 5; i++ {
		c.do("GET", "/api/v1/projects/"+id, "")
	}
	c.do("DELETE", "/api/v1/projects/"+id, "")
	api.set(id, sim.StatusReady)
	c.do("POST", "/api/v1/projects/"+id+"/translations", retranslationBody(catalogueVoice))
	api.failNext("POST /api/v1/projects", "500")
	c.do("POST", "/api/v1/projects", createBody)

	got := j.Report("k").Text()
	golden := filepath.Join("testdata", "report.golden")
	if *updateGolden {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test ./sim/journal -update to create it")
	assert.Equal(t, string(want), got)
	for _, line := range strings.Split(got, "\n") {
		assert.LessOrEqual(t, len(line), 110, "lines stay readable: %q", line)
	}
}
