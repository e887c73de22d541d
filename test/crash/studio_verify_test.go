package crash

// The checks of TestCrashConsistencyStudio (studio_test.go), run after every
// restart.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/stretchr/testify/require"
)

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
