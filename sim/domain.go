package sim

import (
	"cmp"
	"slices"
	"time"
)

// Plan is an account's access tier.
type Plan string

// Plans in increasing order of access.
const (
	PlanNone         Plan = "none"
	PlanSubscription Plan = "subscription"
	PlanPro          Plan = "pro"
	PlanEnterprise   Plan = "enterprise"
)

// Plans lists the valid plans in increasing order.
var Plans = []Plan{PlanNone, PlanSubscription, PlanPro, PlanEnterprise}

// Rank orders plans; an invalid plan ranks -1.
func (p Plan) Rank() int { return slices.Index(Plans, p) }

// Valid reports whether p is a known plan.
func (p Plan) Valid() bool { return p.Rank() >= 0 }

// AtLeast reports whether p grants at least the access of q.
func (p Plan) AtLeast(q Plan) bool { return p.Rank() >= q.Rank() }

// Account is an API key with its plan, features and minute balance.
type Account struct {
	APIKey               string              `json:"api_key"`
	Name                 string              `json:"name"`
	Plan                 Plan                `json:"plan"`
	BalanceMinutes       int64               `json:"balance_minutes"`
	InitialBalance       int64               `json:"initial_balance_minutes"`
	RetranslationEnabled bool                `json:"retranslation_enabled"`
	CloningEnabled       bool                `json:"cloning_enabled"`
	Fixture              bool                `json:"fixture,omitempty"`
	CreatedAt            time.Time           `json:"created_at"`
	UserID               string              `json:"user_id,omitempty"`    // the studio user of the key
	Storage              *StorageCredentials `json:"storage,omitempty"`    // the key's external-bucket credentials
	RateLimit            *RateLimit          `json:"rate_limit,omitempty"` // of the key's studio requests; nil: none
}

// ProjectStatus is a platform project's status.
type ProjectStatus string

// Platform project statuses.
const (
	StatusInProgress ProjectStatus = "in_progress"
	StatusReady      ProjectStatus = "ready"
	StatusError      ProjectStatus = "error"
)

// Mixing modes, TTS volumes, voice styles and special voice keys.
const (
	MixVoiceoverOnly        = "voiceover_only"
	MixWithOriginalTrack    = "voiceover_with_original_track"
	MixWithoutOriginalVoice = "voiceover_without_original_voice"
	DefaultMixingMode       = MixWithOriginalTrack
	DefaultTTSVolume        = "normal"
	StyleMasculine          = "masculine"
	StyleFeminine           = "feminine"
	VoiceSoundalike         = "soundalike"
	VoiceEmotionalTransfer  = "emotional_transfer"
	IdempotencyWindow       = 24 * time.Hour // how long idempotency keys live in simulated time
)

// MixingModes and TTSVolumes are the documented enumerations.
var (
	MixingModes = []string{MixVoiceoverOnly, MixWithOriginalTrack, MixWithoutOriginalVoice}
	TTSVolumes  = []string{"very_quiet", "quieter", "normal", "louder", "very_loud"}
	Styles      = []string{StyleMasculine, StyleFeminine}
)

// Segment is one script segment. SpeakerID is 0 in source scripts given by a
// client.
type Segment struct {
	StartMS   int64  `json:"start_ms"`
	EndMS     int64  `json:"end_ms"`
	Text      string `json:"text"`
	SpeakerID int    `json:"speaker_id"`
}

// GlossaryTerm is a line of a project's glossary_content: a source term
// and the target term that translates it.
type GlossaryTerm struct {
	Source string `json:"source"`
	Target string `json:"target"`
}

// Speaker is a target speaker with its voice.
type Speaker struct {
	SpeakerID int    `json:"speaker_id"`
	Style     string `json:"style"`
	VoiceKey  string `json:"voice_key"`
}

// Outcome is how the current processing run of a project ends.
type Outcome struct {
	Error   bool   `json:"error,omitempty"`
	Message string `json:"message,omitempty"`
}

// PlannedOutcome is how the project's current run ends, "ready" or
// "error", and the error message then; "" when no run is pending.
func (p Project) PlannedOutcome() (outcome, message string) {
	if p.DueAt.IsZero() {
		return "", ""
	}
	if p.Outcome.Error {
		return string(StatusError), p.Outcome.Message
	}
	return string(StatusReady), ""
}

// Duration is the length of the project's source video.
func (p Project) Duration() time.Duration { return time.Duration(p.DurationMS) * time.Millisecond }

// Retranslation is a re-translation accepted but not yet applied.
type Retranslation struct {
	TargetScript    []Segment `json:"target_script"`
	TargetSpeakers  []Speaker `json:"target_speakers"`
	MixingMode      string    `json:"mixing_mode"`
	TTSVolume       string    `json:"tts_volume"`
	UseFixedTimings bool      `json:"use_fixed_timings"`
}

