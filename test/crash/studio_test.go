package crash

// TestCrashConsistencyStudio is the crash test of the studio interface: the
// same process, kill and restart machinery as TestCrashConsistency, with a
// load of studio projects, videos and artifacts (presigned uploads, URLs,
// fragments) and their updates.
//
//	go test ./test/crash -run Studio -v                                    # 10 kills
//	DUBSIM_CRASH_STUDIO_ITERATIONS=100 go test ./test/crash -run Studio -v # more
//	DUBSIM_CRASH_SEED=1234 go test ./test/crash -run Studio -v             # same choices as a logged run
//
// The seed (logged) drives every random choice (requests, kill delays,
// samples); timing still varies from run to run. Every created resource is
// named by a unique token, also its Idempotency-Key, so that a creation
// whose answer was lost in a kill is recognised in the state.
// DUBSIM_CRASH_STUDIO_SKIP_CLOCK=1 leaves out the checks that the simulated
// clock and the timestamps it writes never go back across a restart (they
// found that studio writes did not persist the clock), to look at the
// others should those fail again.
//
// The invariants, checked after every restart with the clock frozen, on the
// studio dump (GET /_sim/studio) and through the API (see
// studioHarness.check and verify):
//
//  1. Every acknowledged creation (project, video, artifact) exists with the
//     acknowledged id and the fields sent (name, manager, glossaries;
//     project, source artifact, languages, workflow type, remark, metadata;
//     artifact type, source, upload, and its size and duration once
//     processed); every record of the test's company is one the client
//     asked for, once; a creation whose answer was lost is found by its name
//     and re-sending it with its Idempotency-Key replays it (no second
//     record), while one that did not happen runs when re-sent.
//  2. Every acknowledged PATCH is visible: each field holds its last
//     acknowledged value, or the value of the PATCH sent after it without an
//     answer (all of that PATCH's fields, or none).
//  3. Lifecycles never go back: an artifact's or a video's status never
//     returns to an earlier status than one seen (answers or dumps), a final
//     status never changes, created_at never changes, updated_at never goes
//     back and does not change at all without a write; a resource not in
//     its final status has a transition due; the simulated clock does not
//     resume before a time already answered. The API answers what the dump
//     holds.
//  4. A day later, every artifact and video has reached its final status,
//     the one its source implies (upload_completed with the uploaded size
//     and duration, upload_failed with the expected message, completed).

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/dubsim/dubsim/sim/audio"
	"github.com/stretchr/testify/require"
)

const (
	defaultStudioIterations = 10
	studioWorkers           = 8
	studioKeyCount          = 3
	// studioBudget is the number of creations of a worker in one phase
	// (spread over it, so that kills find creations in flight): the dump
	// read at every check grows with every phase.
	studioBudget       = 12
	studioAPISample    = 40 // resources read back through the API at each check
	studioReplaySample = 8  // acknowledged creations re-sent at each check
	// acmeCompanyID is Acme Media of fixtures/studio.json: it has glossaries
	// of every kind; the test's keys join it.
	acmeCompanyID = "663266da5ec2709f7826386f"
	studioTimeFmt = "2006-01-02T15:04:05.000Z"
)

type studioKind string

const (
	kindProject  studioKind = "project"
	kindVideo    studioKind = "video"
	kindArtifact studioKind = "artifact"
)

var studioKinds = []studioKind{kindProject, kindVideo, kindArtifact}

func (k studioKind) index() int { return slices.Index(studioKinds, k) }

var (
	studioLangs      = []string{"es-ES", "fr-FR", "de-DE", "it-IT", "ja-JP"}
	studioWorkflows  = []string{"dubbing", "voiceover", "audio_description", "transcription", "translation", "subtitling"}
	studioProcessing = append(slices.Clone(studioWorkflows), "standard")
	// glossaryFields maps a project request field to its glossary kind.
	glossaryFields = map[string]string{"translationsGlossaryId": "translation", "voicesGlossaryId": "voices", "pronunciationGlossaryId": "pronunciation"}
)

// studioExpect is how an artifact's processing must end.
type studioExpect struct {
	status     string   // upload_completed or upload_failed
	size       *int64   // nil: not known in advance
	duration   *float64 // nil: not known in advance
	noDuration bool     // a script: no duration
	errPrefix  string
}

// studioRes is one creation request and what the client knows of the
// resource.
type studioRes struct {
	kind   studioKind
	token  string // name at creation, and Idempotency-Key
	apiKey string
	worker int
	path   string
	body   []byte
	state  createState
	id     string

	project *studioRes // video: its project
	source  *studioRes // video: its source artifact
	srcLang string

	artType, srcURL, srcPath, uploadID, uploadMethod string // artifact
	fragments                                        int
	expect                                           studioExpect

	// fields are the patchable fields (canonical JSON) as last
	// acknowledged; pending holds those of a PATCH sent without an answer.
	fields  map[string]string
	pending map[string]string

	createdAt    string    // createdAt answered
	createdFull  time.Time // created_at of the first dump that held it
	lastUpdated  string    // updatedAt last seen (answer or dump)
	lastFinal    bool      // it was seen in its final status then (projects: always)
	patchedSince bool      // a PATCH was sent after lastUpdated was seen
	rank         int       // highest lifecycle rank seen
	rankSeen     string    // the status seen at that rank
	finalSnap    string    // artifact: its final state, once seen
}

func (r *studioRes) String() string {
	return fmt.Sprintf("%s %s (creation %s, %s, key %s)", r.kind, r.id, r.token, r.state, r.apiKey)
}

func (r *studioRes) live() bool { return r.state == acked || r.state == committed }

// studioOwned is what one worker created and uses; only that worker touches
// it during load.
type studioOwned struct {
	projects, videos, artifacts []*studioRes
	sources                     []*studioRes // artifacts seen upload_completed that can be a video's source
}

type studioLedger struct {
	mu       sync.Mutex
	byToken  map[string]*studioRes
	byID     map[string]*studioRes
	order    []*studioRes
	owned    []*studioOwned
	maxStamp string // latest studio timestamp answered
	maxWhat  string
}

func (l *studioLedger) add(r *studioRes) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byToken[r.token] = r
	l.order = append(l.order, r)
}

// setID records the id of a creation; the same id for two creations is a
// violation.
func (l *studioLedger) setID(r *studioRes, id string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	r.id = id
	if o, ok := l.byID[id]; ok && o != r {
		return fmt.Sprintf("[1] %s %s returned for two creations: %s and %s", r.kind, id, o.token, r.token)
	}
	l.byID[id] = r
	return ""
}

func (l *studioLedger) own(r *studioRes) {
	o := l.owned[r.worker]
	switch r.kind {
	case kindProject:
		o.projects = append(o.projects, r)
	case kindVideo:
		o.videos = append(o.videos, r)
	case kindArtifact:
		o.artifacts = append(o.artifacts, r)
	}
}

func (l *studioLedger) stamp(what string, stamps ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range stamps {
		if s > l.maxStamp {
			l.maxStamp, l.maxWhat = s, what
		}
	}
}

type studioStats struct {
	requests, unknown, gets, uploads, patches, patchAcked, replays, fresh atomic.Int64
	creates, createAcked                                                  [3]atomic.Int64
}

type studioHarness struct {
	t    *testing.T
	seed uint64
	bin  string
	data string
	rng  *rand.Rand // kill delays, samples
	l    *studioLedger
	seq  atomic.Int64
	st   studioStats

	keys        []string
	userOfKey   map[string]string
	emails      []string          // the company's users
	userByEmail map[string]string // email -> user id
	glossaries  map[string][]string

	skipClock                         bool
	lastNow                           string
	kills, checks, passed, phases     int
	committedUnacked, absentUnacked   int
	patchesResolved, patchesUnapplied int
}

// ----- state dump of GET /_sim/studio -----

