package sim

import "time"

// State is a readable dump of the simulator's state.
type State struct {
	Now                string         `json:"now"`
	TimeScale          float64        `json:"time_scale"`
	Frozen             bool           `json:"frozen"`
	Accounts           []Account      `json:"accounts"`
	Projects           []ProjectState `json:"projects"`
	PendingTransitions []Transition   `json:"pending_transitions"`
	OutcomeRules       []OutcomeRule  `json:"outcome_rules"`
	IdempotencyKeys    int            `json:"idempotency_keys"`
	Fixtures           map[string]int `json:"fixtures"`
	Studio             map[string]int `json:"studio"` // counts of the studio records
	// Truncated is true when any list of the dump was cut.
	Truncated  bool   `json:"truncated,omitempty"`
	NextCursor string `json:"next_cursor,omitempty"` // when more projects remain
	// AccountsTotal and PendingTransitionsTotal count a list cut to its
	// first MaxStateList entries.
	AccountsTotal           int `json:"accounts_total,omitempty"`
	PendingTransitionsTotal int `json:"pending_transitions_total,omitempty"`
}

// MsgStateCursor refuses a cursor= the dump did not give.
const MsgStateCursor = "cursor %q is not a next_cursor of the state dump"

// Bounds of the state and studio dumps: a dump's memory follows these, not
// the store's size.
const (
	DefaultStateLimit = 1000 // projects in a page without limit=
	MaxStateLimit     = 1000 // a larger limit= is clamped to it
	MaxStateList      = 1000 // accounts, pending transitions, each list of the studio dump
)

// ProjectState is a project as the state dump shows it.
type ProjectState struct {
	ID                string     `json:"id"`
	APIKey            string     `json:"api_key"`
	Name              string     `json:"name"`
	Status            string     `json:"status"`
	SourceVideoURL    string     `json:"source_video_url"`
	SourceLang        string     `json:"source_lang"`
	TargetLang        string     `json:"target_lang"`
	DurationMS        int64      `json:"duration_ms"`
	DurationSource    string     `json:"duration_source"`
	CostMinutes       int64      `json:"cost_minutes"`
	Refunded          bool       `json:"refunded"`
	CreatedAt         time.Time  `json:"created_at"`
	DueAt             *time.Time `json:"due_at,omitempty"`
	CompletedAt       *time.Time `json:"completed_at,omitempty"`
	ErrorMessage      string     `json:"error_message,omitempty"`
	PlannedOutcome    string     `json:"planned_outcome,omitempty"`
	PlannedError      string     `json:"planned_error_message,omitempty"`
	TranslationsCount int        `json:"translations_count"`
	OutputGeneration  int        `json:"output_generation"`
	RetranslationRun  bool       `json:"retranslation_running"`
	History           []Event    `json:"history"`
}

// Transition is a pending lifecycle transition.
type Transition struct {
	Resource string    `json:"resource"`
	ID       string    `json:"id"`
	From     string    `json:"from"`
	To       string    `json:"to"`
	DueAt    time.Time `json:"due_at"`
}

// StateFilter narrows the dump.
type StateFilter struct {
	APIKey string
	Limit  int    // projects at most; 0 = DefaultStateLimit, clamped to MaxStateLimit
	Cursor string // a NextCursor of an earlier page
}
