package studio

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/idempotency"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/go-chi/chi/v5"
)

// ----- artifacts -----

var artifactFields = []string{"name", "type", "s3Path", "url", "fragments"}

const maxFragments = 100

func (a *API) handleCreateArtifact(w http.ResponseWriter, r *http.Request) error {
	na, err := readObject(a, w, r, decodeArtifact, artifactFields...)
	if err != nil {
		return err
	}
	c := caller(r)
	render := func(art sim.Artifact) (int, any) { return a.created, viewArtifactCreated(art, c) }
	return create(w, r, render, func(idem *sim.IdemWrite[sim.Artifact]) (sim.Artifact, error) {
		return a.svc.CreateArtifact(r.Context(), c, na, idem)
	})
}

func decodeArtifact(o object) (sim.NewArtifact, error) {
	var na sim.NewArtifact
	name, err := o.name("name", true)
	if err != nil {
		return na, err
	}
	na.Name = *name
	typ, err := o.str("type")
	switch {
	case err != nil:
		return na, err
	case typ == nil:
		return na, invalid(sim.MsgRequired, "type")
	case *typ == "subtitles":
		return na, invalid(msgArtifactTypeSubtitles)
	case !slices.Contains(sim.ArtifactTypes, *typ):
		return na, invalid(msgArtifactType, *typ)
	}
	na.Type = *typ
	var sources []string
	for _, f := range []string{"s3Path", "url", "fragments"} {
		if o.given(f) {
			sources = append(sources, f)
		}
	}
	switch len(sources) {
	case 0:
		if o.given("fileName") {
			return na, invalid(msgArtifactSourceUpload)
		}
		return na, invalid(msgArtifactSourceMissing)
	case 1:
	default:
		return na, invalid(msgArtifactSources, strings.Join(sources, " and "))
	}
	switch src := sources[0]; src {
	case "s3Path", "url":
		check, dst := s3Path, &na.S3Path
		if src == "url" {
			check, dst = httpURL, &na.URL
		}
		v, err := o.str(src)
		if err != nil {
			return na, err
		}
		if err := check(src, *v); err != nil {
			return na, err
		}
		*dst = *v
	case "fragments":
		if na.Type == sim.ArtifactScript {
			return na, invalid(msgFragmentsScript)
		}
		if na.Fragments, err = decodeFragments(o); err != nil {
			return na, err
		}
	}
	return na, nil
}

func decodeFragments(o object) ([]sim.Fragment, error) {
	var raw []object
	if err := json.Unmarshal(o["fragments"], &raw); err != nil || raw == nil {
		return nil, invalid(msgFragments, abbreviate(o["fragments"]))
	}
	if len(raw) == 0 {
		return nil, invalid(msgNoFragments)
	}
	if len(raw) > maxFragments {
		return nil, invalid(msgTooManyFragments, maxFragments, len(raw))
	}
	out := make([]sim.Fragment, 0, len(raw))
	for i, f := range raw {
		field := fmt.Sprintf("fragments[%d]", i)
		if f == nil {
			return nil, invalid(msgFragmentNotObject, field)
		}
		var fr sim.Fragment
		switch {
		case f.given("url") && f.given("s3Path"):
			return nil, invalid(msgFragmentBothSources, field)
		case f.given("url") || f.given("s3Path"):
			src, msg, check, dst := "url", msgFragmentURL, httpURL, &fr.URL
			if !f.given("url") {
				src, msg, check, dst = "s3Path", msgFragmentS3Path, s3Path, &fr.S3Path
			}
			v, err := f.rawStr(src)
			if err != nil {
				return nil, invalid(msg, field)
			}
			if err := check(field+"."+src, *v); err != nil {
				return nil, err
			}
			*dst = *v
		default:
			return nil, invalid(msgFragmentNoSource, field)
		}
		if !f.given("startTime") {
			return nil, invalid(sim.MsgRequired, field+".startTime")
		}
		var st float64
		if err := json.Unmarshal(f["startTime"], &st); err != nil {
			return nil, invalid(msgFragmentStartTime, field, abbreviate(f["startTime"]))
		}
		if st < 0 {
			return nil, invalid(msgFragmentNegativeStart, field, st)
		}
		fr.StartTime = st
		out = append(out, fr)
	}
	return out, nil
}

func (a *API) handleGetArtifact(w http.ResponseWriter, r *http.Request) error {
	art, err := a.svc.Artifact(r.Context(), caller(r), chi.URLParam(r, "artifactId"))
	return writeOK(w, viewArtifact(art), err)
}

// ----- studio projects -----

