package crash

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// createState is what the client knows of a creation request.
type createState int

const (
	inFlight  createState = iota // sent, no answer read (the process died): unknown
	acked                        // a 2xx answer was read
	committed                    // unacknowledged, found in the state after the restart
	refused                      // a 4xx answer was read: nothing was created
	absent                       // unacknowledged, not in the state after the restart
)

func (s createState) String() string {
	return [...]string{"in flight", "acknowledged", "committed without acknowledgement", "refused", "absent"}[s]
}

// creation is one Create Project request, by its Idempotency-Key (also the
// project's name, which is how an unacknowledged creation is found in the
// state dump), and what became of the project.
type creation struct {
	key     string
	acct    string
	url     string
	body    []byte
	failURL bool // matches the forced-outcome rule: ends in error, refunded
	worker  int
	state   createState
	id      string
	cost    int64

	deleted          bool // the delete was acknowledged, or the project is gone after an unacknowledged one
	deleteInFlight   bool // a delete was sent and not answered
	refundedAtDelete bool // the project was in error (refunded) when deleted

	retransAcked    int // acknowledged re-translations
	retransInFlight int // unanswered re-translations (resolved at the next check)

	seenError     bool            // a Get Project answered status error
	seenCompleted map[string]bool // completion_date values a Get Project answered
}

// live reports whether the project exists for the client: created and not
// deleted.
func (c *creation) live() bool {
	return (c.state == acked || c.state == committed) && !c.deleted
}

// ledger is everything the client knows. Workers touch their own
// creations during load; the checker runs while no worker does.
type ledger struct {
	mu      sync.Mutex
	byKey   map[string]*creation
	byID    map[string]*creation
	order   []*creation
	owned   [][]*creation // per worker: live projects with an id and no delete in flight
	initial map[string]int64
	accts   []string
	// maxSeen is the latest simulated time the client has seen in an
	// answer (created and completion dates): the clock may not restart
	// before it.
	maxSeen time.Time
}

func newLedger(workers int) *ledger {
	return &ledger{byKey: map[string]*creation{}, byID: map[string]*creation{}, owned: make([][]*creation, workers), initial: map[string]int64{}}
}

func (l *ledger) add(c *creation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byKey[c.key] = c
	l.order = append(l.order, c)
}

// setID records the project id of a creation; a second creation with the
// same id is a violation.
func (l *ledger) setID(c *creation, id string, cost int64) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	c.id, c.cost = id, cost
	if o, ok := l.byID[id]; ok && o != c {
		return fmt.Sprintf("project %s returned for two creations: %s and %s", id, o.key, c.key)
	}
	l.byID[id] = c
	return ""
}

func (l *ledger) seen(t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t.After(l.maxSeen) {
		l.maxSeen = t
	}
}

func removeOwned(list []*creation, c *creation) []*creation {
	if i := slices.Index(list, c); i >= 0 {
		list[i] = list[len(list)-1]
		list = list[:len(list)-1]
	}
	return list
}

// violations collects the failed invariants of one check.
type violations struct {
	label  string
	list   []string
	passed int
}

func (v *violations) expect(ok bool, format string, args ...any) bool {
	if ok {
		v.passed++
	} else {
		v.list = append(v.list, fmt.Sprintf(format, args...))
	}
	return ok
}

func (v *violations) String() string {
	const max = 30
	s := v.list
	more := ""
	if len(s) > max {
		more = fmt.Sprintf("\n  ... and %d more", len(s)-max)
		s = s[:max]
	}
	return fmt.Sprintf("%s: %d invariant violations:\n  %s%s", v.label, len(v.list), strings.Join(s, "\n  "), more)
}

func projectMap(st *stateDump) map[string]projectState {
	m := make(map[string]projectState, len(st.Projects))
	for _, p := range st.Projects {
		m[p.ID] = p
	}
	return m
}

