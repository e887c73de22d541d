package parity

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Interfaces of a step.
const (
	ifacePlatform = "platform"
	ifaceStudio   = "studio"
	ifaceControl  = "control"
	// ifaceUpload is a presigned upload: a studio step whose URL comes from
	// a variable (on dubsim /_uploads/..., on the real service another host).
	ifaceUpload = "upload"
)

// Values the scenario sends.
const (
	// Name is the name of everything the kit creates, so that a user of the
	// real service can find (and remove) it.
	Name = "dubsim parity"
	// InvalidKey is the key of the bad-key steps.
	InvalidKey = "dubsim-parity-invalid-key"
	// UploadFileName is the file name of the presigned upload.
	UploadFileName = "dubsim-parity.wav"
	// unknownPlatformID and unknownStudioID are well-formed ids of nothing.
	unknownPlatformID = "000000000"
	unknownStudioID   = "000000000000000000000000"
)

// step is one request of the scenario.
type step struct {
	name   string
	iface  string
	method string
	// path is the template; {name} is replaced by params[name], else by the
	// variable name (escaped).
	path   string
	params map[string]string
	query  func(r *runner) url.Values
	// urlVar names the variable holding the whole URL (ifaceUpload).
	urlVar string
	// body returns the request body and its media type; an error skips the
	// step.
	body func(r *runner) ([]byte, string, error)
	// key replaces the API key (the bad-key steps).
	key string
	// ambiguous marks the operations both interfaces have on one method
	// and path: on a shared address they carry HeaderInterface.
	ambiguous bool
	expect    []int
	any4xx    bool // any 4xx status is accepted (and recorded)
	// needs lists the variables the step cannot run without.
	needs []string
	poll  *poll
	// after reads variables from a 2xx answer.
	after func(r *runner, body []byte) error
}

// poll describes a wait for a final status.
type poll struct {
	what     string // "project", "artifact"
	field    string // the status field
	final    []string
	want     string // the final status the scenario needs
	errField string // the field explaining a failure
}

func (s step) accepts(status int) bool {
	return (s.any4xx && status/100 == 4) || slices.Contains(s.expect, status)
}

func (s step) expected() string {
	var parts []string
	for _, x := range s.expect {
		parts = append(parts, fmt.Sprint(x))
	}
	if s.any4xx {
		parts = append(parts, "4xx")
	}
	return strings.Join(parts, " or ")
}

// created is the status of a successful creation: the provider's is not
// documented, dubsim's is 200 or 201 (--create-status).
var (
	created  = []int{http.StatusOK, http.StatusCreated}
	statusOK = []int{http.StatusOK}
)

func jsonBody(v any) func(r *runner) ([]byte, string, error) {
	return func(*runner) ([]byte, string, error) {
		b, err := json.Marshal(v)
		return b, "application/json", err
	}
}

func rawBody(s string) func(r *runner) ([]byte, string, error) {
	return func(*runner) ([]byte, string, error) { return []byte(s), "application/json", nil }
}

// setVars reads top-level string fields of a JSON object into variables
// (field -> variable).
func setVars(fields map[string]string) func(r *runner, body []byte) error {
	return func(r *runner, body []byte) error {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			return fmt.Errorf("the body is not a JSON object: %v", err)
		}
		var missing []string
		for f, v := range fields {
			var s string
			if err := json.Unmarshal(m[f], &s); err != nil || s == "" {
				missing = append(missing, f)
				continue
			}
			r.vars[v] = s
		}
		if len(missing) > 0 {
			return fmt.Errorf("no string %s in the body", strings.Join(missing, ", "))
		}
		return nil
	}
}

// keepScripts keeps the target script and speakers of a ready project for
// the re-translation steps.
func keepScripts(r *runner, body []byte) error {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(body, &p); err != nil {
		return fmt.Errorf("the body is not a JSON object: %v", err)
	}
	var status string
	_ = json.Unmarshal(p["status"], &status)
	if status != "ready" {
		return nil // the outcome reason says so
	}
	for _, f := range []string{"output_target_script", "output_target_speakers"} {
		if len(p[f]) == 0 || string(p[f]) == "null" {
			return fmt.Errorf("the ready project has no %s", f)
		}
		r.raw[f] = p[f]
	}
	return nil
}

