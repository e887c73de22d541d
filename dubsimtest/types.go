package dubsimtest

import (
	"encoding/json"
	"fmt"
	"time"
)

// The types of this file mirror the wire format of the control API
// (docs/openapi/control.json), not the simulator's packages: TestExportedAPI
// checks that no exported signature names another package of the module.

// State is the dump of GET /_sim/state.
type State struct {
	Now                time.Time      `json:"now"`
	TimeScale          float64        `json:"time_scale"`
	Frozen             bool           `json:"frozen"`
	Accounts           []StateAccount `json:"accounts"`
	Projects           []ProjectState `json:"projects"`
	PendingTransitions []Transition   `json:"pending_transitions"`
	OutcomeRules       []OutcomeRule  `json:"outcome_rules"`
	IdempotencyKeys    int            `json:"idempotency_keys"`
	Fixtures           map[string]int `json:"fixtures"`
	Studio             map[string]int `json:"studio"` // counts of the studio records
	// Truncated is true when a list was cut: more projects than the page
	// shows (NextCursor reads on), or more than 1000 accounts or pending
	// transitions (AccountsTotal, PendingTransitionsTotal count them all).
	Truncated               bool   `json:"truncated,omitempty"`
	NextCursor              string `json:"next_cursor,omitempty"`
	AccountsTotal           int    `json:"accounts_total,omitempty"`
	PendingTransitionsTotal int    `json:"pending_transitions_total,omitempty"`
}

// StateAccount is an account as the state dump shows it.
type StateAccount struct {
	APIKey                string              `json:"api_key"`
	Name                  string              `json:"name"`
	Plan                  string              `json:"plan"`
	BalanceMinutes        int64               `json:"balance_minutes"`
	InitialBalanceMinutes int64               `json:"initial_balance_minutes"`
	RetranslationEnabled  bool                `json:"retranslation_enabled"`
	CloningEnabled        bool                `json:"cloning_enabled"`
	Fixture               bool                `json:"fixture,omitempty"`
	CreatedAt             time.Time           `json:"created_at"`
	UserID                string              `json:"user_id,omitempty"`
	Storage               *StorageCredentials `json:"storage,omitempty"`
	RateLimit             *RateLimit          `json:"rate_limit,omitempty"`
}

// ProjectState is a platform project as the state dump shows it.
type ProjectState struct {
	ID                   string         `json:"id"`
	APIKey               string         `json:"api_key"`
	Name                 string         `json:"name"`
	Status               string         `json:"status"` // in_progress, ready, error
	SourceVideoURL       string         `json:"source_video_url"`
	SourceLang           string         `json:"source_lang"`
	TargetLang           string         `json:"target_lang"`
	DurationMS           int64          `json:"duration_ms"`
	DurationSource       string         `json:"duration_source"`
	CostMinutes          int64          `json:"cost_minutes"`
	Refunded             bool           `json:"refunded"`
	CreatedAt            time.Time      `json:"created_at"`
	DueAt                *time.Time     `json:"due_at,omitempty"`
	CompletedAt          *time.Time     `json:"completed_at,omitempty"`
	ErrorMessage         string         `json:"error_message,omitempty"`
	PlannedOutcome       string         `json:"planned_outcome,omitempty"`
	PlannedErrorMessage  string         `json:"planned_error_message,omitempty"`
	TranslationsCount    int            `json:"translations_count"`
	OutputGeneration     int            `json:"output_generation"`
	RetranslationRunning bool           `json:"retranslation_running"`
	History              []ProjectEvent `json:"history"`
}

// ProjectEvent is a step of a project's history.
type ProjectEvent struct {
	At                  time.Time `json:"at"`
	Kind                string    `json:"kind"`
	Message             string    `json:"message,omitempty"`
	EstimatedCompletion time.Time `json:"estimated_completion,omitzero"`
}

// Transition is a pending lifecycle transition.
type Transition struct {
	Resource string    `json:"resource"`
	ID       string    `json:"id"`
	From     string    `json:"from"`
	To       string    `json:"to"`
	DueAt    time.Time `json:"due_at"`
}