// Project is a platform dubbing project as stored.
type Project struct {
	ID                   string        `json:"id"`
	APIKey               string        `json:"api_key"`
	Name                 string        `json:"name"`
	SourceLang           string        `json:"source_lang"`
	TargetLang           string        `json:"target_lang"`
	SourceVideoURL       string        `json:"source_video_url"`
	MixingMode           string        `json:"mixing_mode"`
	TTSVolume            string        `json:"tts_volume"`
	UseSoundalike        bool          `json:"use_soundalike_voices,omitempty"`
	UseEmotionalTransfer bool          `json:"use_emotional_transfer,omitempty"`
	UseFixedTimings      bool          `json:"use_fixed_timings,omitempty"`
	HasGlossary          bool          `json:"has_glossary,omitempty"`
	DurationMS           int64         `json:"duration_ms"`
	DurationSource       string        `json:"duration_source"`
	CostMinutes          int64         `json:"cost_minutes"`
	Refunded             bool          `json:"refunded,omitempty"`
	Status               ProjectStatus `json:"status"`
	CreatedAt            time.Time     `json:"created_at"`
	DueAt                time.Time     `json:"due_at,omitzero"`
	CompletedAt          time.Time     `json:"completed_at,omitzero"`
	ErrorMessage         string        `json:"error_message,omitempty"`
	Outcome              Outcome       `json:"outcome"`
	TranslationsCount    int           `json:"translations_count"`
	OutputGen            int           `json:"output_gen"`
	// ScriptsPending: the scripts and speakers are produced when the first
	// run completes, as the real service transcribes while it processes;
	// until then ScriptInput keeps what the client gave.
	ScriptsPending bool           `json:"scripts_pending,omitempty"`
	ScriptInput    *ScriptInput   `json:"script_input,omitempty"`
	SourceScript   []Segment      `json:"source_script"`
	TargetScript   []Segment      `json:"target_script"`
	Speakers       []Speaker      `json:"speakers"`
	Pending        *Retranslation `json:"pending,omitempty"`
	History        []Event        `json:"history,omitempty"`
}

// ScriptInput is what a client gave at creation to make the scripts from.
type ScriptInput struct {
	SourceScript []Segment      `json:"source_script"`
	Utterances   []string       `json:"utterances"` // of source_script_content
	Glossary     []GlossaryTerm `json:"glossary,omitempty"`
}

// Event is one entry of a project's timeline, for the state dump and
// dashboard.
type Event struct {
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"`
	Message string    `json:"message,omitempty"`
	// EstimatedCompletion is the completion time promised when a run
	// started, kept after it ends.
	EstimatedCompletion time.Time `json:"estimated_completion,omitzero"`
}

// Event kinds.
const (
	EventCreated       = "created"
	EventCompleted     = "completed"
	EventFailed        = "failed"
	EventRetranslation = "retranslation_requested"
	EventRefunded      = "refunded"
)

// IdemRecord is a stored response for an idempotency key.
type IdemRecord struct {
	Fingerprint string `json:"fingerprint"`
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	Body        []byte `json:"body,omitempty"`
	// RecipeKind and Recipe replace Body for responses too large to store:
	// a replay regenerates the same bytes from them.
	RecipeKind string    `json:"recipe_kind,omitempty"`
	Recipe     []byte    `json:"recipe,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
}

// PlatformTime formats a platform timestamp: ISO 8601 UTC without
// milliseconds, as in the public docs ("2024-06-05T12:00:00Z").
func PlatformTime(t time.Time) string {
	return t.UTC().Truncate(time.Second).Format("2006-01-02T15:04:05Z")
}

// Forced outcomes a control-API rule can impose on new projects.
const (
	ForceError = "error"
	ForceReady = "ready"
)

// OutcomeRule forces the outcome of the next Remaining projects or artifacts
// of an account (or any) whose source matches a pattern (or any).
type OutcomeRule struct {
	ID               string    `json:"id"`
	APIKey           string    `json:"api_key,omitempty"`
	SourceURLPattern string    `json:"source_url_pattern,omitempty"`
	Remaining        int       `json:"remaining"`
	Outcome          string    `json:"outcome"`
	ErrorMessage     string    `json:"error_message,omitempty"`
	Resource         string    `json:"resource,omitempty"` // RuleProject (also when empty) or RuleArtifact
	CreatedAt        time.Time `json:"created_at"`
}

// Rule resources.
const (
	RuleProject  = "project"
	RuleArtifact = "artifact"
)

// Matches reports whether the rule applies to a new project.
func (r OutcomeRule) Matches(apiKey, sourceURL string) bool {
	return (r.Resource == "" || r.Resource == RuleProject) && r.matches(apiKey, sourceURL)
}

// MatchesArtifact reports whether the rule applies to a new artifact.
func (r OutcomeRule) MatchesArtifact(a Artifact) bool {
	ref := cmp.Or(a.SourceURL, a.SourcePath)
	if ref == "" && len(a.Fragments) > 0 {
		ref = a.Fragments[0].URL + a.Fragments[0].S3Path
	}
	return r.Resource == RuleArtifact && r.matches(a.APIKey, ref)
}

func (r OutcomeRule) matches(apiKey, ref string) bool {
	return r.Remaining > 0 && (r.APIKey == "" || r.APIKey == apiKey) &&
		(r.SourceURLPattern == "" || GlobMatch(r.SourceURLPattern, ref))
}

// DefaultForcedError is the error_message of a forced failure without one.
const DefaultForcedError = "Processing failed (forced by the dubsim control API)"
