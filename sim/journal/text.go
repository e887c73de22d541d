package journal

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

const textWidth = 100

// Text renders the report for a person: a header with the key and the
// summary, then one block per finding (rule, severity, title, what was
// observed, why it matters, examples), or "No findings.".
func (r Report) Text() string {
	var b strings.Builder
	s := r.Summary
	fmt.Fprintf(&b, "Conformance report for API key %q\n", r.APIKey)
	fmt.Fprintf(&b, "Generated at %s\n\n", r.GeneratedAt)
	if s.Requests == 0 {
		b.WriteString("Requests analysed: 0 (the journal holds no request with this API key)\n")
	} else {
		fmt.Fprintf(&b, "Requests analysed: %d (seq %d to %d)\n", s.Requests, s.FirstSeq, s.LastSeq)
		b.WriteString("By status: " + countList(s.ByStatusClass, slices.Sorted(maps.Keys(s.ByStatusClass))) + "\n") // 1xx..5xx, then "aborted"
		b.WriteString("By endpoint:\n")
		for _, ep := range sortedCounts(s.ByEndpoint) {
			fmt.Fprintf(&b, "  %5d  %s\n", s.ByEndpoint[ep], ep)
		}
	}
	if s.JournalDropped > 0 {
		b.WriteString(wrap(fmt.Sprintf("Note: the journal has dropped %d older requests (of every key); this report covers only the requests it still holds.", s.JournalDropped), ""))
	}
	fmt.Fprintf(&b, "Findings: %d (%s, %s)\n", s.Findings, plural(s.Errors, "error", "errors"), plural(s.Warnings, "warning", "warnings"))
	if len(r.Findings) == 0 {
		b.WriteString("\nNo findings.\n")
		return b.String()
	}
	for i, f := range r.Findings {
		fmt.Fprintf(&b, "\n%d. [%s] %s: %s\n", i+1, strings.ToUpper(f.Severity), f.Rule, f.Title)
		b.WriteString(wrap(fmt.Sprintf("Seen %s: %s.", plural(f.Count, "time", "times"), f.Observed), "   "))
		b.WriteString(wrap("Why: "+f.Detail, "   "))
		b.WriteString("   Examples:\n")
		for _, ex := range f.Examples {
			fmt.Fprintf(&b, "     #%d  %s  %s %s -> %s\n", ex.Seq, ex.Time, ex.Method, ex.Path, statusText(ex.Status))
			b.WriteString(wrap(ex.Excerpt, "         "))
		}
		if more := f.Count - len(f.Examples); more > 0 {
			fmt.Fprintf(&b, "     ... and %d more\n", more)
		}
	}
	return b.String()
}

func statusText(code int) string {
	if code <= 0 {
		return "aborted"
	}
	return fmt.Sprint(code)
}

// wrap breaks s into lines of at most textWidth columns, each starting
// with indent; words longer than a line stay whole.
func wrap(s, indent string) string {
	var b strings.Builder
	line := indent
	for _, w := range strings.Fields(s) {
		if len(line) > len(indent) && len(line)+1+len(w) > textWidth {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += w
	}
	b.WriteString(line + "\n")
	return b.String()
}