// retranslation is the re-translation request: the project's own target
// script and speakers.
func retranslation(r *runner) ([]byte, string, error) {
	script, speakers := r.raw["output_target_script"], r.raw["output_target_speakers"]
	if script == nil || speakers == nil {
		return nil, "", errors.New("needs the target script of a ready project, which an earlier step did not give")
	}
	b, err := json.Marshal(map[string]json.RawMessage{"target_script": script, "target_speakers": speakers})
	return b, "application/json", err
}

// scenario is the suite, in order: the platform interface, then the
// studio interface, each with its error cases last.
func scenario() []step {
	project := "/api/v1/projects/{project_id}"
	projectPoll := &poll{what: "project", field: "status", final: []string{"ready", "error"}, want: "ready", errField: "error_message"}
	platform := []step{
		{name: "platform/balance", method: "GET", path: "/api/v1/balance", expect: statusOK},
		{name: "platform/options", method: "GET", path: "/api/v1/options", expect: statusOK},
		{name: "platform/voices", method: "GET", path: "/api/v1/voices", expect: statusOK},
		{name: "platform/create-project", method: "POST", path: "/api/v1/projects", ambiguous: true, expect: created,
			body: func(r *runner) ([]byte, string, error) {
				return jsonBody(map[string]any{"name": Name, "source_lang": "en", "target_lang": "fr-FR", "source_video_url": r.cfg.SourceURL})(r)
			},
			after: setVars(map[string]string{"project_id": "project_id"})},
		{name: "platform/get-project", method: "GET", path: project, ambiguous: true, expect: statusOK, needs: []string{"project_id"}},
		{name: "platform/wait-project", method: "GET", path: project, ambiguous: true, expect: statusOK, needs: []string{"project_id"},
			poll: projectPoll, after: keepScripts},
		{name: "platform/validate-retranslation", method: "POST", path: project + "/validate-translation-request", expect: statusOK,
			needs: []string{"project_id"}, body: retranslation},
		{name: "platform/retranslate", method: "POST", path: project + "/translations", expect: created,
			needs: []string{"project_id"}, body: retranslation, after: setVars(map[string]string{"project_id": "retranslated"})},
		{name: "platform/wait-retranslation", method: "GET", path: project, ambiguous: true, expect: statusOK, needs: []string{"retranslated"},
			poll: projectPoll},
		{name: "platform/delete-project", method: "DELETE", path: project, expect: statusOK, needs: []string{"project_id"}},
		{name: "platform/get-deleted-project", method: "GET", path: project, ambiguous: true, expect: []int{http.StatusNotFound}, needs: []string{"project_id"}},

		{name: "platform/bad-key", method: "GET", path: "/api/v1/balance", key: InvalidKey, expect: []int{http.StatusUnauthorized}},
		{name: "platform/unknown-project", method: "GET", path: project, ambiguous: true, params: map[string]string{"project_id": unknownPlatformID},
			expect: []int{http.StatusNotFound}},
		{name: "platform/delete-unknown-project", method: "DELETE", path: project, params: map[string]string{"project_id": unknownPlatformID},
			expect: []int{http.StatusNotFound}},
		{name: "platform/create-missing-fields", method: "POST", path: "/api/v1/projects", ambiguous: true, any4xx: true,
			body: jsonBody(map[string]any{"name": Name, "source_lang": "en"})},
		{name: "platform/create-malformed-json", method: "POST", path: "/api/v1/projects", ambiguous: true, any4xx: true,
			body: rawBody(`{"source_lang": "en", "target_lang": `)},
	}
	for i := range platform {
		platform[i].iface = ifacePlatform
	}

	sproject := "/api/v1/projects/{projectId}"
	video := sproject + "/videos/{videoId}"
	videoUpdate := "/api/projects/{projectId}/videos/{videoId}"
	studio := []step{
		{name: "studio/presign-upload", method: "GET", path: "/api/v1/artifacts/create", expect: statusOK,
			query: func(*runner) url.Values { return url.Values{"fileName": {UploadFileName}} },
			after: setVars(map[string]string{"s3Path": "s3Path", "presignedUploadUrl": "presignedUploadUrl"})},
		{name: "studio/upload", iface: ifaceUpload, method: "PUT", urlVar: "presignedUploadUrl", expect: statusOK, needs: []string{"presignedUploadUrl"},
			body: func(*runner) ([]byte, string, error) { return ToneWAV(), "application/octet-stream", nil }},
		{name: "studio/create-artifact", method: "POST", path: "/api/v1/artifacts/create", expect: created, needs: []string{"s3Path"},
			body: func(r *runner) ([]byte, string, error) {
				return jsonBody(map[string]any{"name": Name, "type": "audio", "s3Path": r.vars["s3Path"]})(r)
			},
			after: setVars(map[string]string{"id": "artifactId"})},
		{name: "studio/wait-artifact", method: "GET", path: "/api/v1/artifacts/{artifactId}", expect: statusOK, needs: []string{"artifactId"},
			poll: &poll{what: "artifact", field: "status", final: []string{"upload_completed", "upload_failed"}, want: "upload_completed", errField: "errorMessage"}},
		{name: "studio/list-projects", method: "GET", path: "/api/v1/projects", expect: statusOK},
		{name: "studio/create-project", method: "POST", path: "/api/v1/projects", ambiguous: true, expect: created,
			body: jsonBody(map[string]any{"name": Name}), after: setVars(map[string]string{"id": "projectId"})},
		{name: "studio/get-project", method: "GET", path: sproject, ambiguous: true, expect: statusOK, needs: []string{"projectId"}},
		{name: "studio/update-project", method: "PATCH", path: sproject, expect: statusOK, needs: []string{"projectId"},
			body: jsonBody(map[string]any{"name": Name + " (renamed)"})},
		{name: "studio/create-video", method: "POST", path: sproject + "/videos/create", expect: created, needs: []string{"projectId", "artifactId"},
			body: func(r *runner) ([]byte, string, error) {
				return jsonBody(map[string]any{"name": Name, "workflowType": "dubbing", "sourceArtifactId": r.vars["artifactId"],
					"sourceLanguage": "en", "targetLanguages": []string{"es-ES"}})(r)
			},
			after: setVars(map[string]string{"id": "videoId"})},
		{name: "studio/list-videos", method: "GET", path: sproject + "/videos", expect: statusOK, needs: []string{"projectId"}},
		{name: "studio/get-video", method: "GET", path: video, expect: statusOK, needs: []string{"projectId", "videoId"}},
		{name: "studio/update-video", method: "PATCH", path: videoUpdate, expect: statusOK, needs: []string{"projectId", "videoId"},
			body: jsonBody(map[string]any{"remark": Name, "translationGuidance": map[string]any{"common": "Keep it formal", "byLang": map[string]string{"es-ES": "usted"}}})},

		{name: "studio/bad-key", method: "GET", path: "/api/v1/projects", key: InvalidKey,
			expect: []int{http.StatusBadRequest, http.StatusUnauthorized}},
		{name: "studio/unknown-artifact", method: "GET", path: "/api/v1/artifacts/{artifactId}", params: map[string]string{"artifactId": unknownStudioID},
			expect: []int{http.StatusBadRequest, http.StatusNotFound}},
		{name: "studio/unknown-project", method: "GET", path: sproject, ambiguous: true, params: map[string]string{"projectId": unknownStudioID},
			expect: []int{http.StatusBadRequest, http.StatusNotFound}},
		{name: "studio/unknown-video", method: "GET", path: video, params: map[string]string{"videoId": unknownStudioID}, needs: []string{"projectId"},
			expect: []int{http.StatusNotFound}},
		{name: "studio/create-artifact-no-source", method: "POST", path: "/api/v1/artifacts/create", any4xx: true,
			body: jsonBody(map[string]any{"name": Name, "type": "audio"})},
		{name: "studio/update-video-no-fields", method: "PATCH", path: videoUpdate, any4xx: true, needs: []string{"projectId", "videoId"},
			body: rawBody(`{}`)},
	}
	for i := range studio {
		if studio[i].iface == "" {
			studio[i].iface = ifaceStudio
		}
	}
	return append(platform, studio...)
}
