package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeProber answers from a table; unknown URLs last 90 s.
type fakeProber map[string]sim.SourceInfo

func (f fakeProber) Probe(_ context.Context, url string) (sim.SourceInfo, error) {
	if info, ok := f[url]; ok {
		if info.Origin == "refuse" {
			return info, sim.Errorf(sim.CodeVideoInfo, "cannot read %s", url)
		}
		return info, nil
	}
	return sim.SourceInfo{Duration: 90 * time.Second, Origin: sim.OriginDerived}, nil
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type harness struct {
	e     *Engine
	st    *store.Store
	clock *sim.SimClock
	path  string
}

func newHarness(t *testing.T, prober Prober) *harness {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dubsim.db")
	return openHarness(t, path, prober, sim.NewSimClock(func() time.Time { return t0 }, 0))
}

func openHarness(t *testing.T, path string, prober Prober, clock *sim.SimClock) *harness {
	t.Helper()
	st, err := store.Open(path, store.NoSync(), store.KeySeed(7))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	if prober == nil {
		prober = fakeProber{}
	}
	e := New(Config{Store: st, Clock: clock, IDs: sim.NewIDs(7), Prober: prober, Timing: sim.DefaultTiming, Fixtures: fx})
	require.NoError(t, e.Start(context.Background()))
	return &harness{e: e, st: st, clock: clock, path: path}
}

func (h *harness) account(t *testing.T, plan sim.Plan, balance int64, retrans bool) string {
	t.Helper()
	a, err := h.e.Accounts.CreateAccount(context.Background(), sim.AccountSpec{Plan: plan, BalanceMinutes: balance, RetranslationEnabled: retrans})
	require.NoError(t, err)
	return a.APIKey
}

func newProject(url string) sim.NewProject {
	return sim.NewProject{SourceLang: "en", TargetLang: "fr-FR", SourceVideoURL: url, MixingMode: sim.DefaultMixingMode, TTSVolume: sim.DefaultTTSVolume}
}

func TestLifecycleReady(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, fakeProber{"https://v/10min": {Duration: 10 * time.Minute, Origin: sim.OriginRule}})
	key := h.account(t, sim.PlanPro, 100, true)

	rc, err := h.e.Projects.CreateProject(ctx, key, newProject("https://v/10min"), nil)
	require.NoError(t, err)
	assert.Regexp(t, `^[1-9][0-9]{8}$`, rc.ProjectID)
	assert.Equal(t, int64(10), rc.CostMinutes)
	assert.Equal(t, int64(90), rc.BalanceMinutes)
	assert.Equal(t, 0, rc.TranslationsCount)
	wantDue := t0.Add(sim.DefaultTiming.Processing(10 * time.Minute))
	assert.Equal(t, wantDue, rc.EstimatedCompletion)

	p, err := h.e.Projects.Project(ctx, key, rc.ProjectID)
	require.NoError(t, err)
	assert.Equal(t, sim.StatusInProgress, p.Status)

	_, err = h.e.Clock.Advance(ctx, wantDue.Sub(t0)-time.Second)
	require.NoError(t, err)
	p, err = h.e.Projects.Project(ctx, key, rc.ProjectID)
	require.NoError(t, err)
	assert.Equal(t, sim.StatusInProgress, p.Status, "one second before the estimate")

	_, err = h.e.Clock.Advance(ctx, time.Second)
	require.NoError(t, err)
	p, err = h.e.Projects.Project(ctx, key, rc.ProjectID)
	require.NoError(t, err)
	assert.Equal(t, sim.StatusReady, p.Status)
	assert.Equal(t, wantDue, p.CompletedAt)
	assert.NotEmpty(t, p.SourceScript)
	assert.Len(t, p.TargetScript, len(p.SourceScript))
	assert.NotEmpty(t, p.Speakers)
	bal, err := balance(ctx, h.e, key)
	require.NoError(t, err)
	assert.Equal(t, int64(90), bal, "a ready project keeps its charge")
}

