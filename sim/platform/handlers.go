package platform

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/idempotency"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/go-chi/chi/v5"
)

func (a *API) handleBalance(w http.ResponseWriter, r *http.Request) error {
	httpx.WriteJSON(w, http.StatusOK, struct {
		BalanceMinutes int64 `json:"balance_minutes"`
	}{account(r).BalanceMinutes})
	return nil
}

// catalogBodies are the options and voices answers of one catalogue,
// encoded once: only a fixture load changes them.
type catalogBodies struct {
	cat             *sim.Catalog
	options, voices []byte
}

func (a *API) catalogBodies() *catalogBodies {
	cat := a.svc.Catalog()
	if c := a.catalog.Load(); c != nil && c.cat == cat {
		return c
	}
	c := &catalogBodies{cat: cat}
	var err1, err2 error
	c.options, err1 = json.Marshal(map[string][]string{"source_langs": cat.SourceLangs, "target_langs": cat.TargetLangs})
	c.voices, err2 = json.Marshal(map[string]any{"voices": cat.Voices})
	if err := errors.Join(err1, err2); err != nil {
		panic(err) // plain strings always encode
	}
	a.catalog.Store(c)
	return c
}

func (a *API) handleOptions(w http.ResponseWriter, r *http.Request) error {
	httpx.WriteRawJSON(w, http.StatusOK, a.catalogBodies().options)
	return nil
}

func (a *API) handleVoices(w http.ResponseWriter, r *http.Request) error {
	httpx.WriteRawJSON(w, http.StatusOK, a.catalogBodies().voices)
	return nil
}

type receiptResponse struct {
	ProjectID               string `json:"project_id"`
	CostMinutes             int64  `json:"cost_minutes"`
	EstimatedCompletionDate string `json:"estimated_completion_date"`
	BalanceMinutes          int64  `json:"balance_minutes"`
	TranslationsCount       int    `json:"translations_count"`
}

func receipt(rc sim.Receipt) receiptResponse {
	return receiptResponse{
		ProjectID: rc.ProjectID, CostMinutes: rc.CostMinutes,
		EstimatedCompletionDate: sim.PlatformTime(rc.EstimatedCompletion),
		BalanceMinutes:          rc.BalanceMinutes, TranslationsCount: rc.TranslationsCount,
	}
}

func (a *API) handleCreateProject(w http.ResponseWriter, r *http.Request) error {
	var body createProjectBody
	if err := a.dec.Decode(w, r, &body); err != nil {
		return err
	}
	np, err := a.toNewProject(body)
	if err != nil {
		return err
	}
	rc, err := idempotency.Write(r, a.renderReceipt, func(idem *sim.IdemWrite[sim.Receipt]) (sim.Receipt, error) {
		return a.svc.CreateProject(r.Context(), account(r).APIKey, np, idem)
	})
	return a.writeReceipt(w, rc, err)
}

// renderReceipt is the answer of a create or re-translation, and its
// idempotency record.
func (a *API) renderReceipt(rc sim.Receipt) (int, any) { return a.created, receipt(rc) }

func (a *API) writeReceipt(w http.ResponseWriter, rc sim.Receipt, err error) error {
	if err != nil {
		return err
	}
	status, view := a.renderReceipt(rc)
	httpx.WriteJSON(w, status, view)
	return nil
}

// projectView is Get Project: the fields present depend on the status, and
// absent ones are left out (never null).
type projectView struct {
	Name                    string         `json:"name"`
	SourceLang              string         `json:"source_lang"`
	TargetLang              string         `json:"target_lang"`
	MixingMode              string         `json:"mixing_mode"`
	CostMinutes             int64          `json:"cost_minutes"`
	CreatedDate             string         `json:"created_date"`
	Status                  string         `json:"status"`
	CompletionDate          string         `json:"completion_date,omitempty"`
	OutputVideoURL          string         `json:"output_video_url,omitempty"`
	OutputTTSAudioURL       string         `json:"output_tts_audio_url,omitempty"`
	OutputSourceScript      *[]sim.Segment `json:"output_source_script,omitempty"`
	OutputTargetScript      *[]sim.Segment `json:"output_target_script,omitempty"`
	OutputTargetSpeakers    *[]sim.Speaker `json:"output_target_speakers,omitempty"`
	EstimatedCompletionDate string         `json:"estimated_completion_date,omitempty"`
	ErrorMessage            string         `json:"error_message,omitempty"`
}

func nonNil[T any](s []T) *[]T {
	if s == nil {
		s = []T{}
	}
	return &s
}

// view is the Get Project view of p; base is the download URLs' base.
func (a *API) view(base string, p sim.Project) projectView {
	v := projectView{
		Name: p.Name, SourceLang: p.SourceLang, TargetLang: p.TargetLang, MixingMode: p.MixingMode,
		CostMinutes: p.CostMinutes, CreatedDate: sim.PlatformTime(p.CreatedAt), Status: string(p.Status),
	}
	switch p.Status {
	case sim.StatusInProgress:
		v.EstimatedCompletionDate = sim.PlatformTime(p.DueAt)
	case sim.StatusReady:
		v.CompletionDate = sim.PlatformTime(p.CompletedAt)
		v.OutputVideoURL = a.fileURL(base, p, fileVideo)
		v.OutputTTSAudioURL = a.fileURL(base, p, fileAudio)
		v.OutputSourceScript = nonNil(p.SourceScript)
		v.OutputTargetScript = nonNil(p.TargetScript)
		v.OutputTargetSpeakers = nonNil(p.Speakers)
	case sim.StatusError:
		v.ErrorMessage = p.ErrorMessage
	}
	return v
}

func (a *API) handleGetProject(w http.ResponseWriter, r *http.Request) error {
	return a.writeProject(w, r, account(r).APIKey, chi.URLParam(r, "project_id"))
}

func (a *API) handleDeleteProject(w http.ResponseWriter, r *http.Request) error {
	if err := a.svc.DeleteProject(r.Context(), account(r).APIKey, chi.URLParam(r, "project_id")); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]bool{"success": true})
	return nil
}

func (a *API) retranslation(w http.ResponseWriter, r *http.Request, dryRun bool) (sim.Receipt, error) {
	var in sim.RetranslationInput
	if err := a.dec.Decode(w, r, &in); err != nil {
		return sim.Receipt{}, err
	}
	key, id := account(r).APIKey, chi.URLParam(r, "project_id")
	if dryRun {
		return a.svc.Retranslate(r.Context(), key, id, in, true, nil)
	}
	return idempotency.Write(r, a.renderReceipt, func(idem *sim.IdemWrite[sim.Receipt]) (sim.Receipt, error) {
		return a.svc.Retranslate(r.Context(), key, id, in, false, idem)
	})
}

func (a *API) handleRetranslate(w http.ResponseWriter, r *http.Request) error {
	rc, err := a.retranslation(w, r, false)
	return a.writeReceipt(w, rc, err)
}

func (a *API) handleValidateRetranslation(w http.ResponseWriter, r *http.Request) error {
	if _, err := a.retranslation(w, r, true); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]bool{"valid": true})
	return nil
}
