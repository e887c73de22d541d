package parity

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim/openapi"
	"github.com/dubsim/dubsim/sim/openapi/validate"
)

// Control modes.
const (
	// ControlAuto advances the target's clock through POST
	// /_sim/clock/advance between polls when GET /_sim/health and GET
	// /_sim/clock answer 200 at the platform URL (the target is dubsim with
	// its control API); otherwise the kit waits in real time.
	ControlAuto = "auto"
	// ControlOff always waits in real time.
	ControlOff = "off"
)

// DefaultSourceURL is the source video of the platform project: on dubsim a
// 12-second video, charged 1 minute. The real service needs a real video.
const DefaultSourceURL = "https://media.dubsim.test/short.mp4"

// HeaderInterface is dubsim's routing override of the shared address. The
// kit sends it only when the platform and studio URLs are the same address
// (only dubsim serves both interfaces on one address), and only on the two
// operations whose method and path both interfaces share.
const HeaderInterface = "X-Dubsim-Interface"

// Clock is the time the kit waits on between polls in real-time mode.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx is done.
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is the wall clock.
type RealClock struct{}

// Now is time.Now.
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits for d or until ctx is done.
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Config configures a run.
type Config struct {
	PlatformURL string
	StudioURL   string // empty: PlatformURL
	APIKey      string
	// StudioAPIKey is the key of the studio steps (empty: APIKey): the
	// provider manages platform keys in its app and studio keys in Studio.
	StudioAPIKey string
	// SourceURL is the source_video_url of the platform project
	// (DefaultSourceURL when empty).
	SourceURL string
	Control   string // ControlAuto (default) or ControlOff
	// Timeout bounds each wait for a final status (of simulated time when
	// the clock is advanced, of real time otherwise).
	Timeout time.Duration
	// Poll is the interval between reads of a resource being waited on; in
	// control mode, the clock advance between reads.
	Poll time.Duration
	// Client sends the requests (default: a client with a 2-minute timeout).
	Client *http.Client
	// Clock is waited on in real-time mode (default RealClock).
	Clock Clock
	// Documents returns the OpenAPI document of an interface (default
	// openapi.Document); no document and no error means the answers of that
	// interface are not checked.
	Documents func(name string) ([]byte, error)
	// Report receives the report as the run goes: a header line, one line
	// per step as it completes, and the summary (nil: nothing).
	Report io.Writer
}

// Default timings.
const (
	DefaultTimeout = 30 * time.Minute
	DefaultPoll    = 10 * time.Second
)

// runner is the state of one run.
type runner struct {
	cfg      Config
	platform *url.URL
	studio   *url.URL
	shared   bool
	advances int
	docs     map[string]*validate.Validator
	docErr   map[string]error
	vars     map[string]string
	raw      map[string]json.RawMessage
	rec      *Recording
}

// Run runs the scenario suite against the target of cfg and returns its
// recording. Drift is in the recording (Drifted); the error is for a
// configuration that cannot run and for a cancelled ctx (with the partial
// recording).
func Run(ctx context.Context, cfg Config) (*Recording, error) {
	r, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	r.detectControl(ctx)
	for _, s := range scenario() {
		if err := ctx.Err(); err != nil {
			return r.rec, err
		}
		r.record(r.runStep(ctx, s))
	}
	r.printf("%s\n", Summary(r.rec, r.advances, r.cfg.Poll))
	return r.rec, ctx.Err()
}

func newRunner(cfg Config) (*runner, error) {
	cfg.StudioURL = cmp.Or(cfg.StudioURL, cfg.PlatformURL)
	cfg.StudioAPIKey = cmp.Or(cfg.StudioAPIKey, cfg.APIKey)
	cfg.SourceURL = cmp.Or(cfg.SourceURL, DefaultSourceURL)
	cfg.Control = cmp.Or(cfg.Control, ControlAuto)
	cfg.Timeout = cmp.Or(max(cfg.Timeout, 0), DefaultTimeout)
	cfg.Poll = cmp.Or(max(cfg.Poll, 0), DefaultPoll)
	cfg.Client = cmp.Or(cfg.Client, &http.Client{Timeout: 2 * time.Minute})
	cfg.Clock = cmp.Or[Clock](cfg.Clock, RealClock{})
	if cfg.Documents == nil {
		cfg.Documents = openapi.Document
	}
	if cfg.Control != ControlAuto && cfg.Control != ControlOff {
		return nil, fmt.Errorf("parity: control must be %s or %s; got %q", ControlAuto, ControlOff, cfg.Control)
	}
	if cfg.APIKey == "" {
		return nil, errors.New("parity: an API key is required")
	}
	pu, err := baseURL("platform URL", cfg.PlatformURL)
	if err != nil {
		return nil, err
	}
	su, err := baseURL("studio URL", cfg.StudioURL)
	if err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, platform: pu, studio: su, shared: pu.String() == su.String(),
		docs: map[string]*validate.Validator{}, docErr: map[string]error{},
		vars: map[string]string{}, raw: map[string]json.RawMessage{},
		rec: &Recording{Format: Format, PlatformURL: pu.String(), StudioURL: su.String()}}
	for _, n := range []string{openapi.Platform, openapi.Studio, openapi.Control} {
		doc, err := cfg.Documents(n)
		if err == nil && doc != nil {
			r.docs[n], err = validate.New(n, doc)
		}
		if err != nil {
			r.docErr[n] = err
		}
	}
	return r, nil
}