type studioVar struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type studioProjectRec struct {
	ID                    string    `json:"id"`
	CompanyID             string    `json:"company_id"`
	Name                  string    `json:"name"`
	Status                string    `json:"status"`
	ManagerID             string    `json:"manager_id"`
	TranslationGlossary   string    `json:"translation_glossary"`
	VoicesGlossary        string    `json:"voices_glossary"`
	PronunciationGlossary string    `json:"pronunciation_glossary"`
	CreatedBy             string    `json:"created_by"`
	Fixture               bool      `json:"fixture"`
	CreatedAt             time.Time `json:"created_at"`
	UpdatedAt             time.Time `json:"updated_at"`
}

type studioVideoRec struct {
	ID               string      `json:"id"`
	ProjectID        string      `json:"project_id"`
	CompanyID        string      `json:"company_id"`
	Name             string      `json:"name"`
	Status           string      `json:"status"`
	ProcessingType   string      `json:"processing_type"`
	SrcLang          string      `json:"src_lang"`
	DstLangs         []string    `json:"dst_langs"`
	SourceArtifactID string      `json:"source_artifact_id"`
	DurationSeconds  *float64    `json:"duration_seconds"`
	Remark           *string     `json:"remark"`
	StringVariables  []studioVar `json:"string_variables"`
	DueAt            time.Time   `json:"due_at"`
	Fixture          bool        `json:"fixture"`
	CreatedBy        string      `json:"created_by"`
	CreatedAt        time.Time   `json:"created_at"`
	UpdatedAt        time.Time   `json:"updated_at"`
}

type studioArtifactRec struct {
	ID           string            `json:"id"`
	CompanyID    string            `json:"company_id"`
	CreatedBy    string            `json:"created_by"`
	APIKey       string            `json:"api_key"`
	Name         string            `json:"name"`
	Type         string            `json:"type"`
	Status       string            `json:"status"`
	UploadMethod string            `json:"upload_method"`
	SourceKind   string            `json:"source_kind"`
	SourceURL    string            `json:"source_url"`
	SourcePath   string            `json:"source_path"`
	Fragments    []json.RawMessage `json:"fragments"`
	UploadID     string            `json:"upload_id"`
	S3Path       string            `json:"s3_path"`
	Size         *int64            `json:"size"`
	Duration     *float64          `json:"duration"`
	ErrorMessage string            `json:"error_message"`
	Pending      bool              `json:"pending"`
	DueAt        time.Time         `json:"due_at"`
	Fixture      bool              `json:"fixture"`
	CreatedAt    time.Time         `json:"created_at"`
	UpdatedAt    time.Time         `json:"updated_at"`
}

type studioDump struct {
	Users []struct {
		ID        string `json:"id"`
		CompanyID string `json:"company_id"`
		Email     string `json:"email"`
	} `json:"users"`
	Glossaries []struct {
		ID        string `json:"id"`
		CompanyID string `json:"company_id"`
		Kind      string `json:"kind"`
	} `json:"glossaries"`
	Projects  []studioProjectRec  `json:"projects"`
	Videos    []studioVideoRec    `json:"videos"`
	Artifacts []studioArtifactRec `json:"artifacts"`
}

