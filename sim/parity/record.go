package parity

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Format identifies the recording format.
const Format = "dubsim-parity/1"

// Verdicts of a step.
const (
	VerdictOK    = "OK"
	VerdictDrift = "DRIFT"
	VerdictSkip  = "SKIP" // a value an earlier step should have given is missing
)

// Kinds of Reason.
const (
	// ReasonStatus: the status is not one the scenario expects.
	ReasonStatus = "unexpected-status"
	// ReasonSchema: the response does not match its operation in dubsim's
	// OpenAPI document (body, media type or required header).
	ReasonSchema = "schema"
	// ReasonUndocumented: the document has no operation for the request
	// (validate.ErrNoOperation), or the operation does not document the
	// status.
	ReasonUndocumented = "undocumented"
	// ReasonDocument: the document itself could not be loaded or compiled.
	ReasonDocument = "document"
	// ReasonShape: a value the scenario needs is missing from the body.
	ReasonShape = "shape"
	// ReasonOutcome: a polled resource ended in a failure status.
	ReasonOutcome = "outcome"
	// ReasonTimeout: a polled resource did not reach a final status.
	ReasonTimeout = "timeout"
	// ReasonTransport: no HTTP answer.
	ReasonTransport = "transport"
	// ReasonControl: the control API of the target failed while advancing
	// its clock.
	ReasonControl = "control"
	// ReasonSkipped: the step could not run.
	ReasonSkipped = "skipped"
)

// Reason is why a step drifted.
type Reason struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Operation is the documented operation the check used, when one was
	// found ("platform getBalance"), or the document and request when none
	// was ("platform GET /api/v1/balance").
	Operation string `json:"operation,omitempty"`
}

// OpenAPI reports whether the reason comes from dubsim's OpenAPI documents
// (a schema mismatch, an undocumented operation or status, a document that
// does not compile) rather than from the scenario itself.
func (r Reason) OpenAPI() bool {
	return r.Kind == ReasonSchema || r.Kind == ReasonUndocumented || r.Kind == ReasonDocument
}

// Result is one step of a run.
type Result struct {
	Name      string `json:"name"`
	Interface string `json:"interface"` // platform, studio or control
	Method    string `json:"method"`
	Path      string `json:"path"` // the template
	Shape
	// Document is the OpenAPI document the response was checked against;
	// empty when it was not (a presigned upload to another host).
	Document string   `json:"document,omitempty"`
	Verdict  string   `json:"verdict"`
	Reasons  []Reason `json:"reasons,omitempty"`
	// Note says how a polled step ended ("ready after 3 reads").
	Note string `json:"note,omitempty"`
}

// Recording is a whole run, as --record writes it and --compare reads it:
// the steps in scenario order, each with its shape. Run it against the real
// service once, then compare dubsim's runs with it.
type Recording struct {
	Format      string `json:"format"`
	PlatformURL string `json:"platform_url"`
	StudioURL   string `json:"studio_url"`
	// Control says whether the target's clock was advanced through the
	// dubsim control API (otherwise the kit waited in real time).
	Control bool     `json:"control"`
	Steps   []Result `json:"steps"`
}

// Counts returns the number of steps by verdict.
func (r *Recording) Counts() (ok, drift, skip int) {
	for _, s := range r.Steps {
		switch s.Verdict {
		case VerdictOK:
			ok++
		case VerdictDrift:
			drift++
		default:
			skip++
		}
	}
	return ok, drift, skip
}

// Drifted reports whether any step is not OK.
func (r *Recording) Drifted() bool {
	_, d, s := r.Counts()
	return d+s > 0
}

// Step returns the step of that name.
func (r *Recording) Step(name string) (Result, bool) {
	for _, s := range r.Steps {
		if s.Name == name {
			return s, true
		}
	}
	return Result{}, false
}

// WriteRecording writes rec as indented JSON; map keys are sorted and the
// steps keep their scenario order, so two runs of one target give the same
// bytes wherever their shapes agree.
func WriteRecording(w io.Writer, rec *Recording) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadRecording reads a recording written by WriteRecording.
func ReadRecording(r io.Reader) (*Recording, error) {
	var rec Recording
	if err := json.NewDecoder(r).Decode(&rec); err != nil {
		return nil, fmt.Errorf("parity: recording: %w", err)
	}
	if rec.Format != Format {
		return nil, fmt.Errorf("parity: recording: format %q, want %q", rec.Format, Format)
	}
	return &rec, nil
}

// FormatStep is the report line of one step: verdict, name, method, path
// template, status, then the reasons (or the note of an OK step).
func FormatStep(r Result) string {
	status := "-"
	if r.Status != 0 {
		status = fmt.Sprint(r.Status)
	}
	tail := ""
	if len(r.Reasons) > 0 {
		parts := make([]string, len(r.Reasons))
		for i, rs := range r.Reasons {
			parts[i] = rs.Kind + ": " + clip(oneLine(rs.Text), 300)
		}
		tail = strings.Join(parts, "; ")
	} else if r.Note != "" {
		tail = "(" + r.Note + ")"
	}
	return strings.TrimRight(fmt.Sprintf("%-5s  %-34s %-6s %-58s %3s  %s", r.Verdict, r.Name, r.Method, r.Path, status, tail), " ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for i := range s { // cut on a rune boundary
		if i >= n {
			return s[:i] + "…"
		}
	}
	return s
}
