package faults

import (
	"context"
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddIDs(t *testing.T) {
	t.Parallel()
	hs := newHarness(t, 1)
	drop := `"action":{"type":"drop"}`
	assert.Equal(t, "flt_1", hs.add(t, `{`+drop+`}`).ID)
	assert.Equal(t, "mine", hs.add(t, `{"id":"mine",`+drop+`}`).ID)
	assert.Equal(t, "flt_3", hs.add(t, `{"id":"flt_3",`+drop+`}`).ID)
	assert.Equal(t, "flt_2", hs.add(t, `{`+drop+`}`).ID)
	assert.Equal(t, "flt_4", hs.add(t, `{`+drop+`}`).ID, "a generated id skips one given by a client")

	_, err := hs.f.Add(Rule{ID: "mine", Action: Action{Type: ActionDrop}})
	requireValidation(t, err, "id mine is already used by another fault rule")
	_, err = hs.f.Add(Rule{Action: Action{Type: "nope"}})
	requireValidation(t, err, `action.type must be one of latency, error, rate_limit, drop, truncate; got "nope"`)
	assert.Len(t, hs.f.List(), 5, "refused rules are not added")

	require.NoError(t, hs.f.Remove("flt_4"))
	assert.Equal(t, 4, hs.f.Clear())
	assert.Equal(t, "flt_5", hs.add(t, `{`+drop+`}`).ID, "generated ids are not reused after Remove or Clear")
	assert.Equal(t, "mine", hs.add(t, `{"id":"mine",`+drop+`}`).ID, "a removed id may be given again")
}

func TestAddCopiesProbability(t *testing.T) {
	t.Parallel()
	hs := newHarness(t, 1)
	p := 1.0
	_, err := hs.f.Add(Rule{Probability: &p, Action: Action{Type: ActionError, Status: 500}})
	require.NoError(t, err)
	p = 1e-12 // the caller's variable changes after Add
	_, fired := hs.serve("GET", "/x", "")
	assert.Equal(t, "flt_1", fired)
	assert.InDelta(t, 1.0, *hs.f.List()[0].Probability, 0)
}

func TestMatching(t *testing.T) {
	t.Parallel()
	type req struct{ method, target, auth string }
	cases := []struct {
		name  string
		rules []string
		req   req
		want  string // id of the rule that fires; "" = none
	}{
		{"method matches", []string{`{"method":"GET"}`}, req{"GET", "/api/v1/balance", ""}, "flt_1"},
		{"method differs", []string{`{"method":"GET"}`}, req{"POST", "/api/v1/balance", ""}, ""},
		{"any method", []string{`{}`}, req{"DELETE", "/api/v1/projects/1", ""}, "flt_1"},
		{"exact path", []string{`{"path":"/api/v1/balance"}`}, req{"GET", "/api/v1/balance", ""}, "flt_1"},
		{"exact path is anchored at the end", []string{`{"path":"/api/v1/balance"}`}, req{"GET", "/api/v1/balance/x", ""}, ""},
		{"exact path is anchored at the start", []string{`{"path":"/api/v1/balance"}`}, req{"GET", "/x/api/v1/balance", ""}, ""},
		{"path prefix is not a match", []string{`{"path":"/api/v1/balance"}`}, req{"GET", "/api/v1/balanc", ""}, ""},
		{"star inside a path", []string{`{"path":"/api/v1/projects/*/translations"}`}, req{"POST", "/api/v1/projects/802323387/translations", ""}, "flt_1"},
		{"star inside a path needs the rest", []string{`{"path":"/api/v1/projects/*/translations"}`}, req{"GET", "/api/v1/projects/802323387", ""}, ""},
		{"star crosses slashes", []string{`{"path":"/api/*"}`}, req{"GET", "/api/v1/projects/1", ""}, "flt_1"},
		{"star matches the empty run", []string{`{"path":"/api/v1/projects*"}`}, req{"GET", "/api/v1/projects", ""}, "flt_1"},
		{"query is not part of the path", []string{`{"path":"/api/v1/voices"}`}, req{"GET", "/api/v1/voices?lang=fr-FR", ""}, "flt_1"},
		{"path is matched decoded", []string{`{"path":"/files/a b"}`}, req{"GET", "/files/a%20b", ""}, "flt_1"},
		{"api key matches", []string{`{"api_key":"k1"}`}, req{"GET", "/x", "Bearer k1"}, "flt_1"},
		{"bearer scheme is case-insensitive", []string{`{"api_key":"k1"}`}, req{"GET", "/x", "bearer k1"}, "flt_1"},
		{"api key differs", []string{`{"api_key":"k1"}`}, req{"GET", "/x", "Bearer k2"}, ""},
		{"api key is not a prefix", []string{`{"api_key":"k1"}`}, req{"GET", "/x", "Bearer k10"}, ""},
		{"no Authorization header", []string{`{"api_key":"k1"}`}, req{"GET", "/x", ""}, ""},
		{"another scheme", []string{`{"api_key":"k1"}`}, req{"GET", "/x", "Basic k1"}, ""},
		{"no api_key matches requests without a key", []string{`{}`}, req{"GET", "/x", ""}, "flt_1"},
		{"every field must match", []string{`{"method":"GET","path":"/a","api_key":"k1"}`}, req{"GET", "/a", "Bearer k2"}, ""},
		{"every field matches", []string{`{"method":"GET","path":"/a","api_key":"k1"}`}, req{"GET", "/a", "Bearer k1"}, "flt_1"},
		{"first matching rule wins", []string{`{"path":"/api/*"}`, `{"path":"/api/v1/*"}`}, req{"GET", "/api/v1/x", ""}, "flt_1"},
		{"order is the order of adding", []string{`{"path":"/api/v1/*"}`, `{"path":"/api/*"}`}, req{"GET", "/api/v1/x", ""}, "flt_1"},
		{"a rule that does not match is skipped", []string{`{"method":"POST"}`, `{"method":"GET"}`}, req{"GET", "/x", ""}, "flt_2"},
		{"a failed probability draw continues with the next rule", []string{`{"probability":1e-12}`, `{"method":"POST"}`, `{"path":"/x"}`}, req{"GET", "/x", ""}, "flt_3"},
		{"a failed draw and nothing else", []string{`{"probability":1e-12}`}, req{"GET", "/x", ""}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hs := newHarness(t, 1)
			for _, js := range tc.rules {
				// Each rule answers an error: firing is visible in the status too.
				hs.add(t, js[:len(js)-1]+sep(js)+`"action":{"type":"error","status":503}}`)
			}
			rec, fired := hs.serve(tc.req.method, tc.req.target, tc.req.auth)
			assert.Equal(t, tc.want, fired)
			if tc.want == "" {
				assert.Equal(t, http.StatusOK, rec.Code)
				assert.Equal(t, "api", rec.Body.String())
				assert.EqualValues(t, 1, hs.calls.Load())
			} else {
				assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
				assert.EqualValues(t, 0, hs.calls.Load())
			}
			for _, v := range hs.f.List() {
				want := int64(0)
				if v.ID == tc.want {
					want = 1
				}
				assert.Equal(t, want, v.Hits, "hits of %s", v.ID)
			}
		})
	}
}