// studioView is any studio API answer: project, video (get, create,
// update) or artifact (get, create).
type studioView struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`

	TranslationGlossary   *string `json:"translationGlossary"`
	VoicesGlossary        *string `json:"voicesGlossary"`
	PronunciationGlossary *string `json:"pronunciationGlossary"`

	ProcessingType  string      `json:"processingType"`
	WorkflowType    string      `json:"workflowType"`
	SrcLang         string      `json:"srcLang"`
	DstLangs        []string    `json:"dstLangs"`
	VideoDuration   *float64    `json:"videoDuration"`
	Remark          *string     `json:"remark"`
	StringVariables []studioVar `json:"stringVariables"`

	Type         string   `json:"type"`
	UploadMethod string   `json:"uploadMethod"`
	Size         *int64   `json:"size"`
	Duration     *float64 `json:"duration"`
	ErrorMessage *string  `json:"errorMessage"`
	S3Path       string   `json:"s3Path"`
}

func canon(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func studioTime(t time.Time) string { return t.UTC().Format(studioTimeFmt) }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func ptrString[T any](p *T) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

func projectRecFields(p studioProjectRec) map[string]string {
	return map[string]string{"name": canon(p.Name), "manager": canon(p.ManagerID),
		"translationsGlossaryId": canon(p.TranslationGlossary), "voicesGlossaryId": canon(p.VoicesGlossary),
		"pronunciationGlossaryId": canon(p.PronunciationGlossary)}
}

func videoRecFields(v studioVideoRec) map[string]string {
	return map[string]string{"name": canon(v.Name), "remark": canon(v.Remark), "processingType": canon(v.ProcessingType),
		"dstLangs": canon(v.DstLangs), "stringVariables": canon(v.StringVariables)}
}

// viewFields are the patchable fields an API answer shows (a project's
// manager is not shown).
func viewFields(k studioKind, v studioView) map[string]string {
	if k == kindProject {
		return map[string]string{"name": canon(v.Name), "translationsGlossaryId": canon(deref(v.TranslationGlossary)),
			"voicesGlossaryId": canon(deref(v.VoicesGlossary)), "pronunciationGlossaryId": canon(deref(v.PronunciationGlossary))}
	}
	pt := v.ProcessingType
	if pt == "" {
		pt = v.WorkflowType // the create answer
	}
	return map[string]string{"name": canon(v.Name), "remark": canon(v.Remark), "processingType": canon(pt),
		"dstLangs": canon(v.DstLangs), "stringVariables": canon(v.StringVariables)}
}

// statusRank orders the lifecycle of a kind; -1 for an unknown status.
func statusRank(k studioKind, status string) int {
	switch k {
	case kindVideo:
		return slices.Index([]string{"new", "in_progress", "completed"}, status)
	case kindArtifact:
		switch status {
		case "created":
			return 0
		case "upload_started":
			return 1
		case "upload_completed", "upload_failed":
			return 2
		}
		return -1
	}
	if status == "new" {
		return 0
	}
	return -1
}

func isFinal(k studioKind, status string) bool {
	return k == kindProject || statusRank(k, status) == 2
}

func artifactSnap(status string, size *int64, duration *float64, errMsg, updated string) string {
	return fmt.Sprintf("%s size=%s duration=%s error=%q updatedAt=%s", status, ptrString(size), ptrString(duration), errMsg, updated)
}

// sortedKeys lists a map's keys in order, for stable messages.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func fieldsString(m map[string]string) string {
	var b strings.Builder
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s=%s", k, m[k])
	}
	return b.String()
}

// ----- the test -----

func TestCrashConsistencyStudio(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs dubsim as a process and kills it repeatedly")
	}
	iterations := envInt(t, "DUBSIM_CRASH_STUDIO_ITERATIONS", defaultStudioIterations)
	seed := uint64(time.Now().UnixNano()) & (1<<53 - 1)
	if s := os.Getenv("DUBSIM_CRASH_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "DUBSIM_CRASH_SEED")
	}
	t.Logf("seed %d (replay with DUBSIM_CRASH_SEED=%d), %d kills, %d workers, race=%t", seed, seed, iterations, studioWorkers, proctest.RaceEnabled)
	start := time.Now()
	h := &studioHarness{t: t, seed: seed, bin: dubsimBinary(t), data: filepath.Join(t.TempDir(), "dubsim.db"),
		rng: rand.New(rand.NewPCG(seed, 0x73747564)), userOfKey: map[string]string{}, userByEmail: map[string]string{},
		glossaries: map[string][]string{}, skipClock: os.Getenv("DUBSIM_CRASH_STUDIO_SKIP_CLOCK") != "",
		l: &studioLedger{byToken: map[string]*studioRes{}, byID: map[string]*studioRes{}}}
	for range studioWorkers {
		h.l.owned = append(h.l.owned, &studioOwned{})
	}
	if h.skipClock {
		t.Logf("DUBSIM_CRASH_STUDIO_SKIP_CLOCK is set: the simulated clock and updated_at are not checked across restarts")
	}
	defer func() {
		var sent, ack []string
		for i, k := range studioKinds {
			sent = append(sent, fmt.Sprintf("%d %ss", h.st.creates[i].Load(), k))
			ack = append(ack, fmt.Sprint(h.st.createAcked[i].Load()))
		}
		t.Logf("seed %d: %d kills survived, %d phases of load, %d requests sent; creations sent: %s (acknowledged %s); "+
			"%d uploads, %d PATCHes sent (%d acknowledged), %d gets; %d requests unanswered at a kill: %d creations committed without an answer, "+
			"%d not committed (re-sent), %d unanswered PATCHes resolved (%d not applied); %d idempotent replays; %d state checks, %d invariant assertions passed; %s",
			seed, h.kills, h.phases, h.st.requests.Load(), strings.Join(sent, ", "), strings.Join(ack, "/"),
			h.st.uploads.Load(), h.st.patches.Load(), h.st.patchAcked.Load(), h.st.gets.Load(), h.st.unknown.Load(), h.committedUnacked,
			h.absentUnacked, h.patchesResolved, h.patchesUnapplied, h.st.replays.Load(), h.checks, h.passed, time.Since(start).Round(time.Millisecond))
	}()

	p := startProc(t, h.bin, h.data, seed)
	h.setup(p)
	h.check(p, "initial state", false)
	if t.Failed() {
		return
	}
	for i := 1; i <= iterations; i++ {
		h.load(p, fmt.Sprintf("kill %d", i), stopKill)
		p = startProc(t, h.bin, h.data, seed)
		h.check(p, fmt.Sprintf("restart after kill %d", i), true)
		if t.Failed() {
			return
		}
		h.kills++
	}

	// A graceful stop under load, then the same checks.
	h.load(p, "SIGTERM", stopTerm)
	p = startProc(t, h.bin, h.data, seed)
	h.check(p, "restart after SIGTERM", true)
	if t.Failed() {
		return
	}

	// A day later, everything has reached its final status.
	cl := newClient(p.base)
	defer cl.close()
	v := &violations{label: fmt.Sprintf("seed %d, a day later", seed)}
	require.NoError(t, cl.control(http.MethodPost, "/_sim/clock/freeze", nil, nil, http.StatusOK))
	var clk struct {
		Now string `json:"now"`
	}
	require.NoError(t, cl.control(http.MethodPost, "/_sim/clock/advance", map[string]any{"seconds": 86400}, &clk, http.StatusOK))
	d := h.dump(cl)
	h.verify(v, d, clk.Now)
	h.settled(v, d)
	h.report(v)
	p.terminate(t)
	p.checkStderr(t, "final")
}

func (h *studioHarness) keyOf(w int) string { return h.keys[w%len(h.keys)] }

// setup creates the test's keys in the Acme company and reads its users
// (managers) and glossaries.
func (h *studioHarness) setup(p *proc) {
	t := h.t
	cl := newClient(p.base)
	defer cl.close()
	for i := range studioKeyCount {
		var out struct {
			APIKey string `json:"api_key"`
			UserID string `json:"user_id"`
		}
		require.NoError(t, cl.control(http.MethodPost, "/_sim/accounts", map[string]any{
			"name": fmt.Sprintf("crash studio %d", i), "plan": "enterprise", "balance_minutes": 1000,
			"company_id": acmeCompanyID, "user_email": fmt.Sprintf("crash-studio-%d@acme-media.example", i),
		}, &out, http.StatusCreated))
		require.NotEmpty(t, out.UserID)
		h.keys = append(h.keys, out.APIKey)
		h.userOfKey[out.APIKey] = out.UserID
	}
	d := h.dump(cl)
	for _, u := range d.Users {
		if u.CompanyID == acmeCompanyID {
			h.emails = append(h.emails, u.Email)
			h.userByEmail[u.Email] = u.ID
		}
	}
	for _, g := range d.Glossaries {
		for f, kind := range glossaryFields {
			if g.Kind == kind && g.CompanyID == acmeCompanyID {
				h.glossaries[f] = append(h.glossaries[f], g.ID)
			}
		}
	}
	require.GreaterOrEqual(t, len(h.emails), studioKeyCount+1, "users of company %s", acmeCompanyID)
	for f := range glossaryFields {
		require.NotEmpty(t, h.glossaries[f], "company %s has no glossary for %s (fixtures/studio.json)", acmeCompanyID, f)
		sort.Strings(h.glossaries[f])
	}
}

func (h *studioHarness) dump(cl *client) *studioDump {
	var d studioDump
	require.NoError(h.t, cl.control(http.MethodGet, "/_sim/studio?company_id="+acmeCompanyID, nil, &d, http.StatusOK))
	return &d
}

// ----- load -----

// studioPhase is one stretch of load against one process.
type studioPhase struct {
	h      *studioHarness
	cl     *client
	ctx    context.Context
	dying  atomic.Bool
	mu     sync.Mutex
	errors []string
}

func (ph *studioPhase) fail(format string, args ...any) {
	ph.mu.Lock()
	defer ph.mu.Unlock()
	ph.errors = append(ph.errors, fmt.Sprintf(format, args...))
}

// report is the expect function of the workers: a failed check is recorded
// and the load goes on.
func (ph *studioPhase) report(ok bool, format string, args ...any) bool {
	if !ok {
		ph.fail(format, args...)
	}
	return ok
}

func (ph *studioPhase) transport(what string, err error) bool {
	ph.h.st.unknown.Add(1)
	if !ph.dying.Load() {
		ph.fail("%s failed while the process was not being stopped: %v", what, err)
	}
	return false
}

func (ph *studioPhase) do(method, path, apiKey, idemKey string, body []byte) (response, error) {
	ph.h.st.requests.Add(1)
	return ph.cl.do(ph.ctx, method, path, apiKey, idemKey, body)
}

func (h *studioHarness) load(p *proc, label string, sig stopSignal) *proc {
	t := h.t
	h.phases++
	delay := time.Duration(50+h.rng.IntN(451)) * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ph := &studioPhase{h: h, cl: newClient(p.base), ctx: ctx}
	defer ph.cl.close()
	var wg sync.WaitGroup
	for w := range studioWorkers {
		rng := rand.New(rand.NewPCG(h.seed^0x5354, uint64(h.phases)<<8|uint64(w)))
		wg.Go(func() { ph.worker(w, rng) })
	}
	timer := time.NewTimer(delay)
	select {
	case <-timer.C:
	case <-p.exited:
		timer.Stop()
		cancel()
		wg.Wait()
		t.Fatalf("%s: dubsim exited on its own under load: %v\nstderr:\n%s", label, p.Err(), p.Stderr())
	}
	ph.dying.Store(true)
	switch sig {
	case stopKill:
		p.kill(t)
	case stopTerm:
		p.terminate(t)
	}
	cancel()
	wg.Wait()
	p.checkStderr(t, label)
	for _, e := range ph.errors {
		t.Errorf("seed %d, %s (after %v of load): %s", h.seed, label, delay, e)
	}
	if t.Failed() {
		t.FailNow()
	}
	return p
}

// worker sends requests until the phase ends or the process goes away.
func (ph *studioPhase) worker(w int, rng *rand.Rand) {
	o := ph.h.l.owned[w]
	budget := studioBudget
	for ph.ctx.Err() == nil {
		ok := true
		create := budget > 0
		switch r := rng.IntN(100); {
		case create && len(o.projects) == 0:
			ok = ph.createProject(w, rng)
			budget--
		case create && len(o.sources) == 0 && len(o.artifacts) < 3:
			ok = ph.createArtifact(w, rng)
			budget--
		case create && r < 6:
			ok = ph.createArtifact(w, rng)
			budget--
		case create && r < 9:
			ok = ph.createProject(w, rng)
			budget--
		case create && r < 15 && len(o.sources) > 0:
			ok = ph.createVideo(w, rng)
			budget--
		case r < 48 && len(o.projects) > 0:
			ok = ph.patchProject(o.projects[rng.IntN(len(o.projects))], rng)
		case r < 64 && len(o.videos) > 0:
			ok = ph.patchVideo(o.videos[rng.IntN(len(o.videos))], rng)
		case r < 78 && len(o.artifacts) > 0:
			ok = ph.getArtifact(w, pickUnsettled(o.artifacts, rng))
		case r < 88 && len(o.videos) > 0:
			ok = ph.get(pickUnsettled(o.videos, rng))
		case r < 94 && len(o.projects) > 0:
			ok = ph.listVideos(o.projects[rng.IntN(len(o.projects))])
		case len(o.projects) > 0:
			ok = ph.get(o.projects[rng.IntN(len(o.projects))])
		}
		if !ok {
			return
		}
	}
}

// pickUnsettled prefers a resource not seen in its final status.
func pickUnsettled(list []*studioRes, rng *rand.Rand) *studioRes {
	for range 3 {
		r := list[rng.IntN(len(list))]
		if r.rank < 2 {
			return r
		}
	}
	return list[rng.IntN(len(list))]
}

func (h *studioHarness) token(kind studioKind) string {
	return fmt.Sprintf("cs-%d-%c%06d", h.seed, kind[0], h.seq.Add(1))
}

func (ph *studioPhase) createProject(w int, rng *rand.Rand) bool {
	h := ph.h
	r := &studioRes{kind: kindProject, token: h.token(kindProject), apiKey: h.keyOf(w), worker: w, path: "/api/v1/projects", lastFinal: true}
	email := h.emails[rng.IntN(len(h.emails))]
	// managerEmail makes the body a studio creation on the shared address.
	body := map[string]any{"name": r.token, "managerEmail": email}
	r.fields = map[string]string{"name": canon(r.token), "manager": canon(h.userByEmail[email])}
	for _, f := range sortedKeys(glossaryFields) {
		r.fields[f] = canon("")
		if rng.IntN(2) == 0 {
			g := h.glossaries[f][rng.IntN(len(h.glossaries[f]))]
			body[f] = g
			r.fields[f] = canon(g)
		}
	}
	return ph.create(r, body)
}

func (ph *studioPhase) createVideo(w int, rng *rand.Rand) bool {
	h := ph.h
	o := h.l.owned[w]
	proj, src := o.projects[rng.IntN(len(o.projects))], o.sources[rng.IntN(len(o.sources))]
	r := &studioRes{kind: kindVideo, token: h.token(kindVideo), apiKey: h.keyOf(w), worker: w, project: proj, source: src, srcLang: "en",
		path: "/api/v1/projects/" + proj.id + "/videos/create"}
	wt := studioWorkflows[rng.IntN(len(studioWorkflows))]
	langs := pickLangs(rng)
	body := map[string]any{"name": r.token, "workflowType": wt, "sourceArtifactId": src.id, "sourceLanguage": r.srcLang, "targetLanguages": langs}
	var remark *string
	if rng.IntN(2) == 0 {
		s := "remark of " + r.token
		remark = &s
		body["remark"] = s
	}
	var vars []studioVar
	if rng.IntN(2) == 0 {
		vars = []studioVar{{Key: "token", Value: r.token}, {Key: "n", Value: strconv.Itoa(rng.IntN(1000))}}
		body["stringVariables"] = vars
	}
	r.fields = map[string]string{"name": canon(r.token), "remark": canon(remark), "processingType": canon(wt),
		"dstLangs": canon(langs), "stringVariables": canon(vars)}
	return ph.create(r, body)
}

func pickLangs(rng *rand.Rand) []string {
	l := slices.Clone(studioLangs)
	rng.Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
	return l[:1+rng.IntN(3)]
}

// wavBytes is a 16-bit mono 8 kHz PCM WAV file of quarters seconds of
// silence.
func wavBytes(quarters int) []byte {
	data := uint32(quarters * 4000)
	return append(audio.WAVHeader(8000, 1, 16, data), make([]byte, data)...)
}

func int64p(n int64) *int64       { return &n }
func float64p(f float64) *float64 { return &f }

// createArtifact creates an artifact from a presigned upload (a WAV file, a
// script, a file that is not media, or nothing uploaded), a URL (a fixture
// clip, a derived duration, a fixture failure) or URL fragments.
func (ph *studioPhase) createArtifact(w int, rng *rand.Rand) bool {
	h := ph.h
	r := &studioRes{kind: kindArtifact, token: h.token(kindArtifact), apiKey: h.keyOf(w), worker: w, path: "/api/v1/artifacts/create",
		uploadMethod: "direct_url"}
	body := map[string]any{"name": r.token}
	completed := func(size *int64, duration *float64) studioExpect {
		return studioExpect{status: "upload_completed", size: size, duration: duration}
	}
	switch x := rng.IntN(100); {
	case x < 45:
		var content []byte
		file := r.token + ".wav"
		switch {
		case x < 30:
			q := 1 + rng.IntN(12)
			content = wavBytes(q)
			r.artType, r.expect = "audio", completed(int64p(int64(len(content))), float64p(float64(q)/4))
		case x < 37:
			file = r.token + ".txt"
			content = []byte(strings.Repeat("Script line of "+r.token+".\n", 1+rng.IntN(20)))
			r.artType, r.expect = "script", completed(int64p(int64(len(content))), nil)
			r.expect.noDuration = true
		case x < 41:
			content = []byte(strings.Repeat("not a media file "+r.token+"\n", 1+rng.IntN(20)))
			r.artType, r.expect = "audio", studioExpect{status: "upload_failed", errPrefix: "Unsupported media file " + file}
		default: // presigned, nothing uploaded
			r.artType = "video"
		}
		resp, err := ph.do(http.MethodGet, "/api/v1/artifacts/create?fileName="+url.QueryEscape(file), r.apiKey, "", nil)
		if err != nil {
			return ph.transport("presign "+file, err)
		}
		var pre struct {
			S3Path string `json:"s3Path"`
			URL    string `json:"presignedUploadUrl"`
		}
		if resp.status != http.StatusOK || json.Unmarshal(resp.body, &pre) != nil || pre.S3Path == "" || pre.URL == "" {
			ph.fail("presign %s: status %d: %s", file, resp.status, resp.body)
			return false
		}
		r.srcPath = pre.S3Path
		if parts := strings.Split(strings.TrimPrefix(pre.S3Path, "s3://"), "/"); len(parts) == 4 && parts[1] == "temp" {
			r.uploadID = parts[2]
		} else {
			ph.fail("presign %s: s3Path %q is not s3://bucket/temp/<upload id>/<file>", file, pre.S3Path)
			return false
		}
		if content == nil {
			r.expect = studioExpect{status: "upload_failed", errPrefix: "File not found at s3Path " + pre.S3Path}
		} else {
			u, err := url.Parse(pre.URL)
			if err != nil {
				ph.fail("presign %s: presignedUploadUrl %q: %v", file, pre.URL, err)
				return false
			}
			resp, err := ph.do(http.MethodPut, u.RequestURI(), "", "", content)
			if err != nil {
				return ph.transport("upload "+file, err)
			}
			if resp.status != http.StatusOK {
				ph.fail("upload %s: status %d: %s", file, resp.status, resp.body)
				return false
			}
			h.st.uploads.Add(1)
		}
		body["type"], body["s3Path"] = r.artType, r.srcPath
	case x < 65:
		r.artType = []string{"video", "audio"}[rng.IntN(2)]
		r.srcURL = "https://media.dubsim.test/short-" + r.token + ".mp4" // fixtures/media.json: 12 s
		size := int64(12 * 312_500)                                      // a derived video's bitrate
		if r.artType == "audio" {
			size = 12 * 16_000
		}
		r.expect = completed(int64p(size), float64p(12))
		body["type"], body["url"] = r.artType, r.srcURL
	case x < 75:
		r.artType, r.srcURL = "video", "https://cdn.test/"+r.token+".mp4" // a derived duration
		r.expect = completed(nil, nil)
		body["type"], body["url"] = r.artType, r.srcURL
	case x < 85:
		r.artType, r.srcURL = "video", "https://media.dubsim.test/fail-"+r.token+".mp4" // fixtures/media.json: fails
		r.expect = studioExpect{status: "upload_failed", errPrefix: "Processing failed: the audio track could not be decoded"}
		body["type"], body["url"] = r.artType, r.srcURL
	default:
		r.artType, r.uploadMethod, r.fragments = "video", "fragments", 2
		body["type"] = r.artType
		body["fragments"] = []map[string]any{
			{"url": "https://media.dubsim.test/short-" + r.token + "-1.mp4", "startTime": 0},
			{"url": "https://media.dubsim.test/short-" + r.token + "-2.mp4", "startTime": 12},
		}
		r.expect = completed(int64p(2*12*312_500), float64p(24))
	}
	return ph.create(r, body)
}

// create sends a creation with its token as Idempotency-Key.
func (ph *studioPhase) create(r *studioRes, body map[string]any) bool {
	h := ph.h
	var err error
	if r.body, err = json.Marshal(body); err != nil {
		panic(err)
	}
	r.state = inFlight
	h.l.add(r)
	h.st.creates[r.kind.index()].Add(1)
	resp, err := ph.do(http.MethodPost, r.path, r.apiKey, r.token, r.body)
	if err != nil {
		return ph.transport("create "+string(r.kind)+" "+r.token, err)
	}
	switch resp.status {
	case http.StatusOK, http.StatusCreated:
		var v studioView
		if err := json.Unmarshal(resp.body, &v); err != nil || v.ID == "" {
			ph.fail("create %s %s: status %d, body %s", r.kind, r.token, resp.status, resp.body)
			return false
		}
		h.acked(r, v, ph.report)
		return true
	case http.StatusConflict:
		// Only when the transport resent the request (it may: the request
		// carries an Idempotency-Key) while the first attempt ran: the
		// outcome is unknown, resolved after the restart.
		return true
	default:
		ph.fail("create %s %s: status %d: %s", r.kind, r.token, resp.status, resp.body)
		return false
	}
}

type reportFunc func(ok bool, format string, args ...any) bool

// acked records an acknowledged creation.
func (h *studioHarness) acked(r *studioRes, v studioView, report reportFunc) {
	r.state = acked
	h.st.createAcked[r.kind.index()].Add(1)
	if msg := h.l.setID(r, v.ID); msg != "" {
		report(false, "%s", msg)
	}
	r.createdAt = v.CreatedAt
	report(v.Name == r.token, "[1] create %s: the answer names it %q", r, v.Name)
	report(statusRank(r.kind, v.Status) == 0, "[1] create %s: status %q in the answer", r, v.Status)
	if r.kind == kindArtifact {
		report(v.Type == r.artType, "[1] create %s: type %q in the answer, sent %q", r, v.Type, r.artType)
	}
	h.observe(r, v, report)
	h.l.own(r)
}

// observe records what an answer says of a resource and checks it against
// what was seen before: the lifecycle never goes back, created_at never
// changes, updated_at only grows, and not at all without a write once final.
func (h *studioHarness) observe(r *studioRes, v studioView, report reportFunc) {
	rank := statusRank(r.kind, v.Status)
	report(rank >= 0, "[3] %s: unknown status %q", r, v.Status)
	if rank < r.rank || (r.rank == 2 && v.Status != r.rankSeen) {
		report(false, "[3] %s: status %s answered after %s was seen", r, v.Status, r.rankSeen)
	}
	if rank >= r.rank {
		r.rank, r.rankSeen = rank, v.Status
	}
	report(v.CreatedAt == r.createdAt, "[3] %s: createdAt %s answered, %s when created", r, v.CreatedAt, r.createdAt)
	if r.lastUpdated != "" {
		report(h.skipClock || v.UpdatedAt >= r.lastUpdated, "[3] %s: updatedAt %s answered after %s was seen", r, v.UpdatedAt, r.lastUpdated)
		if r.lastFinal && !r.patchedSince {
			report(v.UpdatedAt == r.lastUpdated, "[3] %s: updatedAt %s answered, %s was seen in status %s and nothing was written since",
				r, v.UpdatedAt, r.lastUpdated, v.Status)
		}
	}
	final := isFinal(r.kind, v.Status)
	r.lastUpdated, r.lastFinal, r.patchedSince = v.UpdatedAt, final, false
	if r.kind == kindArtifact && final {
		snap := artifactSnap(v.Status, v.Size, v.Duration, deref(v.ErrorMessage), v.UpdatedAt)
		report(r.finalSnap == "" || snap == r.finalSnap, "[3] %s: answered %s, was %s", r, snap, r.finalSnap)
		r.finalSnap = snap
	}
	if r.pending == nil && r.fields != nil {
		got := viewFields(r.kind, v)
		for f, val := range got {
			report(r.fields[f] == val, "[2] %s: %s is %s in an answer, the last acknowledged PATCH set %s", r, f, val, r.fields[f])
		}
	}
	h.l.stamp(fmt.Sprintf("%s (%s)", r, v.Status), v.CreatedAt, v.UpdatedAt)
}

func (h *studioHarness) readPath(r *studioRes) string {
	switch r.kind {
	case kindProject:
		return "/api/v1/projects/" + r.id
	case kindVideo:
		return "/api/v1/projects/" + r.project.id + "/videos/" + r.id
	}
	return "/api/v1/artifacts/" + r.id
}

// get reads a resource and records what it was told.
func (ph *studioPhase) get(r *studioRes) bool {
	_, ok := ph.read(r)
	return ok
}

func (ph *studioPhase) read(r *studioRes) (studioView, bool) {
	var v studioView
	resp, err := ph.do(http.MethodGet, ph.h.readPath(r), r.apiKey, "", nil)
	if err != nil {
		return v, ph.transport("get "+r.String(), err)
	}
	ph.h.st.gets.Add(1)
	if resp.status != http.StatusOK || json.Unmarshal(resp.body, &v) != nil || v.ID != r.id {
		ph.fail("get %s: status %d: %s", r, resp.status, resp.body)
		return v, false
	}
	ph.h.observe(r, v, ph.report)
	return v, true
}

// getArtifact reads an artifact; one seen upload_completed becomes a
// possible video source.
func (ph *studioPhase) getArtifact(w int, r *studioRes) bool {
	v, ok := ph.read(r)
	if ok && v.Status == "upload_completed" && r.artType != "script" {
		o := ph.h.l.owned[w]
		if !slices.Contains(o.sources, r) {
			o.sources = append(o.sources, r)
		}
	}
	return ok
}

func (ph *studioPhase) listVideos(p *studioRes) bool {
	resp, err := ph.do(http.MethodGet, "/api/v1/projects/"+p.id+"/videos", p.apiKey, "", nil)
	if err != nil {
		return ph.transport("list videos of "+p.String(), err)
	}
	ph.h.st.gets.Add(1)
	var list []studioView
	if resp.status != http.StatusOK || json.Unmarshal(resp.body, &list) != nil {
		ph.fail("list videos of %s: status %d: %s", p, resp.status, resp.body)
		return false
	}
	seen := map[string]bool{}
	for _, v := range list {
		seen[v.ID] = true
		if r := ph.h.l.byIDLocked(v.ID); r != nil && r.kind == kindVideo && r.worker == p.worker {
			ph.h.observe(r, v, ph.report)
		}
	}
	for _, r := range ph.h.l.owned[p.worker].videos {
		if r.project == p {
			ph.report(seen[r.id], "[1] %s is missing from the list of videos of %s", r, p)
		}
	}
	return true
}

func (l *studioLedger) byIDLocked(id string) *studioRes {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byID[id]
}

func (ph *studioPhase) patchProject(r *studioRes, rng *rand.Rand) bool {
	h := ph.h
	body, vals := map[string]any{}, map[string]string{}
	for range 1 + rng.IntN(3) {
		switch k := rng.IntN(5); k {
		case 0:
			name := fmt.Sprintf("%s~p%d", r.token, h.seq.Add(1))
			body["name"], vals["name"] = name, canon(name)
		case 1:
			email := h.emails[rng.IntN(len(h.emails))]
			body["managerEmail"], vals["manager"] = email, canon(h.userByEmail[email])
		default:
			f := sortedKeys(glossaryFields)[k-2]
			g := "" // removes the glossary
			if ids := h.glossaries[f]; rng.IntN(3) > 0 {
				g = ids[rng.IntN(len(ids))]
			}
			body[f], vals[f] = g, canon(g)
		}
	}
	return ph.patch(r, "/api/v1/projects/"+r.id, body, vals)
}

func (ph *studioPhase) patchVideo(r *studioRes, rng *rand.Rand) bool {
	h := ph.h
	body, vals := map[string]any{}, map[string]string{}
	for range 1 + rng.IntN(3) {
		switch rng.IntN(5) {
		case 0:
			name := fmt.Sprintf("%s~p%d", r.token, h.seq.Add(1))
			body["name"], vals["name"] = name, canon(name)
		case 1:
			if rng.IntN(4) == 0 {
				body["remark"], vals["remark"] = nil, canon(nil) // removes it
			} else {
				s := fmt.Sprintf("remark %d of %s", h.seq.Add(1), r.token)
				body["remark"], vals["remark"] = s, canon(s)
			}
		case 2:
			pt := studioProcessing[rng.IntN(len(studioProcessing))]
			body["processingType"], vals["processingType"] = pt, canon(pt)
		case 3:
			langs := pickLangs(rng)
			body["dstLangs"], vals["dstLangs"] = langs, canon(langs)
		case 4:
			if rng.IntN(4) == 0 {
				body["stringVariables"], vals["stringVariables"] = nil, canon([]studioVar(nil))
			} else {
				vars := []studioVar{{Key: "patch", Value: strconv.FormatInt(h.seq.Add(1), 10)}}
				body["stringVariables"], vals["stringVariables"] = vars, canon(vars)
			}
		}
	}
	return ph.patch(r, "/api/projects/"+r.project.id+"/videos/"+r.id, body, vals)
}

// patch sends a PATCH; until its answer is read, its fields are pending.
func (ph *studioPhase) patch(r *studioRes, path string, body map[string]any, vals map[string]string) bool {
	h := ph.h
	b, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	r.pending, r.patchedSince = vals, true
	h.st.patches.Add(1)
	resp, err := ph.do(http.MethodPatch, path, r.apiKey, "", b)
	if err != nil {
		return ph.transport(fmt.Sprintf("PATCH %s %s", r, b), err)
	}
	var v studioView
	if resp.status != http.StatusOK || json.Unmarshal(resp.body, &v) != nil || v.ID != r.id {
		ph.fail("PATCH %s %s: status %d: %s", r, b, resp.status, resp.body)
		return false
	}
	h.st.patchAcked.Add(1)
	maps.Copy(r.fields, vals)
	r.pending = nil
	h.observe(r, v, ph.report)
	return true
}

// ----- checks -----

// check runs the invariants against a freshly started process with the
// clock frozen: the dump must account for every acknowledged operation;
// unanswered creations are resolved and re-sent with their Idempotency-Key
// (committed ones must replay, the others run now); the API must answer
// what the dump holds. Time resumes for the next load.
func (h *studioHarness) check(p *proc, label string, afterStop bool) {
	t := h.t
	cl := newClient(p.base)
	defer cl.close()
	v := &violations{label: fmt.Sprintf("seed %d, %s", h.seed, label)}
	defer h.report(v)
	var clk struct {
		Now string `json:"now"`
	}
	require.NoError(t, cl.control(http.MethodPost, "/_sim/clock/freeze", nil, nil, http.StatusOK))
	require.NoError(t, cl.control(http.MethodPost, "/_sim/clock/advance", map[string]any{"seconds": 0}, &clk, http.StatusOK))
	now := clk.Now
	if afterStop && !h.skipClock {
		v.expect(now >= h.lastNow, "[3] the simulated clock went back across the restart: now %s, the last check before the stop read %s", now, h.lastNow)
		v.expect(now >= h.l.maxStamp, "[3] the simulated clock went back across the restart: now %s, but %s was answered before the stop (%s)",
			now, h.l.maxStamp, h.l.maxWhat)
	}
	d := h.dump(cl)
	committedNow, absentNow := h.verify(v, d, now)
	if len(v.list) > 0 {
		return
	}
	h.readBack(cl, v, d)
	h.resend(cl, v, committedNow, absentNow, now)
	d = h.dump(cl)
	h.verify(v, d, now)
	h.lastNow = now
	require.NoError(t, cl.control(http.MethodPost, "/_sim/clock/resume", nil, nil, http.StatusOK))
}

func (h *studioHarness) report(v *violations) {
	h.checks++
	h.passed += v.passed
	if len(v.list) > 0 {
		h.t.Errorf("%s", v)
	}
}

// studioRec is a dump record of any kind.
type studioRec struct {
	kind                 studioKind
	id, name, status     string
	createdBy            string
	createdAt, updatedAt time.Time
	dueAt                time.Time
	p                    *studioProjectRec
	v                    *studioVideoRec
	a                    *studioArtifactRec
}

func recordsOf(d *studioDump) []studioRec {
	var out []studioRec
	for i := range d.Projects {
		p := &d.Projects[i]
		if !p.Fixture {
			out = append(out, studioRec{kind: kindProject, id: p.ID, name: p.Name, status: p.Status, createdBy: p.CreatedBy,
				createdAt: p.CreatedAt, updatedAt: p.UpdatedAt, p: p})
		}
	}
	for i := range d.Videos {
		v := &d.Videos[i]
		if !v.Fixture {
			out = append(out, studioRec{kind: kindVideo, id: v.ID, name: v.Name, status: v.Status, createdBy: v.CreatedBy,
				createdAt: v.CreatedAt, updatedAt: v.UpdatedAt, dueAt: v.DueAt, v: v})
		}
	}
	for i := range d.Artifacts {
		a := &d.Artifacts[i]
		if !a.Fixture {
			out = append(out, studioRec{kind: kindArtifact, id: a.ID, name: a.Name, status: a.Status, createdBy: a.CreatedBy,
				createdAt: a.CreatedAt, updatedAt: a.UpdatedAt, dueAt: a.DueAt, a: a})
		}
	}
	return out
}

// verify checks a dump against the ledger. Creations that were unanswered
// are resolved: committed if a record has their name, absent otherwise.
// Afterwards the ledger holds the dump's values (unanswered PATCHes are
// decided).
func (h *studioHarness) verify(v *violations, d *studioDump, now string) (committedNow, absentNow []*studioRes) {
	l := h.l
	recs := recordsOf(d)
	byID := map[string]studioRec{}
	for _, rec := range recs {
		byID[rec.id] = rec
	}
	matched := map[*studioRes]studioRec{}
	for _, rec := range recs {
		r := l.byID[rec.id]
		if r == nil {
			c := l.byToken[rec.name]
			switch {
			case c != nil && c.kind == rec.kind && c.state == inFlight:
				c.state = committed
				if msg := l.setID(c, rec.id); msg != "" {
					v.expect(false, "%s", msg)
				}
				c.createdAt = studioTime(rec.createdAt)
				l.own(c)
				committedNow = append(committedNow, c)
				h.committedUnacked++
				r = c
			case c != nil && c.kind == rec.kind:
				v.expect(false, "[1] %s %s (name %q, created %s) duplicates %s: one creation, two records", rec.kind, rec.id, rec.name, studioTime(rec.createdAt), c)
				continue
			default:
				v.expect(false, "[1] %s %s (name %q, created by %s at %s) was never requested", rec.kind, rec.id, rec.name, rec.createdBy, studioTime(rec.createdAt))
				continue
			}
		}
		if !v.expect(r.kind == rec.kind, "[1] %s: the record %s is a %s", r, rec.id, rec.kind) {
			continue
		}
		matched[r] = rec
	}
	for _, r := range l.order {
		switch {
		case r.state == inFlight:
			r.state = absent
			absentNow = append(absentNow, r)
			h.absentUnacked++
		case r.live():
			_, ok := matched[r]
			v.expect(ok, "[1] %s is missing from the state", r)
		}
	}
	for _, r := range l.order {
		if rec, ok := matched[r]; ok {
			h.verifyOne(v, r, rec, byID, now)
		}
	}
	// Video sources: the artifacts in upload_completed.
	for _, o := range l.owned {
		o.sources = o.sources[:0]
		for _, r := range o.artifacts {
			if rec, ok := matched[r]; ok && rec.status == "upload_completed" && r.artType != "script" {
				o.sources = append(o.sources, r)
			}
		}
	}
	return committedNow, absentNow
}

// verifyOne checks one record against its creation.
func (h *studioHarness) verifyOne(v *violations, r *studioRes, rec studioRec, byID map[string]studioRec, now string) {
	updated, created := studioTime(rec.updatedAt), studioTime(rec.createdAt)
	v.expect(rec.createdBy == h.userOfKey[r.apiKey], "[1] %s: created_by %s, the key's user is %s", r, rec.createdBy, h.userOfKey[r.apiKey])
	v.expect(created == r.createdAt, "[3] %s: created_at %s, createdAt %s when created", r, created, r.createdAt)
	v.expect(r.createdFull.IsZero() || rec.createdAt.Equal(r.createdFull), "[3] %s: created_at %s, was %s", r,
		rec.createdAt.Format(time.RFC3339Nano), r.createdFull.Format(time.RFC3339Nano))
	r.createdFull = rec.createdAt
	if !h.skipClock {
		v.expect(updated <= now && created <= updated, "[3] %s: created_at %s, updated_at %s, the current simulated time is %s", r, created, updated, now)
		if r.lastUpdated != "" {
			v.expect(updated >= r.lastUpdated, "[3] %s: updated_at went back: %s, %s was seen", r, updated, r.lastUpdated)
		}
	}
	if r.lastUpdated != "" && r.lastFinal && !r.patchedSince {
		v.expect(updated == r.lastUpdated, "[3] %s: updated_at %s, but %s was seen in a final status and nothing was written since", r, updated, r.lastUpdated)
	}
	rank := statusRank(r.kind, rec.status)
	v.expect(rank >= 0, "[3] %s: unknown status %q", r, rec.status)
	v.expect(rank >= r.rank && (r.rank < 2 || rec.status == r.rankSeen), "[3] %s: status %s, but %s was seen", r, rec.status, r.rankSeen)
	final := isFinal(r.kind, rec.status)
	if r.kind != kindProject {
		v.expect(final == rec.dueAt.IsZero(), "[3] %s: status %s with due_at %v (a transition is due exactly when not final)", r, rec.status, rec.dueAt)
	}

	var cur map[string]string
	switch r.kind {
	case kindProject:
		v.expect(rec.status == "new", "[1] %s: status %q", r, rec.status)
		cur = projectRecFields(*rec.p)
	case kindVideo:
		rv := rec.v
		v.expect(rv.ProjectID == r.project.id, "[1] %s: project %s, created in %s", r, rv.ProjectID, r.project.id)
		v.expect(rv.SrcLang == r.srcLang && rv.SourceArtifactID == r.source.id, "[1] %s: src_lang %s, source %s; sent %s, %s",
			r, rv.SrcLang, rv.SourceArtifactID, r.srcLang, r.source.id)
		if src, ok := byID[r.source.id]; ok {
			v.expect(ptrString(rv.DurationSeconds) == ptrString(src.a.Duration), "[1] %s: duration_seconds %s, its source %s has duration %s",
				r, ptrString(rv.DurationSeconds), r.source, ptrString(src.a.Duration))
		}
		cur = videoRecFields(*rv)
	case kindArtifact:
		a := rec.a
		v.expect(a.Name == r.token && a.Type == r.artType && a.APIKey == r.apiKey, "[1] %s: name %q type %s key %s; sent %q %s %s",
			r, a.Name, a.Type, a.APIKey, r.token, r.artType, r.apiKey)
		v.expect(a.SourceURL == r.srcURL && a.SourcePath == r.srcPath && a.UploadID == r.uploadID && a.UploadMethod == r.uploadMethod &&
			len(a.Fragments) == r.fragments, "[1] %s: source url %q path %q upload %q method %s with %d fragments; sent %q %q %q %s %d",
			r, a.SourceURL, a.SourcePath, a.UploadID, a.UploadMethod, len(a.Fragments), r.srcURL, r.srcPath, r.uploadID, r.uploadMethod, r.fragments)
		v.expect(!a.Pending, "[3] %s: waits for a download (none was asked for)", r)
		if final {
			h.checkExpect(v, r, a)
			snap := artifactSnap(a.Status, a.Size, a.Duration, a.ErrorMessage, updated)
			v.expect(r.finalSnap == "" || snap == r.finalSnap, "[3] %s: %s, was %s", r, snap, r.finalSnap)
			r.finalSnap = snap
		}
	}
	if cur != nil {
		h.checkFields(v, r, cur)
		r.fields, r.pending = cur, nil
	}
	if rank >= r.rank {
		r.rank, r.rankSeen = rank, rec.status
	}
	r.lastUpdated, r.lastFinal, r.patchedSince = updated, final, false
}

// checkFields: each field holds its last acknowledged value, or the value of
// the PATCH sent after it without an answer, all of whose fields are then
// applied (or none).
func (h *studioHarness) checkFields(v *violations, r *studioRes, cur map[string]string) {
	if r.pending != nil {
		applied, unapplied := true, true
		for f, val := range r.pending {
			applied = applied && cur[f] == val
			unapplied = unapplied && cur[f] == r.fields[f]
		}
		v.expect(applied || unapplied, "[2] %s: the PATCH sent without an answer {%s} is partly applied: the state has {%s}, the last acknowledged values were {%s}",
			r, fieldsString(r.pending), fieldsString(cur), fieldsString(r.fields))
		h.patchesResolved++
		if !applied {
			h.patchesUnapplied++
		}
	}
	for _, f := range sortedKeys(r.fields) {
		if _, ok := r.pending[f]; ok {
			continue
		}
		v.expect(cur[f] == r.fields[f], "[2] %s: %s is %s, the last acknowledged value is %s and no later PATCH of it was sent",
			r, f, cur[f], r.fields[f])
	}
}

// checkExpect compares an artifact's end with what its source implies.
func (h *studioHarness) checkExpect(v *violations, r *studioRes, a *studioArtifactRec) {
	e := r.expect
	what := r.srcURL
	if what == "" {
		what = r.srcPath
	}
	v.expect(a.Status == e.status, "[1] %s (%s from %s): ended %s (%q), expected %s", r, r.artType, what, a.Status, a.ErrorMessage, e.status)
	if e.status == "upload_failed" {
		v.expect(strings.HasPrefix(a.ErrorMessage, e.errPrefix) && a.Size == nil, "[1] %s: failed with %q (size %s), expected %q",
			r, a.ErrorMessage, ptrString(a.Size), e.errPrefix)
		return
	}
	v.expect(a.ErrorMessage == "" && a.Size != nil && *a.Size > 0 && (e.size == nil || *a.Size == *e.size),
		"[1] %s (%s from %s): size %s, error %q; expected size %s", r, r.artType, what, ptrString(a.Size), a.ErrorMessage, ptrString(e.size))
	switch {
	case e.noDuration:
		v.expect(a.Duration == nil, "[1] %s: a script with duration %s", r, ptrString(a.Duration))
	case e.duration != nil:
		v.expect(a.Duration != nil && *a.Duration == *e.duration, "[1] %s (%s from %s): duration %s, expected %v", r, r.artType, what, ptrString(a.Duration), *e.duration)
	default:
		v.expect(a.Duration != nil && *a.Duration > 0, "[1] %s (%s from %s): duration %s", r, r.artType, what, ptrString(a.Duration))
	}
}

// readBack reads a sample of the resources through the API, with the clock
// frozen: the answers must be what the dump holds.
func (h *studioHarness) readBack(cl *client, v *violations, d *studioDump) {
	recs := map[string]studioRec{}
	for _, rec := range recordsOf(d) {
		recs[rec.id] = rec
	}
	var live []*studioRes
	for _, r := range h.l.order {
		if _, ok := recs[r.id]; ok && r.live() {
			live = append(live, r)
		}
	}
	h.rng.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
	live = live[:min(studioAPISample, len(live))]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	get := func(path, key string, out any) bool {
		h.st.requests.Add(1)
		h.st.gets.Add(1)
		resp, err := cl.do(ctx, http.MethodGet, path, key, "", nil)
		if !v.expect(err == nil, "GET %s: %v", path, err) {
			return false
		}
		return v.expect(resp.status == http.StatusOK && json.Unmarshal(resp.body, out) == nil, "GET %s: status %d: %s", path, resp.status, resp.body)
	}
	for _, r := range live {
		rec := recs[r.id]
		var view studioView
		if !get(h.readPath(r), r.apiKey, &view) {
			continue
		}
		h.observe(r, view, v.expect)
		diff := viewDiff(rec, view)
		v.expect(diff == "", "[3] %s: the API answers %s; the dump holds %s", r, diff, rec.status)
		if r.kind == kindProject {
			var list []studioView
			if get("/api/v1/projects/"+r.id+"/videos", r.apiKey, &list) {
				var got, want []string
				for _, x := range list {
					got = append(got, x.ID)
				}
				for _, x := range d.Videos {
					if x.ProjectID == r.id {
						want = append(want, x.ID)
					}
				}
				sort.Strings(got)
				sort.Strings(want)
				v.expect(slices.Equal(got, want), "[1] %s: the API lists videos %v, the dump holds %v", r, got, want)
			}
		}
	}
	var list []studioView
	if get("/api/v1/projects", h.keys[0], &list) {
		var got, want []string
		for _, x := range list {
			got = append(got, x.ID)
		}
		for _, x := range d.Projects {
			want = append(want, x.ID)
		}
		sort.Strings(got)
		sort.Strings(want)
		v.expect(slices.Equal(got, want), "[1] the API lists %d projects of the company, the dump holds %d: %v, %v", len(got), len(want), got, want)
	}
}

// viewDiff lists the differences between an API answer and a dump record.
func viewDiff(rec studioRec, v studioView) string {
	var diffs []string
	cmp := func(field, got, want string) {
		if got != want {
			diffs = append(diffs, fmt.Sprintf("%s %s (dump: %s)", field, got, want))
		}
	}
	cmp("name", v.Name, rec.name)
	cmp("status", v.Status, rec.status)
	cmp("createdAt", v.CreatedAt, studioTime(rec.createdAt))
	cmp("updatedAt", v.UpdatedAt, studioTime(rec.updatedAt))
	switch rec.kind {
	case kindProject:
		want := projectRecFields(*rec.p)
		for f, val := range viewFields(kindProject, v) {
			cmp(f, val, want[f])
		}
	case kindVideo:
		want := videoRecFields(*rec.v)
		for f, val := range viewFields(kindVideo, v) {
			cmp(f, val, want[f])
		}
		cmp("srcLang", v.SrcLang, rec.v.SrcLang)
		cmp("videoDuration", ptrString(v.VideoDuration), ptrString(rec.v.DurationSeconds))
	case kindArtifact:
		a := rec.a
		cmp("type", v.Type, a.Type)
		cmp("uploadMethod", v.UploadMethod, a.UploadMethod)
		cmp("size", ptrString(v.Size), ptrString(a.Size))
		cmp("duration", ptrString(v.Duration), ptrString(a.Duration))
		cmp("errorMessage", deref(v.ErrorMessage), a.ErrorMessage)
		cmp("s3Path", v.S3Path, a.S3Path)
	}
	sort.Strings(diffs)
	return strings.Join(diffs, ", ")
}

// resend re-sends, with their Idempotency-Key and body, the creations
// committed without an answer and a sample of acknowledged ones (the first
// answer must be replayed), and the unanswered creations that did not
// happen (they run now).
func (h *studioHarness) resend(cl *client, v *violations, committedNow, absentNow []*studioRes, now string) {
	nowT, err := time.Parse(studioTimeFmt, now)
	require.NoError(h.t, err)
	var sample []*studioRes
	for _, r := range h.l.order {
		// Idempotency keys live 24 h of simulated time.
		if r.state == acked && nowT.Sub(r.createdFull) < 20*time.Hour {
			sample = append(sample, r)
		}
	}
	h.rng.Shuffle(len(sample), func(i, j int) { sample[i], sample[j] = sample[j], sample[i] })
	replays := append(slices.Clone(committedNow), sample[:min(studioReplaySample, len(sample))]...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	send := func(r *studioRes) (response, studioView, bool) {
		var view studioView
		h.st.requests.Add(1)
		resp, err := cl.do(ctx, http.MethodPost, r.path, r.apiKey, r.token, r.body)
		if !v.expect(err == nil, "re-sending %s: %v", r, err) {
			return resp, view, false
		}
		ok := (resp.status == http.StatusOK || resp.status == http.StatusCreated) && json.Unmarshal(resp.body, &view) == nil && view.ID != ""
		return resp, view, v.expect(ok, "[1] re-sending %s with its Idempotency-Key: status %d: %s", r, resp.status, resp.body)
	}
	for _, r := range replays {
		resp, view, ok := send(r)
		if !ok {
			continue
		}
		h.st.replays.Add(1)
		replayed := resp.header.Get("Idempotent-Replayed") == "true"
		v.expect(replayed && view.ID == r.id, "[1] re-sending %s with its Idempotency-Key and body: %s %s, Idempotent-Replayed %q (expected the replay of %s)",
			r, r.kind, view.ID, resp.header.Get("Idempotent-Replayed"), r.id)
		if r.state == committed && replayed && view.ID == r.id {
			r.state = acked
		}
	}
	for _, r := range absentNow {
		resp, view, ok := send(r)
		if !ok {
			continue
		}
		if !v.expect(resp.header.Get("Idempotent-Replayed") != "true", "[1] re-sending %s, which is not in the state, replays %s %s (a creation acknowledged on replay but lost)",
			r, r.kind, view.ID) {
			continue
		}
		h.st.fresh.Add(1)
		h.st.creates[r.kind.index()].Add(1)
		h.acked(r, view, v.expect)
	}
}

// settled: a day later every artifact and video of the test has reached
// its final status.
func (h *studioHarness) settled(v *violations, d *studioDump) {
	var stuck []string
	for _, rec := range recordsOf(d) {
		if rec.kind != kindProject && (!isFinal(rec.kind, rec.status) || !rec.dueAt.IsZero()) {
			stuck = append(stuck, fmt.Sprintf("%s %s %s (due %v)", rec.kind, rec.id, rec.status, rec.dueAt))
		} else {
			v.passed++
		}
	}
	sort.Strings(stuck)
	v.expect(len(stuck) == 0, "[4] not in their final status a day later (lost transitions): %v", stuck)
}
