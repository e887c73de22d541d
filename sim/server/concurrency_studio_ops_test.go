package server_test

// The operations of the studio load (TestConcurrentStudioClients, in
// concurrency_studio_test.go): each sends one request and records what its
// answer acknowledges.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/studio"
)

// createArtifactByURL creates an artifact from a URL whose end is known: a
// host dubsim may not contact (derived), the fixture rules short and fail,
// or the loopback media server (downloaded for real).
func (s *studioLoad) createArtifactByURL(c *pclient, r *rand.Rand, name string) {
	key, co := s.key(r)
	typ := []string{"video", "audio"}[r.IntN(2)]
	end := &stArtifactEnd{want: []string{sim.ArtifactCompleted}}
	var u string
	switch r.IntN(5) {
	case 0:
		end.source, u = "derived", "https://cdn.test/conc/"+url.PathEscape(name)+".mp4"
	case 1:
		end.source, u = "short rule", "https://media.dubsim.test/short-"+url.PathEscape(name)+".mp4"
	case 2:
		end.source, u = "fail rule", "https://media.dubsim.test/fail-"+url.PathEscape(name)+".mp4"
		end.want, end.failMsg = []string{sim.ArtifactFailed}, "Processing failed: the audio track could not be decoded"
	case 3:
		end.source, u = "loopback download", s.media+"/"+url.PathEscape(name)+".wav"
		end.size = int64(len(s.wav))
	default:
		end.source, u, typ = "derived script", "https://cdn.test/conc/"+url.PathEscape(name)+".srt", "script"
		end.size = 48 << 10
	}
	body := stCanon(map[string]any{"name": name, "type": typ, "url": u})
	a, _, _, ok := s.call(c, "artifact url", []int{200}, stEnvStudio, "POST", "/api/v1/artifacts/create", key, body, stIdemHeader(r, nil))
	if ok {
		s.acceptArtifact("artifact url", a, name, typ, co, end)
	}
}

// acceptArtifact checks a Create Artifact answer and records the artifact.
func (s *studioLoad) acceptArtifact(op string, a answer, name, typ string, co int, end *stArtifactEnd) {
	m := a.json()
	id := stStr(m, "id")
	if !sim.IsStudioID(id) || m["name"] != name || m["type"] != typ || m["status"] != sim.ArtifactCreated || stCompanyOf(m) != s.cos[co].id {
		s.fail("%s: the creation answer does not match the request (name %q, type %s, company %s): %s", op, name, typ, s.cos[co].id, a.body)
		return
	}
	s.register(&stObject{kind: "artifact", id: id, co: co, end: end}, m)
}

// createArtifactByUpload presigns an upload, PUTs a WAV file to it and
// creates an artifact of it; or lets another company use the s3Path (the
// artifact fails), or creates the artifact before the PUT (it completes or
// fails depending on whether the PUT comes before processing ends).
func (s *studioLoad) createArtifactByUpload(c *pclient, r *rand.Rand, name string) {
	key, co := s.key(r)
	file := strings.ReplaceAll(name, " ", "_") + ".wav"
	a, _, _, ok := s.call(c, "presign", []int{200}, stEnvStudio, "GET", "/api/v1/artifacts/create?fileName="+url.QueryEscape(file), key, "", nil)
	if !ok {
		return
	}
	m := a.json()
	s3, up := stStr(m, "s3Path"), stStr(m, "presignedUploadUrl")
	if !strings.HasPrefix(s3, "s3://"+sim.UploadBucket+"/temp/") || !strings.HasSuffix(s3, "/"+file) || !strings.HasPrefix(up, c.base+studio.UploadPathPrefix) {
		s.fail("presign %s: unexpected answer %s", file, a.body)
		return
	}
	put := func() bool {
		sent := time.Now()
		pa := c.do("PUT", strings.TrimPrefix(up, c.base), "", "application/octet-stream", s.wav, nil)
		s.count("upload PUT", pa.status)
		if pa.err != nil || pa.status != http.StatusOK {
			s.fail("upload PUT %s (sent %v): status %d, err %v: %s", file, sent.Format(time.StampMicro), pa.status, pa.err, pa.body)
			return false
		}
		return true
	}
	typ := []string{"video", "audio"}[r.IntN(2)]
	end := &stArtifactEnd{source: "presigned upload", want: []string{sim.ArtifactCompleted}, size: int64(len(s.wav))}
	creator, cco := s.keyOf(r, co), co // the uploader or a colleague
	late := false
	switch r.IntN(6) {
	case 0:
		cco = s.other(r, co)
		creator = s.keyOf(r, cco)
		end = &stArtifactEnd{source: "presigned upload of another company", want: []string{sim.ArtifactFailed}, failMsg: fmt.Sprintf(sim.MsgUploadNotFound, s3)}
	case 1:
		late = true
		end = &stArtifactEnd{source: "presigned upload PUT after the creation", want: []string{sim.ArtifactCompleted, sim.ArtifactFailed},
			size: int64(len(s.wav)), failMsg: fmt.Sprintf(sim.MsgUploadNotFound, s3)}
	}
	if !late && !put() {
		return
	}
	body := stCanon(map[string]any{"name": name, "type": typ, "s3Path": s3})
	a, _, _, ok = s.call(c, "artifact upload", []int{200}, stEnvStudio, "POST", "/api/v1/artifacts/create", creator, body, stIdemHeader(r, nil))
	if ok {
		s.acceptArtifact("artifact upload", a, name, typ, cco, end)
	}
	if late {
		put()
	}
}