// OutcomeRule is a stored forced-outcome rule.
type OutcomeRule struct {
	ID               string    `json:"id"`
	APIKey           string    `json:"api_key,omitempty"`
	SourceURLPattern string    `json:"source_url_pattern,omitempty"`
	Remaining        int       `json:"remaining"`
	Outcome          string    `json:"outcome"`
	ErrorMessage     string    `json:"error_message,omitempty"`
	Resource         string    `json:"resource,omitempty"` // "project" (also when empty) or "artifact"
	CreatedAt        time.Time `json:"created_at"`
}

// StorageCredentials are a studio key's external-bucket credentials.
type StorageCredentials struct {
	AccessKeyID     string   `json:"access_key_id"`
	SecretAccessKey string   `json:"secret_access_key,omitempty"` // never shown back
	Region          string   `json:"region,omitempty"`
	Buckets         []string `json:"buckets,omitempty"` // empty: any bucket
}

// RateLimit is a studio key's request limit; a zero field is no limit.
type RateLimit struct {
	PerMinute int `json:"per_minute,omitempty"`
	PerDay    int `json:"per_day,omitempty"`
}

// FaultRule is an HTTP fault to add: requests that match Method, Path
// and APIKey (zero fields match anything) get Action instead of (or
// before) their answer.
type FaultRule struct {
	// ID is generated ("flt_<n>") when empty.
	ID string `json:"id"`
	// Method matches the request method exactly.
	Method string `json:"method,omitempty"`
	// Path is a glob over the URL path where * matches any run of
	// characters (also /).
	Path string `json:"path,omitempty"`
	// APIKey matches the key of "Authorization: Bearer <key>".
	APIKey string `json:"api_key,omitempty"`
	// Count is how many times the rule fires at most; 0 is unlimited.
	Count int64 `json:"count,omitempty"`
	// Probability is the chance that a matching request fires the rule,
	// in (0, 1]; 0 is 1 (always).
	Probability float64 `json:"probability,omitempty"`
	// TTLSeconds is the real time after which the rule expires; 0 is
	// never.
	TTLSeconds float64     `json:"ttl_seconds,omitempty"`
	Action     FaultAction `json:"action"`
}

// FaultAction is what a firing FaultRule does. Type is one of latency,
// error, rate_limit, drop, truncate (see /_sim/openapi.json); only the
// fields of that type may be set, and a zero field counts as absent.
type FaultAction struct {
	Type string `json:"type"`

	// latency: a fixed LatencyMS, or a Distribution (uniform: MinMS,
	// MaxMS; normal: MeanMS, StddevMS; lognormal: MedianMS, Sigma).
	LatencyMS    int64   `json:"latency_ms,omitempty"`
	Distribution string  `json:"distribution,omitempty"`
	MinMS        int64   `json:"min_ms,omitempty"`
	MaxMS        int64   `json:"max_ms,omitempty"`
	MeanMS       int64   `json:"mean_ms,omitempty"`
	StddevMS     int64   `json:"stddev_ms,omitempty"`
	MedianMS     int64   `json:"median_ms,omitempty"`
	Sigma        float64 `json:"sigma,omitempty"`

	// error: Status is required; Error and Message (also of rate_limit)
	// have defaults.
	Status  int    `json:"status,omitempty"`
	Error   string `json:"error,omitempty"`
	Message string `json:"message,omitempty"`

	// rate_limit: the Retry-After header value.
	RetryAfterSeconds int64 `json:"retry_after_seconds,omitempty"`

	// truncate: how many body bytes reach the client.
	Bytes int64 `json:"bytes,omitempty"`
}

// Match selects journal requests for JournalAPI.Verify and says how many
// it expects. Zero fields select everything.
type Match struct {
	Method       string            `json:"method,omitempty"`
	Path         string            `json:"path,omitempty"`          // exact, or a glob where * matches any run of characters
	APIKey       string            `json:"api_key,omitempty"`       // the key of "Authorization: Bearer <key>"
	Status       string            `json:"status,omitempty"`        // a code ("201", "0" for aborted) or a class ("4xx")
	BodyContains string            `json:"body_contains,omitempty"` // in the kept request body
	Headers      map[string]string `json:"headers,omitempty"`       // exact values; "" means absent
	// Times is how many matching requests are expected: Exactly(n),
	// AtLeast(n), AtMost(n), Between(lo, hi), or AnyTimes. The zero value
	// is AtLeast(1).
	Times Times `json:"-"`
}

