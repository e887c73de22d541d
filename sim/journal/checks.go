package journal

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// scan counts the key's entries that pick selects and returns among them
// the hits: those bad selects, each with why's excerpt.
func (a *analysis) scan(pick, bad func(e *Entry) bool, why func(e *Entry) string) (hits []hit, n int) {
	for _, e := range a.mine {
		if pick(e) {
			n++
			if bad(e) {
				hits = append(hits, hit{e, why(e)})
			}
		}
	}
	return hits, n
}

func checkJSONContentType(a *analysis) ([]hit, string) {
	hits, n := a.scan(func(e *Entry) bool {
		return e.Interface == InterfacePlatform && (e.Method == http.MethodPost || e.Method == http.MethodPatch) &&
			hasBody(e) && e.Path != pathCloning
	}, func(e *Entry) bool { return !httpx.IsJSONContentType(e.Headers[HeaderContentType]) }, bodyExcerpt)
	return hits, fmt.Sprintf("%d of %s with a body", len(hits), plural(n, "POST/PATCH request", "POST/PATCH requests"))
}

func checkCloningMultipart(a *analysis) ([]hit, string) {
	hits, n := a.scan(func(e *Entry) bool { return e.Method == http.MethodPost && e.Path == pathCloning },
		func(e *Entry) bool { return mediaType(e.Headers[HeaderContentType]) != "multipart/form-data" }, bodyExcerpt)
	return hits, fmt.Sprintf("%d of %s", len(hits), plural(n, "voice cloning request", "voice cloning requests"))
}

func checkIdempotencyKey(a *analysis) ([]hit, string) {
	hits, n := a.scan(func(e *Entry) bool {
		return e.Method == http.MethodPost && e.Interface == InterfacePlatform && !isValidation(e)
	}, func(e *Entry) bool { return e.Headers[HeaderIdempotencyKey] == "" },
		func(e *Entry) string { return "no Idempotency-Key; " + answered(e) })
	by := map[string]int{}
	for _, h := range hits {
		by[endpointOf(h.e.Path)]++
	}
	return hits, fmt.Sprintf("%d of %s without the header (%s)", len(hits), plural(n, "POST", "POSTs"), countList(by, sortedCounts(by)))
}

// retryStatuses invite a retry of the same request.
var retryStatuses = []int{http.StatusRequestTimeout, http.StatusConflict, http.StatusTooEarly, http.StatusTooManyRequests}

func checkRetryWithoutChange(a *analysis) ([]hit, string) {
	var hits []hit
	last := map[string]*Entry{}
	for _, e := range a.mine {
		if e.Aborted {
			continue
		}
		id := strings.Join([]string{e.Method, e.Path, e.RawQuery, e.Headers[HeaderContentType],
			strconv.FormatInt(e.RequestBodySize, 10), e.RequestBody}, "\x00")
		if prev, ok := last[id]; ok && prev.Status >= 400 && prev.Status < 500 &&
			!slices.Contains(retryStatuses, prev.Status) && e.Status == prev.Status && errorMessage(e) == errorMessage(prev) {
			hits = append(hits, hit{e, fmt.Sprintf("identical to #%d, which was %s; answered %d again", prev.Seq, answered(prev), e.Status)})
		}
		last[id] = e
	}
	return hits, plural(len(hits), "identical retry", "identical retries") + " after a 4xx answer"
}

// isPolledResource reports whether path is a resource clients poll.
func isPolledResource(path string) bool {
	if _, rest, ok := projectOf(path); ok {
		return rest == ""
	}
	id, found := strings.CutPrefix(path, pathArtifacts)
	return found && id != "" && id != "create" && !strings.Contains(id, "/")
}

func checkPolling(a *analysis) ([]hit, string) {
	var hits []hit
	last := map[string]*Entry{}
	var shortest time.Duration
	var shortestPath string
	for _, e := range a.mine {
		if e.Method != http.MethodGet || !isPolledResource(e.Path) {
			continue
		}
		if prev, ok := last[e.Path]; ok {
			gap := e.Time.Sub(prev.Time)
			if gap < a.minPoll && !a.advancedBetween(prev.Seq, e.Seq) {
				hits = append(hits, hit{e, fmt.Sprintf("%s after #%d", gap.Round(time.Millisecond), prev.Seq)})
				if len(hits) == 1 || gap < shortest {
					shortest, shortestPath = gap, e.Path
				}
			}
		}
		last[e.Path] = e
	}
	return hits, fmt.Sprintf("%s sooner than %s after the previous read of the same resource; shortest interval %s (GET %s)",
		plural(len(hits), "read", "reads"), a.minPoll, shortest.Round(time.Millisecond), shortestPath)
}

