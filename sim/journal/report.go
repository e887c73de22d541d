package journal

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// Severities of findings.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Rule ids of the conformance report; they are stable.
const (
	RuleJSONWithoutContentType = "json-without-content-type"
	RuleCloningNotMultipart    = "cloning-not-multipart"
	RulePostWithoutIdempotency = "post-without-idempotency-key"
	RuleRetryWithoutChange     = "retry-without-change"
	RulePollingTooFast         = "polling-too-fast"
	RuleIgnoredRetryAfter      = "ignored-retry-after"
	RuleRequestAfterDelete     = "request-after-delete"
	RuleVoiceNotFromCatalogue  = "voice-not-from-catalogue"
	RuleActionWhileInProgress  = "action-while-in-progress"
	RuleUnverifiedFailure      = "unverified-failure"
)

const (
	maxExamples        = 3
	pathProjects       = "/api/v1/projects"
	pathBalance        = "/api/v1/balance"
	pathVoices         = "/api/v1/voices"
	pathCloning        = "/api/v1/cloning/synthesize"
	pathArtifacts      = "/api/v1/artifacts/"
	pathClockAdvance   = controlPrefix + "/clock/advance"
	suffixTranslations = "/translations"
	suffixValidate     = "/validate-translation-request"
	statusClassAborted = "aborted"
)

// Report is the conformance report of one API key.
type Report struct {
	APIKey      string    `json:"api_key"`
	GeneratedAt string    `json:"generated_at"`
	Summary     Summary   `json:"summary"`
	Findings    []Finding `json:"findings"`
}

// Summary describes the requests a report analysed.
type Summary struct {
	Requests       int            `json:"requests"`
	FirstSeq       uint64         `json:"first_seq,omitempty"`
	LastSeq        uint64         `json:"last_seq,omitempty"`
	ByEndpoint     map[string]int `json:"by_endpoint"`     // "GET /api/v1/projects/{project_id}": n
	ByStatusClass  map[string]int `json:"by_status_class"` // "2xx", "4xx", "aborted"
	Findings       int            `json:"findings"`
	Errors         int            `json:"errors"`
	Warnings       int            `json:"warnings"`
	JournalDropped uint64         `json:"journal_dropped"` // of every key: the report covers only the rest
}

// Finding is one rule the client broke, with how often and examples.
type Finding struct {
	Rule     string    `json:"rule"`
	Severity string    `json:"severity"`
	Title    string    `json:"title"`
	Detail   string    `json:"detail"`   // the rule and why it matters for the real service
	Observed string    `json:"observed"` // what this client did, in figures
	Count    int       `json:"count"`
	Examples []Example `json:"examples"`
}

// Example is one request that broke a rule.
type Example struct {
	Seq     uint64 `json:"seq"`
	Time    string `json:"time"`
	SimTime string `json:"sim_time,omitempty"`
	Method  string `json:"method"`
	Path    string `json:"path"`
	Status  int    `json:"status"`
	Excerpt string `json:"excerpt"`
}

// hit is a request that broke a rule, with what to show of it.
type hit struct {
	e       *Entry
	excerpt string
}

type rule struct {
	id, severity, title string
	detail              string // a %s takes the minimum poll interval
	check               func(a *analysis) (hits []hit, observed string)
}

// analysis is the input of the rules: one key's entries, oldest first.
type analysis struct {
	mine     []*Entry
	advances []uint64 // sequence ids of successful clock advances (any key)
	minPoll  time.Duration
}

