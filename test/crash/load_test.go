package crash

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// stats are the figures of a run.
type stats struct {
	requests, creates, createAcked, createRefused, unknown atomic.Int64
	gets, retransAcked, deleteAcked, balances              atomic.Int64
}

// phase is one stretch of load against one process, ended by a kill (or
// a SIGTERM).
type phase struct {
	h      *harness
	cl     *client
	ctx    context.Context
	dying  atomic.Bool // set just before the signal: transport errors are expected from then on
	mu     sync.Mutex
	errors []string // violations seen by the workers
}

func (ph *phase) fail(format string, args ...any) {
	ph.mu.Lock()
	defer ph.mu.Unlock()
	ph.errors = append(ph.errors, fmt.Sprintf(format, args...))
}

// transport handles a request that got no full answer. It returns false:
// the worker stops (the process is going away). Before the signal, it is
// a failure of the server.
func (ph *phase) transport(what string, err error) bool {
	ph.h.st.unknown.Add(1)
	if !ph.dying.Load() {
		ph.fail("%s failed while the process was not being stopped: %v", what, err)
	}
	return false
}

var targetLangs = []string{"fr-FR", "de-DE", "es-ES"}

// sourceURL picks a source video: fixture media with known durations, a
// derived duration, or a URL matching the forced failure rule (and, for
// media.dubsim.test/fail, a fixture failure too).
func sourceURL(rng *rand.Rand, n int64) (url string, fail bool, cost int64) {
	switch r := rng.IntN(100); {
	case r < 25:
		return fmt.Sprintf("https://media.dubsim.test/short-%d.mp4", n), false, 1
	case r < 29: // long scripts: few, the state dump decodes them all
		return fmt.Sprintf("https://media.dubsim.test/hour-%d.mp4", n), false, 60
	case r < 75:
		return fmt.Sprintf("https://cdn.test/%d.mp4", n), false, 0
	case r < 90:
		return fmt.Sprintf("https://cdn.test/fail-%d.mp4", n), true, 0
	default:
		return fmt.Sprintf("https://media.dubsim.test/fail-%d.mp4", n), true, 4
	}
}

// worker sends requests until the phase ends or the process goes away.
func (ph *phase) worker(w int, rng *rand.Rand) {
	for ph.ctx.Err() == nil {
		owned := ph.h.l.owned[w]
		var ok bool
		switch r := rng.IntN(100); {
		case len(owned) == 0:
			ok = ph.create(w, rng)
		case len(owned) > 6 && r < 30:
			// Keep the live set small: the state dump reads every project.
			ok = ph.delete(w, owned[rng.IntN(len(owned))])
		case r < 35:
			ok = ph.create(w, rng)
		case r < 55:
			ok = ph.get(owned[rng.IntN(len(owned))])
		case r < 68:
			ok = ph.retranslate(owned[rng.IntN(len(owned))])
		case r < 90:
			ok = ph.delete(w, owned[rng.IntN(len(owned))])
		default:
			ok = ph.balance(ph.h.l.accts[rng.IntN(len(ph.h.l.accts))])
		}
		if !ok {
			return
		}
	}
}

func (ph *phase) do(method, path, apiKey, idemKey string, body []byte) (response, error) {
	ph.h.st.requests.Add(1)
	return ph.cl.do(ph.ctx, method, path, apiKey, idemKey, body)
}

func (ph *phase) create(w int, rng *rand.Rand) bool {
	h := ph.h
	n := h.seq.Add(1)
	key := fmt.Sprintf("crash-%d-%07d", h.seed, n)
	acct := h.pickAccount(rng)
	url, fail, cost := sourceURL(rng, n)
	body, _ := json.Marshal(map[string]any{
		"name": key, "source_lang": "en", "target_lang": targetLangs[rng.IntN(len(targetLangs))], "source_video_url": url,
	})
	c := &creation{key: key, acct: acct, url: url, body: body, failURL: fail, worker: w, state: inFlight}
	h.l.add(c)
	h.st.creates.Add(1)
	r, err := ph.do(http.MethodPost, "/api/v1/projects", acct, key, body)
	if err != nil {
		return ph.transport("create "+key, err)
	}
	switch r.status {
	case http.StatusOK:
		var rc receipt
		if err := json.Unmarshal(r.body, &rc); err != nil || rc.ProjectID == "" {
			ph.fail("create %s: bad receipt %s", key, r.body)
			return false
		}
		if cost != 0 && rc.CostMinutes != cost {
			ph.fail("create %s (%s): cost_minutes %d, want %d", key, url, rc.CostMinutes, cost)
		}
		if rc.CostMinutes < 1 || rc.CostMinutes > 60 || rc.BalanceMinutes < 0 {
			ph.fail("create %s: receipt %s", key, r.body)
		}
		c.state = acked
		if msg := h.l.setID(c, rc.ProjectID, rc.CostMinutes); msg != "" {
			ph.fail("%s", msg)
		}
		h.l.owned[w] = append(h.l.owned[w], c)
		h.st.createAcked.Add(1)
	case http.StatusPaymentRequired:
		c.state = refused
		h.st.createRefused.Add(1)
	case http.StatusConflict:
		// Only when the transport resent the request (it may, the request
		// carrying an Idempotency-Key) while the first attempt ran: the
		// outcome is unknown, like a lost answer; resolved after the restart.
	default:
		ph.fail("create %s: status %d: %s", key, r.status, r.body)
		return false
	}
	return true
}