// advancedBetween reports whether the simulated clock was advanced through
// the control API between two requests.
func (a *analysis) advancedBetween(from, to uint64) bool {
	i, _ := slices.BinarySearch(a.advances, from+1)
	return i < len(a.advances) && a.advances[i] < to
}

// retryAfter returns when the client may send again after a 429.
func retryAfter(e *Entry) (time.Time, bool) {
	v := strings.TrimSpace(e.Headers[HeaderRetryAfter])
	if v == "" {
		return time.Time{}, false
	}
	if s, err := strconv.ParseInt(v, 10, 32); err == nil && s >= 0 {
		return e.End().Add(time.Duration(s) * time.Second), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return t, true
	}
	return time.Time{}, false
}

func checkRetryAfter(a *analysis) ([]hit, string) {
	var hits []hit
	var until time.Time
	var by *Entry
	var worst time.Duration
	for _, e := range a.mine {
		// A clock advance between the 429 and the request counts as the
		// wait: the studio's windows pass with advances too (fidelity ST5).
		if by != nil && e.Time.Before(until) && !a.advancedBetween(by.Seq, e.Seq) {
			early := until.Sub(e.Time)
			hits = append(hits, hit{e, fmt.Sprintf("sent %s after the 429 of #%d (Retry-After: %s), %s too early",
				e.Time.Sub(by.End()).Round(time.Millisecond), by.Seq, by.Headers[HeaderRetryAfter], early.Round(time.Millisecond))})
			worst = max(worst, early)
		}
		if e.Status == http.StatusTooManyRequests {
			if t, ok := retryAfter(e); ok && t.After(until) {
				until, by = t, e
			}
		}
	}
	return hits, fmt.Sprintf("%s before the Retry-After elapsed; up to %s too early", plural(len(hits), "request", "requests"), worst.Round(time.Millisecond))
}

func checkRequestAfterDelete(a *analysis) ([]hit, string) {
	var hits []hit
	deleted := map[string]*Entry{}
	ids := map[string]bool{}
	for _, e := range a.mine {
		id, _, ok := projectOf(e.Path)
		if !ok {
			continue
		}
		if d, gone := deleted[id]; gone {
			hits = append(hits, hit{e, fmt.Sprintf("project %s was deleted by #%d; %s", id, d.Seq, answered(e))})
			ids[id] = true
			continue
		}
		if isProjectDelete(e) && statusClass(e.Status) == "2xx" {
			deleted[id] = e
		}
	}
	return hits, fmt.Sprintf("%s on %s", plural(len(hits), "request", "requests"), plural(len(ids), "deleted project", "deleted projects"))
}

const maxVoiceKeys = 64

