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
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/tooltest"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/server"
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

	// The hundred clients run at once whatever their length: with 10
	// operations each, every kind of operation still races with the others
	// (the rarest, the clock read, about nine times); the long run
	// (tooltest.Long) sends 25.
	opsPerClient := 10
	switch {
	case testing.Short():
		opsPerClient = 8
	case tooltest.Long():
		opsPerClient = 25
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