func TestLifecycleErrorRefunds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, fakeProber{"https://v/fail": {Duration: 150 * time.Second, Origin: sim.OriginRule, Fail: "No speech"}})
	key := h.account(t, sim.PlanNone, 5, false)
	rc, err := h.e.Projects.CreateProject(ctx, key, newProject("https://v/fail"), nil)
	require.NoError(t, err)
	assert.Equal(t, int64(3), rc.CostMinutes)
	assert.Equal(t, int64(2), rc.BalanceMinutes)

	n, err := h.e.Clock.Tick(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing due yet")
	_, err = h.e.Clock.Advance(ctx, time.Hour)
	require.NoError(t, err)

	var p sim.Project
	require.NoError(t, h.st.View(ctx, func(tx sim.Tx) error { // the sweep applied it, not a read
		var err error
		p, err = tx.Project(rc.ProjectID)
		return err
	}))
	assert.Equal(t, sim.StatusError, p.Status)
	assert.Equal(t, "No speech", p.ErrorMessage)
	bal, err := balance(ctx, h.e, key)
	require.NoError(t, err)
	assert.Equal(t, int64(5), bal, "failed projects consume no balance")

	// Sweeping again never refunds twice.
	_, err = h.e.Clock.Advance(ctx, time.Hour)
	require.NoError(t, err)
	bal, _ = balance(ctx, h.e, key)
	assert.Equal(t, int64(5), bal)
}

func TestCreateRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, fakeProber{"https://v/bad": {Origin: "refuse"}, "https://v/2min": {Duration: 2 * time.Minute, Origin: sim.OriginRule}})
	key := h.account(t, sim.PlanNone, 1, false)

	_, err := h.e.Projects.CreateProject(ctx, key, newProject("https://v/2min"), nil)
	assert.Equal(t, sim.CodePaymentRequired, sim.ErrorCode(err))
	assert.EqualError(t, err, sim.MsgInsufficientBalance)

	_, err = h.e.Projects.CreateProject(ctx, key, newProject("https://v/bad"), nil)
	assert.Equal(t, sim.CodeVideoInfo, sim.ErrorCode(err))

	_, err = h.e.Projects.CreateProject(ctx, "nobody", newProject("https://v/2min"), nil)
	assert.Equal(t, sim.CodeUnauthorized, sim.ErrorCode(err))

	bal, _ := balance(ctx, h.e, key)
	assert.Equal(t, int64(1), bal, "refusals change nothing")
	count := 0
	require.NoError(t, h.st.View(ctx, func(tx sim.Tx) error {
		return tx.ForEachProjectHead(func(sim.Project) error { count++; return nil })
	}))
	assert.Zero(t, count)
}

func TestSourceScriptExtendsDerivedDuration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, fakeProber{"https://v/rule": {Duration: 30 * time.Second, Origin: sim.OriginRule}})
	key := h.account(t, sim.PlanPro, 100, false)
	np := newProject("https://v/derived") // derived: 90 s
	np.SourceScript = []sim.Segment{{StartMS: 0, EndMS: 1000, Text: "a"}, {StartMS: 170_000, EndMS: 185_500, Text: "b"}}
	rc, err := h.e.Projects.CreateProject(ctx, key, np, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(4), rc.CostMinutes, "186 s after extension")

	np.SourceVideoURL = "https://v/rule"
	_, err = h.e.Projects.CreateProject(ctx, key, np, nil)
	assert.EqualError(t, err, fmt.Sprintf(sim.MsgScriptPastEnd, 1, 185500, 30000))
}

