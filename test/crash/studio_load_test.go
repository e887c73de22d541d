package crash

// The load of TestCrashConsistencyStudio (studio_test.go): workers that
// create, read and update studio resources until the process is stopped.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dubsim/dubsim/sim/audio"
)

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
