package server_test

// The studio counterpart of concurrency_test.go: parallel clients on every
// studio endpoint at once (artifacts by URL and by presigned upload, studio
// projects, videos) with the keys of four companies, plus control calls,
// then the invariants: no 5xx and nothing logged at error level; every
// acknowledged creation is readable by its company, refused to the others,
// and listed exactly once; every field holds a value an acknowledged PATCH
// could have left; lifecycles only move forward and end as their source
// implies. Run with -race.
//
//	DUBSIM_CONCURRENCY_SEED=<seed printed by a failing run> go test -race -run ConcurrentStudio ./sim/server

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/dubsim/dubsim/sim/studio"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Fixture companies (fixtures/studio.json) and their records the load uses.
const (
	stAcmeID    = "663266da5ec2709f7826386f"
	stGlobexID  = "66b0bea45ec2709f78263870"
	stInitechID = "67500bec5ec2709f78263871"
	stUnknownID = "000000000000000000000000"
)

// stGlossaryFields maps the glossary fields of a project request to the
// fields of the project view.
var stGlossaryFields = [][2]string{
	{"translationsGlossaryId", "translationGlossary"},
	{"voicesGlossaryId", "voicesGlossary"},
	{"pronunciationGlossaryId", "pronunciationGlossary"},
}

// stCompany is a company of the load: its keys, the emails of its users
// (managerEmail) and its glossaries by request field.
type stCompany struct {
	name       string
	id         string
	keys       []string
	emails     []string
	glossaries map[string][]string
}

// Fields of each kind of record that the load reads back and compares; the
// statuses of artifacts and videos, which move by themselves, are checked
// apart.
var stFields = map[string][]string{
	"artifact": {"name", "type"},
	"project":  {"name", "status", "translationGlossary", "voicesGlossary", "pronunciationGlossary"},
	"video":    {"name", "processingType", "srcLang", "dstLangs", "remark", "stringVariables"},
}

// stTimed is a value written or read by a request, with when the request was
// sent and when its answer was read.
type stTimed struct {
	val        string // canonical JSON
	sent, recv time.Time
}

// stRegister is one field of one record: its value at creation (or at the
// start of the test) and its acknowledged writes.
type stRegister struct {
	original string
	writes   []stTimed
}

// allows reports whether a read sent at sent and answered at recv may see
// val: the original while no acknowledged write had certainly happened
// before the read, or the value of an acknowledged write that may have
// happened before the read answered and was not certainly overwritten by
// another acknowledged write before the read was sent.
func (g *stRegister) allows(val string, sent, recv time.Time) bool {
	if val == g.original && !slices.ContainsFunc(g.writes, func(w stTimed) bool { return w.recv.Before(sent) }) {
		return true
	}
	for _, w := range g.writes {
		if w.val != val || !w.sent.Before(recv) {
			continue
		}
		if !slices.ContainsFunc(g.writes, func(o stTimed) bool { return o.sent.After(w.recv) && o.recv.Before(sent) }) {
			return true
		}
	}
	return false
}

// stArtifactEnd is how an artifact created by the load must end.
type stArtifactEnd struct {
	source  string   // how it was made (for messages)
	want    []string // final statuses by its source (two: it depends on timing)
	size    int64    // upload_completed: the size, when known
	failMsg string   // upload_failed: the message, when known
}

// stObject is a record the load created or found in the fixtures.
type stObject struct {
	kind    string // artifact, project, video
	id      string
	co      int    // index in studioLoad.cos
	project string // videos: the project
	fixture bool
	fields  map[string]*stRegister
	end     *stArtifactEnd // artifacts created by the load
	forces  []stTimed      // artifacts: acknowledged forced outcomes, as the status they lead to
	// statusWrites are the acknowledged status PATCHes of a video.
	statusWrites []stTimed
}

type stRead struct {
	id, field, val string
	sent, recv     time.Time
}

type stListRead struct {
	kind  string // "projects" of company co, or "videos" of project
	co    int
	owner string
	ids   []string
}

// studioLoad is the shared state of TestConcurrentStudioClients.
type studioLoad struct {
	t     *testing.T
	in    *inst
	wav   []byte
	media string // base URL of a loopback media server
	cos   []*stCompany
	coOf  map[string]int // key -> company
	keys  []string

	mu        sync.Mutex
	objs      map[string]*stObject
	artifacts [][]string // by company: acknowledged artifacts
	pool      [][]string // by company: artifacts completed before the load
	projects  [][]string // by company: fixture and acknowledged projects
	videos    [][]string // by company: acknowledged videos
	fxVideos  [][]string // by company: fixture videos
	reads     []stRead
	statuses  map[string][]stTimed      // artifact and video statuses read
	final     map[string]map[string]any // artifacts: a view read after the load
	lists     []stListRead

	failures    []string
	statusCount map[int]int
	opCount     map[string]int
	opStatus    map[string]map[int]int
	requests    int
}

func (s *studioLoad) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.failures) < 40 {
		s.failures = append(s.failures, fmt.Sprintf(format, args...))
	} else if len(s.failures) == 40 {
		s.failures = append(s.failures, "(more failures not shown)")
	}
}

func stCanon(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("unmarshalable %T", v)
	}
	return string(b)
}

func stJSONList(a answer) ([]map[string]any, bool) {
	var l []map[string]any
	err := json.Unmarshal(a.body, &l)
	return l, err == nil && l != nil
}