func TestRetranslation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, nil)
	key := h.account(t, sim.PlanPro, 100, true)
	rc, err := h.e.Projects.CreateProject(ctx, key, newProject("https://v/x"), nil)
	require.NoError(t, err)

	in := sim.RetranslationInput{
		TargetScript:   []sim.SegmentInput{seg(100, 400, "Au revoir le monde, mes amis, et merci!", 1)},
		TargetSpeakers: []sim.SpeakerInput{spk(1, "feminine", frVoice)},
	}
	_, err = h.e.Projects.Retranslate(ctx, key, rc.ProjectID, in, false, nil)
	assert.EqualError(t, err, "Project "+rc.ProjectID+" cannot be re-translated while its status is in_progress; re-translation needs status ready")
	assert.Equal(t, sim.CodeValidation, sim.ErrorCode(err))

	_, err = h.e.Clock.Advance(ctx, time.Hour)
	require.NoError(t, err)
	_, err = h.e.Projects.Retranslate(ctx, key, rc.ProjectID, in, true, nil)
	require.NoError(t, err, "dry run")
	p, _ := h.e.Projects.Project(ctx, key, rc.ProjectID)
	assert.Equal(t, sim.StatusReady, p.Status, "a dry run changes nothing")
	assert.Zero(t, p.TranslationsCount)

	rr, err := h.e.Projects.Retranslate(ctx, key, rc.ProjectID, in, false, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, rr.TranslationsCount)
	assert.Zero(t, rr.CostMinutes)
	assert.Equal(t, rc.BalanceMinutes, rr.BalanceMinutes, "re-translations cost nothing")
	p, _ = h.e.Projects.Project(ctx, key, rc.ProjectID)
	assert.Equal(t, sim.StatusInProgress, p.Status)
	assert.Equal(t, 1, p.OutputGen, "old outputs stay until the new ones are ready")

	_, err = h.e.Clock.Advance(ctx, time.Hour)
	require.NoError(t, err)
	p, _ = h.e.Projects.Project(ctx, key, rc.ProjectID)
	assert.Equal(t, sim.StatusReady, p.Status)
	assert.Equal(t, 2, p.OutputGen)
	require.Len(t, p.TargetScript, 1)
	assert.Equal(t, "Au revoir le monde, mes amis, et merci!", p.TargetScript[0].Text)
	assert.Equal(t, int64(100), p.TargetScript[0].StartMS)
	assert.Greater(t, p.TargetScript[0].EndMS, int64(400), "timings adjusted to the speech length")
	assert.Equal(t, []sim.Speaker{{SpeakerID: 1, Style: "feminine", VoiceKey: frVoice}}, p.Speakers)

	in.UseFixedTimings = ptr(true)
	_, err = h.e.Projects.Retranslate(ctx, key, rc.ProjectID, in, false, nil)
	require.NoError(t, err)
	_, err = h.e.Clock.Advance(ctx, time.Hour)
	require.NoError(t, err)
	p, _ = h.e.Projects.Project(ctx, key, rc.ProjectID)
	assert.Equal(t, int64(400), p.TargetScript[0].EndMS, "use_fixed_timings keeps timings")
	assert.Equal(t, 2, p.TranslationsCount)
}

func TestRetranslationAccess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, nil)
	owner := h.account(t, sim.PlanPro, 100, true)
	other := h.account(t, sim.PlanPro, 100, true)
	disabled := h.account(t, sim.PlanPro, 100, false)
	rc, err := h.e.Projects.CreateProject(ctx, owner, newProject("https://v/x"), nil)
	require.NoError(t, err)
	in := sim.RetranslationInput{}

	_, err = h.e.Projects.Retranslate(ctx, disabled, rc.ProjectID, in, false, nil)
	assert.Equal(t, sim.CodeForbidden, sim.ErrorCode(err))
	_, err = h.e.Projects.Retranslate(ctx, other, rc.ProjectID, in, true, nil)
	assert.Equal(t, sim.CodeNotFound, sim.ErrorCode(err), "another account's project does not exist for the caller")
	_, err = h.e.Projects.Project(ctx, other, rc.ProjectID)
	assert.EqualError(t, err, sim.MsgProjectNotFound)
	assert.Equal(t, sim.CodeNotFound, sim.ErrorCode(h.e.Projects.DeleteProject(ctx, other, rc.ProjectID)))
}

func TestDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, nil)
	key := h.account(t, sim.PlanNone, 10, false)
	rc, err := h.e.Projects.CreateProject(ctx, key, newProject("https://v/x"), nil)
	require.NoError(t, err)

	err = h.e.Projects.DeleteProject(ctx, key, rc.ProjectID)
	assert.EqualError(t, err, sim.MsgDeleteInProgress)
	assert.Equal(t, sim.CodeValidation, sim.ErrorCode(err))

	h.clock.Advance(time.Hour) // no sweep: the delete itself must settle the project
	require.NoError(t, h.e.Projects.DeleteProject(ctx, key, rc.ProjectID))
	_, err = h.e.Projects.Project(ctx, key, rc.ProjectID)
	assert.Equal(t, sim.CodeNotFound, sim.ErrorCode(err))
	_, err = h.e.Projects.ProjectOutput(ctx, rc.ProjectID)
	assert.Equal(t, sim.CodeNotFound, sim.ErrorCode(err))
	bal, _ := balance(ctx, h.e, key)
	assert.Equal(t, int64(8), bal, "delete refunds nothing")
	assert.Equal(t, sim.CodeNotFound, sim.ErrorCode(h.e.Projects.DeleteProject(ctx, key, rc.ProjectID)))
}