// rules, in the order findings are listed: the errors, then the warnings.
var rules = []rule{
	{RuleJSONWithoutContentType, SeverityError, "JSON body sent without Content-Type: application/json",
		"POST and PATCH requests with a JSON body must carry Content-Type: application/json (the contract's authentication rule 2). " +
			"The service cannot tell what a body without it is: dubsim answers 400 ValidationError \"" + sim.MsgContentType + "\". " +
			"Set the header on every request with a body; many HTTP libraries set it only when asked to send JSON.",
		checkJSONContentType},
	{RuleCloningNotMultipart, SeverityError, "Voice cloning request that is not multipart/form-data",
		"POST " + pathCloning + " takes multipart/form-data: the fields text and language and one or more reference_audio_files parts " +
			"(the voice samples are files). A JSON or form-urlencoded body is refused with 400. Send the fields as multipart parts and let " +
			"the HTTP library set the Content-Type with its boundary.",
		checkCloningMultipart},
	{RuleIgnoredRetryAfter, SeverityError, "Request sent before the Retry-After of a 429 had elapsed",
		"A 429 Too Many Requests answer carries Retry-After: how long to wait (seconds or an HTTP date) before the next request. " +
			"Requests with the same API key sent earlier are refused again and prolong the throttling; a real service may block the key. " +
			"Wait at least Retry-After after the 429 arrived before sending anything with that key.",
		checkRetryAfter},
	{RuleVoiceNotFromCatalogue, SeverityError, "Re-translation voice not taken from the voices catalogue",
		"Re-translation speakers need a voice_key of the voices catalogue (GET " + pathVoices + ") for the project's target language, " +
			"or one of the special keys soundalike and emotional_transfer. The catalogue changes over time, so hard-coded keys break: read it " +
			"before choosing voices. Counted: re-translation and validation requests using a catalogue-style key before any successful read " +
			"of the catalogue by the same API key, and requests answered 400 \"Unknown voice ...\".",
		checkVoices},
	{RuleActionWhileInProgress, SeverityError, "Delete or re-translation of a project that is not ready",
		"A project can be re-translated only in status ready, and deleted only when its processing has ended (ready or error). " +
			"While it is in_progress the service refuses with 400 (\"" + sim.MsgDeleteInProgress + "\", \"... cannot be re-translated " +
			"while its status is in_progress ...\"). Read the project (GET " + pathProjects + "/{id}) and act once its status allows it.",
		checkActionWhileInProgress},
	{RuleUnverifiedFailure, SeverityError, "Failed change never checked",
		"A POST, PATCH or DELETE answered 5xx, cut off (dropped connection) or truncated may or may not have taken effect: the project " +
			"may exist and its minutes may be charged. Read the affected resource before retrying or giving up: after a failed creation " +
			"any GET " + pathProjects + "/... or GET " + pathBalance + " (or a retry with the same Idempotency-Key, which replays the outcome); " +
			"after a failed action on a project, GET " + pathProjects + "/{id}. Counted: failures never followed by such a read. " +
			"Voice cloning and validation requests change nothing on the server and are not counted.",
		checkUnverifiedFailure},
	{RulePostWithoutIdempotency, SeverityWarning, "POST without an Idempotency-Key",
		"The contract recommends an Idempotency-Key header on POST requests to guarantee uniqueness and prevent duplicate processing. " +
			"Without it a retry after a timeout or a dropped connection can create a second project and charge its minutes twice. Send a " +
			"fresh unique key per operation and the same key when retrying it. Validation requests (dry runs) are not counted.",
		checkIdempotencyKey},
	{RuleRetryWithoutChange, SeverityWarning, "Request repeated unchanged after a 4xx answer",
		"The same request (method, path, query, Content-Type and body) was sent again after a 4xx answer and got the same answer. " +
			"A 4xx says the request is wrong or not allowed now; repeating it unchanged cannot succeed and only adds load. Fix the request " +
			"or wait for what it depends on. Not counted: retries after 408, 409, 425 and 429, which invite a retry, and retries that got " +
			"another status or error message (the state changed meanwhile: the project finished, the account was created).",
		checkRetryWithoutChange},
	{RulePollingTooFast, SeverityWarning, "Polling faster than the minimum interval",
		"Progress is observed by reading the resource (there are no webhooks): GET " + pathProjects + "/{id}, and GET " +
			pathArtifacts + "{id} in the studio interface. Processing takes minutes; reading the same resource more often than every " +
			"%s of real time wastes requests and invites rate limiting. Poll at an interval or with back-off, starting " +
			"near estimated_completion_date. Two reads separated by a POST " + pathClockAdvance + " are not counted.",
		checkPolling},
	{RuleRequestAfterDelete, SeverityWarning, "Request on a deleted project",
		"Deletion is permanent: output files, scripts and results are removed and download URLs become invalid. Requests on a project " +
			"after its successful DELETE can only fail with 404; they show stale ids kept in a cache, a queue or a polling loop. Forget " +
			"the id once the DELETE succeeds.",
		checkRequestAfterDelete},
}

// Report analyses the stored requests of apiKey against the contract.
func (j *Journal) Report(apiKey string) Report {
	entries, stats := j.entries(Filter{})
	slices.Reverse(entries) // oldest first
	a := &analysis{minPoll: j.cfg.MinPollInterval}
	for i := range entries {
		e := &entries[i]
		if e.APIKey == apiKey {
			a.mine = append(a.mine, e)
		}
		if e.Method == http.MethodPost && e.Path == pathClockAdvance && statusClass(e.Status) == "2xx" {
			a.advances = append(a.advances, e.Seq)
		}
	}
	rep := Report{
		APIKey:      apiKey,
		GeneratedAt: formatTime(j.cfg.Now()),
		Summary:     Summary{Requests: len(a.mine), ByEndpoint: map[string]int{}, ByStatusClass: map[string]int{}, JournalDropped: stats.Dropped},
		Findings:    []Finding{},
	}
	if n := len(a.mine); n > 0 {
		rep.Summary.FirstSeq, rep.Summary.LastSeq = a.mine[0].Seq, a.mine[n-1].Seq
	}
	for _, e := range a.mine {
		rep.Summary.ByEndpoint[e.Method+" "+endpointOf(e.Path)]++
		rep.Summary.ByStatusClass[statusClass(e.Status)]++
	}
	for _, r := range rules {
		hits, observed := r.check(a)
		if len(hits) == 0 {
			continue
		}
		f := Finding{Rule: r.id, Severity: r.severity, Title: r.title, Detail: strings.ReplaceAll(r.detail, "%s", a.minPoll.String()), Observed: observed, Count: len(hits), Examples: []Example{}}
		for _, h := range hits[:min(len(hits), maxExamples)] {
			f.Examples = append(f.Examples, Example{Seq: h.e.Seq, Time: formatTime(h.e.Time), SimTime: formatTime(h.e.SimTime),
				Method: h.e.Method, Path: h.e.Path, Status: h.e.Status, Excerpt: h.excerpt})
		}
		rep.Findings = append(rep.Findings, f)
		if r.severity == SeverityError {
			rep.Summary.Errors++
		} else {
			rep.Summary.Warnings++
		}
	}
	rep.Summary.Findings = len(rep.Findings)
	return rep
}