// resolve decides, from the first state dump after a restart, what became
// of the requests that were unanswered when the process died: a creation
// took place if a project with its name exists; a delete took place if the
// project is gone.
func (l *ledger) resolve(st *stateDump, v *violations) (committedNow, absentNow []*creation) {
	byName := map[string][]projectState{}
	for _, p := range st.Projects {
		byName[p.Name] = append(byName[p.Name], p)
	}
	ids := projectMap(st)
	for _, c := range l.order {
		switch {
		case c.state == inFlight:
			ps := byName[c.key]
			v.expect(len(ps) <= 1, "[4] creation %s (unacknowledged) exists %d times in the state", c.key, len(ps))
			if len(ps) == 0 {
				c.state = absent
				absentNow = append(absentNow, c)
				continue
			}
			c.state = committed
			if msg := l.setID(c, ps[0].ID, ps[0].CostMinutes); msg != "" {
				v.expect(false, "%s", msg)
			}
			l.owned[c.worker] = append(l.owned[c.worker], c)
			committedNow = append(committedNow, c)
		case c.deleteInFlight:
			c.deleteInFlight = false
			if _, ok := ids[c.id]; ok {
				l.owned[c.worker] = append(l.owned[c.worker], c)
			} else {
				c.deleted = true
			}
		}
	}
	return committedNow, absentNow
}

// verify checks every invariant of a state dump taken with the clock frozen
// and every due transition applied (so that the dump is what is stored).
func (h *harness) verify(v *violations, st *stateDump, now time.Time) {
	l := h.l
	cur := projectMap(st)

	// Every project is one the client asked for, once, as recorded.
	byName := map[string][]projectState{}
	for _, p := range st.Projects {
		byName[p.Name] = append(byName[p.Name], p)
	}
	for _, p := range st.Projects {
		h.checkProject(v, p, now)
		c, ok := l.byKey[p.Name]
		if !v.expect(ok, "[1] project %s (name %q, account %s) was never requested", p.ID, p.Name, p.APIKey) {
			continue
		}
		if same := byName[p.Name]; len(same) > 1 {
			if p.ID == same[0].ID {
				ids := make([]string, len(same))
				for i, q := range same {
					ids[i] = q.ID
				}
				v.expect(false, "[4] creation %s (%s as project %s) exists %d times: projects %v (one Idempotency-Key, several projects, each charged)",
					c.key, c.state, c.id, len(same), ids)
			}
			if p.ID != c.id {
				continue
			}
		}
		v.expect(c.state == acked || c.state == committed, "[1] project %s exists but its creation %s is %s", p.ID, c.key, c.state)
		v.expect(c.id == p.ID, "[1] creation %s: acknowledged as project %q, the state has %s", c.key, c.id, p.ID)
		v.expect(c.acct == p.APIKey && c.url == p.SourceVideoURL, "[1] project %s: account/url %s %s, requested %s %s", p.ID, p.APIKey, p.SourceVideoURL, c.acct, c.url)
		v.expect(c.cost == p.CostMinutes, "[1] project %s: cost_minutes %d, acknowledged %d", p.ID, p.CostMinutes, c.cost)
		v.expect(!c.deleted, "[1] project %s was deleted (creation %s) and exists again", p.ID, c.key)
		if !c.deleted {
			h.checkObservations(v, c, p)
		}
	}
	// Every acknowledged creation exists unless deleted.
	for _, c := range l.order {
		if c.live() {
			_, ok := cur[c.id]
			v.expect(ok, "[1] %s creation %s (project %s, account %s, cost %d) is missing from the state", c.state, c.key, c.id, c.acct, c.cost)
		}
	}
	// History only grows: the previous dump's history is a prefix of this one.
	for id, old := range h.prev {
		p, ok := cur[id]
		if !ok {
			continue // deleted: checked above through the ledger
		}
		prefix := len(old.History) <= len(p.History)
		for i := 0; prefix && i < len(old.History); i++ {
			prefix = old.History[i].Kind == p.History[i].Kind && old.History[i].At.Equal(p.History[i].At)
		}
		v.expect(prefix, "[3] project %s: history went back: was %s, now %s", id, historyString(old.History), historyString(p.History))
	}

	// Balances: initial minus the charge of every project that was ever
	// created and not refunded (refunds happen only when a first run ends
	// in error; a delete keeps what was charged or refunded).
	charged := map[string]int64{}
	for _, p := range st.Projects {
		if !p.Refunded {
			charged[p.APIKey] += p.CostMinutes
		}
	}
	for _, c := range l.order {
		if c.deleted && !c.refundedAtDelete {
			charged[c.acct] += c.cost
		}
	}
	seen := map[string]bool{}
	for _, a := range st.Accounts {
		init, ours := l.initial[a.APIKey]
		if !ours {
			continue
		}
		seen[a.APIKey] = true
		v.expect(a.InitialBalance == init, "[2] account %s: initial_balance_minutes %d, created with %d", a.APIKey, a.InitialBalance, init)
		v.expect(a.BalanceMinutes >= 0, "[2] account %s: negative balance %d", a.APIKey, a.BalanceMinutes)
		v.expect(a.BalanceMinutes == init-charged[a.APIKey],
			"[2] account %s: balance %d, expected %d = initial %d - charges %d of projects created and not refunded",
			a.APIKey, a.BalanceMinutes, init-charged[a.APIKey], init, charged[a.APIKey])
	}
	for _, k := range l.accts {
		v.expect(seen[k], "[2] account %s is missing from the state", k)
	}

	// The forced-outcome rule lost exactly one use per created project whose
	// URL matches it.
	used := 0
	for _, c := range l.order {
		if c.failURL && (c.state == acked || c.state == committed) {
			used++
		}
	}
	remaining := 0
	for _, r := range st.OutcomeRules {
		if r.ID == h.ruleID {
			remaining = r.Remaining
		}
	}
	v.expect(remaining == failRuleCount-used, "[2] outcome rule %s: remaining %d, expected %d - %d projects created with a failing URL = %d",
		h.ruleID, remaining, failRuleCount, used, failRuleCount-used)

	// Pending transitions are exactly the projects in progress.
	pending := map[string]time.Time{}
	for _, tr := range st.PendingTransitions {
		pending[tr.ID] = tr.DueAt
	}
	for _, p := range st.Projects {
		due, ok := pending[p.ID]
		v.expect(ok == (p.Status == "in_progress") && (!ok || (p.DueAt != nil && due.Equal(*p.DueAt))),
			"[3] project %s (%s, due %v): pending transition %v %v", p.ID, p.Status, p.DueAt, ok, due)
	}
	v.expect(len(pending) <= len(st.Projects), "[3] %d pending transitions for %d projects", len(pending), len(st.Projects))
	h.prev = cur
}