func baseURL(what, s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(s, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("parity: the %s must be an absolute http(s) URL; got %q", what, s)
	}
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// record adds a step to the recording and the report.
func (r *runner) record(res Result) {
	r.rec.Steps = append(r.rec.Steps, res)
	r.printf("%s\n", FormatStep(res))
}

func (r *runner) printf(format string, args ...any) {
	if r.cfg.Report != nil {
		fmt.Fprintf(r.cfg.Report, format, args...)
	}
}

// ----- control -----

// detectControl decides between advancing the target's clock and waiting:
// GET /_sim/health (answered by dubsim even without its control API) and
// GET /_sim/clock must both answer 200. Both answers become control steps
// of the recording when the target is dubsim.
func (r *runner) detectControl(ctx context.Context) {
	where := fmt.Sprintf("platform %s, studio %s", r.platform, r.studio)
	if r.shared {
		where = fmt.Sprintf("platform and studio %s (one address)", r.platform)
	}
	r.printf("parity: %s\n", where)
	realWaits := fmt.Sprintf("waiting in real time: a read every %s, up to %s per wait", r.cfg.Poll, r.cfg.Timeout)
	if r.cfg.Control == ControlOff {
		r.printf("parity: control off: %s\n", realWaits)
		return
	}
	health := r.runStep(ctx, step{name: "control/health", iface: ifaceControl, method: http.MethodGet, path: "/_sim/health", expect: []int{200}})
	if health.Status != http.StatusOK {
		why := fmt.Sprintf("GET /_sim/health answered %d", health.Status)
		if health.Status == 0 && len(health.Reasons) > 0 {
			why = "GET /_sim/health: " + health.Reasons[0].Text
		}
		r.printf("parity: control: not dubsim (%s): %s\n", why, realWaits)
		return
	}
	r.record(health)
	clock := r.runStep(ctx, step{name: "control/clock", iface: ifaceControl, method: http.MethodGet, path: "/_sim/clock", expect: []int{200}})
	if clock.Status != http.StatusOK {
		clock.Verdict, clock.Reasons = VerdictOK, nil // dubsim with --no-control: nothing wrong
		clock.Note = "no control API"
		r.record(clock)
		r.printf("parity: control: dubsim without its control API (GET /_sim/clock answered %d): %s\n", clock.Status, realWaits)
		return
	}
	r.record(clock)
	r.rec.Control = true
	r.printf("parity: control: dubsim with its control API: the clock is advanced %s between reads, up to %s per wait\n", r.cfg.Poll, r.cfg.Timeout)
}

// advance moves the target's clock by the poll interval; its answer is
// checked against the control document.
func (r *runner) advance(ctx context.Context) []Reason {
	body := fmt.Sprintf(`{"seconds":%g}`, r.cfg.Poll.Seconds())
	resp := r.do(ctx, http.MethodPost, r.platform.String()+"/_sim/clock/advance", "application/json", []byte(body), nil, "")
	r.advances++
	if resp.err != nil {
		return []Reason{{Kind: ReasonControl, Text: "POST /_sim/clock/advance: " + resp.err.Error()}}
	}
	var out []Reason
	if resp.status != http.StatusOK {
		out = append(out, Reason{Kind: ReasonControl, Text: fmt.Sprintf("POST /_sim/clock/advance answered %d: %s", resp.status, clip(oneLine(string(resp.body)), 200))})
	}
	return append(out, r.check(ifaceControl, http.MethodPost, "/_sim/clock/advance", "/_sim/clock/advance", resp)...)
}

// ----- HTTP -----

type response struct {
	status int
	header http.Header
	body   []byte
	err    error
}

const maxBody = 64 << 20

func (r *runner) do(ctx context.Context, method, target, contentType string, body []byte, header http.Header, key string) response {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return response{err: err}
	}
	maps.Copy(req.Header, header)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	req.Header.Set("User-Agent", "dubsim-parity/1")
	resp, err := r.cfg.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL, _, _ = strings.Cut(ue.URL, "?") // no presigned signature in a report
		}
		return response{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return response{status: resp.StatusCode, header: resp.Header, err: fmt.Errorf("reading the body: %w", err)}
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// check validates a response against the document of its interface;
// template is the step's path template, for the report.
func (r *runner) check(doc, method, escapedPath, template string, resp response) []Reason {
	if err := r.docErr[doc]; err != nil {
		return []Reason{{Kind: ReasonDocument, Operation: doc, Text: fmt.Sprintf("the %s document cannot be used: %v", doc, err)}}
	}
	v := r.docs[doc]
	if v == nil {
		return nil
	}
	res, err := v.Check(method, escapedPath, resp.status, resp.header, resp.body)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, validate.ErrNoOperation):
		return []Reason{{Kind: ReasonUndocumented, Operation: doc + " " + method + " " + template,
			Text: fmt.Sprintf("the %s document has no operation %s %s", doc, method, template)}}
	case res.Response == "":
		return []Reason{{Kind: ReasonUndocumented, Operation: doc + " " + res.Operation, Text: err.Error()}}
	}
	return []Reason{{Kind: ReasonSchema, Operation: doc + " " + res.Operation, Text: err.Error()}}
}

