package parity_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim/parity"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noDocuments leaves every answer unchecked, so that the fake target is
// judged by the scenario alone.
func noDocuments(string) ([]byte, error) { return nil, nil }

// balanceDoc documents GET /api/v1/balance only.
const balanceDoc = `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/api/v1/balance":{"get":{"operationId":"getBalance",
"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"object","required":["balance_minutes"],
"properties":{"balance_minutes":{"type":"number"}}}}}},"401":{"description":"bad key","content":{"application/json":{"schema":{"type":"object"}}}}}}}}}`

func runFake(t *testing.T, f *fake, clock *fakeClock, mod func(*parity.Config)) (*parity.Recording, string) {
	t.Helper()
	var report bytes.Buffer
	cfg := parity.Config{PlatformURL: f.srv.URL, APIKey: fakeKey, Timeout: time.Minute, Poll: 5 * time.Second,
		Clock: clock, Documents: noDocuments, Report: &report, Client: f.srv.Client()}
	if mod != nil {
		mod(&cfg)
	}
	rec, err := parity.Run(context.Background(), cfg)
	require.NoError(t, err)
	return rec, report.String()
}

func step(t *testing.T, rec *parity.Recording, name string) parity.Result {
	t.Helper()
	s, ok := rec.Step(name)
	require.True(t, ok, "no step %s", name)
	return s
}

func reasonKinds(s parity.Result) []string {
	var out []string
	for _, r := range s.Reasons {
		out = append(out, r.Kind)
	}
	return out
}

// TestRunFaithfulTarget: a target that answers as the scenario expects
// passes every step, waiting through the injected clock (never sleeping).
func TestRunFaithfulTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		opt        fakeOptions
		mod        func(*parity.Config)
		sleeps     int // Sleep calls of the kit's clock
		advances   int // POST /_sim/clock/advance calls
		control    bool
		uploadPath string
		uploadDoc  string
	}{
		// get-project is the project's first read: its wait needs one read less.
		{"real waits", fakeOptions{steps: 2}, nil, 1 + 2 + 2, 0, false, "/_uploads/{uploadId}/{fileName}", ""},
		{"control API: the clock is advanced, nothing waits", fakeOptions{steps: 2, control: true}, nil, 0, 3 * 3, true, "/_uploads/{uploadId}/{fileName}", ""},
		{"control API turned off by configuration", fakeOptions{steps: 1, control: true, realTime: true}, func(c *parity.Config) { c.Control = parity.ControlOff },
			0 + 1 + 1, 0, false, "/_uploads/{uploadId}/{fileName}", ""},
		{"immediate completion", fakeOptions{steps: 0}, nil, 0, 0, false, "/_uploads/{uploadId}/{fileName}", ""},
		{"presigned upload on another host: recorded, not checked", fakeOptions{steps: 0, externalUploads: true},
			func(c *parity.Config) { c.Documents = func(string) ([]byte, error) { return []byte(balanceDoc), nil } },
			0, 0, false, "{presignedUploadUrl}", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tc.opt)
			clock := newFakeClock()
			rec, report := runFake(t, f, clock, tc.mod)
			if tc.uploadPath == "{presignedUploadUrl}" {
				// Only the documented balance passes; the upload is not checked at all.
				assert.Equal(t, parity.VerdictOK, step(t, rec, "platform/balance").Verdict)
				assert.Equal(t, parity.VerdictOK, step(t, rec, "studio/upload").Verdict, "%v", step(t, rec, "studio/upload").Reasons)
			} else {
				for _, s := range rec.Steps {
					assert.Equal(t, parity.VerdictOK, s.Verdict, "%s: %v", s.Name, s.Reasons)
				}
				assert.False(t, rec.Drifted())
				assert.NotContains(t, report, "DRIFT ")
			}
			up := step(t, rec, "studio/upload")
			assert.Equal(t, tc.uploadPath, up.Path)
			assert.Equal(t, tc.uploadDoc, up.Document)
			assert.Equal(t, parity.BodyEmpty, up.Body)
			assert.Len(t, clock.Sleeps(), tc.sleeps)
			for _, d := range clock.Sleeps() {
				assert.Equal(t, 5*time.Second, d, "the poll interval")
			}
			assert.Len(t, f.Advances(), tc.advances)
			for _, s := range f.Advances() {
				assert.Equal(t, 5.0, s, "the clock is advanced by the poll interval")
			}
			assert.Equal(t, tc.control, rec.Control)
			_, hasHealth := rec.Step("control/health")
			assert.Equal(t, tc.control, hasHealth, "control steps are recorded only for a dubsim target")
			assert.Equal(t, []string{"platform", "platform", "platform", "studio"}, f.headers, "the interface header on the shared address's ambiguous creates")
			assert.Equal(t, parity.ToneWAV(), firstUpload(f), "the generated WAV was uploaded")
			assert.Contains(t, step(t, rec, "platform/wait-project").Note, "ready after")
			assert.Contains(t, report, "OK     platform/balance ")
			if tc.uploadDoc == "" && tc.uploadPath != "{presignedUploadUrl}" {
				n := strconv.Itoa(len(rec.Steps))
				assert.Contains(t, report, "parity: "+n+" steps: "+n+" OK")
			}
		})
	}
}