// view reads a project the client owns and records what it was told.
func (ph *phase) view(c *creation) (projectView, bool) {
	var v projectView
	r, err := ph.do(http.MethodGet, "/api/v1/projects/"+c.id, c.acct, "", nil)
	if err != nil {
		return v, ph.transport("get "+c.id, err)
	}
	ph.h.st.gets.Add(1)
	if r.status != http.StatusOK {
		ph.fail("get project %s (creation %s, %s): status %d: %s", c.id, c.key, c.state, r.status, r.body)
		return v, false
	}
	if err := json.Unmarshal(r.body, &v); err != nil {
		ph.fail("get project %s: %v: %s", c.id, err, r.body)
		return v, false
	}
	if v.CostMinutes != c.cost {
		ph.fail("get project %s: cost_minutes %d, acknowledged %d", c.id, v.CostMinutes, c.cost)
	}
	switch v.Status {
	case "error":
		c.seenError = true
	case "ready":
		if c.seenCompleted == nil {
			c.seenCompleted = map[string]bool{}
		}
		c.seenCompleted[v.CompletionDate] = true
		if t, err := time.Parse(time.RFC3339, v.CompletionDate); err == nil {
			ph.h.l.seen(t)
		} else {
			ph.fail("get project %s: completion_date %q", c.id, v.CompletionDate)
		}
	case "in_progress":
	default:
		ph.fail("get project %s: status %q", c.id, v.Status)
	}
	return v, true
}

func (ph *phase) get(c *creation) bool {
	_, ok := ph.view(c)
	return ok
}

// retranslate sends a ready project's output script and speakers back.
func (ph *phase) retranslate(c *creation) bool {
	v, ok := ph.view(c)
	if !ok || v.Status != "ready" {
		return ok
	}
	body, _ := json.Marshal(retranslationBody{TargetScript: v.OutputTargetScript, TargetSpeakers: v.OutputTargetSpeakers})
	key := fmt.Sprintf("rt-%d-%07d", ph.h.seed, ph.h.seq.Add(1))
	c.retransInFlight++
	r, err := ph.do(http.MethodPost, "/api/v1/projects/"+c.id+"/translations", c.acct, key, body)
	if err != nil {
		return ph.transport("re-translate "+c.id, err)
	}
	if r.status == http.StatusConflict {
		return true // resent by the transport while the first attempt ran: unknown
	}
	c.retransInFlight--
	if r.status != http.StatusOK {
		ph.fail("re-translate %s: status %d: %s", c.id, r.status, r.body)
		return false
	}
	var rc receipt
	if err := json.Unmarshal(r.body, &rc); err != nil {
		ph.fail("re-translate %s: %v: %s", c.id, err, r.body)
		return false
	}
	c.retransAcked++
	ph.h.st.retransAcked.Add(1)
	if rc.TranslationsCount < c.retransAcked || rc.TranslationsCount > c.retransAcked+c.retransInFlight {
		ph.fail("re-translate %s: translations_count %d, %d acknowledged, %d unanswered", c.id, rc.TranslationsCount, c.retransAcked, c.retransInFlight)
	}
	return true
}

// delete deletes a project that is ready or in error.
func (ph *phase) delete(w int, c *creation) bool {
	v, ok := ph.view(c)
	if !ok || v.Status == "in_progress" {
		return ok
	}
	l := ph.h.l
	l.owned[w] = removeOwned(l.owned[w], c)
	c.deleteInFlight, c.refundedAtDelete = true, v.Status == "error"
	r, err := ph.do(http.MethodDelete, "/api/v1/projects/"+c.id, c.acct, "", nil)
	if err != nil {
		return ph.transport("delete "+c.id, err)
	}
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"success":true`) {
		ph.fail("delete %s (%s): status %d: %s", c.id, v.Status, r.status, r.body)
		return false
	}
	c.deleteInFlight, c.deleted = false, true
	ph.h.st.deleteAcked.Add(1)
	return true
}

func (ph *phase) balance(acct string) bool {
	r, err := ph.do(http.MethodGet, "/api/v1/balance", acct, "", nil)
	if err != nil {
		return ph.transport("balance", err)
	}
	var b struct {
		BalanceMinutes *int64 `json:"balance_minutes"`
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &b) != nil || b.BalanceMinutes == nil ||
		*b.BalanceMinutes < 0 || *b.BalanceMinutes > ph.h.l.initial[acct] {
		ph.fail("balance of %s: status %d: %s", acct, r.status, r.body)
		return false
	}
	ph.h.st.balances.Add(1)
	return true
}