// sep is the separator before a field appended to the JSON object js.
func sep(js string) string {
	if js == "{}" {
		return ""
	}
	return ","
}

func TestCountUnderConcurrency(t *testing.T) {
	t.Parallel()
	const requests, count = 50, 7
	hs := newHarness(t, 1)
	hs.add(t, `{"count":7,"action":{"type":"error","status":503}}`)
	start := make(chan struct{})
	codes := make([]int, requests)
	var wg sync.WaitGroup
	for i := range requests {
		wg.Go(func() {
			<-start
			rec, _ := hs.serve("GET", "/api/v1/balance", "")
			codes[i] = rec.Code
		})
	}
	close(start)
	wg.Wait()
	faulted := 0
	for _, c := range codes {
		if c == http.StatusServiceUnavailable {
			faulted++
		}
	}
	assert.Equal(t, count, faulted)
	assert.EqualValues(t, requests-count, hs.calls.Load())
	views := hs.f.List()
	require.Len(t, views, 1, "a spent rule stays listed")
	assert.Equal(t, StateSpent, views[0].State)
	assert.EqualValues(t, count, views[0].Hits)
}

func TestCountAndList(t *testing.T) {
	t.Parallel()
	hs := newHarness(t, 1)
	hs.add(t, `{"count":2,"action":{"type":"error","status":500}}`)
	hs.add(t, `{"id":"open","action":{"type":"error","status":502}}`)
	remaining := func() []any {
		var out []any
		for _, v := range hs.f.List() {
			if v.Remaining == nil {
				out = append(out, v.ID+":unlimited:"+itoa(v.Hits)+":"+v.State)
			} else {
				out = append(out, v.ID+":"+itoa(*v.Remaining)+":"+itoa(v.Hits)+":"+v.State)
			}
		}
		return out
	}
	assert.Equal(t, []any{"flt_1:2:0:active", "open:unlimited:0:active"}, remaining())
	steps := []struct {
		status int
		list   []any
	}{
		{500, []any{"flt_1:1:1:active", "open:unlimited:0:active"}},
		{500, []any{"flt_1:0:2:spent", "open:unlimited:0:active"}},
		{502, []any{"flt_1:0:2:spent", "open:unlimited:1:active"}},
		{502, []any{"flt_1:0:2:spent", "open:unlimited:2:active"}},
	}
	for i, s := range steps {
		rec, _ := hs.serve("GET", "/x", "")
		assert.Equal(t, s.status, rec.Code, "request %d", i+1)
		assert.Equal(t, s.list, remaining(), "after request %d", i+1)
	}
	require.NoError(t, hs.f.Remove("flt_1"), "a spent rule is removed like a live one")
	err := hs.f.Remove("flt_1")
	assert.Equal(t, sim.CodeNotFound, sim.ErrorCode(err))
	assert.Equal(t, "Fault rule flt_1 not found", sim.ErrorMessage(err))
}

