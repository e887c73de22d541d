package server_test

// The invariants TestConcurrentStudioClients (concurrency_studio_test.go)
// checks once the load has ended.

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/dubsim/dubsim/sim"
)

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