func TestConcurrentCreationsNeverOverdraw(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, fakeProber{"https://v/1min": {Duration: 50 * time.Second, Origin: sim.OriginRule}})
	key := h.account(t, sim.PlanNone, 10, false)
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := h.e.Projects.CreateProject(ctx, key, newProject("https://v/1min"), nil)
			switch sim.ErrorCode(err) {
			case "":
				ok.Add(1)
			case sim.CodePaymentRequired:
				refused.Add(1)
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(10), ok.Load())
	assert.Equal(t, int64(30), refused.Load())
	bal, _ := balance(ctx, h.e, key)
	assert.Zero(t, bal)
}

func TestRestartKeepsStateAndPendingTransitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	real := t0
	realNow := func() time.Time { return real }
	path := filepath.Join(t.TempDir(), "dubsim.db")
	h := openHarness(t, path, nil, sim.NewSimClock(realNow, 1))
	key := h.account(t, sim.PlanNone, 10, false)
	rc, err := h.e.Projects.CreateProject(ctx, key, newProject("https://v/x"), nil)
	require.NoError(t, err)
	advancedTo, err := h.e.Clock.Advance(ctx, 10*time.Second)
	require.NoError(t, err)
	require.NoError(t, h.e.Clock.SaveClock(ctx))
	require.NoError(t, h.st.Close())

	// The process is down for 5 real seconds, then restarts with a new clock.
	real = real.Add(5 * time.Second)
	h2 := openHarness(t, path, nil, sim.NewSimClock(realNow, 1))
	now := h2.e.Clock.Now()
	assert.False(t, now.Before(advancedTo), "simulated time never goes backwards across a restart")
	assert.Equal(t, advancedTo.Add(5*time.Second), now, "downtime passes at real speed")

	p, err := h2.e.Projects.Project(ctx, key, rc.ProjectID)
	require.NoError(t, err)
	assert.Equal(t, sim.StatusInProgress, p.Status)
	assert.Equal(t, rc.EstimatedCompletion, p.DueAt)
	bal, _ := balance(ctx, h2.e, key)
	assert.Equal(t, int64(10)-rc.CostMinutes, bal)

	_, err = h2.e.Clock.Advance(ctx, time.Hour)
	require.NoError(t, err)
	p, err = h2.e.Projects.Project(ctx, key, rc.ProjectID)
	require.NoError(t, err)
	assert.Equal(t, sim.StatusReady, p.Status, "the pending transition survived the restart")
}

func TestSweepOrderAndBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, nil)
	key := h.account(t, sim.PlanNone, 100000, false)
	const n = sweepBatch*2 + 3
	for i := 0; i < n; i++ {
		_, err := h.e.Projects.CreateProject(ctx, key, newProject("https://v/"+string(rune('a'+i%26))+time.Duration(i).String()), nil)
		require.NoError(t, err)
		h.clock.Advance(time.Second)
	}
	h.clock.Advance(24 * time.Hour)
	applied, err := h.e.Clock.Tick(ctx)
	require.NoError(t, err)
	assert.Equal(t, n, applied, "every due transition is applied, across batches")
	require.NoError(t, h.st.View(ctx, func(tx sim.Tx) error {
		ids, err := tx.DueProjects(h.e.Clock.Now(), 10)
		assert.Empty(t, ids)
		return err
	}))
}

func TestResetRestoresFixtures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, nil)
	_, err := h.e.Projects.CreateProject(ctx, "dubsim-subscription", newProject("https://v/x"), nil)
	require.NoError(t, err)
	extra := h.account(t, sim.PlanPro, 5, false)
	require.NoError(t, h.e.Data.Reset(ctx))
	bal, err := balance(ctx, h.e, "dubsim-subscription")
	require.NoError(t, err)
	assert.Equal(t, int64(100), bal)
	_, err = h.e.Accounts.Account(ctx, extra)
	assert.Equal(t, sim.CodeUnauthorized, sim.ErrorCode(err))
}