// TestEndedRulesAreBounded: at most MaxEnded spent or expired rules stay
// listed; the oldest ended goes first, live rules always stay.
func TestEndedRulesAreBounded(t *testing.T) {
	t.Parallel()
	hs := newHarness(t, 1)
	hs.add(t, `{"id":"live","path":"/never","action":{"type":"drop"}}`)
	for i := range MaxEnded + 5 {
		hs.add(t, `{"id":"r`+strconv.Itoa(i)+`","count":1,"path":"/x","action":{"type":"error","status":500}}`)
		rec, _ := hs.serve("GET", "/x", "")
		require.Equal(t, 500, rec.Code)
	}
	views := hs.f.List()
	require.Len(t, views, MaxEnded+1)
	assert.Equal(t, "live", views[0].ID)
	assert.Equal(t, "r5", views[1].ID, "the 5 oldest ended rules went")
	assert.Equal(t, StateSpent, views[MaxEnded].State)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestTTL(t *testing.T) {
	t.Parallel()
	hs := newHarness(t, 1)
	hs.add(t, `{"id":"short","ttl_seconds":10,"action":{"type":"error","status":503}}`)
	hs.add(t, `{"id":"half","ttl_seconds":0.5,"action":{"type":"error","status":502}}`)
	hs.add(t, `{"id":"forever","action":{"type":"error","status":500}}`)
	views := hs.f.List()
	require.Len(t, views, 3)
	assert.Equal(t, "2026-02-04T12:00:10.000Z", *views[0].ExpiresAt)
	assert.Equal(t, "2026-02-04T12:00:00.500Z", *views[1].ExpiresAt)
	assert.Nil(t, views[2].ExpiresAt)

	ids := func() []string {
		var out []string
		for _, v := range hs.f.List() {
			out = append(out, v.ID+":"+v.State)
		}
		return out
	}
	steps := []struct {
		name   string
		at     time.Duration
		status int
		listed []string
	}{
		{"before expiry", 9*time.Second + 999*time.Millisecond, 503, []string{"short:active", "half:expired", "forever:active"}},
		{"at expires_at", 10 * time.Second, 500, []string{"short:expired", "half:expired", "forever:active"}},
		{"long after", time.Hour, 500, []string{"short:expired", "half:expired", "forever:active"}},
	}
	for _, s := range steps {
		hs.clock.Set(t0.Add(s.at))
		rec, _ := hs.serve("GET", "/x", "")
		assert.Equal(t, s.status, rec.Code, s.name)
		assert.Equal(t, s.listed, ids(), s.name)
	}
	require.NoError(t, hs.f.Remove("short"), "an expired rule is removed like a live one")
	assert.Equal(t, 1, hs.f.Clear(), "Clear counts live rules only")
	assert.Empty(t, hs.f.List(), "Clear removes ended rules too")
}

// TestExpiredRulesEndForEveryOperation checks each operation on its own
// right after expiry, before anything else has marked the rule.
func TestExpiredRulesEndForEveryOperation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		check func(t *testing.T, f *Faults)
	}{
		{"List", func(t *testing.T, f *Faults) {
			v := f.List()
			require.Len(t, v, 1)
			assert.Equal(t, StateExpired, v[0].State)
		}},
		{"Remove", func(t *testing.T, f *Faults) {
			require.NoError(t, f.Remove("flt_1"))
			assert.Empty(t, f.List())
		}},
		{"Clear", func(t *testing.T, f *Faults) { assert.Equal(t, 0, f.Clear()) }},
		{"Add with the same id", func(t *testing.T, f *Faults) {
			_, err := f.Add(Rule{ID: "flt_1", Action: Action{Type: ActionDrop}})
			assert.NoError(t, err)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hs := newHarness(t, 1)
			hs.add(t, `{"ttl_seconds":1,"action":{"type":"drop"}}`)
			hs.clock.Set(t0.Add(time.Second))
			tc.check(t, hs.f)
		})
	}
}