var projectFields = []string{"name", "managerEmail", "translationsGlossaryId", "voicesGlossaryId", "pronunciationGlossaryId"}

func decodeNewProject(o object) (sim.StudioProjectInput, error)    { return decodeProject(o, true) }
func decodeProjectUpdate(o object) (sim.StudioProjectInput, error) { return decodeProject(o, false) }

// decodeProject decodes a project body; a create requires the name.
func decodeProject(o object, create bool) (sim.StudioProjectInput, error) {
	var in sim.StudioProjectInput
	var err error
	if in.Name, err = o.name("name", create); err != nil {
		return in, err
	}
	if in.ManagerEmail, err = o.str("managerEmail"); err != nil {
		return in, err
	}
	if in.ManagerEmail != nil {
		if err := checkBytes("managerEmail", *in.ManagerEmail, sim.MaxEmailBytes); err != nil {
			return in, err
		}
		if !strings.Contains(*in.ManagerEmail, "@") {
			return in, invalid(msgManagerEmail, *in.ManagerEmail)
		}
	}
	for _, g := range []struct {
		name string
		dst  **string
	}{{"translationsGlossaryId", &in.TranslationsGlossaryID}, {"voicesGlossaryId", &in.VoicesGlossaryID}, {"pronunciationGlossaryId", &in.PronunciationGlossaryID}} {
		if *g.dst, err = o.str(g.name); err != nil {
			return in, err
		}
	}
	if o.has("translationGlossaryId") && !o.has("translationsGlossaryId") {
		return in, invalid(msgTranslationGlossaryID)
	}
	return in, nil
}

func (a *API) handleListProjects(w http.ResponseWriter, r *http.Request) error {
	ps, err := a.svc.ListStudioProjects(r.Context(), caller(r))
	return writeOK(w, mapSlice(ps, func(p sim.StudioProject) projectView { return a.viewProject(r, p) }), err)
}

func (a *API) handleCreateProject(w http.ResponseWriter, r *http.Request) error {
	in, err := readObject(a, w, r, decodeNewProject, projectFields...)
	if err != nil {
		return err
	}
	render := func(p sim.StudioProject) (int, any) { return a.created, a.viewProject(r, p) }
	return create(w, r, render, func(idem *sim.IdemWrite[sim.StudioProject]) (sim.StudioProject, error) {
		return a.svc.CreateStudioProject(r.Context(), caller(r), in, idem)
	})
}

func (a *API) handleGetProject(w http.ResponseWriter, r *http.Request) error {
	p, err := a.svc.StudioProject(r.Context(), caller(r), chi.URLParam(r, "projectId"))
	return writeOK(w, a.viewProject(r, p), err)
}

func (a *API) handleUpdateProject(w http.ResponseWriter, r *http.Request) error {
	c := caller(r)
	id := chi.URLParam(r, "projectId")
	// A missing or foreign project is the answer whatever the body.
	if _, err := a.svc.StudioProject(r.Context(), c, id); err != nil {
		return err
	}
	in, err := readObject(a, w, r, decodeProjectUpdate, projectFields...)
	if err != nil {
		return err
	}
	if in == (sim.StudioProjectInput{}) {
		return invalid(sim.MsgNoValidFields)
	}
	p, err := a.svc.UpdateStudioProject(r.Context(), c, id, in)
	return writeOK(w, a.viewProject(r, p), err)
}

// ----- videos -----

var videoCreateFields = []string{"name", "workflowType", "sourceArtifactId", "sourceLanguage", "targetLanguages",
	"backgroundWavArtifactId", "internationalMixWavArtifactId", "vocalsHitlWavArtifactId", "remark", "stringVariables", "pipelineOptions"}