func (s *studioLoad) count(op string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	s.statusCount[status]++
	s.opCount[op]++
	if s.opStatus[op] == nil {
		s.opStatus[op] = map[int]int{}
	}
	s.opStatus[op][status]++
}

func (s *studioLoad) getArtifact(c *pclient, r *rand.Rand) {
	_, co := s.key(r)
	id := s.pick(r, &s.artifacts, co)
	if id == "" {
		return
	}
	key := s.keyOf(r, co)
	a, sent, recv, ok := s.call(c, "artifact get", []int{200}, stEnvStudio, "GET", "/api/v1/artifacts/"+id, key, "", nil)
	if !ok {
		return
	}
	m := a.json()
	if stStr(m, "id") != id || stCompanyOf(m) != s.cos[co].id || !slices.Contains([]string{sim.ArtifactCreated, sim.ArtifactStarted, sim.ArtifactCompleted, sim.ArtifactFailed}, stStr(m, "status")) {
		s.fail("artifact get %s as %s: %s", id, key, a.body)
	}
	s.read("artifact", m, sent, recv)
}

func (s *studioLoad) foreignArtifact(c *pclient, r *rand.Rand) {
	key, co := s.key(r)
	if r.IntN(5) == 0 {
		a, _, _, _ := s.call(c, "artifact foreign", []int{404}, stEnvStudio, "GET", "/api/v1/artifacts/"+stUnknownID, key, "", nil)
		s.refused("artifact get unknown", a, 404, sim.MsgStudioNotFound)
		return
	}
	id := s.pick(r, &s.artifacts, s.other(r, co))
	if id == "" {
		return
	}
	a, _, _, _ := s.call(c, "artifact foreign", []int{400}, stEnvStudio, "GET", "/api/v1/artifacts/"+id, key, "", nil)
	s.refused("artifact get "+id+" as "+key, a, 400, sim.MsgArtifactDenied)
}

// forceOutcome decides the end of an artifact from the control API, most
// often of one just created; it is refused (409) once the artifact has
// finished.
func (s *studioLoad) forceOutcome(c *pclient, r *rand.Rand) {
	co := r.IntN(len(s.cos))
	s.mu.Lock()
	ids := s.artifacts[co]
	id := ids[len(ids)-1-r.IntN(min(len(ids), 3))]
	if r.IntN(4) == 0 {
		id = ids[r.IntN(len(ids))]
	}
	s.mu.Unlock()
	outcome := []string{sim.ForceReady, sim.ForceError}[r.IntN(2)]
	body := stCanon(map[string]any{"outcome": outcome, "now": r.IntN(2) == 0})
	a, sent, recv, ok := s.call(c, "artifact outcome", []int{200, 409}, stEnvControl, "POST", "/_sim/artifacts/"+id+"/outcome", "", body, nil)
	if !ok {
		return
	}
	m := a.json()
	if a.status == http.StatusConflict {
		if m["error"] != "ConflictError" || !strings.Contains(stStr(m, "message"), "has already finished processing") {
			s.fail("artifact outcome %s: unexpected refusal %s", id, a.body)
		}
		return
	}
	if stStr(m, "artifact_id") != id {
		s.fail("artifact outcome %s: %s", id, a.body)
	}
	status := sim.ArtifactCompleted
	if outcome == sim.ForceError {
		status = sim.ArtifactFailed
	}
	s.mu.Lock()
	o := s.objs[id]
	o.forces = append(o.forces, stTimed{val: status, sent: sent, recv: recv})
	s.mu.Unlock()
}

