package ui

import (
	"net/url"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/control"
)

// projectDetail is GET /_sim/projects/{id}: the state dump's project with
// its scripts, speakers, pending re-translation and audio address.
type projectDetail struct {
	ID                   string             `json:"id"`
	APIKey               string             `json:"api_key"`
	Name                 string             `json:"name"`
	Status               string             `json:"status"`
	SourceVideoURL       string             `json:"source_video_url"`
	SourceLang           string             `json:"source_lang"`
	TargetLang           string             `json:"target_lang"`
	MixingMode           string             `json:"mixing_mode"`
	TTSVolume            string             `json:"tts_volume"`
	UseSoundalike        bool               `json:"use_soundalike_voices"`
	UseEmotionalTransfer bool               `json:"use_emotional_transfer"`
	UseFixedTimings      bool               `json:"use_fixed_timings"`
	HasGlossary          bool               `json:"has_glossary"`
	DurationMS           int64              `json:"duration_ms"`
	DurationSource       string             `json:"duration_source"`
	CostMinutes          int64              `json:"cost_minutes"`
	Refunded             bool               `json:"refunded"`
	CreatedAt            string             `json:"created_at"`
	DueAt                string             `json:"due_at,omitempty"`
	CompletedAt          string             `json:"completed_at,omitempty"`
	ErrorMessage         string             `json:"error_message,omitempty"`
	PlannedOutcome       string             `json:"planned_outcome,omitempty"`
	PlannedError         string             `json:"planned_error_message,omitempty"`
	TranslationsCount    int                `json:"translations_count"`
	OutputGeneration     int                `json:"output_generation"`
	ScriptsPending       bool               `json:"scripts_pending,omitempty"`
	SourceScript         []sim.Segment      `json:"source_script"`
	TargetScript         []sim.Segment      `json:"target_script"`
	Speakers             []sim.Speaker      `json:"speakers"`
	PendingRetranslation *sim.Retranslation `json:"pending_retranslation,omitempty"`
	History              []eventJSON        `json:"history"`
	AudioURL             string             `json:"audio_url,omitempty"`
}

type eventJSON struct {
	At                  string `json:"at"`
	Kind                string `json:"kind"`
	Message             string `json:"message,omitempty"`
	EstimatedCompletion string `json:"estimated_completion,omitempty"`
}

func detailOf(p sim.Project, base string) projectDetail {
	d := projectDetail{ID: p.ID, APIKey: p.APIKey, Name: p.Name, Status: string(p.Status), SourceVideoURL: p.SourceVideoURL,
		SourceLang: p.SourceLang, TargetLang: p.TargetLang, MixingMode: p.MixingMode, TTSVolume: p.TTSVolume,
		UseSoundalike: p.UseSoundalike, UseEmotionalTransfer: p.UseEmotionalTransfer, UseFixedTimings: p.UseFixedTimings,
		HasGlossary: p.HasGlossary, DurationMS: p.DurationMS, DurationSource: p.DurationSource, CostMinutes: p.CostMinutes,
		Refunded: p.Refunded, CreatedAt: control.Time(p.CreatedAt), CompletedAt: timeOrEmpty(p.CompletedAt), ErrorMessage: p.ErrorMessage,
		TranslationsCount: p.TranslationsCount, OutputGeneration: p.OutputGen, ScriptsPending: p.ScriptsPending,
		SourceScript: orEmpty(p.SourceScript), TargetScript: orEmpty(p.TargetScript), Speakers: orEmpty(p.Speakers),
		PendingRetranslation: p.Pending, History: []eventJSON{}}
	if !p.DueAt.IsZero() {
		d.DueAt = control.Time(p.DueAt)
		d.PlannedOutcome, d.PlannedError = p.PlannedOutcome()
	}
	if p.Pending != nil {
		pr := *p.Pending
		pr.TargetScript, pr.TargetSpeakers = orEmpty(pr.TargetScript), orEmpty(pr.TargetSpeakers)
		d.PendingRetranslation = &pr
	}
	for _, e := range p.History {
		d.History = append(d.History, eventJSON{At: control.Time(e.At), Kind: e.Kind, Message: e.Message,
			EstimatedCompletion: timeOrEmpty(e.EstimatedCompletion)})
	}
	if hasOutput(p) {
		d.AudioURL = base + "/_sim/projects/" + url.PathEscape(p.ID) + "/audio.wav"
	}
	return d
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
