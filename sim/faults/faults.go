package faults

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// Config wires a Faults to its environment. Every field is optional.
type Config struct {
	// Envelope renders the error body of the interface r belongs to, for
	// the error and rate_limit actions (default: DefaultEnvelope).
	Envelope func(r *http.Request, status int, errorName, message string) (contentType string, body []byte)
	Now      func() time.Time // the real time ttl_seconds is measured in
	// Sleep waits d or until ctx is done (default: Sleep).
	Sleep func(ctx context.Context, d time.Duration) error
	Seed  uint64 // of the probability and latency draws
	// OnFire is called on the request's goroutine each time a rule fires,
	// before its action runs.
	OnFire func(r *http.Request, ruleID string)
	// Exempt tells the requests the rules never apply to: the control
	// API's, so the faults can always be listed and removed (nil: none).
	Exempt func(r *http.Request) bool
}

// Faults holds the fault rules and applies them to requests.
type Faults struct {
	cfg Config

	mu     sync.Mutex
	rules  []*entry // in the order they were added
	nextID int      // generated ids are never reused, also after Clear
	endSeq uint64   // counts rules as they end
	nEnded int      // ended rules in rules
	bytes  int      // the sizes of the rules kept, live and ended
	rng    *rand.Rand

	truncBuffer int // MaxTruncateBuffer; tests lower it
}

type entry struct {
	rule      Rule
	hits      int64
	expiresAt time.Time // zero: never
	state     string
	ended     uint64 // the order in which it ended
	size      int    // its bytes as JSON, counted in MaxRuleBytes
}

// States of a rule as listed.
const (
	StateActive  = "active"
	StateSpent   = "spent"
	StateExpired = "expired"
)

// MaxEnded is how many ended (spent or expired) rules are kept listed; the
// oldest ended rule goes first.
const MaxEnded = 1000

// Bounds of one simulator's rules (every sandbox has its own Faults): a
// rule past either is refused with a ConflictError (409); the oldest ended
// rules give way first. Every request is compared with each live rule.
const (
	MaxLive      = 1000
	MaxRuleBytes = 256 << 10 // the rules kept, live and ended, as JSON
)

func (e *entry) live() bool { return e.state == StateActive }

func (e *entry) view() RuleView {
	v := RuleView{Rule: e.rule, Hits: e.hits, State: e.state}
	if v.Probability != nil {
		v.Probability = new(*v.Probability)
	}
	if e.rule.Count > 0 {
		v.Remaining = new(e.rule.Count - e.hits)
	}
	if !e.expiresAt.IsZero() {
		v.ExpiresAt = new(e.expiresAt.UTC().Format("2006-01-02T15:04:05.000Z"))
	}
	return v
}

// RuleView is a rule as List shows it: its fields, then remaining, hits,
// expires_at and state.
type RuleView struct {
	Rule
	Remaining *int64  `json:"remaining"` // nil: unlimited
	Hits      int64   `json:"hits"`
	ExpiresAt *string `json:"expires_at"` // UTC with milliseconds; nil: never
	State     string  `json:"state"`
}

// New returns an empty rule set.
func New(cfg Config) *Faults {
	if cfg.Envelope == nil {
		cfg.Envelope = DefaultEnvelope
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = Sleep
	}
	return &Faults{cfg: cfg, nextID: 1, rng: rand.New(rand.NewPCG(cfg.Seed, 0x9E3779B97F4A7C15)), truncBuffer: MaxTruncateBuffer}
}

// DefaultEnvelope renders {"error": errorName, "message": message}.
func DefaultEnvelope(_ *http.Request, _ int, errorName, message string) (string, []byte) {
	b, _ := json.Marshal(httpx.ControlEnvelope{Error: errorName, Message: message})
	return "application/json; charset=utf-8", append(b, '\n')
}

// Sleep waits d, or until ctx is done (then it returns ctx.Err()).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Add validates rule and appends it after the existing rules; the rule is
// returned as listed, with its id (generated as "flt_<n>" when empty).
func (f *Faults) Add(rule Rule) (RuleView, error) {
	if err := rule.Validate(); err != nil {
		return RuleView{}, err
	}
	e := &entry{rule: rule, state: StateActive}
	if rule.Probability != nil {
		e.rule.Probability = new(*rule.Probability)
	}
	now := f.lock()
	defer f.mu.Unlock()
	if e.rule.ID == "" {
		for e.rule.ID == "" || f.indexLocked(e.rule.ID) >= 0 {
			e.rule.ID = "flt_" + strconv.Itoa(f.nextID)
			f.nextID++
		}
	} else if i := f.indexLocked(e.rule.ID); i >= 0 {
		if f.rules[i].live() {
			return RuleView{}, validationErr(MsgIDTaken, e.rule.ID)
		}
		f.deleteLocked(i) // an ended rule's id is free again
	}
	if live := len(f.rules) - f.nEnded; live >= MaxLive {
		return RuleView{}, sim.Errorf(sim.CodeConflict, MsgTooManyRules, live)
	}
	b, _ := json.Marshal(e.rule)
	e.size = len(b)
	f.trimLocked(e.size)
	if f.bytes+e.size > MaxRuleBytes {
		return RuleView{}, sim.Errorf(sim.CodeConflict, MsgRulesTooLarge, f.bytes, e.size, MaxRuleBytes)
	}
	if rule.TTLSeconds > 0 {
		e.expiresAt = now.Add(time.Duration(math.Round(rule.TTLSeconds * float64(time.Second))))
	}
	f.rules = append(f.rules, e)
	f.bytes += e.size
	return e.view(), nil
}