// endpoints of the contract, to group requests by route; {x} matches one
// non-empty segment, and the first match wins.
var endpoints = []string{
	pathBalance, "/api/v1/options", pathVoices, pathProjects, pathCloning,
	pathProjects + "/{project_id}", pathProjects + "/{project_id}" + suffixTranslations, pathProjects + "/{project_id}" + suffixValidate,
	"/api/v1/artifacts/create", "/api/v1/artifacts/{artifact_id}",
	pathProjects + "/{project_id}/videos", pathProjects + "/{project_id}/videos/create", pathProjects + "/{project_id}/videos/{video_id}", "/api/projects/{project_id}/videos/{video_id}",
	"/files/projects/{project_id}/{generation}/{file}",
}

// endpointOf returns the route pattern of path, or path itself.
func endpointOf(path string) string {
	segs := strings.Split(path, "/")
	for _, p := range endpoints {
		if slices.EqualFunc(strings.Split(p, "/"), segs, segmentMatch) {
			return p
		}
	}
	return path
}

func segmentMatch(pattern, seg string) bool {
	if strings.HasPrefix(pattern, "{") {
		return seg != ""
	}
	return pattern == seg
}

func statusClass(code int) string {
	if code <= 0 {
		return statusClassAborted
	}
	return strconv.Itoa(code/100) + "xx"
}

// projectOf splits /api/v1/projects/{id}[/rest] into id and rest.
func projectOf(path string) (id, rest string, ok bool) {
	tail, found := strings.CutPrefix(path, pathProjects+"/")
	if !found {
		return "", "", false
	}
	id, rest, _ = strings.Cut(tail, "/")
	if rest != "" {
		rest = "/" + rest
	}
	return id, rest, id != ""
}

// projectCall reports whether e is method on /api/v1/projects/{id}+rest.
func projectCall(e *Entry, method, rest string) bool {
	_, r, ok := projectOf(e.Path)
	return ok && e.Method == method && r == rest
}

func isRetranslation(e *Entry) bool { return projectCall(e, http.MethodPost, suffixTranslations) }
func isValidation(e *Entry) bool    { return projectCall(e, http.MethodPost, suffixValidate) }
func isProjectDelete(e *Entry) bool { return projectCall(e, http.MethodDelete, "") }

func isMutating(method string) bool {
	return slices.Contains([]string{http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete}, method)
}

func hasBody(e *Entry) bool {
	if e.RequestBodySize > 0 {
		return true
	}
	n, err := strconv.ParseInt(e.Headers[HeaderContentLength], 10, 64)
	return err == nil && n > 0
}

func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	return mt
}

// errorMessage returns the message of an error answer: the envelope's
// message, or its error (the cloning refusal has only that), or the text.
func errorMessage(e *Entry) string {
	var env httpx.ControlEnvelope
	if json.Unmarshal([]byte(e.ResponseBody), &env) == nil {
		if env.Message != "" {
			return env.Message
		}
		if env.Error != "" {
			return env.Error
		}
	}
	return strings.TrimSpace(e.ResponseBody)
}

// excerpt makes s printable on one line and at most n bytes long.
func excerpt(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r < ' ' || r == ' ' || r == 0x7f }), " ")
	if len(s) > n {
		return clip(s, n) + "..."
	}
	return s
}

func bodyExcerpt(e *Entry) string {
	ct := "no Content-Type"
	if v := e.Headers[HeaderContentType]; v != "" {
		ct = fmt.Sprintf("Content-Type %q", v)
	}
	return ct + "; body " + excerpt(e.RequestBody, 80)
}

func answered(e *Entry) string {
	switch {
	case e.Aborted:
		return "connection dropped"
	case e.Status >= 400:
		return fmt.Sprintf("answered %d %q", e.Status, excerpt(errorMessage(e), 80))
	}
	return fmt.Sprintf("answered %d", e.Status)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