// voiceKeys returns the voice_key string values of a JSON body, reading as
// far as the body goes (a kept body may be cut off).
func voiceKeys(body string) []string {
	var keys []string
	dec := json.NewDecoder(strings.NewReader(body))
	// walk reads one value, the member key of an object ("" for others);
	// false when the body ends or breaks, or enough keys are found.
	var walk func(key string) bool
	walk = func(key string) bool {
		tok, err := dec.Token()
		if err != nil || len(keys) >= maxVoiceKeys {
			return false
		}
		if s, ok := tok.(string); ok && key == "voice_key" {
			keys = append(keys, s)
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return true
		}
		for dec.More() {
			member := ""
			if d == '{' {
				if tok, err = dec.Token(); err != nil {
					return false
				}
				member, _ = tok.(string)
			}
			if !walk(member) {
				return false
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err == nil
	}
	for walk("") {
	}
	return keys
}

func checkVoices(a *analysis) ([]hit, string) {
	var hits []hit
	read := false
	unknownPrefix := strings.TrimSuffix(sim.MsgUnknownVoice, "%s")
	for _, e := range a.mine {
		if e.Method == http.MethodGet && e.Path == pathVoices && statusClass(e.Status) == "2xx" {
			read = true
			continue
		}
		if !isRetranslation(e) && !isValidation(e) {
			continue
		}
		if e.Status == http.StatusBadRequest {
			if msg := errorMessage(e); strings.HasPrefix(msg, unknownPrefix) {
				hits = append(hits, hit{e, fmt.Sprintf("answered 400 %q", excerpt(msg, 80))})
				continue
			}
		}
		if read {
			continue
		}
		for _, k := range voiceKeys(e.RequestBody) {
			if k != sim.VoiceSoundalike && k != sim.VoiceEmotionalTransfer {
				hits = append(hits, hit{e, fmt.Sprintf("voice_key %q sent before any successful GET %s", excerpt(k, 60), pathVoices)})
				break
			}
		}
	}
	return hits, plural(len(hits), "re-translation or validation request", "re-translation or validation requests")
}

func checkActionWhileInProgress(a *analysis) ([]hit, string) {
	notReady := fmt.Sprintf(sim.MsgRetranslationNotReady, "*", "*")
	hits, _ := a.scan(func(e *Entry) bool {
		return e.Status == http.StatusBadRequest && (isProjectDelete(e) || isRetranslation(e))
	}, func(e *Entry) bool {
		msg := errorMessage(e)
		return msg == sim.MsgDeleteInProgress || sim.GlobMatch(notReady, msg)
	}, func(e *Entry) string { return fmt.Sprintf("answered 400 %q", excerpt(errorMessage(e), 120)) })
	deletes := 0
	for _, h := range hits {
		if isProjectDelete(h.e) {
			deletes++
		}
	}
	return hits, fmt.Sprintf("%s refused (%s, %s)", plural(len(hits), "request", "requests"),
		plural(deletes, "delete", "deletes"), plural(len(hits)-deletes, "re-translation", "re-translations"))
}

// checks returns the paths (globs) whose GET verifies the outcome of a
// failed change, or nil when there is nothing to verify.
func checks(e *Entry) []string {
	if e.Path == pathCloning || isValidation(e) {
		return nil // no server state
	}
	if e.Path == pathProjects && e.Method == http.MethodPost {
		return []string{pathProjects + "/*", pathBalance}
	}
	if id, _, ok := projectOf(e.Path); ok {
		return []string{pathProjects + "/" + id}
	}
	if e.Path == pathArtifacts+"create" {
		return []string{pathArtifacts + "*"}
	}
	return []string{e.Path}
}

func checkUnverifiedFailure(a *analysis) ([]hit, string) {
	var hits []hit
	for i, e := range a.mine {
		if e.Interface != InterfacePlatform || !isMutating(e.Method) || !(e.Status >= 500 || e.Aborted || e.Truncated) {
			continue
		}
		paths := checks(e)
		if paths == nil || verifiedLater(e, a.mine[i+1:], paths) {
			continue
		}
		what := answered(e)
		if e.Truncated && !e.Aborted {
			what = fmt.Sprintf("answered %d, truncated after %d bytes", e.Status, e.ResponseBytes)
		}
		hits = append(hits, hit{e, fmt.Sprintf("%s; no later GET of %s", what, strings.Join(paths, " or "))})
	}
	return hits, plural(len(hits), "failed change", "failed changes") + " never checked"
}

// verifiedLater reports whether a request after the failed change e reads
// one of paths (and got an answer), or retries e with its Idempotency-Key.
func verifiedLater(e *Entry, later []*Entry, paths []string) bool {
	key := e.Headers[HeaderIdempotencyKey]
	for _, l := range later {
		if l.Aborted {
			continue
		}
		if key != "" && l.Method == e.Method && l.Path == e.Path && l.Headers[HeaderIdempotencyKey] == key {
			return true
		}
		if l.Method != http.MethodGet {
			continue
		}
		for _, p := range paths {
			if sim.GlobMatch(p, l.Path) {
				return true
			}
		}
	}
	return false
}

// sortedCounts returns the keys of m, the largest count first.
func sortedCounts(m map[string]int) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(m[b]-m[a], strings.Compare(a, b)) })
	return keys
}

// countList renders "key n, key n" in the order of keys.
func countList(by map[string]int, keys []string) string {
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, by[k]))
	}
	return strings.Join(parts, ", ")
}