// Times is how many requests a Match expects: a lower bound and an upper
// bound, or none. Make one with Exactly, AtLeast, AtMost or Between; the
// zero value is AtLeast(1), AnyTimes is AtLeast(0). A negative bound, or
// a lower bound above the upper, is refused by Verify (400
// ValidationError).
type Times struct {
	set     bool // false: the zero value, at least one
	exact   bool
	lo, hi  int
	bounded bool // hi is an upper bound
}

// AnyTimes expects any number of matching requests, also none: Verify
// then only counts.
var AnyTimes = AtLeast(0)

// Exactly expects n matching requests (Exactly(0): none).
func Exactly(n int) Times { return Times{set: true, exact: true, lo: n, hi: n, bounded: true} }

// AtLeast expects n or more matching requests.
func AtLeast(n int) Times { return Times{set: true, lo: n} }

// AtMost expects n or fewer matching requests.
func AtMost(n int) Times { return Times{set: true, hi: n, bounded: true} }

// Between expects from lo to hi matching requests, both included.
func Between(lo, hi int) Times { return Times{set: true, lo: lo, hi: hi, bounded: true} }

// String describes the expectation: "at least 1", "exactly 2", "0 to 3".
func (n Times) String() string {
	switch {
	case !n.set:
		return "at least 1"
	case n.exact:
		return fmt.Sprintf("exactly %d", n.lo)
	case !n.bounded:
		return fmt.Sprintf("at least %d", n.lo)
	case n.lo == 0:
		return fmt.Sprintf("at most %d", n.hi)
	}
	return fmt.Sprintf("%d to %d", n.lo, n.hi)
}

// MarshalJSON writes the matcher of POST /_sim/requests/verify.
func (m Match) MarshalJSON() ([]byte, error) {
	type fields Match // without this method
	w := struct {
		fields
		Count   *int `json:"count,omitempty"`
		AtLeast *int `json:"at_least,omitempty"`
		AtMost  *int `json:"at_most,omitempty"`
	}{fields: fields(m)}
	n := m.Times
	switch {
	case !n.set: // the server's default: at least one
	case n.exact:
		w.Count = &n.lo
	default:
		w.AtLeast = &n.lo
		if n.bounded {
			w.AtMost = &n.hi
		}
	}
	return json.Marshal(w)
}

// Report is the conformance report of one API key; Text renders it for a
// person (a test failure message, say).
type Report struct {
	APIKey      string        `json:"api_key"`
	GeneratedAt string        `json:"generated_at"`
	Summary     ReportSummary `json:"summary"`
	Findings    []Finding     `json:"findings"`
}

// ReportSummary describes the requests a Report analysed.
type ReportSummary struct {
	Requests      int            `json:"requests"`
	FirstSeq      uint64         `json:"first_seq,omitempty"`
	LastSeq       uint64         `json:"last_seq,omitempty"`
	ByEndpoint    map[string]int `json:"by_endpoint"`     // "GET /api/v1/projects/{project_id}": n
	ByStatusClass map[string]int `json:"by_status_class"` // "2xx", "4xx", "aborted"
	Findings      int            `json:"findings"`
	Errors        int            `json:"errors"`
	Warnings      int            `json:"warnings"`
	// JournalDropped counts requests (of every key) the journal no longer
	// holds; when it is not 0 the report covers only the recent ones.
	JournalDropped uint64 `json:"journal_dropped"`
}

// Finding is one rule the client broke, with how often and examples.
type Finding struct {
	Rule     string           `json:"rule"`
	Severity string           `json:"severity"`
	Title    string           `json:"title"`
	Detail   string           `json:"detail"`   // the rule and why it matters for the real service
	Observed string           `json:"observed"` // what this client did, in figures
	Count    int              `json:"count"`
	Examples []FindingExample `json:"examples"`
}

// FindingExample is one request that broke a rule.
type FindingExample struct {
	Seq     uint64 `json:"seq"`
	Time    string `json:"time"`
	SimTime string `json:"sim_time,omitempty"`
	Method  string `json:"method"`
	Path    string `json:"path"`
	Status  int    `json:"status"`
	Excerpt string `json:"excerpt"`
}
