package faults

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// Config wires a Faults to its environment. Every field is optional.
type Config struct {
	// Envelope renders the error body of the interface r belongs to, for
	// the error and rate_limit actions. The default renders
	// {"error": errorName, "message": message} as application/json.
	Envelope func(r *http.Request, status int, errorName, message string) (contentType string, body []byte)
	// Now tells the real time that ttl_seconds is measured in (time.Now by
	// default).
	Now func() time.Time
	// Sleep waits d or until ctx is done, whichever comes first, and returns
	// ctx.Err() in the second case. The default uses a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Seed seeds the random source of probability and latency draws: the
	// same seed and the same sequence of requests give the same faults.
	Seed uint64
	// OnFire is called synchronously, on the request's goroutine, each time
	// a rule fires, before its action runs (before the latency wait, before
	// the connection is dropped).
	OnFire func(r *http.Request, ruleID string)
}

// Faults holds the fault rules and applies them to requests.
type Faults struct {
	cfg Config

	mu     sync.Mutex
	rules  []*entry // in the order they were added
	nextID int      // generated ids are never reused, also after Clear
	rng    *rand.Rand

	truncBuffer int // MaxTruncateBuffer; tests lower it
}

type entry struct {
	rule      Rule
	prob      float64
	hits      int64
	expiresAt time.Time // zero: never
}

func (e *entry) expired(now time.Time) bool {
	return !e.expiresAt.IsZero() && !now.Before(e.expiresAt)
}

func (e *entry) view() RuleView {
	v := RuleView{Rule: e.rule, Hits: e.hits}
	if v.Probability != nil {
		p := *v.Probability
		v.Probability = &p
	}
	if e.rule.Count > 0 {
		rem := e.rule.Count - e.hits
		v.Remaining = &rem
	}
	if !e.expiresAt.IsZero() {
		t := e.expiresAt
		v.ExpiresAt = &t
	}
	return v
}

// RuleView is a rule as List shows it.
type RuleView struct {
	Rule
	// Remaining is how many more times the rule may fire; nil when its
	// count is unlimited.
	Remaining *int64
	// Hits is how many times the rule fired.
	Hits int64
	// ExpiresAt is when the rule expires; nil when it never does.
	ExpiresAt *time.Time
}

// MarshalJSON renders the rule's fields followed by "remaining" (null when
// unlimited), "hits" and "expires_at" (ISO 8601 UTC with milliseconds, null
// when the rule never expires).
func (v RuleView) MarshalJSON() ([]byte, error) {
	var exp *string
	if v.ExpiresAt != nil {
		s := v.ExpiresAt.UTC().Format("2006-01-02T15:04:05.000Z")
		exp = &s
	}
	return json.Marshal(struct {
		Rule
		Remaining *int64  `json:"remaining"`
		Hits      int64   `json:"hits"`
		ExpiresAt *string `json:"expires_at"`
	}{v.Rule, v.Remaining, v.Hits, exp})
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
	b, _ := json.Marshal(struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}{errorName, message})
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

// Add validates rule and appends it after the existing rules. The rule is
// returned with its id (generated as "flt_<n>" when empty). An invalid
// rule or an id already in use is a *sim.Error with sim.CodeValidation.
func (f *Faults) Add(rule Rule) (Rule, error) {
	v, err := f.add(rule)
	return v.Rule, err
}

func (f *Faults) add(rule Rule) (RuleView, error) {
	if err := rule.Validate(); err != nil {
		return RuleView{}, err
	}
	e := &entry{rule: rule, prob: 1}
	if rule.Probability != nil {
		p := *rule.Probability
		e.rule.Probability, e.prob = &p, p
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.cfg.Now()
	f.purgeLocked(now)
	if e.rule.ID == "" {
		for e.rule.ID == "" || f.indexLocked(e.rule.ID) >= 0 {
			e.rule.ID = "flt_" + strconv.Itoa(f.nextID)
			f.nextID++
		}
	} else if f.indexLocked(e.rule.ID) >= 0 {
		return RuleView{}, validationErr(MsgIDTaken, e.rule.ID)
	}
	if rule.TTLSeconds > 0 {
		e.expiresAt = now.Add(time.Duration(math.Round(rule.TTLSeconds * float64(time.Second))))
	}
	f.rules = append(f.rules, e)
	return e.view(), nil
}

// List returns the live rules in evaluation order. Expired and exhausted
// rules are gone: they are deleted when they expire or fire their last time.
func (f *Faults) List() []RuleView {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.purgeLocked(f.cfg.Now())
	out := make([]RuleView, 0, len(f.rules))
	for _, e := range f.rules {
		out = append(out, e.view())
	}
	return out
}

// Remove deletes the rule id; an unknown (or expired, or exhausted) id is a
// *sim.Error with sim.CodeNotFound.
func (f *Faults) Remove(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.purgeLocked(f.cfg.Now())
	i := f.indexLocked(id)
	if i < 0 {
		return sim.Errorf(sim.CodeNotFound, MsgRuleNotFound, id)
	}
	f.deleteLocked(i)
	return nil
}

// Clear deletes every rule and returns how many live rules there were.
func (f *Faults) Clear() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.purgeLocked(f.cfg.Now())
	n := len(f.rules)
	f.rules = nil
	return n
}

func (f *Faults) indexLocked(id string) int {
	for i, e := range f.rules {
		if e.rule.ID == id {
			return i
		}
	}
	return -1
}

func (f *Faults) deleteLocked(i int) {
	copy(f.rules[i:], f.rules[i+1:])
	f.rules[len(f.rules)-1] = nil
	f.rules = f.rules[:len(f.rules)-1]
}

func (f *Faults) purgeLocked(now time.Time) {
	for i := 0; i < len(f.rules); {
		if f.rules[i].expired(now) {
			f.deleteLocked(i)
			continue
		}
		i++
	}
}

// firing is what the middleware does for one request: the rule's id and
// action, and the latency drawn for it.
type firing struct {
	id     string
	action Action
	delay  time.Duration
}

// pick finds the rule that fires for r, consumes one unit of its count and
// draws its latency, all under the lock: two requests never both take the
// last unit, and the draws follow the seed in request order.
func (f *Faults) pick(r *http.Request) (firing, bool) {
	key := bearerKey(r.Header.Get("Authorization"))
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.cfg.Now()
	for i := 0; i < len(f.rules); {
		e := f.rules[i]
		if e.expired(now) {
			f.deleteLocked(i)
			continue
		}
		if !e.matches(r, key) || (e.prob < 1 && !(f.rng.Float64() < e.prob)) {
			i++
			continue
		}
		e.hits++
		if e.rule.Count > 0 && e.hits >= e.rule.Count {
			f.deleteLocked(i)
		}
		fx := firing{id: e.rule.ID, action: e.rule.Action}
		if fx.action.Type == ActionLatency {
			fx.delay = f.drawLocked(fx.action)
		}
		return fx, true
	}
	return firing{}, false
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

// bearerKey returns the key of "Authorization: Bearer <key>" (the scheme is
// case-insensitive), or "".
func bearerKey(h string) string {
	scheme, rest, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(rest)
}