// createProject creates a studio project: with a manager of the company,
// or with the X-Dubsim-Interface header and glossaries of the company; a
// manager of another company is refused.
func (s *studioLoad) createProject(c *pclient, r *rand.Rand, name string) {
	key, co := s.key(r)
	cmp := s.cos[co]
	body := map[string]any{"name": name}
	var hdr map[string]string
	foreignManager := ""
	switch {
	case r.IntN(8) == 0:
		oc := s.otherWith(r, co, func(c *stCompany) bool { return len(c.emails) > 0 })
		foreignManager = oc.emails[r.IntN(len(oc.emails))]
		body["managerEmail"] = foreignManager
	case len(cmp.emails) > 0 && r.IntN(2) == 0:
		body["managerEmail"] = cmp.emails[r.IntN(len(cmp.emails))]
	default:
		hdr = stStudioHeader
	}
	for _, gf := range stGlossaryFields {
		if ids := cmp.glossaries[gf[0]]; len(ids) > 0 && r.IntN(2) == 0 {
			body[gf[0]] = ids[r.IntN(len(ids))]
		}
	}
	want := []int{200}
	if foreignManager != "" {
		want = []int{400}
	}
	a, _, _, ok := s.call(c, "project create", want, stEnvStudio, "POST", "/api/v1/projects", key, stCanon(body), stIdemHeader(r, hdr))
	if !ok {
		return
	}
	if foreignManager != "" {
		s.refused("project create with the manager "+foreignManager+" as "+key, a, 400,
			fmt.Sprintf("managerEmail: %s does not belong to your company; the manager must be a user of the same company as the API key's user", foreignManager))
		return
	}
	m := a.json()
	okBody := sim.IsStudioID(stStr(m, "id")) && m["name"] == name && m["status"] == sim.StudioProjectStatusNew
	for _, gf := range stGlossaryFields {
		if g, sent := body[gf[0]]; sent && m[gf[1]] != g || !sent && m[gf[1]] != nil {
			okBody = false
		}
	}
	if !okBody {
		s.fail("project create %s: the answer does not match the request %s: %s", key, stCanon(body), a.body)
		return
	}
	s.register(&stObject{kind: "project", id: stStr(m, "id"), co: co}, m)
}

func (s *studioLoad) listProjects(c *pclient, r *rand.Rand) {
	key, co := s.key(r)
	a, sent, recv, ok := s.call(c, "project list", []int{200}, stEnvStudio, "GET", "/api/v1/projects", key, "", nil)
	if !ok {
		return
	}
	l, isList := stJSONList(a)
	if !isList {
		s.fail("project list as %s: not a JSON array: %s", key, a.body)
		return
	}
	ids := make([]string, 0, len(l))
	for _, p := range l {
		ids = append(ids, stStr(p, "id"))
		s.read("project", p, sent, recv)
	}
	s.mu.Lock()
	s.lists = append(s.lists, stListRead{kind: "projects", co: co, ids: ids})
	s.mu.Unlock()
}

func (s *studioLoad) getProject(c *pclient, r *rand.Rand) {
	_, co := s.key(r)
	id := s.pick(r, &s.projects, co)
	key := s.keyOf(r, co)
	a, sent, recv, ok := s.call(c, "project get", []int{200}, stEnvStudio, "GET", "/api/v1/projects/"+id, key, "", nil)
	if !ok {
		return
	}
	m := a.json()
	if stStr(m, "id") != id || !strings.HasSuffix(stStr(m, "projectUrl"), "/projects/"+id) {
		s.fail("project get %s as %s: %s", id, key, a.body)
	}
	s.read("project", m, sent, recv)
}