// fireSequence sends n requests through a p-probability rule and reports
// which ones fired.
func fireSequence(t *testing.T, seed uint64, p string, n int) []bool {
	hs := newHarness(t, seed)
	hs.add(t, `{"probability":`+p+`,"action":{"type":"error","status":503}}`)
	out := make([]bool, n)
	for i := range out {
		_, fired := hs.serve("GET", "/x", "")
		out[i] = fired != ""
	}
	return out
}

func TestProbability(t *testing.T) {
	t.Parallel()
	t.Run("same seed, same sequence", func(t *testing.T) {
		t.Parallel()
		a, b := fireSequence(t, 42, "0.5", 1000), fireSequence(t, 42, "0.5", 1000)
		assert.Equal(t, a, b)
		assert.Contains(t, a, true)
		assert.Contains(t, a, false)
	})
	t.Run("another seed, another sequence", func(t *testing.T) {
		t.Parallel()
		assert.NotEqual(t, fireSequence(t, 42, "0.5", 1000), fireSequence(t, 43, "0.5", 1000))
	})
	t.Run("frequency close to p", func(t *testing.T) {
		t.Parallel()
		for _, p := range []float64{0.05, 0.3, 0.9} {
			const n = 20000
			seq := fireSequence(t, 7, formatFloat(p), n)
			fired := 0
			for _, f := range seq {
				if f {
					fired++
				}
			}
			// Five standard deviations of a binomial proportion.
			assert.InDelta(t, p, float64(fired)/n, 5*math.Sqrt(p*(1-p)/n), "p=%v", p)
		}
	})
	t.Run("probability 1 never draws", func(t *testing.T) {
		t.Parallel()
		assert.NotContains(t, fireSequence(t, 1, "1", 200), false)
	})
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func TestLatency(t *testing.T) {
	t.Parallel()
	draws := func(t *testing.T, action string, n int) []time.Duration {
		hs := newHarness(t, 3)
		hs.add(t, `{"action":`+action+`}`)
		for range n {
			rec, fired := hs.serve("GET", "/x", "")
			require.Equal(t, "flt_1", fired)
			require.Equal(t, "api", rec.Body.String(), "after the wait the API answers")
		}
		assert.EqualValues(t, n, hs.calls.Load())
		return hs.sleep.waits()
	}
	t.Run("fixed", func(t *testing.T) {
		t.Parallel()
		assert.Equal(t, []time.Duration{1500 * time.Millisecond, 1500 * time.Millisecond},
			draws(t, `{"type":"latency","latency_ms":1500}`, 2))
	})
	t.Run("uniform covers [min, max] in whole milliseconds", func(t *testing.T) {
		t.Parallel()
		got := draws(t, `{"type":"latency","distribution":"uniform","min_ms":100,"max_ms":120}`, 2000)
		for _, d := range got {
			require.Zero(t, d%time.Millisecond, d)
		}
		assert.Equal(t, 100*time.Millisecond, slices.Min(got))
		assert.Equal(t, 120*time.Millisecond, slices.Max(got))
		assert.InDelta(t, 110, meanMS(got), 1)
	})
	t.Run("normal", func(t *testing.T) {
		t.Parallel()
		got := draws(t, `{"type":"latency","distribution":"normal","mean_ms":1000,"stddev_ms":100}`, 5000)
		assert.InDelta(t, 1000, meanMS(got), 10)
		assert.InDelta(t, 100, stddevMS(got), 10)
	})
	t.Run("normal is clamped at 0", func(t *testing.T) {
		t.Parallel()
		got := draws(t, `{"type":"latency","distribution":"normal","mean_ms":0,"stddev_ms":50}`, 2000)
		assert.Equal(t, time.Duration(0), slices.Min(got))
		zeros := 0
		for _, d := range got {
			if d == 0 {
				zeros++
			}
		}
		assert.InDelta(t, 0.5, float64(zeros)/2000, 0.06, "about half the draws fall below 0")
	})
	t.Run("lognormal", func(t *testing.T) {
		t.Parallel()
		got := draws(t, `{"type":"latency","distribution":"lognormal","median_ms":200,"sigma":0.5}`, 5000)
		logs := make([]float64, len(got))
		for i, d := range got {
			require.Positive(t, d)
			logs[i] = math.Log(d.Seconds() * 1000)
		}
		sorted := slices.Sorted(slices.Values(got))
		assert.InDelta(t, 200, float64(sorted[len(sorted)/2])/float64(time.Millisecond), 10, "median")
		mean := 0.0
		for _, l := range logs {
			mean += l
		}
		mean /= float64(len(logs))
		v := 0.0
		for _, l := range logs {
			v += (l - mean) * (l - mean)
		}
		assert.InDelta(t, 0.5, math.Sqrt(v/float64(len(logs))), 0.03, "sigma of the logs")
	})
	t.Run("draws are capped at 10 minutes", func(t *testing.T) {
		t.Parallel()
		got := draws(t, `{"type":"latency","distribution":"lognormal","median_ms":600000,"sigma":10}`, 200)
		assert.Equal(t, 10*time.Minute, slices.Max(got))
		assert.Less(t, slices.Min(got), 10*time.Minute)
	})
	t.Run("draws follow the seed", func(t *testing.T) {
		t.Parallel()
		const a = `{"type":"latency","distribution":"uniform","min_ms":0,"max_ms":100000}`
		first, second := draws(t, a, 50), draws(t, a, 50)
		assert.Equal(t, first, second)
	})
}

func meanMS(ds []time.Duration) float64 {
	s := 0.0
	for _, d := range ds {
		s += float64(d) / float64(time.Millisecond)
	}
	return s / float64(len(ds))
}

func stddevMS(ds []time.Duration) float64 {
	m, v := meanMS(ds), 0.0
	for _, d := range ds {
		x := float64(d)/float64(time.Millisecond) - m
		v += x * x
	}
	return math.Sqrt(v / float64(len(ds)))
}

func TestLatencyFollowsTheRequestContext(t *testing.T) {
	t.Parallel()
	t.Run("Sleep stops when the context is cancelled", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Sleep(ctx, time.Hour) }()
		cancel()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, context.Canceled)
		case <-time.After(30 * time.Second):
			t.Fatal("Sleep did not return after its context was cancelled")
		}
	})
	t.Run("Sleep returns nil when the time has passed", func(t *testing.T) {
		t.Parallel()
		assert.NoError(t, Sleep(context.Background(), time.Microsecond))
		assert.NoError(t, Sleep(context.Background(), 0))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		assert.ErrorIs(t, Sleep(ctx, 0), context.Canceled)
	})
	t.Run("a client that gives up ends the wait and the API is not called", func(t *testing.T) {
		t.Parallel()
		var calls int
		f := New(Config{}) // the real Sleep
		_, err := f.Add(Rule{Action: Action{Type: ActionLatency, LatencyMS: MaxLatencyMS}})
		require.NoError(t, err)
		h := f.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls++ }))
		ctx, cancel := context.WithCancel(context.Background())
		req, err := http.NewRequestWithContext(ctx, "GET", "/x", nil)
		require.NoError(t, err)
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(discard{}, req)
		}()
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the 10-minute wait did not end with the request context")
		}
		assert.Zero(t, calls)
	})
}

// discard is a ResponseWriter that must not be written to.
type discard struct{}

func (discard) Header() http.Header        { return http.Header{} }
func (discard) Write([]byte) (int, error)  { return 0, errors.New("unexpected write") }
func (discard) WriteHeader(statusCode int) { panic("unexpected WriteHeader") }