// ----- steps -----

func (r *runner) runStep(ctx context.Context, s step) Result {
	res := Result{Name: s.name, Interface: s.iface, Method: s.method, Path: s.path, Shape: Shape{Body: BodyNone}}
	if s.iface == ifaceUpload {
		res.Interface = ifaceStudio
	}
	skip := func(why string) Result {
		res.Verdict, res.Reasons = VerdictSkip, []Reason{{Kind: ReasonSkipped, Text: why}}
		return res
	}
	for _, n := range s.needs {
		if r.vars[n] == "" {
			return skip("needs " + n + ", which an earlier step did not give")
		}
	}
	target, checkPath, doc := r.target(s)
	if s.iface == ifaceUpload {
		if strings.HasPrefix(checkPath, "/_uploads/") {
			res.Path = "/_uploads/{uploadId}/{fileName}"
		} else {
			doc = "" // another host (the real service's object storage): recorded, not validated
			res.Path = "{presignedUploadUrl}"
		}
	}
	if r.docs[doc] == nil && r.docErr[doc] == nil {
		doc = "" // no document: recorded, not checked
	}
	res.Document = doc
	var body []byte
	ct := ""
	if s.body != nil {
		var err error
		if body, ct, err = s.body(r); err != nil {
			return skip(err.Error())
		}
	}
	header := http.Header{}
	if s.ambiguous && r.shared {
		header.Set(HeaderInterface, s.iface)
	}
	key := s.key // none for a presigned upload (the URL is the authorisation) or the control API
	switch {
	case key != "":
	case s.iface == ifacePlatform:
		key = r.cfg.APIKey
	case s.iface == ifaceStudio:
		key = r.cfg.StudioAPIKey
	}

	var reasons []Reason
	var resp response
	if s.poll == nil {
		resp = r.do(ctx, s.method, target, ct, body, header, key)
	} else {
		resp, res.Note, reasons = r.pollUntil(ctx, s, target, checkPath, doc, header, key)
	}
	if resp.err != nil {
		reasons = appendNew(reasons, []Reason{{Kind: ReasonTransport, Text: resp.err.Error()}})
	}
	if resp.status != 0 {
		res.Shape = ShapeOf(resp.status, resp.header.Get("Content-Type"), resp.body)
		if !s.accepts(resp.status) {
			reasons = appendNew(reasons, []Reason{{Kind: ReasonStatus, Text: fmt.Sprintf("status %d, expected %s: %s", resp.status, s.expected(), clip(oneLine(string(resp.body)), 200))}})
		}
		if doc != "" {
			reasons = appendNew(reasons, r.check(doc, s.method, checkPath, res.Path, resp))
		}
		if s.after != nil && resp.status/100 == 2 && s.accepts(resp.status) {
			if err := s.after(r, resp.body); err != nil {
				reasons = appendNew(reasons, []Reason{{Kind: ReasonShape, Text: err.Error()}})
			}
		}
	}
	res.Reasons = reasons
	res.Verdict = VerdictOK
	if len(reasons) > 0 {
		res.Verdict = VerdictDrift
	}
	return res
}

var pathParam = regexp.MustCompile(`\{[^}]*\}`)

// target returns the URL of a step, the escaped path (without the base
// URL's own path and without the query) to validate, and the document.
func (r *runner) target(s step) (target, checkPath, doc string) {
	if s.iface == ifaceUpload {
		raw := r.vars[s.urlVar]
		u, err := url.Parse(raw)
		if err != nil {
			return raw, "", ""
		}
		return raw, u.EscapedPath(), openapi.Studio
	}
	base := r.platform
	if s.iface == ifaceStudio {
		base = r.studio
	}
	p := pathParam.ReplaceAllStringFunc(s.path, func(m string) string {
		name := m[1 : len(m)-1]
		v, ok := s.params[name]
		if !ok {
			v = r.vars[name]
		}
		return url.PathEscape(v)
	})
	target = base.String() + p
	if s.query != nil {
		target += "?" + s.query(r).Encode()
	}
	return target, p, s.iface
}