// foreignProject sends a request on a project of another company: each is
// refused with 400 "Access denied to this project" (an unknown id: 404).
func (s *studioLoad) foreignProject(c *pclient, r *rand.Rand, name string) {
	key, co := s.key(r)
	oco := s.other(r, co)
	id := s.pick(r, &s.projects, oco)
	if r.IntN(6) == 0 {
		a, _, _, _ := s.call(c, "project foreign", []int{404}, stEnvStudio, "GET", "/api/v1/projects/"+stUnknownID, key, "", nil)
		s.refused("project get unknown", a, 404, sim.MsgStudioNotFound)
		return
	}
	var a answer
	what := ""
	switch r.IntN(5) {
	case 0:
		what = "get"
		a, _, _, _ = s.call(c, "project foreign", []int{400}, stEnvStudio, "GET", "/api/v1/projects/"+id, key, "", nil)
	case 1:
		what = "patch"
		a, _, _, _ = s.call(c, "project foreign", []int{400}, stEnvStudio, "PATCH", "/api/v1/projects/"+id, key, stCanon(map[string]any{"name": name}), nil)
	case 2:
		what = "list videos"
		a, _, _, _ = s.call(c, "project foreign", []int{400}, stEnvStudio, "GET", "/api/v1/projects/"+id+"/videos", key, "", nil)
	case 3:
		what = "create video"
		src := s.pick(r, &s.pool, co)
		body := stCanon(map[string]any{"name": name, "workflowType": "dubbing", "sourceArtifactId": src, "sourceLanguage": "en", "targetLanguages": []string{"es-ES"}})
		a, _, _, _ = s.call(c, "project foreign", []int{400}, stEnvStudio, "POST", "/api/v1/projects/"+id+"/videos/create", key, body, stIdemHeader(r, nil))
	default:
		what = "get video"
		vid := s.pick(r, &s.fxVideos, oco)
		if vid == "" {
			vid = s.pick(r, &s.videos, oco)
		}
		if vid == "" {
			return
		}
		id = s.projectOf(vid)
		a, _, _, _ = s.call(c, "project foreign", []int{400}, stEnvStudio, "GET", "/api/v1/projects/"+id+"/videos/"+vid, key, "", nil)
	}
	s.refused(fmt.Sprintf("%s on project %s of %s as %s", what, id, s.cos[oco].name, key), a, 400, sim.MsgStudioDenied)
}

// patchProject changes fields of a project of the caller's company; a
// glossary of another company makes the whole update refused.
func (s *studioLoad) patchProject(c *pclient, r *rand.Rand, name string) {
	_, co := s.key(r)
	cmp := s.cos[co]
	id := s.pick(r, &s.projects, co)
	key := s.keyOf(r, co)
	body := map[string]any{}
	if r.IntN(8) == 0 {
		oc := s.otherWith(r, co, func(c *stCompany) bool { return len(c.glossaries["translationsGlossaryId"]) > 0 })
		g := oc.glossaries["translationsGlossaryId"][0]
		body["name"], body["translationsGlossaryId"] = name, g
		a, _, _, _ := s.call(c, "project patch", []int{400}, stEnvStudio, "PATCH", "/api/v1/projects/"+id, key, stCanon(body), nil)
		s.refused("project patch with a glossary of "+oc.name, a, 400, fmt.Sprintf("translationsGlossaryId: glossary %s does not belong to your organization", g))
		return
	}
	for len(body) == 0 {
		if r.IntN(2) == 0 {
			body["name"] = name
		}
		for _, gf := range stGlossaryFields {
			if r.IntN(3) != 0 {
				continue
			}
			ids := cmp.glossaries[gf[0]]
			if len(ids) == 0 || r.IntN(3) == 0 {
				body[gf[0]] = "" // removes the assignment
			} else {
				body[gf[0]] = ids[r.IntN(len(ids))]
			}
		}
		if len(cmp.emails) > 0 && r.IntN(4) == 0 {
			body["managerEmail"] = cmp.emails[r.IntN(len(cmp.emails))]
		}
	}
	a, sent, recv, ok := s.call(c, "project patch", []int{200}, stEnvStudio, "PATCH", "/api/v1/projects/"+id, key, stCanon(body), nil)
	if !ok {
		return
	}
	m := a.json()
	set := map[string]string{}
	if n, ok := body["name"]; ok {
		set["name"] = stCanon(n)
	}
	for _, gf := range stGlossaryFields {
		if g, ok := body[gf[0]]; ok {
			set[gf[1]] = stCanon(g)
			if g == "" {
				set[gf[1]] = "null"
			}
		}
	}
	for f, v := range set {
		if stCanon(m[f]) != v {
			s.fail("project patch %s %s: %s is %s in the answer, want %s: %s", id, stCanon(body), f, stCanon(m[f]), v, a.body)
		}
	}
	s.written(id, set, "", sent, recv)
}

