package crash

// The model of TestCrashConsistencyStudio (studio_test.go): the resources it
// created and what each acknowledged, the ledger of them, and the records
// and views of the dump and the API.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