func firstUpload(f *fake) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range f.uploads {
		return b
	}
	return nil
}

// TestRunDriftingTarget proves the kit can fail: a target that renames a
// field, answers a number where a string is expected and fails with 500 is
// reported step by step, and its recording differs from a faithful one.
func TestRunDriftingTarget(t *testing.T) {
	t.Parallel()
	good, _ := runFake(t, newFake(t, fakeOptions{steps: 1}), newFakeClock(), nil)
	require.False(t, good.Drifted())

	rec, report := runFake(t, newFake(t, fakeOptions{steps: 1, drift: true}), newFakeClock(), nil)
	assert.True(t, rec.Drifted())

	tests := []struct {
		step    string
		verdict string
		kinds   []string
		text    string
	}{
		{"platform/balance", parity.VerdictOK, nil, ""}, // a renamed field is a shape difference: see the comparison
		{"platform/options", parity.VerdictDrift, []string{parity.ReasonStatus}, "status 500, expected 200"},
		{"platform/create-project", parity.VerdictDrift, []string{parity.ReasonShape}, "no string project_id in the body"},
		{"platform/get-project", parity.VerdictSkip, []string{parity.ReasonSkipped}, "needs project_id"},
		{"platform/delete-project", parity.VerdictSkip, []string{parity.ReasonSkipped}, "needs project_id"},
		{"platform/bad-key", parity.VerdictOK, nil, ""},
		{"studio/wait-artifact", parity.VerdictOK, nil, ""},
	}
	for _, tc := range tests {
		s := step(t, rec, tc.step)
		assert.Equal(t, tc.verdict, s.Verdict, tc.step)
		assert.Equal(t, tc.kinds, reasonKinds(s), tc.step)
		if tc.text != "" {
			assert.Contains(t, s.Reasons[0].Text, tc.text, tc.step)
		}
	}
	assert.Contains(t, report, "DRIFT  platform/options                   GET    /api/v1/options")
	assert.Contains(t, report, "SKIP   platform/retranslate")

	var diffs []string
	for _, d := range parity.Compare(good, rec) {
		diffs = append(diffs, d.String())
	}
	for _, want := range []string{
		"platform/balance /balance_minutes: missing (recorded integer)",
		"platform/balance /balance: extra (integer, not in the recording)",
		"platform/options: status 200 (recorded) vs 500 (now)",
		"platform/create-project /project_id: class string (recorded) vs integer (now)",
		"platform/get-project: step not run now (recorded status 200)",
		"studio/wait-artifact /size: class integer (recorded) vs string (now)",
	} {
		assert.Contains(t, diffs, want)
	}
	assert.Empty(t, parity.Compare(good, good))
}

// TestRunOpenAPIChecks: answers are checked against the documents; a
// mismatch, an undocumented operation and a document that does not compile
// are each reported, and OpenAPIDrift lists them by operation.
func TestRunOpenAPIChecks(t *testing.T) {
	t.Parallel()
	docs := func(name string) ([]byte, error) {
		switch name {
		case "platform":
			return []byte(balanceDoc), nil
		case "studio":
			return []byte(`{"openapi":`), nil
		}
		return nil, errors.New("no control document")
	}
	rec, report := runFake(t, newFake(t, fakeOptions{steps: 0, drift: true, control: true}), newFakeClock(),
		func(c *parity.Config) { c.Documents = docs })

	bal := step(t, rec, "platform/balance")
	require.Equal(t, []string{parity.ReasonSchema}, reasonKinds(bal))
	assert.Equal(t, "platform getBalance", bal.Reasons[0].Operation)
	assert.Contains(t, bal.Reasons[0].Text, "balance_minutes")
	assert.Equal(t, parity.VerdictOK, step(t, rec, "platform/bad-key").Verdict, "401 is documented")

	opts := step(t, rec, "platform/options")
	assert.Equal(t, []string{parity.ReasonStatus, parity.ReasonUndocumented}, reasonKinds(opts))
	assert.Equal(t, "the platform document has no operation GET /api/v1/options", opts.Reasons[1].Text)
	assert.Equal(t, "platform GET /api/v1/options", opts.Reasons[1].Operation)

	assert.Equal(t, []string{parity.ReasonDocument}, reasonKinds(step(t, rec, "studio/list-projects")))
	assert.Equal(t, []string{parity.ReasonDocument}, reasonKinds(step(t, rec, "control/health")))
	assert.Contains(t, report, "DRIFT  control/health")

	drift := parity.OpenAPIDrift(rec)
	assert.Contains(t, drift, "platform getBalance: platform/balance")
	assert.Contains(t, drift, "platform GET /api/v1/options: platform/options")
	for _, s := range rec.Steps {
		for _, r := range s.Reasons {
			if r.Kind == parity.ReasonUndocumented {
				assert.NotContains(t, r.Text, "100000", "undocumented operations are named by template, not by id")
			}
		}
	}
}