func stStr(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func stCompanyOf(m map[string]any) string {
	c, _ := m["company"].(map[string]any)
	return stStr(c, "id")
}

// Envelopes of error answers.
const (
	stEnvNone    = iota // the storage endpoint (XML)
	stEnvStudio         // {"error": <text>}
	stEnvControl        // {"error": <name>, "message": <text>}
)

// call sends one request, counts its answer and checks it: no transport
// error, no 5xx, a status in want, and the error envelope of its interface.
// It returns the answer, when it was sent and when it was read, and whether
// its status was one of want.
func (s *studioLoad) call(c *pclient, op string, want []int, env int, method, path, key, body string, hdr map[string]string) (answer, time.Time, time.Time, bool) {
	sent := time.Now()
	a := c.json(method, path, key, body, hdr)
	recv := time.Now()
	s.mu.Lock()
	s.requests++
	s.statusCount[a.status]++
	s.opCount[op]++
	if s.opStatus[op] == nil {
		s.opStatus[op] = map[int]int{}
	}
	s.opStatus[op][a.status]++
	s.mu.Unlock()
	switch {
	case a.err != nil:
		s.fail("%s: %s %s: transport error: %v", op, method, path, a.err)
	case a.status >= 500:
		s.fail("%s: %s %s: status %d: %s", op, method, path, a.status, a.body)
	case !slices.Contains(want, a.status):
		s.fail("%s: %s %s as %s: status %d, want one of %v: %s", op, method, path, key, a.status, want, a.body)
	case a.status >= 400 && env != stEnvNone:
		if why := checkErrorBody(path, a.status, a.header.Get("Content-Type"), a.body, env == stEnvStudio); why != "" {
			s.fail("%s: %s %s: error answer %d: %s: %s", op, method, path, a.status, why, a.body)
		}
	}
	return a, sent, recv, a.err == nil && slices.Contains(want, a.status)
}

// refused checks that a is exactly the studio error status {"error": msg}.
func (s *studioLoad) refused(op string, a answer, status int, msg string) {
	if a.err != nil {
		return // reported by call
	}
	var m map[string]any
	if a.status != status || json.Unmarshal(a.body, &m) != nil || len(m) != 1 || m["error"] != msg {
		s.fail("%s: want %d {\"error\": %q}; got %d %s", op, status, msg, a.status, a.body)
	}
}

// register records a new record with the values of its fields in view.
func (s *studioLoad) register(o *stObject, view map[string]any) {
	o.fields = map[string]*stRegister{}
	for _, f := range stFields[o.kind] {
		o.fields[f] = &stRegister{original: stCanon(view[f])}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.objs[o.id]; dup {
		s.failures = append(s.failures, fmt.Sprintf("%s id %s acknowledged twice", o.kind, o.id))
		return
	}
	s.objs[o.id] = o
	switch o.kind {
	case "artifact":
		s.artifacts[o.co] = append(s.artifacts[o.co], o.id)
	case "project":
		s.projects[o.co] = append(s.projects[o.co], o.id)
	case "video":
		if o.fixture {
			s.fxVideos[o.co] = append(s.fxVideos[o.co], o.id)
		} else {
			s.videos[o.co] = append(s.videos[o.co], o.id)
		}
	}
}

// read records what a GET (or a list) answered of a record.
func (s *studioLoad) read(kind string, view map[string]any, sent, recv time.Time) {
	id := stStr(view, "id")
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range stFields[kind] {
		s.reads = append(s.reads, stRead{id: id, field: f, val: stCanon(view[f]), sent: sent, recv: recv})
	}
	if kind == "artifact" || kind == "video" {
		s.statuses[id] = append(s.statuses[id], stTimed{val: stStr(view, "status"), sent: sent, recv: recv})
	}
}

// written records the fields an acknowledged PATCH set (view field ->
// canonical value).
func (s *studioLoad) written(id string, fields map[string]string, status string, sent, recv time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objs[id]
	for f, v := range fields {
		o.fields[f].writes = append(o.fields[f].writes, stTimed{val: v, sent: sent, recv: recv})
	}
	if status != "" {
		o.statusWrites = append(o.statusWrites, stTimed{val: status, sent: sent, recv: recv})
	}
}

// pick returns one of the ids in (*list)[co], often a recent one; "" when
// there is none.
func (s *studioLoad) pick(r *rand.Rand, list *[][]string, co int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := (*list)[co]
	if len(ids) == 0 {
		return ""
	}
	if r.IntN(2) == 0 {
		return ids[len(ids)-1-r.IntN(min(len(ids), 8))]
	}
	return ids[r.IntN(len(ids))]
}

func (s *studioLoad) projectOf(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.objs[id].project
}

func (s *studioLoad) typeOf(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.objs[id].fields["type"].original
}

func (s *studioLoad) key(r *rand.Rand) (string, int) {
	k := s.keys[r.IntN(len(s.keys))]
	return k, s.coOf[k]
}

func (s *studioLoad) keyOf(r *rand.Rand, co int) string {
	return s.cos[co].keys[r.IntN(len(s.cos[co].keys))]
}

// other returns another company than co.
func (s *studioLoad) other(r *rand.Rand, co int) int {
	o := r.IntN(len(s.cos) - 1)
	if o >= co {
		o++
	}
	return o
}

// otherWith returns another company than co for which has is true.
func (s *studioLoad) otherWith(r *rand.Rand, co int, has func(*stCompany) bool) *stCompany {
	var l []*stCompany
	for i, c := range s.cos {
		if i != co && has(c) {
			l = append(l, c)
		}
	}
	return l[r.IntN(len(l))]
}

func stIdemHeader(r *rand.Rand, hdr map[string]string) map[string]string {
	if r.IntN(4) != 0 {
		return hdr
	}
	out := map[string]string{"Idempotency-Key": fmt.Sprintf("conc-%x-%x", r.Uint64(), r.Uint64())}
	for k, v := range hdr {
		out[k] = v
	}
	return out
}

var (
	stTargetLangs  = []string{"es-ES", "fr-FR", "de-DE", "it-IT", "ja-JP"}
	stDstLangs     = []string{"es-ES", "fr-FR", "de-DE", "it-IT", "ja-JP", "pt", "nl"}
	stStudioHeader = map[string]string{server.HeaderInterface: server.Studio}
)

func stSomeLangs(r *rand.Rand, from []string) []string {
	p := r.Perm(len(from))
	out := make([]string, 1+r.IntN(3))
	for i := range out {
		out[i] = from[p[i]]
	}
	return out
}

// ----- the operations -----

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

// TestConcurrentStudioClients runs 100 clients against every studio
// endpoint at once, with keys of four companies, then checks that no answer
// was a 5xx, nothing was logged at error level, every acknowledged creation
// is readable by its company (and only by it) and listed once, every field
// holds what the acknowledged PATCHes allow, and every lifecycle moved
// forward to the end its source implies.
func TestConcurrentStudioClients(t *testing.T) {
	t.Parallel()
	seed := testSeed(t, envConcSeed)
	in, g, logs := guarded(t, func(c *app.Config) { c.Seed = seed })
	wav := refWAVBytes(t, 150, 300*time.Millisecond)
	media := mediaServer(t, wav)

	own := newAccount(t, in, `{"plan":"pro","balance_minutes":10}`) // a company of its own
	s := &studioLoad{t: t, in: in, wav: wav, media: media.URL, coOf: map[string]int{}, objs: map[string]*stObject{},
		statuses: map[string][]stTimed{}, final: map[string]map[string]any{}, statusCount: map[int]int{}, opCount: map[string]int{}, opStatus: map[string]map[int]int{}}
	s.cos = []*stCompany{
		{name: "Acme Media", id: stAcmeID, keys: []string{"dubsim-free", "dubsim-subscription"},
			emails: []string{"alice.johnson@acme-media.example", "bob.martinez@acme-media.example", "carol.nguyen@acme-media.example"},
			glossaries: map[string][]string{"translationsGlossaryId": {"664dde2bbd76c09876a4bc5b", "671e9b98bd76c09876a4bc5c"},
				"voicesGlossaryId": {"673494a9bd76c09876a4bc5d"}, "pronunciationGlossaryId": {"676604f4bd76c09876a4bc5e"}}},
		{name: "Initech Learning", id: stInitechID, keys: []string{"dubsim-pro", "dubsim-broke"},
			emails:     []string{"priya.raman@initech-learning.example", "tom.becker@initech-learning.example"},
			glossaries: map[string][]string{"translationsGlossaryId": {"6760869abd76c09876a4bc61"}, "pronunciationGlossaryId": {"676345cabd76c09876a4bc62"}}},
		{name: "Globex Studios", id: stGlobexID, keys: []string{"dubsim-enterprise"},
			emails:     []string{"grace.liu@globex-studios.example", "hiro.tanaka@globex-studios.example"},
			glossaries: map[string][]string{"translationsGlossaryId": {"679cf375bd76c09876a4bc5f"}, "voicesGlossaryId": {"679e0cabbd76c09876a4bc60"}}},
		{name: "own company", keys: []string{own}, glossaries: map[string][]string{}},
	}
	n := len(s.cos)
	s.artifacts, s.pool, s.projects, s.videos, s.fxVideos = make([][]string, n), make([][]string, n), make([][]string, n), make([][]string, n), make([][]string, n)
	for i, co := range s.cos {
		for _, k := range co.keys {
			s.coOf[k] = i
			s.keys = append(s.keys, k)
		}
	}

	// Before the load: two completed source artifacts per key, the fixture
	// records, and a project for the company without fixtures.
	for i, co := range s.cos {
		for j, k := range co.keys {
			for _, typ := range []string{"video", "audio"} {
				name := fmt.Sprintf("pool %s %d %s", co.name, j, typ)
				sent := time.Now()
				st, m := in.call("POST", "/api/v1/artifacts/create", k, stCanon(map[string]any{"name": name, "type": typ, "url": "https://cdn.test/pool/" + url.PathEscape(name) + ".mp4"}))
				require.Equal(t, http.StatusOK, st, "%v", m)
				if co.id == "" {
					co.id = stCompanyOf(m)
				}
				require.Equal(t, co.id, stCompanyOf(m), "the company of %s", k)
				id := stStr(m, "id")
				st, f := in.call("POST", "/_sim/artifacts/"+id+"/outcome", "", `{"outcome":"ready","now":true}`)
				require.Equal(t, http.StatusOK, st, "%v", f)
				require.Equal(t, sim.ArtifactCompleted, f["status"])
				o := &stObject{kind: "artifact", id: id, co: i, end: &stArtifactEnd{source: "pool", want: []string{sim.ArtifactCompleted}},
					forces: []stTimed{{val: sim.ArtifactCompleted, sent: sent, recv: time.Now()}}}
				s.register(o, m)
				s.pool[i] = append(s.pool[i], id)
			}
		}
	}
	st, dump := in.call("GET", "/_sim/studio", "", "")
	require.Equal(t, http.StatusOK, st, "%v", dump)
	fixtureProjects := map[string]int{}
	for _, p := range dump["projects"].([]any) {
		pm := p.(map[string]any)
		require.Equal(t, true, pm["fixture"], "only fixture projects before the load: %v", pm)
		co := slices.IndexFunc(s.cos, func(c *stCompany) bool { return c.id == pm["company_id"] })
		require.GreaterOrEqual(t, co, 0, "a fixture project of an unknown company: %v", pm)
		fixtureProjects[stStr(pm, "id")] = co
	}
	require.Len(t, fixtureProjects, 6)
	for id, co := range fixtureProjects {
		st, m := in.call("GET", "/api/v1/projects/"+id, s.cos[co].keys[0], "")
		require.Equal(t, http.StatusOK, st, "%v", m)
		s.register(&stObject{kind: "project", id: id, co: co, fixture: true}, m)
		req, err := http.NewRequest("GET", in.url+"/api/v1/projects/"+id+"/videos", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+s.cos[co].keys[0])
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var vs []map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&vs))
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		for _, v := range vs {
			s.register(&stObject{kind: "video", id: stStr(v, "id"), co: co, project: id, fixture: true}, v)
		}
	}
	require.Len(t, s.objs, 2*len(s.keys)+6+15, "pool artifacts, fixture projects and videos")
	st, m := callWith(t, in, "POST", "/api/v1/projects", own, `{"name":"First project"}`, stStudioHeader)
	require.Equal(t, http.StatusOK, st, "%v", m)
	s.register(&stObject{kind: "project", id: stStr(m, "id"), co: n - 1}, m)

	type op struct {
		name   string
		weight int
		run    func(c *pclient, r *rand.Rand, name string)
	}
	simple := func(f func(c *pclient, r *rand.Rand)) func(c *pclient, r *rand.Rand, _ string) {
		return func(c *pclient, r *rand.Rand, _ string) { f(c, r) }
	}
	ops := []op{
		{"artifact url", 9, s.createArtifactByURL},
		{"artifact upload", 6, s.createArtifactByUpload},
		{"artifact get", 8, simple(s.getArtifact)},
		{"artifact foreign", 3, simple(s.foreignArtifact)},
		{"artifact outcome", 3, simple(s.forceOutcome)},
		{"project create", 5, s.createProject},
		{"project list", 5, simple(s.listProjects)},
		{"project get", 6, simple(s.getProject)},
		{"project foreign", 4, s.foreignProject},
		{"project patch", 7, s.patchProject},
		{"video create", 9, s.createVideo},
		{"video list", 5, simple(s.listVideos)},
		{"video get", 7, simple(s.getVideo)},
		{"video foreign", 3, s.foreignVideo},
		{"video patch", 9, s.patchVideo},
		{"advance", 3, func(c *pclient, r *rand.Rand, _ string) {
			s.call(c, "advance", []int{200}, stEnvControl, "POST", "/_sim/clock/advance", "", fmt.Sprintf(`{"seconds":%d}`, 1+r.IntN(20)), nil)
		}},
		{"studio dump", 2, simple(s.dump)},
		{"clock", 1, func(c *pclient, r *rand.Rand, _ string) {
			s.call(c, "clock", []int{200}, stEnvControl, "GET", "/_sim/clock", "", "", nil)
		}},
	}
	weights := 0
	for _, o := range ops {
		weights += o.weight
	}

	opsPerClient := 25
	if testing.Short() {
		opsPerClient = 8
	}
	began := time.Now()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < parallelClients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := newPClient(t, in.url)
			r := rand.New(rand.NewPCG(seed, uint64(i)))
			<-start
			for k := 0; k < opsPerClient; k++ {
				w := r.IntN(weights)
				var o op
				for _, o = range ops {
					if w < o.weight {
						break
					}
					w -= o.weight
				}
				o.run(c, r, fmt.Sprintf("%s c%d-%d", o.name, i, k))
			}
		}(i)
	}
	close(start)
	wg.Wait()
	loadTime := time.Since(began)
	loadRequests := s.requests

	// Every lifecycle ends: the downloads record their result, then a day
	// passes.
	in.srv.Engine.Artifacts.WaitDownloads()
	st, m = in.call("POST", "/_sim/clock/advance", "", `{"seconds":86400}`)
	require.Equal(t, http.StatusOK, st, "%v", m)

	s.verify()

	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Empty(t, s.failures)
	assert.Zero(t, g.panicCount())
	assert.Empty(t, g.fivexx())
	assert.Empty(t, logs.records(), "records at level error or above")

	kinds := map[string]int{}
	acked := 0
	for _, o := range s.objs {
		if !o.fixture {
			kinds[o.kind]++
			acked++
		}
	}
	writes, forced := 0, 0
	for _, o := range s.objs {
		for _, f := range o.fields {
			writes += len(f.writes)
		}
		writes += len(o.statusWrites)
		forced += len(o.forces)
	}
	t.Logf("%d clients × %d operations (%d requests) in %v, then %d requests to verify; %d records created (%d artifacts, %d projects, %d videos), %d acknowledged field writes, %d forced outcomes, %d reads checked",
		parallelClients, opsPerClient, loadRequests, loadTime.Round(time.Millisecond), s.requests-loadRequests, acked,
		kinds["artifact"], kinds["project"], kinds["video"], writes, forced, len(s.reads))
	ends := map[string]int{}
	for _, o := range s.objs {
		if o.kind == "artifact" {
			st := s.statuses[o.id]
			last := st[0]
			for _, x := range st {
				if x.sent.After(last.sent) {
					last = x
				}
			}
			how := o.end.source
			if len(o.forces) > 0 && how != "pool" {
				how = "forced"
			}
			ends[how+" -> "+last.val]++
		}
	}
	endNames := slices.Sorted(maps.Keys(ends))
	for _, e := range endNames {
		t.Logf("  artifacts %-52s %4d", e, ends[e])
	}
	names := make([]string, 0, len(s.opCount))
	for name := range s.opCount {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Logf("  %-17s %5d requests, answers %s", name, s.opCount[name], formatCounts(s.opStatus[name]))
	}
	t.Logf("answers by status: %s", formatCounts(s.statusCount))
}