func decodeVideo(o object) (sim.NewVideo, error) {
	var nv sim.NewVideo
	name, err := o.name("name", true)
	if err != nil {
		return nv, err
	}
	nv.Name = *name
	wt, err := o.str("workflowType")
	switch {
	case err != nil:
		return nv, err
	case wt == nil && o.given("processingType"):
		return nv, invalid(msgProcessingTypeOnCreate)
	case wt == nil:
		return nv, invalid(sim.MsgRequired, "workflowType")
	case !slices.Contains(sim.WorkflowTypes, *wt):
		return nv, invalid(msgWorkflowType, strings.Join(sim.WorkflowTypes, ", "), *wt)
	}
	nv.WorkflowType = *wt
	if !o.given("sourceArtifactId") && o.given("originalVideoArtifactId") {
		return nv, invalid(msgOriginalVideoArtifactID)
	}
	if nv.SourceArtifactID, err = o.requiredStr("sourceArtifactId"); err != nil {
		return nv, err
	}
	src, err := o.requiredStr("sourceLanguage")
	if err != nil {
		return nv, err
	}
	if src != "multi" && !iso6391.MatchString(src) {
		return nv, invalid(msgSourceLanguage, src)
	}
	nv.SourceLanguage = src
	if !o.given("targetLanguages") {
		return nv, invalid(sim.MsgRequired, "targetLanguages")
	}
	if nv.TargetLanguages, err = o.langs("targetLanguages", bcp47, "es-ES"); err != nil {
		return nv, err
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"backgroundWavArtifactId", &nv.BackgroundArtifactID}, {"internationalMixWavArtifactId", &nv.InternationalMixArtifactID}, {"vocalsHitlWavArtifactId", &nv.VocalsHitlArtifactID}} {
		s, err := o.str(f.name)
		if err != nil {
			return nv, err
		}
		if s != nil {
			*f.dst = *s
		}
	}
	if nv.Remark, err = o.str("remark"); err != nil {
		return nv, err
	}
	if o.given("stringVariables") {
		if nv.StringVariables, err = o.stringVariables("stringVariables"); err != nil {
			return nv, err
		}
	}
	if o.given("pipelineOptions") {
		po, err := o.sub("pipelineOptions")
		if err != nil {
			return nv, err
		}
		var p sim.PipelineOptions
		for _, f := range []struct {
			name string
			dst  **bool
		}{{"shouldAutomateTranscription", &p.ShouldAutomateTranscription}, {"shouldAutomateTranslation", &p.ShouldAutomateTranslation}, {"shouldAutomateVoiceSelection", &p.ShouldAutomateVoiceSelection}} {
			if *f.dst, err = po.boolean(f.name); err != nil {
				return nv, invalid(msgPipelineOption, f.name)
			}
		}
		nv.Pipeline = &p
	}
	return nv, nil
}

func (a *API) handleCreateVideo(w http.ResponseWriter, r *http.Request) error {
	c := caller(r)
	pid := chi.URLParam(r, "projectId")
	if _, err := a.svc.StudioProject(r.Context(), c, pid); err != nil {
		return err
	}
	nv, err := readObject(a, w, r, decodeVideo, videoCreateFields...)
	if err != nil {
		return err
	}
	cat := a.svc.Catalog()
	if nv.SourceLanguage != "multi" && !cat.IsSourceLang(nv.SourceLanguage) {
		return invalid(msgSourceUnsupported, nv.SourceLanguage)
	}
	if err := supportedTargets(cat, "targetLanguages", nv.TargetLanguages); err != nil {
		return err
	}
	render := func(v sim.Video) (int, any) { return a.created, a.viewVideoCreated(r, v) }
	return create(w, r, render, func(idem *sim.IdemWrite[sim.Video]) (sim.Video, error) {
		return a.svc.CreateVideo(r.Context(), c, pid, nv, idem)
	})
}

// supportedTargets checks language codes against the target languages: a
// bare language code (dstLangs allows them) must be the language of one.
func supportedTargets(cat *sim.Catalog, field string, langs []string) error {
	for i, l := range langs {
		ok := cat.IsTargetLang(l)
		if !strings.Contains(l, "-") {
			ok = slices.ContainsFunc(cat.TargetLangs, func(t string) bool { return strings.HasPrefix(t, l+"-") })
		}
		if !ok {
			return invalid(msgTargetUnsupported, field, i, l)
		}
	}
	return nil
}

func (a *API) handleListVideos(w http.ResponseWriter, r *http.Request) error {
	vs, err := a.svc.ListVideos(r.Context(), caller(r), chi.URLParam(r, "projectId"))
	return writeOK(w, mapSlice(vs, func(v sim.Video) videoView { return a.viewVideo(r, v) }), err)
}

func (a *API) handleGetVideo(w http.ResponseWriter, r *http.Request) error {
	v, err := a.svc.Video(r.Context(), caller(r), chi.URLParam(r, "projectId"), chi.URLParam(r, "videoId"))
	return writeOK(w, a.viewVideo(r, v), err)
}

// Request field names of the video update; the last two take the names the
// responses use (docs/fidelity.md).
var videoUpdateFields = []string{"name", "dstLangs", "processingType", "status", "remark", "stringVariables", "translationGuidance"}