// checkObservations compares a project with what the client was told of it.
func (h *harness) checkObservations(v *violations, c *creation, p projectState) {
	if c.seenError {
		v.expect(p.Status == "error", "[3] project %s was seen in status error, the state has %s", p.ID, p.Status)
	}
	if len(c.seenCompleted) > 0 {
		done := map[string]bool{}
		for _, e := range p.History {
			if e.Kind == "completed" {
				done[platformTime(e.At)] = true
			}
		}
		for d := range c.seenCompleted {
			v.expect(done[d], "[3] project %s was seen ready with completion_date %s; no such completion in its history %s", p.ID, d, historyString(p.History))
		}
	}
	v.expect(p.TranslationsCount >= c.retransAcked && p.TranslationsCount <= c.retransAcked+c.retransInFlight,
		"[3] project %s: translations_count %d, %d re-translations acknowledged and %d unanswered", p.ID, p.TranslationsCount, c.retransAcked, c.retransInFlight)
	// The unanswered re-translations are now decided.
	c.retransAcked, c.retransInFlight = p.TranslationsCount, 0
}

func platformTime(t time.Time) string {
	return t.UTC().Truncate(time.Second).Format("2006-01-02T15:04:05Z")
}

func historyString(h []event) string {
	var b strings.Builder
	b.WriteString("[")
	for i, e := range h {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s@%s", e.Kind, e.At.UTC().Format("15:04:05.000000"))
	}
	b.WriteString("]")
	return b.String()
}

