package sim

import (
	"math"
	"time"
)

// Limits of the string fields of client requests (fidelity HB3 to HB5).
const (
	MaxURLBytes   = 8 << 10  // a URL or storage path: what common servers and proxies accept
	MaxEmailBytes = 254      // an email address (RFC 5321's longest path)
	MaxTextBytes  = 64 << 10 // any other string field of a studio JSON body
)

// NewProject is a validated Create Project request.
type NewProject struct {
	Name                 string
	SourceLang           string
	TargetLang           string
	SourceVideoURL       string
	MixingMode           string
	TTSVolume            string
	UseEmotionalTransfer bool
	UseSoundalike        bool
	UseFixedTimings      bool
	SourceScriptContent  *string
	SourceScript         []Segment // nil when absent
	GlossaryContent      *string
}

// SegmentInput is a script segment as a client sent it: absent fields are nil.
type SegmentInput struct {
	StartMS   *int64  `json:"start_ms"`
	EndMS     *int64  `json:"end_ms"`
	Text      *string `json:"text"`
	SpeakerID *int    `json:"speaker_id"`
}

// SpeakerInput is a target speaker as a client sent it.
type SpeakerInput struct {
	SpeakerID *int    `json:"speaker_id"`
	Style     *string `json:"style"`
	VoiceKey  *string `json:"voice_key"`
}

// RetranslationInput is a decoded re-translation (or validation) request.
type RetranslationInput struct {
	TargetScript    []SegmentInput `json:"target_script"`
	TargetSpeakers  []SpeakerInput `json:"target_speakers"`
	MixingMode      *string        `json:"mixing_mode"`
	UseFixedTimings *bool          `json:"use_fixed_timings"`
	TTSVolume       *string        `json:"tts_volume"`
}

// Receipt is the answer to a create or re-translate request.
type Receipt struct {
	ProjectID           string
	CostMinutes         int64
	EstimatedCompletion time.Time
	BalanceMinutes      int64
	TranslationsCount   int
}

// SourceInfo is what is known of a source video.
type SourceInfo struct {
	Duration time.Duration
	Origin   string // where the duration came from: OriginRule, OriginMedia or OriginDerived
	Fail     string // when set, processing ends in error with this message
}

// MaxSourceDuration is the longest source video accepted.
const MaxSourceDuration = 6 * time.Hour

// Duration origins.
const (
	OriginRule    = "rule"
	OriginMedia   = "media"
	OriginDerived = "derived"
)

// Timing is the processing-time model: a run takes Base plus PerMinute for
// every minute of source, pro rata.
type Timing struct {
	Base             time.Duration
	PerMinute        time.Duration
	RetransBase      time.Duration
	RetransPerMinute time.Duration
}

// DefaultTiming is the default processing-time model.
var DefaultTiming = Timing{Base: 60 * time.Second, PerMinute: 30 * time.Second, RetransBase: 30 * time.Second, RetransPerMinute: 10 * time.Second}

// Processing is how long the first run of a project takes.
func (t Timing) Processing(source time.Duration) time.Duration {
	return t.Base + time.Duration(source.Minutes()*float64(t.PerMinute))
}

// Retranslation is how long a re-translation run takes.
func (t Timing) Retranslation(source time.Duration) time.Duration {
	return t.RetransBase + time.Duration(source.Minutes()*float64(t.RetransPerMinute))
}

// CostMinutes is the charge for a source duration: whole minutes rounded up,
// at least one.
func CostMinutes(d time.Duration) int64 {
	return max(1, int64(math.Ceil(d.Minutes()-1e-9)))
}