func TestIdempotencyRecordsExpire(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, nil)
	require.NoError(t, h.e.Idempotency.IdempotencySave(ctx, "k", "key1", sim.IdemRecord{Fingerprint: "f", Status: 200}))
	_, found, err := h.e.Idempotency.IdempotencyLookup(ctx, "k", "key1")
	require.NoError(t, err)
	assert.True(t, found)
	_, err = h.e.Clock.Advance(ctx, 24*time.Hour-time.Second)
	require.NoError(t, err)
	_, found, _ = h.e.Idempotency.IdempotencyLookup(ctx, "k", "key1")
	assert.True(t, found, "alive just under 24 h")
	_, err = h.e.Clock.Advance(ctx, time.Second)
	require.NoError(t, err)
	_, found, _ = h.e.Idempotency.IdempotencyLookup(ctx, "k", "key1")
	assert.False(t, found, "expired after 24 h of simulated time")
}

func TestSourceLongerThanTheLimitIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, fakeProber{"https://v/huge": {Duration: sim.MaxSourceDuration + time.Second, Origin: sim.OriginMedia}})
	key := h.account(t, sim.PlanPro, 1_000_000, false)
	_, err := h.e.Projects.CreateProject(ctx, key, newProject("https://v/huge"), nil)
	assert.Equal(t, sim.CodeVideoInfo, sim.ErrorCode(err))
	assert.EqualError(t, err, fmt.Sprintf(sim.MsgSourceTooLong, "6h0m1s", "6h0m0s"))
	bal, _ := balance(ctx, h.e, key)
	assert.Equal(t, int64(1_000_000), bal)
}

// storedProject reads a project straight from the store (no settling).
func (h *harness) storedProject(t *testing.T, id string) sim.Project {
	t.Helper()
	var p sim.Project
	require.NoError(t, h.st.View(context.Background(), func(tx sim.Tx) error {
		var err error
		p, err = tx.Project(id)
		return err
	}))
	return p
}

// The scripts are produced when the first run completes, not at creation:
// a create stores the order (and the client's script), the transition to
// ready transcribes and translates. The result is the same whenever it
// runs, so two engines with the same seed agree.
func TestScriptsAreProducedWhenTheRunCompletes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clientScript := []sim.Segment{{StartMS: 0, EndMS: 2000, Text: "Hello there."}, {StartMS: 2500, EndMS: 5000, Text: "Good morning."}}
	cases := []struct {
		name string
		np   func(sim.NewProject) sim.NewProject
		want func(t *testing.T, p sim.Project)
	}{
		{"synthetic transcript", func(np sim.NewProject) sim.NewProject { return np }, func(t *testing.T, p sim.Project) {
			assert.Greater(t, len(p.SourceScript), 5, "about one segment per 3 to 8 s of 90 s")
		}},
		{"client source_script, fixed timings", func(np sim.NewProject) sim.NewProject {
			np.SourceScript, np.UseFixedTimings, np.TargetLang = clientScript, true, "en-US"
			return np
		}, func(t *testing.T, p sim.Project) {
			require.Len(t, p.SourceScript, 2)
			assert.Equal(t, "Hello there.", p.SourceScript[0].Text)
			assert.Equal(t, int64(2500), p.SourceScript[1].StartMS, "timings kept")
			assert.Equal(t, p.SourceScript, p.TargetScript, "pre-translated: same language")
		}},
		{"client source_script_content", func(np sim.NewProject) sim.NewProject {
			c := "first line\nsecond line\nthird line"
			np.SourceScriptContent = &c
			return np
		}, func(t *testing.T, p sim.Project) {
			require.Len(t, p.SourceScript, 3)
			assert.Equal(t, "second line", p.SourceScript[1].Text)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got [2]sim.Project
			for i := range got {
				h := newHarness(t, nil)
				key := h.account(t, sim.PlanEnterprise, 100, true)
				rc, err := h.e.Projects.CreateProject(ctx, key, tc.np(newProject("https://v/clip")), nil)
				require.NoError(t, err)

				created := h.storedProject(t, rc.ProjectID)
				assert.True(t, created.ScriptsPending)
				assert.Nil(t, created.SourceScript)
				assert.Nil(t, created.TargetScript)
				assert.Nil(t, created.Speakers)

				_, err = h.e.Clock.Advance(ctx, time.Hour)
				require.NoError(t, err)
				p := h.storedProject(t, rc.ProjectID) // applied by the sweep
				require.Equal(t, sim.StatusReady, p.Status)
				assert.False(t, p.ScriptsPending)
				assert.Nil(t, p.ScriptInput, "the input is dropped once used")
				require.NotEmpty(t, p.SourceScript)
				assert.Len(t, p.TargetScript, len(p.SourceScript))
				require.NotEmpty(t, p.Speakers)
				for _, s := range p.TargetScript {
					assert.Contains(t, speakerIDs(p.Speakers), s.SpeakerID)
				}
				tc.want(t, p)
				got[i] = p
			}
			assert.Equal(t, got[0].SourceScript, got[1].SourceScript, "deterministic")
			assert.Equal(t, got[0].TargetScript, got[1].TargetScript)
			assert.Equal(t, got[0].Speakers, got[1].Speakers)
		})
	}
}