// List returns the rules, live and ended, in evaluation order.
func (f *Faults) List() []RuleView {
	f.lock()
	defer f.mu.Unlock()
	out := make([]RuleView, 0, len(f.rules))
	for _, e := range f.rules {
		out = append(out, e.view())
	}
	return out
}

// Remove deletes the rule id, live or ended.
func (f *Faults) Remove(id string) error {
	f.lock()
	defer f.mu.Unlock()
	i := f.indexLocked(id)
	if i < 0 {
		return sim.Errorf(sim.CodeNotFound, MsgRuleNotFound, id)
	}
	f.deleteLocked(i)
	return nil
}

// Clear deletes every rule, live or ended, and returns how many live rules
// there were.
func (f *Faults) Clear() int {
	f.lock()
	defer f.mu.Unlock()
	n := len(f.rules) - f.nEnded
	f.rules, f.nEnded, f.bytes = nil, 0, 0
	return n
}

func (f *Faults) indexLocked(id string) int {
	return slices.IndexFunc(f.rules, func(e *entry) bool { return e.rule.ID == id })
}

func (f *Faults) deleteLocked(i int) {
	if !f.rules[i].live() {
		f.nEnded--
	}
	f.bytes -= f.rules[i].size
	f.rules = slices.Delete(f.rules, i, i+1)
}

// lock takes the lock, ends the rules expired by now and keeps at most
// MaxEnded ended rules (the oldest ended go first); it returns now.
func (f *Faults) lock() time.Time {
	f.mu.Lock()
	now := f.cfg.Now()
	for _, e := range f.rules {
		if e.live() && !e.expiresAt.IsZero() && !now.Before(e.expiresAt) {
			f.endLocked(e, StateExpired)
		}
	}
	f.trimLocked(0)
	return now
}

func (f *Faults) endLocked(e *entry, state string) {
	f.endSeq++
	e.state, e.ended = state, f.endSeq
	f.nEnded++
}

// trimLocked deletes the oldest ended rules past MaxEnded, and while the
// rules kept and room more bytes pass MaxRuleBytes.
func (f *Faults) trimLocked(room int) {
	for f.nEnded > MaxEnded || (f.nEnded > 0 && f.bytes+room > MaxRuleBytes) {
		oldest := -1
		for i, r := range f.rules {
			if !r.live() && (oldest < 0 || r.ended < f.rules[oldest].ended) {
				oldest = i
			}
		}
		if oldest < 0 {
			return
		}
		f.deleteLocked(oldest)
	}
}

// pick finds the rule that fires for r, consumes one unit of its count and
// draws its latency, all under the lock: two requests never both take the
// last unit, and the draws follow the seed in request order.
func (f *Faults) pick(r *http.Request) (id string, a Action, delay time.Duration, ok bool) {
	key, _ := httpx.Bearer(r.Header.Get("Authorization"))
	f.lock()
	defer f.mu.Unlock()
	for _, e := range f.rules {
		p := e.rule.Probability
		if !e.live() || !e.matches(r, key) || (p != nil && *p < 1 && !(f.rng.Float64() < *p)) {
			continue
		}
		e.hits++
		if e.rule.Count > 0 && e.hits >= e.rule.Count {
			f.endLocked(e, StateSpent)
			defer f.trimLocked(0)
		}
		if e.rule.Action.Type == ActionLatency {
			delay = f.drawLocked(e.rule.Action)
		}
		return e.rule.ID, e.rule.Action, delay, true
	}
	return "", Action{}, 0, false
}

func (e *entry) matches(r *http.Request, key string) bool {
	return (e.rule.Method == "" || e.rule.Method == r.Method) &&
		(e.rule.Path == "" || sim.GlobMatch(e.rule.Path, r.URL.Path)) &&
		(e.rule.APIKey == "" || e.rule.APIKey == key)
}

// drawLocked draws a latency; every draw is clamped to [0, MaxLatencyMS].
func (f *Faults) drawLocked(a Action) time.Duration {
	var ms float64
	switch a.Distribution {
	case "":
		ms = float64(a.LatencyMS)
	case DistUniform:
		ms = float64(a.MinMS + f.rng.Int64N(a.MaxMS-a.MinMS+1))
	case DistNormal:
		ms = float64(a.MeanMS) + float64(a.StddevMS)*f.rng.NormFloat64()
	case DistLognormal:
		ms = float64(a.MedianMS) * math.Exp(a.Sigma*f.rng.NormFloat64())
	}
	ms = math.Max(0, math.Min(ms, MaxLatencyMS))
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}