// pollUntil reads a resource until its status field is final, advancing the
// target's clock or waiting between reads. Every read is validated; the
// last one is the step's answer.
func (r *runner) pollUntil(ctx context.Context, s step, target, checkPath, doc string, header http.Header, key string) (response, string, []Reason) {
	p := s.poll
	var reasons []Reason
	start := r.cfg.Clock.Now()
	var advanced time.Duration
	for n := 1; ; n++ {
		resp := r.do(ctx, s.method, target, "", nil, header, key)
		if resp.err != nil || resp.status != http.StatusOK {
			return resp, "", reasons
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(resp.body, &m); err != nil {
			return resp, "", append(reasons, Reason{Kind: ReasonShape, Text: "the body is not a JSON object: " + err.Error()})
		}
		var status string
		if err := json.Unmarshal(m[p.field], &status); err != nil {
			return resp, "", append(reasons, Reason{Kind: ReasonShape, Text: fmt.Sprintf("no string %s in the body: %s", p.field, clip(oneLine(string(resp.body)), 200))})
		}
		if slices.Contains(p.final, status) {
			note := fmt.Sprintf("%s after %d read%s", status, n, plural(n))
			if status != p.want {
				why := ""
				if p.errField != "" {
					var msg any
					_ = json.Unmarshal(m[p.errField], &msg)
					why = fmt.Sprintf(" (%s: %v)", p.errField, msg)
				}
				reasons = append(reasons, Reason{Kind: ReasonOutcome, Text: fmt.Sprintf("the %s ended in status %s%s, not %s", p.what, status, why, p.want)})
			}
			return resp, note, reasons
		}
		if doc != "" {
			// The intermediate answers are checked too: their shape differs.
			reasons = appendNew(reasons, r.check(doc, s.method, checkPath, s.path, resp))
		}
		if r.rec.Control {
			if advanced >= r.cfg.Timeout {
				return resp, "", append(reasons, r.timeout(p, status, n))
			}
			if rs := r.advance(ctx); len(rs) > 0 {
				reasons = appendNew(reasons, rs)
				if rs[0].Kind == ReasonControl {
					r.rec.Control = false
					r.printf("parity: control: the clock advance failed; waiting in real time from now on\n")
				}
			}
			advanced += r.cfg.Poll
			continue
		}
		if r.cfg.Clock.Now().Add(r.cfg.Poll).Sub(start) > r.cfg.Timeout {
			return resp, "", append(reasons, r.timeout(p, status, n))
		}
		if err := r.cfg.Clock.Sleep(ctx, r.cfg.Poll); err != nil {
			return response{err: err}, "", reasons
		}
	}
}

func (r *runner) timeout(p *poll, status string, reads int) Reason {
	return Reason{Kind: ReasonTimeout, Text: fmt.Sprintf("the %s is still %s after %d read%s over %s", p.what, status, reads, plural(reads), r.cfg.Timeout)}
}

// appendNew appends the reasons of rs that to does not hold yet.
func appendNew(to, rs []Reason) []Reason {
	for _, x := range rs {
		if !slices.ContainsFunc(to, func(y Reason) bool { return x.Kind == y.Kind && x.Text == y.Text }) {
			to = append(to, x)
		}
	}
	return to
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Summary is the last line of the report.
func Summary(rec *Recording, advances int, step time.Duration) string {
	ok, drift, skip := rec.Counts()
	clock := "waited in real time"
	if rec.Control {
		clock = fmt.Sprintf("clock advanced %d time%s by %s", advances, plural(advances), step)
	}
	return fmt.Sprintf("parity: %d steps: %d OK, %d DRIFT, %d SKIP (%s)", len(rec.Steps), ok, drift, skip, clock)
}

// OpenAPIDrift lists, for each operation, the steps with reasons that come
// from dubsim's OpenAPI documents (schema mismatch, undocumented operation
// or status, unusable document), as
// "platform GET /api/v1/balance: platform/balance, ...".
func OpenAPIDrift(rec *Recording) []string {
	by := map[string][]string{}
	for _, s := range rec.Steps {
		for _, rs := range s.Reasons {
			if rs.OpenAPI() && !slices.Contains(by[rs.Operation], s.Name) {
				by[rs.Operation] = append(by[rs.Operation], s.Name)
			}
		}
	}
	out := make([]string, 0, len(by))
	for op, steps := range by {
		out = append(out, op+": "+strings.Join(steps, ", "))
	}
	sort.Strings(out)
	return out
}
