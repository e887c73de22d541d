package parity

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Kinds of Difference.
const (
	DiffStep        = "step"         // a step ran in one run and not in the other
	DiffStatus      = "status"       // another status
	DiffContentType = "content-type" // another media type
	DiffBody        = "body"         // another kind of body (json, empty, xml, ...)
	DiffMissing     = "missing"      // a field of the recording is absent now
	DiffExtra       = "extra"        // a field absent from the recording is present now
	DiffClass       = "class"        // a field of another class
)

// Difference is one way a run's shapes differ from a recording's.
type Difference struct {
	Step    string `json:"step"`
	Kind    string `json:"kind"`
	Pointer string `json:"pointer,omitempty"`
	// Was is the recording's value, Now this run's ("" when absent).
	Was string `json:"was,omitempty"`
	Now string `json:"now,omitempty"`
}

func (d Difference) String() string {
	at := d.Step
	if d.Kind == DiffMissing || d.Kind == DiffExtra || d.Kind == DiffClass {
		at += " " + displayPointer(d.Pointer)
	}
	switch d.Kind {
	case DiffMissing:
		return fmt.Sprintf("%s: missing (recorded %s)", at, d.Was)
	case DiffExtra:
		return fmt.Sprintf("%s: extra (%s, not in the recording)", at, d.Now)
	case DiffStep:
		if d.Now == "" {
			return fmt.Sprintf("%s: step not run now (recorded %s)", at, d.Was)
		}
		return fmt.Sprintf("%s: step not in the recording (now %s)", at, d.Now)
	}
	return fmt.Sprintf("%s: %s %s (recorded) vs %s (now)", at, d.Kind, orNone(d.Was), orNone(d.Now))
}

func displayPointer(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// Compare diffs this run's shapes against a recording, step by step (by
// name, in the recording's order, then the steps only this run has). Steps
// of the control interface are dubsim's own and are not compared.
func Compare(recorded, now *Recording) []Difference {
	var out []Difference
	seen := map[string]bool{}
	for _, was := range recorded.Steps {
		if was.Interface == "control" {
			continue
		}
		seen[was.Name] = true
		cur, ok := now.Step(was.Name)
		switch {
		case !ok || (cur.Verdict == VerdictSkip && was.Verdict != VerdictSkip):
			out = append(out, Difference{Step: was.Name, Kind: DiffStep, Was: stepState(was)})
		case was.Verdict == VerdictSkip && cur.Verdict != VerdictSkip:
			out = append(out, Difference{Step: was.Name, Kind: DiffStep, Now: stepState(cur)})
		default:
			out = append(out, CompareShapes(was.Name, was.Shape, cur.Shape)...)
		}
	}
	for _, cur := range now.Steps {
		if cur.Interface != "control" && !seen[cur.Name] && cur.Verdict != VerdictSkip {
			out = append(out, Difference{Step: cur.Name, Kind: DiffStep, Now: stepState(cur)})
		}
	}
	return out
}

func stepState(r Result) string {
	if r.Verdict == VerdictSkip {
		return "skipped"
	}
	return fmt.Sprintf("status %d", r.Status)
}

// CompareShapes diffs two shapes of one step. When the statuses differ the
// bodies answer different things, so only the status is reported. Classes
// are compatible when their sets share a class, integer counting as number
// (JSON does not tell 2.0 from 2); beneath a field that is missing, extra
// or of another class nothing more is reported.
func CompareShapes(step string, was, now Shape) []Difference {
	if was.Status != now.Status {
		return []Difference{{Step: step, Kind: DiffStatus, Was: fmt.Sprint(was.Status), Now: fmt.Sprint(now.Status)}}
	}
	var out []Difference
	if was.ContentType != now.ContentType {
		out = append(out, Difference{Step: step, Kind: DiffContentType, Was: was.ContentType, Now: now.ContentType})
	}
	if was.Body != now.Body {
		out = append(out, Difference{Step: step, Kind: DiffBody, Was: was.Body, Now: now.Body})
	}
	ptrs := slices.Collect(maps.Keys(was.Fields))
	for p := range now.Fields {
		if _, ok := was.Fields[p]; !ok {
			ptrs = append(ptrs, p)
		}
	}
	slices.Sort(ptrs)
	var reported []string // pointers whose descendants are not reported
	under := func(p string) bool {
		for _, r := range reported {
			if strings.HasPrefix(p, r+"/") {
				return true
			}
		}
		return false
	}
	for _, p := range ptrs {
		if under(p) {
			continue
		}
		w, inWas := was.Fields[p]
		n, inNow := now.Fields[p]
		var d *Difference
		switch {
		case !inNow:
			d = &Difference{Step: step, Kind: DiffMissing, Pointer: p, Was: w}
		case !inWas:
			d = &Difference{Step: step, Kind: DiffExtra, Pointer: p, Now: n}
		case !Compatible(w, n):
			d = &Difference{Step: step, Kind: DiffClass, Pointer: p, Was: w, Now: n}
		}
		if d != nil {
			out = append(out, *d)
			reported = append(reported, p)
		}
	}
	return out
}

// Compatible reports whether two recorded classes ("null|string") share a
// class, integer counting as number.
func Compatible(a, b string) bool {
	norm := func(c string) string {
		if c == ClassInteger {
			return ClassNumber
		}
		return c
	}
	set := map[string]bool{}
	for _, c := range strings.Split(a, "|") {
		set[norm(c)] = true
	}
	for _, c := range strings.Split(b, "|") {
		if set[norm(c)] {
			return true
		}
	}
	return false
}