// A project that fails never gets scripts.
func TestFailedProjectHasNoScripts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, fakeProber{"https://v/fail": {Duration: 30 * time.Second, Origin: sim.OriginRule, Fail: "No speech"}})
	key := h.account(t, sim.PlanPro, 100, true)
	rc, err := h.e.Projects.CreateProject(ctx, key, newProject("https://v/fail"), nil)
	require.NoError(t, err)
	_, err = h.e.Clock.Advance(ctx, time.Hour)
	require.NoError(t, err)
	p := h.storedProject(t, rc.ProjectID)
	require.Equal(t, sim.StatusError, p.Status)
	assert.Nil(t, p.SourceScript)
	assert.Nil(t, p.Speakers)
}

func speakerIDs(s []sim.Speaker) []int {
	ids := make([]int, len(s))
	for i := range s {
		ids[i] = s[i].SpeakerID
	}
	return ids
}

// An idle tick only reads: no write transaction when nothing is due and the
// idempotency records were purged less than a simulated minute ago; one as
// soon as a transition is due or the purge is.
func TestIdleTickWritesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, nil)
	key := h.account(t, sim.PlanPro, 100, false)
	_, err := h.e.Projects.CreateProject(ctx, key, newProject("https://v/clip"), nil)
	require.NoError(t, err)

	_, err = h.e.Clock.Tick(ctx) // the first purge
	require.NoError(t, err)
	before := h.e.core.writes.Load()
	for range 5 {
		n, err := h.e.Clock.Tick(ctx)
		require.NoError(t, err)
		assert.Zero(t, n)
	}
	assert.Equal(t, before, h.e.core.writes.Load(), "idle ticks wrote")

	h.clock.Advance(30 * time.Second) // nothing due yet, purge not due
	_, err = h.e.Clock.Tick(ctx)
	require.NoError(t, err)
	assert.Equal(t, before, h.e.core.writes.Load())

	h.clock.Advance(time.Hour) // the project is due
	n, err := h.e.Clock.Tick(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Greater(t, h.e.core.writes.Load(), before)
}

// Helpers of the re-translation cases (as in statemachine's validate tests).

const frVoice = "f4fb50:fr-FR-AlainNeural"

func ptr[T any](v T) *T { return &v }

func seg(start, end int64, text string, speaker int) sim.SegmentInput {
	return sim.SegmentInput{StartMS: ptr(start), EndMS: ptr(end), Text: ptr(text), SpeakerID: ptr(speaker)}
}

func spk(id int, style, voice string) sim.SpeakerInput {
	return sim.SpeakerInput{SpeakerID: ptr(id), Style: ptr(style), VoiceKey: ptr(voice)}
}

// balance is the account's balance in minutes.
func balance(ctx context.Context, e *Engine, key string) (int64, error) {
	a, err := e.Accounts.Account(ctx, key)
	return a.BalanceMinutes, err
}