// createVideo adds a video to a project of the caller's company, from an
// artifact completed before the load (accepted), any artifact of the
// company (accepted when completed and not a script) or an artifact of
// another company (refused).
func (s *studioLoad) createVideo(c *pclient, r *rand.Rand, name string) {
	key, co := s.key(r)
	pid := s.pick(r, &s.projects, co)
	want := []int{200}
	src := s.pick(r, &s.pool, co)
	foreign := false
	switch r.IntN(10) {
	case 0:
		foreign = true
		src = s.pick(r, &s.pool, s.other(r, co))
		want = []int{400}
	case 1, 2, 3:
		src = s.pick(r, &s.artifacts, co)
		want = []int{200, 400}
	}
	body := map[string]any{"name": name, "workflowType": sim.WorkflowTypes[r.IntN(len(sim.WorkflowTypes))], "sourceArtifactId": src,
		"sourceLanguage": "en", "targetLanguages": stSomeLangs(r, stTargetLangs)}
	if r.IntN(3) == 0 {
		body["remark"] = "remark of " + name
	}
	if r.IntN(3) == 0 {
		body["stringVariables"] = []map[string]string{{"key": "episode", "value": name}}
	}
	a, _, _, ok := s.call(c, "video create", want, stEnvStudio, "POST", "/api/v1/projects/"+pid+"/videos/create", key, stCanon(body), stIdemHeader(r, nil))
	if !ok {
		return
	}
	if foreign {
		s.refused("video create from an artifact of another company", a, 400, fmt.Sprintf("sourceArtifactId: artifact %s does not belong to your company", src))
		return
	}
	if a.status != http.StatusOK {
		if t := s.typeOf(src); t != `"script"` && !strings.Contains(stStr(a.json(), "error"), "an artifact is usable only when its status is upload_completed") {
			s.fail("video create from %s artifact %s: %s", t, src, a.body)
		}
		return
	}
	m := a.json()
	if !sim.IsStudioID(stStr(m, "id")) || m["name"] != name || m["workflowType"] != body["workflowType"] || m["status"] != sim.VideoNew ||
		stCanon(m["dstLangs"]) != stCanon(body["targetLanguages"]) || m["srcLang"] != "en" || stCanon(m["remark"]) != stCanon(body["remark"]) ||
		stCanon(m["stringVariables"]) != stCanon(body["stringVariables"]) {
		s.fail("video create: the answer does not match the request %s: %s", stCanon(body), a.body)
		return
	}
	m["processingType"] = m["workflowType"] // the create answer's name of the field
	s.register(&stObject{kind: "video", id: stStr(m, "id"), co: co, project: pid}, m)
}

func (s *studioLoad) listVideos(c *pclient, r *rand.Rand) {
	_, co := s.key(r)
	pid := s.pick(r, &s.projects, co)
	key := s.keyOf(r, co)
	a, sent, recv, ok := s.call(c, "video list", []int{200}, stEnvStudio, "GET", "/api/v1/projects/"+pid+"/videos", key, "", nil)
	if !ok {
		return
	}
	l, isList := stJSONList(a)
	if !isList {
		s.fail("video list %s as %s: not a JSON array: %s", pid, key, a.body)
		return
	}
	ids := make([]string, 0, len(l))
	for _, v := range l {
		ids = append(ids, stStr(v, "id"))
		s.read("video", v, sent, recv)
	}
	s.mu.Lock()
	s.lists = append(s.lists, stListRead{kind: "videos", co: co, owner: pid, ids: ids})
	s.mu.Unlock()
}

func (s *studioLoad) getVideo(c *pclient, r *rand.Rand) {
	_, co := s.key(r)
	list := &s.videos
	if r.IntN(4) == 0 {
		list = &s.fxVideos
	}
	vid := s.pick(r, list, co)
	if vid == "" {
		return
	}
	pid := s.projectOf(vid)
	key := s.keyOf(r, co)
	if r.IntN(8) == 0 { // under another project of the same company: 404
		if other := s.pick(r, &s.projects, co); other != pid {
			a, _, _, _ := s.call(c, "video get", []int{404}, stEnvStudio, "GET", "/api/v1/projects/"+other+"/videos/"+vid, key, "", nil)
			s.refused("video get "+vid+" under another project", a, 404, sim.MsgStudioNotFound)
			return
		}
	}
	a, sent, recv, ok := s.call(c, "video get", []int{200}, stEnvStudio, "GET", "/api/v1/projects/"+pid+"/videos/"+vid, key, "", nil)
	if !ok {
		return
	}
	m := a.json()
	if stStr(m, "id") != vid || !strings.HasSuffix(stStr(m, "videoUrl"), "/api/v1/projects/"+pid+"/videos/"+vid) {
		s.fail("video get %s as %s: %s", vid, key, a.body)
	}
	s.read("video", m, sent, recv)
}