func (a *API) decodeVideoUpdate(o object) (sim.VideoUpdate, error) {
	var u sim.VideoUpdate
	var err error
	if u.Name, err = o.name("name", false); err != nil {
		return u, err
	}
	if o.given("dstLangs") {
		if u.DstLangs, err = o.langs("dstLangs", langTag, "es-ES or es"); err != nil {
			return u, err
		}
		u.HasDstLangs = true
	}
	for _, f := range []struct {
		name    string
		dst     **string
		allowed []string
	}{{"processingType", &u.ProcessingType, sim.ProcessingTypes}, {"status", &u.Status, sim.VideoStatuses}} {
		if *f.dst, err = o.str(f.name); err != nil {
			return u, err
		}
		if v := *f.dst; v != nil {
			if *v == "" {
				return u, invalid(msgNotEmpty, f.name)
			}
			if !a.laxEnums && !slices.Contains(f.allowed, *v) {
				return u, invalid(sim.MsgOneOf, f.name, strings.Join(f.allowed, ", "), *v)
			}
		}
	}
	if u.Remark, err = o.str("remark"); err != nil {
		return u, err
	}
	u.ClearRemark = o.isNull("remark")
	if o.has("stringVariables") {
		if u.StringVariables, err = o.stringVariables("stringVariables"); err != nil {
			return u, err
		}
		u.HasStringVariables = true
	}
	if o.has("translationGuidance") {
		u.HasGuidance = true
		if !o.isNull("translationGuidance") {
			g, err := decodeGuidance(o)
			if err != nil {
				return u, err
			}
			u.Guidance = g
		}
	}
	return u, nil
}

func decodeGuidance(o object) (*sim.Guidance, error) {
	sub, err := o.sub("translationGuidance")
	if err != nil {
		return nil, invalid(msgGuidance, abbreviate(o["translationGuidance"]))
	}
	var g sim.Guidance
	if g.Common, err = sub.rawStr("common"); err != nil {
		return nil, invalid(msgGuidanceCommon)
	}
	if g.Common != nil {
		if err := checkBytes("translationGuidance.common", *g.Common, sim.MaxTextBytes); err != nil {
			return nil, err
		}
	}
	if sub.given("byLang") {
		bl, err := sub.sub("byLang")
		if err != nil {
			return nil, invalid(msgGuidanceByLang, abbreviate(sub["byLang"]))
		}
		if len(bl) > 0 {
			g.ByLang = map[string]string{}
		}
		for k := range bl {
			s, err := bl.rawStr(k)
			if err != nil || s == nil {
				return nil, invalid(msgGuidanceByLangValue, k)
			}
			if err := checkBytes("translationGuidance.byLang."+k, *s, sim.MaxTextBytes); err != nil {
				return nil, err
			}
			g.ByLang[k] = *s
		}
	}
	if g.Common == nil && g.ByLang == nil {
		return nil, invalid(msgGuidanceEmpty)
	}
	return &g, nil
}

func videoUpdateEmpty(u sim.VideoUpdate) bool {
	return u.Name == nil && !u.HasDstLangs && u.ProcessingType == nil && u.Status == nil && u.Remark == nil && !u.ClearRemark &&
		!u.HasStringVariables && !u.HasGuidance
}

func (a *API) handleUpdateVideo(w http.ResponseWriter, r *http.Request) error {
	c := caller(r)
	pid, vid := chi.URLParam(r, "projectId"), chi.URLParam(r, "videoId")
	if _, err := a.svc.Video(r.Context(), c, pid, vid); err != nil {
		return err
	}
	u, err := readObject(a, w, r, a.decodeVideoUpdate, videoUpdateFields...)
	if err != nil {
		return err
	}
	if err := supportedTargets(a.svc.Catalog(), "dstLangs", u.DstLangs); err != nil {
		return err
	}
	if videoUpdateEmpty(u) {
		return invalid(sim.MsgNoValidFields)
	}
	v, err := a.svc.UpdateVideo(r.Context(), c, pid, vid, u)
	return writeOK(w, videoUpdated{videoView: a.viewVideo(r, v), TranslationGuidance: v.Guidance}, err)
}

// create answers a creation under the request's Idempotency-Key: render
// gives both the answer and the record a replay sends.
func create[T any](w http.ResponseWriter, r *http.Request, render func(T) (int, any), do func(*sim.IdemWrite[T]) (T, error)) error {
	v, err := idempotency.Write(r, render, do)
	if err != nil {
		return err
	}
	status, body := render(v)
	httpx.WriteJSON(w, status, body)
	return nil
}

func writeOK(w http.ResponseWriter, view any, err error) error {
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, view)
	return nil
}

func mapSlice[T, V any](in []T, f func(T) V) []V {
	out := make([]V, 0, len(in))
	for _, v := range in {
		out = append(out, f(v))
	}
	return out
}