// TestRunWaits: a resource that never ends times out after --timeout of the
// injected clock (or of simulated time under control); one that fails is an
// outcome drift, and the steps that need it are skipped.
func TestRunWaits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		opt      fakeOptions
		step     string
		kinds    []string
		text     string
		sleeps   int
		advances int
		skipped  []string
	}{
		{"never ends, real waits", fakeOptions{steps: -1}, "platform/wait-project", []string{parity.ReasonTimeout},
			"the project is still in_progress after 13 reads over 1m0s", 2 * 12, 0,
			[]string{"platform/validate-retranslation", "platform/retranslate", "platform/wait-retranslation"}},
		{"never ends, control", fakeOptions{steps: -1, control: true}, "studio/wait-artifact", []string{parity.ReasonTimeout},
			"the artifact is still created after 13 reads over 1m0s", 0, 2 * 12, []string{"platform/wait-retranslation"}},
		{"project ends in error", fakeOptions{steps: 0, projectError: true}, "platform/wait-project", []string{parity.ReasonOutcome},
			"the project ended in status error (error_message: No speech found in the source video), not ready", 0, 0,
			[]string{"platform/validate-retranslation", "platform/retranslate", "platform/wait-retranslation"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tc.opt)
			clock := newFakeClock()
			rec, _ := runFake(t, f, clock, nil)
			s := step(t, rec, tc.step)
			assert.Equal(t, parity.VerdictDrift, s.Verdict)
			assert.Equal(t, tc.kinds, reasonKinds(s))
			assert.Equal(t, tc.text, s.Reasons[0].Text)
			assert.Len(t, clock.Sleeps(), tc.sleeps)
			assert.Len(t, f.Advances(), tc.advances)
			for _, n := range tc.skipped {
				assert.Equal(t, parity.VerdictSkip, step(t, rec, n).Verdict, n)
			}
		})
	}
}

func TestRunConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  parity.Config
		err  string
	}{
		{"no key", parity.Config{PlatformURL: "http://127.0.0.1:1"}, "an API key is required"},
		{"no URL", parity.Config{APIKey: "k"}, "the platform URL must be an absolute http(s) URL"},
		{"relative URL", parity.Config{APIKey: "k", PlatformURL: "localhost:8080"}, "the platform URL must be an absolute http(s) URL"},
		{"bad studio URL", parity.Config{APIKey: "k", PlatformURL: "http://x", StudioURL: "ftp://x"}, "the studio URL"},
		{"bad control", parity.Config{APIKey: "k", PlatformURL: "http://x", Control: "on"}, `control must be auto or off; got "on"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := parity.Run(context.Background(), tc.cfg)
			assert.ErrorContains(t, err, tc.err)
		})
	}

	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, fakeOptions{steps: 0})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		rec, err := parity.Run(ctx, parity.Config{PlatformURL: f.srv.URL, APIKey: fakeKey, Clock: newFakeClock(), Documents: noDocuments})
		assert.ErrorIs(t, err, context.Canceled)
		require.NotNil(t, rec)
		assert.Empty(t, rec.Steps)
	})

	t.Run("separate studio key", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, fakeOptions{steps: 0, studioKey: "studio-key"})
		rec, _ := runFake(t, f, newFakeClock(), nil)
		assert.Equal(t, []string{parity.ReasonStatus}, reasonKinds(step(t, rec, "studio/list-projects")), "the platform key is refused by the studio")
		rec, _ = runFake(t, newFake(t, fakeOptions{steps: 0, studioKey: "studio-key"}), newFakeClock(), func(c *parity.Config) { c.StudioAPIKey = "studio-key" })
		assert.False(t, rec.Drifted())
	})

	t.Run("separate studio URL: no interface header", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, fakeOptions{steps: 0})
		// The same server under another spelling is another address to the kit.
		studio := strings.Replace(f.srv.URL, "127.0.0.1", "localhost", 1)
		rec, _ := runFake(t, f, newFakeClock(), func(c *parity.Config) { c.StudioURL = studio })
		assert.Equal(t, []string{"", "", "", ""}, f.headers, "platform creates carry no header; the studio create is routed as platform by the fake")
		assert.Equal(t, parity.VerdictDrift, step(t, rec, "studio/create-project").Verdict)
	})
}
