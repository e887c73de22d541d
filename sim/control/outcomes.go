package control

import (
	"net/http"

	"github.com/dubsim/dubsim/sim"
	"github.com/go-chi/chi/v5"
)

type forceArtifactBody struct {
	Outcome         string   `json:"outcome"`
	ErrorMessage    string   `json:"error_message"`
	Size            *int64   `json:"size"`
	DurationSeconds *float64 `json:"duration_seconds"`
	Now             bool     `json:"now"`
}

func (a *API) forceArtifact(r *http.Request, b forceArtifactBody) (int, any, error) {
	if b.Outcome == "" {
		return 0, nil, sim.Errorf(sim.CodeValidation, sim.MsgRequired, "outcome")
	}
	if b.Size != nil && (*b.Size < 0 || *b.Size > sim.MaxArtifactBytes) {
		return 0, nil, sim.Errorf(sim.CodeValidation, msgArtifactSize, int64(sim.MaxArtifactBytes))
	}
	if d := b.DurationSeconds; d != nil && (*d < 0 || *d > sim.MaxSourceDuration.Seconds() || *d != *d) {
		return 0, nil, sim.Errorf(sim.CodeValidation, msgArtifactDuration, sim.MaxSourceDuration.Seconds())
	}
	art, err := a.ctl.ForceArtifact(r.Context(), chi.URLParam(r, "id"), b.Outcome, b.ErrorMessage, b.Size, b.DurationSeconds, b.Now)
	if err != nil {
		return 0, nil, err
	}
	out := map[string]any{"artifact_id": art.ID, "status": art.Status}
	if !art.DueAt.IsZero() {
		out["due_at"] = Time(art.DueAt)
		out["planned_outcome"] = b.Outcome
	}
	if art.ErrorMessage != "" {
		out["error_message"] = art.ErrorMessage
	}
	return http.StatusOK, out, nil
}

type videoStatusBody struct {
	Status string `json:"status"`
	Auto   bool   `json:"auto"`
}

func (a *API) videoStatus(r *http.Request, b videoStatusBody) (int, any, error) {
	if b.Status == "" {
		return 0, nil, sim.Errorf(sim.CodeValidation, sim.MsgRequired, "status")
	}
	v, err := a.ctl.SetVideoStatus(r.Context(), chi.URLParam(r, "id"), b.Status, b.Auto)
	if err != nil {
		return 0, nil, err
	}
	out := map[string]any{"video_id": v.ID, "status": v.Status}
	if !v.DueAt.IsZero() {
		out["next_transition_at"] = Time(v.DueAt)
	}
	return http.StatusOK, out, nil
}

type forceBody struct {
	Outcome      string `json:"outcome"`
	ErrorMessage string `json:"error_message"`
	Now          bool   `json:"now"`
}

func (a *API) forceProject(r *http.Request, b forceBody) (int, any, error) {
	if b.Outcome == "" {
		return 0, nil, sim.Errorf(sim.CodeValidation, sim.MsgRequired, "outcome")
	}
	p, err := a.ctl.ForceProject(r.Context(), chi.URLParam(r, "id"), b.Outcome, b.ErrorMessage, b.Now)
	if err != nil {
		return 0, nil, err
	}
	out := map[string]any{"project_id": p.ID, "status": p.Status}
	if !p.DueAt.IsZero() {
		out["due_at"] = Time(p.DueAt)
		out["planned_outcome"], _ = p.PlannedOutcome()
	}
	if p.ErrorMessage != "" {
		out["error_message"] = p.ErrorMessage
	}
	return http.StatusOK, out, nil
}

type outcomeBody struct {
	APIKey           string `json:"api_key"`
	SourceURLPattern string `json:"source_url_pattern"`
	Count            *int   `json:"count"`
	Outcome          string `json:"outcome"`
	ErrorMessage     string `json:"error_message"`
	Resource         string `json:"resource"`
}

func (a *API) addOutcome(r *http.Request, b outcomeBody) (int, any, error) {
	if b.Outcome == "" {
		return 0, nil, sim.Errorf(sim.CodeValidation, sim.MsgRequired, "outcome")
	}
	count := 1
	if b.Count != nil {
		count = *b.Count
	}
	rule, err := a.ctl.AddOutcomeRule(r.Context(), sim.OutcomeRule{APIKey: b.APIKey, SourceURLPattern: b.SourceURLPattern,
		Remaining: count, Outcome: b.Outcome, ErrorMessage: b.ErrorMessage, Resource: b.Resource})
	return http.StatusCreated, rule, err
}

func (a *API) handleListOutcomes(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	rules, err := a.ctl.OutcomeRules(r.Context())
	return http.StatusOK, map[string]any{"rules": rules}, err
}

func (a *API) handleRemoveOutcome(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	id := chi.URLParam(r, "id")
	return http.StatusOK, map[string]string{"removed": id}, a.ctl.RemoveOutcomeRule(r.Context(), id)
}