func (s *studioLoad) foreignVideo(c *pclient, r *rand.Rand, name string) {
	key, co := s.key(r)
	oco := s.other(r, co)
	list := &s.videos
	if r.IntN(3) == 0 {
		list = &s.fxVideos
	}
	vid := s.pick(r, list, oco)
	if vid == "" {
		return
	}
	pid := s.projectOf(vid)
	var a answer
	if r.IntN(2) == 0 {
		a, _, _, _ = s.call(c, "video foreign", []int{400}, stEnvStudio, "GET", "/api/v1/projects/"+pid+"/videos/"+vid, key, "", nil)
	} else {
		a, _, _, _ = s.call(c, "video foreign", []int{400}, stEnvStudio, "PATCH", "/api/projects/"+pid+"/videos/"+vid, key, stCanon(map[string]any{"name": name, "status": "completed"}), nil)
	}
	s.refused("video "+vid+" of "+s.cos[oco].name+" as "+key, a, 400, sim.MsgStudioDenied)
}

// patchVideo changes fields of a video the load created; an unknown status
// makes the whole update refused.
func (s *studioLoad) patchVideo(c *pclient, r *rand.Rand, name string) {
	_, co := s.key(r)
	vid := s.pick(r, &s.videos, co)
	if vid == "" {
		return
	}
	pid := s.projectOf(vid)
	key := s.keyOf(r, co)
	path := "/api/projects/" + pid + "/videos/" + vid
	if r.IntN(8) == 0 {
		a, _, _, _ := s.call(c, "video patch", []int{400}, stEnvStudio, "PATCH", path, key, stCanon(map[string]any{"name": name, "status": "archived"}), nil)
		s.refused("video patch with an unknown status", a, 400, `status must be one of new, in_progress, completed; got "archived"`)
		return
	}
	body := map[string]any{}
	for len(body) == 0 {
		if r.IntN(2) == 0 {
			body["name"] = name
		}
		if r.IntN(3) == 0 {
			body["status"] = sim.VideoStatuses[r.IntN(len(sim.VideoStatuses))]
		}
		if r.IntN(4) == 0 {
			body["processingType"] = sim.ProcessingTypes[r.IntN(len(sim.ProcessingTypes))]
		}
		if r.IntN(4) == 0 {
			body["remark"] = "remark of " + name
			if r.IntN(3) == 0 {
				body["remark"] = nil
			}
		}
		if r.IntN(4) == 0 {
			body["dstLangs"] = stSomeLangs(r, stDstLangs)
		}
		if r.IntN(5) == 0 {
			body["stringVariables"] = []map[string]string{{"key": "take", "value": name}}
			if r.IntN(3) == 0 {
				body["stringVariables"] = nil
			}
		}
		if r.IntN(6) == 0 {
			body["translationGuidance"] = map[string]any{"common": "guidance of " + name}
		}
	}
	a, sent, recv, ok := s.call(c, "video patch", []int{200}, stEnvStudio, "PATCH", path, key, stCanon(body), nil)
	if !ok {
		return
	}
	m := a.json()
	set := map[string]string{}
	status := ""
	for f, v := range body {
		if stCanon(m[f]) != stCanon(v) {
			s.fail("video patch %s %s: %s is %s in the answer, want %s: %s", vid, stCanon(body), f, stCanon(m[f]), stCanon(v), a.body)
		}
		switch f {
		case "status":
			status = v.(string)
		case "translationGuidance": // not part of Get Project Video
		default:
			set[f] = stCanon(v)
		}
	}
	s.written(vid, set, status, sent, recv)
}

func (s *studioLoad) dump(c *pclient, r *rand.Rand) {
	_, co := s.key(r)
	cid := s.cos[co].id
	if r.IntN(3) == 0 {
		s.call(c, "studio dump", []int{200}, stEnvControl, "GET", "/_sim/studio", "", "", nil)
		return
	}
	a, _, _, ok := s.call(c, "studio dump", []int{200}, stEnvControl, "GET", "/_sim/studio?company_id="+cid, "", "", nil)
	if !ok {
		return
	}
	var d map[string][]map[string]any
	if err := json.Unmarshal(a.body, &d); err != nil {
		s.fail("studio dump of %s: %v: %.200s", cid, err, a.body)
		return
	}
	for _, k := range []string{"users", "projects", "videos", "artifacts"} {
		for _, rec := range d[k] {
			if stStr(rec, "company_id") != cid {
				s.fail("studio dump of company %s holds %s %s of company %s", cid, k, stStr(rec, "id"), stStr(rec, "company_id"))
			}
		}
	}
}
