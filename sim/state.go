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
	// Studio counts the studio records (companies, users, glossaries,
	// folders, studio_projects, videos, artifacts, uploads).
	Studio    map[string]int `json:"studio"`
	Truncated bool           `json:"truncated,omitempty"`
}

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
	Limit  int // projects at most; 0 = 1000
}
