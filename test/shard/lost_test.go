package shard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lostSandbox is a sandbox of TestHAProxyProcessLost with its one project.
type lostSandbox struct {
	id, key string
	p       project
}

// lostForm is one way of naming a sandbox, and what process a answers it
// with once the sandbox's process is lost.
type lostForm struct {
	name        string
	method, url string
	key         string
	status      int
	envelope    string // the answer's "error"
}

func lostForms(lb string, s lostSandbox) []lostForm {
	return []lostForm{
		{"key", "GET", lb + "/api/v1/projects/" + s.p.ProjectID, s.key, http.StatusUnauthorized, "UnauthorizedError"},
		{"sbx path", "GET", lb + "/sbx/" + s.id + "/_sim/state", token, http.StatusNotFound, "NotFoundError"},
		{"control path", "GET", lb + "/_sim/sandboxes/" + s.id + "/state", token, http.StatusNotFound, "NotFoundError"},
		// The sandbox itself is the default control API's resource.
		{"sandbox", "GET", lb + "/_sim/sandboxes/" + s.id, token, http.StatusNotFound, "NotFoundError"},
	}
}

// answered checks the answer to f, for sandbox id, after the loss: a's.
func (f lostForm) answered(id string, st int, h http.Header, raw []byte) error {
	var env struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(raw, &env)
	want := "sandbox " + id + " does not exist (deleted, or expired when idle)"
	if st != f.status || env.Error != f.envelope || h.Get("X-Dubsim-Sandbox-Error") != want {
		return fmt.Errorf("%s (%s %s): %d %q, X-Dubsim-Sandbox-Error %q; want %d %q, %q: %.200s",
			f.name, f.method, f.url, st, env.Error, h.Get("X-Dubsim-Sandbox-Error"), f.status, f.envelope, want, raw)
	}
	return nil
}

// checkA reads sandbox s's project by its key and its state by its path:
// both its own.
func checkA(lb string, s lostSandbox) error {
	var p project
	if err := expect("GET", lb+"/api/v1/projects/"+s.p.ProjectID, s.key, "", http.StatusOK, &p); err != nil {
		return err
	}
	var state struct {
		Projects []project `json:"projects"`
	}
	if err := expect("GET", lb+"/sbx/"+s.id+"/_sim/state", token, "", http.StatusOK, &state); err != nil {
		return err
	}
	if p.Name != s.p.Name || len(state.Projects) != 1 || state.Projects[0].Name != s.p.Name {
		return fmt.Errorf("sandbox %s: project %+v, state %+v; want its own %+v", s.id, p, state.Projects, s.p)
	}
	return nil
}

// waitLog polls a balancer's log until it holds every one of lines.
func waitLog(t *testing.T, logs *proctest.Buffer, lines ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, missing := logs.String(), ""
		for _, l := range lines {
			if !strings.Contains(s, l) {
				missing = l
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the balancer's log within 30 s:\n%s", missing, s)
		}
		time.Sleep(50 * time.Millisecond) // polling the log, not waiting for state
	}
}