// verify reads every record back after the load, through the API of each
// company and the studio dump, and checks the invariants.
func (s *studioLoad) verify() {
	var jobs []func(c *pclient)
	s.mu.Lock()
	objs := make([]*stObject, 0, len(s.objs))
	for _, o := range s.objs {
		objs = append(objs, o)
	}
	s.mu.Unlock()
	sort.Slice(objs, func(i, j int) bool { return objs[i].id < objs[j].id })
	rot := 0
	for _, o := range objs {
		path := "/api/v1/artifacts/" + o.id
		denied := sim.MsgArtifactDenied
		switch o.kind {
		case "project":
			path, denied = "/api/v1/projects/"+o.id, sim.MsgStudioDenied
		case "video":
			path, denied = "/api/v1/projects/"+o.project+"/videos/"+o.id, sim.MsgStudioDenied
		}
		// Every key of its company reads it; one key of another company
		// (in turn) is refused.
		for _, k := range s.cos[o.co].keys {
			jobs = append(jobs, func(c *pclient) {
				a, sent, recv, ok := s.call(c, "verify own", []int{200}, stEnvStudio, "GET", path, k, "", nil)
				if ok {
					m := a.json()
					if stStr(m, "id") != o.id {
						s.fail("verify %s %s as %s: %s", o.kind, o.id, k, a.body)
					}
					s.read(o.kind, m, sent, recv)
					s.mu.Lock()
					s.final[o.id] = m
					s.mu.Unlock()
				}
			})
		}
		rot++
		oco := (o.co + 1 + rot%(len(s.cos)-1)) % len(s.cos)
		fk := s.cos[oco].keys[rot%len(s.cos[oco].keys)]
		jobs = append(jobs, func(c *pclient) {
			a, _, _, _ := s.call(c, "verify foreign", []int{400}, stEnvStudio, "GET", path, fk, "", nil)
			s.refused(fmt.Sprintf("verify: %s %s of %s as %s", o.kind, o.id, s.cos[o.co].name, fk), a, 400, denied)
		})
	}
	// The lists hold exactly the fixture records and the acknowledged
	// creations, and so does the dump of each company.
	for i, co := range s.cos {
		for _, k := range co.keys {
			jobs = append(jobs, func(c *pclient) {
				a, _, _, ok := s.call(c, "verify lists", []int{200}, stEnvStudio, "GET", "/api/v1/projects", k, "", nil)
				l, isList := stJSONList(a)
				if !ok || !isList {
					s.fail("verify: project list as %s: %s", k, a.body)
					return
				}
				s.sameIDs(fmt.Sprintf("projects listed for %s", k), l, s.idsOf(func(o *stObject) bool { return o.kind == "project" && o.co == i }))
			})
		}
		for _, pid := range s.projects[i] {
			jobs = append(jobs, func(c *pclient) {
				a, _, _, ok := s.call(c, "verify lists", []int{200}, stEnvStudio, "GET", "/api/v1/projects/"+pid+"/videos", co.keys[0], "", nil)
				l, isList := stJSONList(a)
				if !ok || !isList {
					s.fail("verify: video list of %s: %s", pid, a.body)
					return
				}
				s.sameIDs("videos listed in project "+pid, l, s.idsOf(func(o *stObject) bool { return o.kind == "video" && o.project == pid }))
			})
		}
		jobs = append(jobs, func(c *pclient) {
			a, _, _, ok := s.call(c, "verify dump", []int{200}, stEnvControl, "GET", "/_sim/studio?company_id="+co.id, "", "", nil)
			var d map[string][]map[string]any
			if !ok || json.Unmarshal(a.body, &d) != nil {
				s.fail("verify: studio dump of %s: %.300s", co.id, a.body)
				return
			}
			for _, kind := range []string{"artifact", "project", "video"} {
				s.sameIDs("records of "+co.name+" in the studio dump ("+kind+"s)", d[kind+"s"],
					s.idsOf(func(o *stObject) bool { return o.kind == kind && o.co == i }))
			}
		})
	}
	ch := make(chan func(*pclient))
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		c := newPClient(s.t, s.in.url)
		go func() {
			defer wg.Done()
			for j := range ch {
				j(c)
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()

	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkLists()
	s.checkReads()
	s.checkLifecycles()
}

func (s *studioLoad) idsOf(keep func(*stObject) bool) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for _, o := range s.objs {
		if keep(o) {
			ids = append(ids, o.id)
		}
	}
	return ids
}

// sameIDs checks that records holds each id of want exactly once and no
// other.
func (s *studioLoad) sameIDs(what string, records []map[string]any, want []string) {
	got := make([]string, 0, len(records))
	for _, r := range records {
		got = append(got, stStr(r, "id"))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		var missing, extra []string
		for _, id := range want {
			if !slices.Contains(got, id) {
				missing = append(missing, id)
			}
		}
		for i, id := range got {
			if !slices.Contains(want, id) || (i > 0 && got[i-1] == id) {
				extra = append(extra, id)
			}
		}
		s.fail("%s: %d records, want %d; missing %v, unexpected or repeated %v", what, len(got), len(want), missing, extra)
	}
}

// checkLists: a list read during the load held only records of the
// company (or of the project).
func (s *studioLoad) checkLists() {
	for _, l := range s.lists {
		for _, id := range l.ids {
			o := s.objs[id]
			switch {
			case o == nil:
				s.failures = append(s.failures, fmt.Sprintf("a %s list of %s held %s, which no acknowledged creation made", l.kind, s.cos[l.co].name, id))
			case l.kind == "projects" && (o.kind != "project" || o.co != l.co):
				s.failures = append(s.failures, fmt.Sprintf("the project list of %s held %s %s of %s", s.cos[l.co].name, o.kind, id, s.cos[o.co].name))
			case l.kind == "videos" && (o.kind != "video" || o.project != l.owner):
				s.failures = append(s.failures, fmt.Sprintf("the video list of project %s held %s %s of project %s", l.owner, o.kind, id, o.project))
			}
		}
	}
}

// checkReads: every field read during and after the load holds a value the
// acknowledged writes allow at the time of the read.
func (s *studioLoad) checkReads() {
	bad := 0
	for _, rd := range s.reads {
		o := s.objs[rd.id]
		if o == nil {
			s.failures = append(s.failures, fmt.Sprintf("read a record %s no acknowledged creation made", rd.id))
			continue
		}
		g := o.fields[rd.field]
		if g.allows(rd.val, rd.sent, rd.recv) {
			continue
		}
		if bad++; bad <= 10 {
			var ws []string
			for _, w := range g.writes {
				ws = append(ws, fmt.Sprintf("%s [%s, %s]", w.val, w.sent.Format("05.000000"), w.recv.Format("05.000000")))
			}
			s.failures = append(s.failures, fmt.Sprintf("%s %s: %s read %s in [%s, %s]; original %s, acknowledged writes %v",
				o.kind, o.id, rd.field, rd.val, rd.sent.Format("05.000000"), rd.recv.Format("05.000000"), g.original, ws))
		}
	}
	if bad > 10 {
		s.failures = append(s.failures, fmt.Sprintf("(%d reads of values no acknowledged write allows)", bad))
	}
}

var stRank = map[string]int{
	sim.ArtifactCreated: 0, sim.ArtifactStarted: 1, sim.ArtifactCompleted: 2, sim.ArtifactFailed: 2,
	sim.VideoNew: 0, sim.VideoInProgress: 1, sim.VideoCompleted: 2,
}

// checkLifecycles: statuses never go back (a video only when no PATCH
// wrote its status), a final status never changes, and after the load each
// artifact ended as its source or its forced outcome implies and each video
// is completed or holds a status an acknowledged PATCH allows.
func (s *studioLoad) checkLifecycles() {
	for id, seen := range s.statuses {
		o := s.objs[id]
		if o == nil {
			continue // reported by checkReads
		}
		last := seen[0] // the last read sent: one of verify, after every write
		for _, x := range seen {
			if x.sent.After(last.sent) {
				last = x
			}
		}
		if o.kind == "video" {
			if len(o.statusWrites) > 0 {
				g := stRegister{original: "(none)", writes: o.statusWrites}
				if !g.allows(last.val, last.sent, last.recv) {
					s.failures = append(s.failures, fmt.Sprintf("video %s: status %s after the load; acknowledged status writes %v", id, last.val, o.statusWrites))
				}
				continue
			}
			if !o.fixture && last.val != sim.VideoCompleted {
				s.failures = append(s.failures, fmt.Sprintf("video %s: status %s a day after the load, want %s", id, last.val, sim.VideoCompleted))
			}
		}
		for _, a := range seen {
			for _, b := range seen {
				if !a.recv.Before(b.sent) {
					continue
				}
				if stRank[b.val] < stRank[a.val] || (stRank[a.val] == 2 && b.val != a.val) {
					s.failures = append(s.failures, fmt.Sprintf("%s %s: status %s read after %s", o.kind, id, b.val, a.val))
				}
			}
		}
		if o.kind != "artifact" || o.end == nil {
			continue
		}
		want := o.end.want
		if len(o.forces) > 0 {
			g := stRegister{original: "(none)", writes: o.forces}
			if !g.allows(last.val, last.sent, last.recv) {
				s.failures = append(s.failures, fmt.Sprintf("artifact %s (%s): status %s after the load; acknowledged forced outcomes %v", id, o.end.source, last.val, o.forces))
			}
			continue
		}
		if !slices.Contains(want, last.val) {
			s.failures = append(s.failures, fmt.Sprintf("artifact %s (%s): status %s after the load, want one of %v", id, o.end.source, last.val, want))
		}
		v := s.final[id]
		switch {
		case last.val == sim.ArtifactCompleted && o.end.size > 0 && stCanon(v["size"]) != stCanon(o.end.size):
			s.failures = append(s.failures, fmt.Sprintf("artifact %s (%s): size %v, want %d", id, o.end.source, v["size"], o.end.size))
		case last.val == sim.ArtifactFailed && o.end.failMsg != "" && v["errorMessage"] != o.end.failMsg:
			s.failures = append(s.failures, fmt.Sprintf("artifact %s (%s): errorMessage %v, want %q", id, o.end.source, v["errorMessage"], o.end.failMsg))
		}
	}
	for _, o := range s.objs {
		if (o.kind == "artifact" || o.kind == "video") && len(s.statuses[o.id]) == 0 {
			s.failures = append(s.failures, fmt.Sprintf("%s %s was never read", o.kind, o.id))
		}
	}
}

// stRefusal reports what is wrong with a, which must be the studio
// error status {"error": msg} ("" when it is).
func stRefusal(a answer, status int, msg string) string {
	var m map[string]any
	switch {
	case a.status != status:
		return fmt.Sprintf("status %d, want %d: %s", a.status, status, a.body)
	case !strings.HasPrefix(a.header.Get("Content-Type"), "application/json"):
		return fmt.Sprintf("Content-Type %q", a.header.Get("Content-Type"))
	case json.Unmarshal(a.body, &m) != nil || len(m) != 1 || m["error"] != msg:
		return fmt.Sprintf("body %s, want {\"error\": %q}", a.body, msg)
	}
	return ""
}

// stHeldBurst sends n requests at once while the writer of the instance's
// store is held, so that the one request that takes the Idempotency-Key
// cannot finish before every other one has answered; then it releases the
// writer. It returns the n-1 answers given while the writer was held, and
// the last answer and the index of its request.
func stHeldBurst(t *testing.T, in *inst, db sim.Store, n int, req func(i int, c *pclient) answer) ([]answer, answer, int) {
	t.Helper()
	clients := make([]*pclient, n)
	for i := range clients {
		clients[i] = newPClient(t, in.url)
	}
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	releaseOnce := func() { once.Do(func() { close(release) }) }
	defer releaseOnce()
	go func() {
		_ = db.Update(t.Context(), func(sim.Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	type result struct {
		i int
		a answer
	}
	results := make(chan result, n)
	for i := range n {
		go func() { results <- result{i, req(i, clients[i])} }()
	}
	var early []answer
	timeout := time.After(time.Minute)
	for len(early) < n-1 {
		select {
		case r := <-results:
			early = append(early, r.a)
		case <-timeout:
			releaseOnce()
			t.Fatalf("only %d of %d requests answered while the store's writer was held", len(early), n-1)
		}
	}
	releaseOnce()
	last := <-results
	return early, last.a, last.i
}

// TestConcurrentStudioIdempotentCreations: for each studio creation
// (artifact, project, video), 100 clients send the same request with the
// same Idempotency-Key at once: one runs, the others get its answer
// (replayed) or 409 while it runs; then the key with another body is
// refused with 422. And 100 clients send 100 different bodies with one key:
// exactly one runs. Each creates exactly one record. Both are run twice:
// as they come, and with the store's writer held so that the one request
// that runs is in flight while all the others arrive (each of them gets the
// 409).
func TestConcurrentStudioIdempotentCreations(t *testing.T) {
	t.Parallel()
	var db sim.Store
	in, g, logs := guarded(t, func(c *app.Config) { db = c.Store })
	key := newAccount(t, in, `{"plan":"pro","balance_minutes":10}`) // a company of its own: every record is the test's
	st, src := in.call("POST", "/api/v1/artifacts/create", key, `{"name":"Source","type":"video","url":"https://cdn.test/idem/source.mp4"}`)
	require.Equal(t, http.StatusOK, st, "%v", src)
	co, srcID := stCompanyOf(src), stStr(src, "id")
	st, m := in.call("POST", "/_sim/artifacts/"+srcID+"/outcome", "", `{"outcome":"ready","now":true}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	st, host := callWith(t, in, "POST", "/api/v1/projects", key, `{"name":"Host"}`, stStudioHeader)
	require.Equal(t, http.StatusOK, st, "%v", host)
	pid := stStr(host, "id")
	c := newPClient(t, in.url)

	// records returns the ids of the company's records of a kind, from the
	// studio dump and, when the kind has one, the list endpoint (which must
	// agree).
	records := func(t *testing.T, kind, list string) []string {
		t.Helper()
		st, d := in.call("GET", "/_sim/studio?company_id="+co, "", "")
		require.Equal(t, http.StatusOK, st, "%v", d)
		var ids []string
		for _, r := range d[kind].([]any) {
			ids = append(ids, stStr(r.(map[string]any), "id"))
		}
		slices.Sort(ids)
		if list != "" {
			a := c.json("GET", list, key, "", nil)
			l, ok := stJSONList(a)
			require.True(t, ok, "%d %s", a.status, a.body)
			var listed []string
			for _, r := range l {
				listed = append(listed, stStr(r, "id"))
			}
			slices.Sort(listed)
			assert.Equal(t, ids, listed, "the list endpoint and the dump agree")
		}
		return ids
	}
	with := func(hdr map[string]string, idem string) map[string]string {
		out := map[string]string{"Idempotency-Key": idem}
		for k, v := range hdr {
			out[k] = v
		}
		return out
	}

	for _, tc := range []struct {
		name, path string
		hdr        map[string]string
		body       func(name string) string
		kind, list string
	}{
		{"artifact", "/api/v1/artifacts/create", nil, func(name string) string {
			return stCanon(map[string]any{"name": name, "type": "video", "url": "https://cdn.test/idem/clip.mp4"})
		}, "artifacts", ""},
		{"project", "/api/v1/projects", stStudioHeader, func(name string) string {
			return stCanon(map[string]any{"name": name})
		}, "projects", "/api/v1/projects"},
		{"video", "/api/v1/projects/" + pid + "/videos/create", nil, func(name string) string {
			return stCanon(map[string]any{"name": name, "workflowType": "dubbing", "sourceArtifactId": srcID, "sourceLanguage": "en", "targetLanguages": []string{"es-ES"}})
		}, "videos", "/api/v1/projects/" + pid + "/videos"},
	} {
		t.Run(tc.name+" same request", func(t *testing.T) {
			idem := "same-" + tc.name
			hdr := with(tc.hdr, idem)
			body := tc.body("Same " + tc.name)
			before := records(t, tc.kind, tc.list)
			answers := parallelSame(t, in, parallelClients, func(_ int, c *pclient) answer {
				return c.json("POST", tc.path, key, body, hdr)
			})
			var first []byte
			counts := map[int]int{}
			ran := 0
			for _, a := range answers {
				require.NoError(t, a.err)
				counts[a.status]++
				switch a.status {
				case http.StatusOK:
					if first == nil {
						first = a.body
					}
					assert.Equal(t, string(first), string(a.body), "every 200 is the answer of the request that ran")
					if a.header.Get("Idempotent-Replayed") == "" {
						ran++
					} else {
						assert.Equal(t, "true", a.header.Get("Idempotent-Replayed"))
					}
				case http.StatusConflict:
					assert.Empty(t, stRefusal(a, http.StatusConflict, fmt.Sprintf(sim.MsgIdempotencyInFlight, idem)))
				default:
					t.Errorf("status %d: %s", a.status, a.body)
				}
			}
			t.Logf("answers by status: %s", formatCounts(counts))
			require.NotNil(t, first, "one request ran")
			assert.Equal(t, 1, ran, "exactly one answer is not a replay")
			var created map[string]any
			require.NoError(t, json.Unmarshal(first, &created))
			id := stStr(created, "id")
			require.True(t, sim.IsStudioID(id), "%s", first)
			assert.Equal(t, "Same "+tc.name, created["name"])

			after := records(t, tc.kind, tc.list)
			assert.Equal(t, stSorted(append(slices.Clone(before), id)), after, "exactly one record more: the acknowledged one")

			again := c.json("POST", tc.path, key, body, hdr)
			assert.Equal(t, http.StatusOK, again.status)
			assert.Equal(t, string(first), string(again.body), "a later retry gets the same answer")
			assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))

			other := c.json("POST", tc.path, key, tc.body("Other "+tc.name), hdr)
			assert.Empty(t, stRefusal(other, http.StatusUnprocessableEntity, fmt.Sprintf(sim.MsgIdempotencyMismatch, idem)), "the key with another body")
			assert.Equal(t, after, records(t, tc.kind, tc.list), "no record more")
		})

		t.Run(tc.name+" different bodies", func(t *testing.T) {
			idem := "different-" + tc.name
			hdr := with(tc.hdr, idem)
			before := records(t, tc.kind, tc.list)
			answers := parallelSame(t, in, parallelClients, func(i int, c *pclient) answer {
				return c.json("POST", tc.path, key, tc.body(fmt.Sprintf("Body %d", i)), hdr)
			})
			counts := map[int]int{}
			winner := -1
			var id string
			for i, a := range answers {
				require.NoError(t, a.err)
				counts[a.status]++
				switch a.status {
				case http.StatusOK:
					winner = i
					id = stStr(a.json(), "id")
					assert.Empty(t, a.header.Get("Idempotent-Replayed"))
				case http.StatusConflict:
					assert.Empty(t, stRefusal(a, http.StatusConflict, fmt.Sprintf(sim.MsgIdempotencyInFlight, idem)))
				case http.StatusUnprocessableEntity:
					assert.Empty(t, stRefusal(a, http.StatusUnprocessableEntity, fmt.Sprintf(sim.MsgIdempotencyMismatch, idem)))
				default:
					t.Errorf("status %d: %s", a.status, a.body)
				}
			}
			t.Logf("answers by status: %s", formatCounts(counts))
			assert.Equal(t, 1, counts[http.StatusOK], "exactly one 200")
			assert.Equal(t, parallelClients-1, counts[http.StatusConflict]+counts[http.StatusUnprocessableEntity], "every other one refused")
			require.GreaterOrEqual(t, winner, 0)
			after := records(t, tc.kind, tc.list)
			assert.Equal(t, stSorted(append(slices.Clone(before), id)), after, "exactly one record more: the acknowledged one")
			st, d := in.call("GET", "/_sim/studio?company_id="+co, "", "")
			require.Equal(t, http.StatusOK, st)
			for _, r := range d[tc.kind].([]any) {
				if rm := r.(map[string]any); rm["id"] == id {
					assert.Equal(t, fmt.Sprintf("Body %d", winner), rm["name"], "the record of the request that got the 200")
				}
			}
		})

		t.Run(tc.name+" same request, one held in flight", func(t *testing.T) {
			idem := "held-same-" + tc.name
			hdr := with(tc.hdr, idem)
			body := tc.body("Held " + tc.name)
			before := records(t, tc.kind, tc.list)
			early, ran, _ := stHeldBurst(t, in, db, parallelClients, func(_ int, c *pclient) answer {
				return c.json("POST", tc.path, key, body, hdr)
			})
			for _, a := range early {
				require.NoError(t, a.err)
				assert.Empty(t, stRefusal(a, http.StatusConflict, fmt.Sprintf(sim.MsgIdempotencyInFlight, idem)), "while the first request runs")
			}
			require.NoError(t, ran.err)
			require.Equal(t, http.StatusOK, ran.status, "%s", ran.body)
			assert.Empty(t, ran.header.Get("Idempotent-Replayed"))
			id := stStr(ran.json(), "id")
			assert.Equal(t, stSorted(append(slices.Clone(before), id)), records(t, tc.kind, tc.list), "exactly one record more: the acknowledged one")

			again := parallelSame(t, in, parallelClients, func(_ int, c *pclient) answer {
				return c.json("POST", tc.path, key, body, hdr)
			})
			for _, a := range again {
				require.NoError(t, a.err)
				assert.Equal(t, http.StatusOK, a.status)
				assert.Equal(t, string(ran.body), string(a.body), "the answer of the request that ran")
				assert.Equal(t, "true", a.header.Get("Idempotent-Replayed"))
			}
			assert.Equal(t, stSorted(append(slices.Clone(before), id)), records(t, tc.kind, tc.list), "no record more")
		})

		t.Run(tc.name+" different bodies, one held in flight", func(t *testing.T) {
			idem := "held-different-" + tc.name
			hdr := with(tc.hdr, idem)
			before := records(t, tc.kind, tc.list)
			early, ran, winner := stHeldBurst(t, in, db, parallelClients, func(i int, c *pclient) answer {
				return c.json("POST", tc.path, key, tc.body(fmt.Sprintf("Held body %d", i)), hdr)
			})
			for _, a := range early {
				require.NoError(t, a.err)
				assert.Empty(t, stRefusal(a, http.StatusConflict, fmt.Sprintf(sim.MsgIdempotencyInFlight, idem)), "while the first request runs")
			}
			require.NoError(t, ran.err)
			require.Equal(t, http.StatusOK, ran.status, "%s", ran.body)
			created := ran.json()
			assert.Equal(t, fmt.Sprintf("Held body %d", winner), created["name"], "the request that ran")
			id := stStr(created, "id")

			late := parallelSame(t, in, parallelClients, func(i int, c *pclient) answer {
				return c.json("POST", tc.path, key, tc.body(fmt.Sprintf("Late body %d", i)), hdr)
			})
			for _, a := range late {
				require.NoError(t, a.err)
				assert.Empty(t, stRefusal(a, http.StatusUnprocessableEntity, fmt.Sprintf(sim.MsgIdempotencyMismatch, idem)), "after the first request")
			}
			assert.Equal(t, stSorted(append(slices.Clone(before), id)), records(t, tc.kind, tc.list), "exactly one record more: the acknowledged one")
		})
	}
	assert.Zero(t, g.panicCount())
	assert.Empty(t, g.fivexx())
	assert.Empty(t, logs.records())
}

func stSorted(s []string) []string { slices.Sort(s); return s }