// checkProject checks one project's own consistency: status against due
// time, its history (each run ends once, nothing after the current time,
// events in time order), its counters and its refund.
func (h *harness) checkProject(v *violations, p projectState, now time.Time) {
	id := p.ID
	inProgress := p.Status == "in_progress"
	v.expect(slices.Contains([]string{"in_progress", "ready", "error"}, p.Status), "[3] project %s: status %q", id, p.Status)
	v.expect(inProgress == (p.DueAt != nil), "[3] project %s: status %s with due_at %v", id, p.Status, p.DueAt)
	v.expect(!p.RetranslationRun || inProgress, "[3] project %s: re-translation running in status %s", id, p.Status)
	v.expect(p.CostMinutes >= 1, "[3] project %s: cost_minutes %d", id, p.CostMinutes)
	hist := p.History
	if !v.expect(len(hist) > 0 && hist[0].Kind == "created" && hist[0].At.Equal(p.CreatedAt),
		"[3] project %s: history does not start with its creation at %s: %s", id, p.CreatedAt, historyString(hist)) {
		return
	}
	open := false // a run is processing
	var retrans, completions, failures, refunds int
	var last string // kind of the last run end
	for i, e := range hist {
		if i > 0 {
			v.expect(!e.At.Before(hist[i-1].At), "[3] project %s: history out of time order at event %d (%s): %s", id, i, e.Kind, historyString(hist))
		}
		v.expect(!e.At.Truncate(time.Millisecond).After(now), "[3] project %s: event %s at %s is after the current simulated time %s: %s",
			id, e.Kind, e.At.UTC().Format(time.RFC3339Nano), now.Format(time.RFC3339Nano), historyString(hist))
		switch e.Kind {
		case "created":
			v.expect(i == 0, "[3] project %s: second creation event: %s", id, historyString(hist))
			open = true
		case "retranslation_requested":
			v.expect(!open && last == "completed", "[3] project %s: re-translation requested while %s: %s", id, map[bool]string{true: "processing", false: "after " + last}[open], historyString(hist))
			open = true
			retrans++
		case "forced_outcome":
			v.expect(open, "[3] project %s: forced outcome outside a run: %s", id, historyString(hist))
		case "completed", "failed":
			v.expect(open, "[3] project %s: run ended twice (%s at event %d): %s", id, e.Kind, i, historyString(hist))
			open = false
			last = e.Kind
			if e.Kind == "completed" {
				completions++
			} else {
				failures++
				v.expect(completions == 0, "[3] project %s: a re-translation run failed (no failure is forced on re-translations): %s", id, historyString(hist))
			}
		case "refunded":
			v.expect(i > 0 && hist[i-1].Kind == "failed" && completions == 0, "[3] project %s: refund not right after the failure of the first run: %s", id, historyString(hist))
			refunds++
		default:
			v.expect(false, "[3] project %s: unknown event kind %q", id, e.Kind)
		}
	}
	v.expect(open == inProgress, "[3] project %s: status %s but history %s", id, p.Status, historyString(hist))
	if !inProgress {
		v.expect(last == map[string]string{"ready": "completed", "error": "failed"}[p.Status], "[3] project %s: status %s but last run ended %q: %s", id, p.Status, last, historyString(hist))
	}
	v.expect(p.TranslationsCount == retrans, "[3] project %s: translations_count %d, %d retranslation_requested events", id, p.TranslationsCount, retrans)
	v.expect(p.OutputGeneration == completions, "[3] project %s: output_generation %d, %d completed events", id, p.OutputGeneration, completions)
	v.expect(failures <= 1 && refunds == failures, "[3] project %s: %d failures and %d refunds: %s", id, failures, refunds, historyString(hist))
	v.expect(p.Refunded == (refunds == 1), "[3] project %s: refunded=%t with %d refunded events", id, p.Refunded, refunds)
	v.expect((p.Status == "error") == p.Refunded, "[3] project %s: status %s, refunded=%t (only a failed first run is refunded)", id, p.Status, p.Refunded)
	if p.Status == "error" {
		v.expect(p.ErrorMessage != "", "[3] project %s: error without error_message", id)
	}
	if p.Status == "ready" {
		var lastDone time.Time
		for _, e := range hist {
			if e.Kind == "completed" {
				lastDone = e.At
			}
		}
		v.expect(p.CompletedAt != nil && p.CompletedAt.Equal(lastDone), "[3] project %s: completed_at %v, last completion %s", id, p.CompletedAt, lastDone)
	}
}

// settled checks that nothing is left processing after a long advance.
func settled(v *violations, st *stateDump) {
	var stuck []string
	for _, p := range st.Projects {
		if p.Status == "in_progress" {
			stuck = append(stuck, p.ID+" due "+fmt.Sprint(p.DueAt))
		}
	}
	sort.Strings(stuck)
	v.expect(len(stuck) == 0, "[3] projects still in progress after the clock moved far ahead (lost transitions): %v", stuck)
	v.expect(len(st.PendingTransitions) == 0, "[3] %d pending transitions after the clock moved far ahead", len(st.PendingTransitions))
}