// TestHAProxyProcessLost: what docs/sharding.md ("When a process is lost")
// says, observed. Two dubsims behind HAProxy (docs/sharding/haproxy.cfg as
// it is), sandboxes on both; process b is killed (SIGKILL). Requests for
// b's sandboxes get HAProxy's 503 until its health checks mark b down,
// then reach a, which does not know them; a's sandboxes and the default
// simulator answer every request meanwhile.
func TestHAProxyProcessLost(t *testing.T) {
	t.Parallel()
	a, b := shards(t)
	lb, logs := startHAProxy(t, a, b)
	def := defaultProject(t, lb)

	// Sandboxes through the balancer until both processes hold some, each
	// with one project of its own (HAProxy routes to a server it has not
	// checked yet, so they are made while it checks).
	var all []lostSandbox
	var onA, onB map[string]bool
	for len(all) < 10 || len(onA) == 0 || len(onB) == 0 {
		require.Less(t, len(all), 64, "64 sandboxes, and one process holds none")
		id := newID()
		_, key, err := createSandbox(lb, id)
		require.NoError(t, err)
		p, err := createProject(lb, key, "lost-"+id)
		require.NoError(t, err)
		all = append(all, lostSandbox{id: id, key: key, p: p})
		if len(all) >= 10 {
			onA, onB = listed(t, a.Base), listed(t, b.Base)
		}
	}
	var sbA, sbB []lostSandbox
	for _, s := range all {
		require.True(t, onA[s.id] != onB[s.id], "sandbox %s: on a %v, on b %v", s.id, onA[s.id], onB[s.id])
		if onA[s.id] {
			sbA = append(sbA, s)
		} else {
			sbB = append(sbB, s)
		}
	}

	// A server HAProxy has not checked yet goes down at its first failed
	// check; one that passed a check at the third (fall 3). The loss of a
	// running process is the second case: wait for the passed checks.
	waitLog(t, logs, "server sandboxes/a succeeded", "server sandboxes/b succeeded", "server default/a succeeded")

	killed := time.Now()
	b.Kill(t)
	deadline := killed.Add(30 * time.Second)

	// One poller per sandbox of b: its four requests in turn, until it has
	// had a's answers to two rounds. Each answer is HAProxy's 503 until
	// the first of a's; none after.
	type window struct {
		last503, first time.Duration // answered the last 503; sent the first request a answered
		n503           int
	}
	var (
		wg      sync.WaitGroup
		windows = make([]window, len(sbB))
		errs    = make([]error, len(sbB))
	)
	for i, s := range sbB {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &windows[i]
			for rounds := 0; rounds < 2; {
				if time.Now().After(deadline) {
					errs[i] = fmt.Errorf("sandbox %s: still 503 30 s after the loss (%d answers)", s.id, w.n503)
					return
				}
				for _, f := range lostForms(lb, s) {
					sent := time.Since(killed)
					st, h, raw, err := send(f.method, f.url, f.key, "")
					switch {
					case err != nil:
						errs[i] = fmt.Errorf("sandbox %s: %s: %w", s.id, f.name, err)
						return
					case st == http.StatusServiceUnavailable && w.first == 0:
						w.n503++
						w.last503 = time.Since(killed)
					default:
						if err := f.answered(s.id, st, h, raw); err != nil {
							errs[i] = fmt.Errorf("sandbox %s, %v after the loss: %w", s.id, sent, err)
							return
						}
						if w.first == 0 {
							w.first = sent
						}
					}
				}
				if w.first != 0 {
					rounds++
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()

	// Meanwhile, and once more after: a's sandboxes and the default
	// simulator answer every request, with their own data. A round every
	// 50 ms samples the whole loss (seconds long) without the loop taking
	// a core from the processes it watches.
	pace := time.NewTicker(50 * time.Millisecond)
	defer pace.Stop()
	rounds := 0
	for polling := true; polling; rounds++ {
		select {
		case <-done:
			polling = false
		case <-pace.C:
		}
		for _, s := range sbA {
			require.NoError(t, checkA(lb, s), "round %d, %v after the loss", rounds, time.Since(killed))
		}
		require.NoError(t, readDefault(lb, def), "round %d, %v after the loss", rounds, time.Since(killed))
	}
	require.NoError(t, errors.Join(errs...))
	var first, last503 time.Duration
	n503 := 0
	for _, w := range windows {
		first, last503, n503 = max(first, w.first), max(last503, w.last503), n503+w.n503
	}
	assert.Positive(t, n503, "HAProxy answered 503 before it marked b down")
	assert.Contains(t, logs.String(), "Server sandboxes/b is DOWN")
	t.Logf("%d sandboxes (%d on a, %d on b); b's: %d answers 503, the last %v after the loss; a answered from requests sent %v after; a's sandboxes and the default: %d rounds, all 2xx",
		len(all), len(sbA), len(sbB), n503, last503.Round(time.Millisecond), first.Round(time.Millisecond), rounds)

	// Sandboxes created now land on a; nothing of b's moved to a.
	onA = listed(t, a.Base)
	for _, s := range sbB {
		assert.False(t, onA[s.id], "b's sandbox %s is on a", s.id)
	}
	for range 4 {
		id := newID()
		_, key, err := createSandbox(lb, id)
		require.NoError(t, err)
		p, err := createProject(lb, key, "after-"+id)
		require.NoError(t, err)
		require.NoError(t, checkA(lb, lostSandbox{id: id, key: key, p: p}))
		assert.True(t, listed(t, a.Base)[id], "sandbox %s, created after the loss, is on a", id)
	}
}
