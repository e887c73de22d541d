package dubsimtest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim/server"
)

// Outcomes of forced outcomes and outcome rules.
const (
	OutcomeReady = "ready"
	OutcomeError = "error"
)

// APIError is an error answer of the control API: the HTTP status and the
// envelope {"error": Name, "message": Message}. An answer that is not in
// the envelope (a proxy's 502, say) has an empty Name and its body, cut to
// 1 KiB, as Message.
type APIError struct {
	Method, Path string
	Status       int
	Name         string
	Message      string
}

func (e *APIError) Error() string {
	name := cmp.Or(e.Name, http.StatusText(e.Status))
	return fmt.Sprintf("dubsim: %s %s: %d %s: %s", e.Method, e.Path, e.Status, name, e.Message)
}

// Client calls the control API (/_sim/...) of a dubsim at a base URL: one
// started by Start or New, a container, or any other deployment. Its own
// methods are the calls on the whole simulator (health, background work,
// reset, state, fixtures); the calls on one resource of the control API are
// methods of its groups Clock, Accounts, Outcomes, Faults and Journal, as in
// c.Clock.Advance(ctx, time.Hour). Every method is one HTTP call
// (Clock.AdvanceTo: two); ctx bounds it. A Client is safe for concurrent
// use.
type Client struct {
	// HTTPClient sends the requests, also those of the groups; nil is
	// http.DefaultClient.
	HTTPClient *http.Client
	// Token is the control token of a dubsim started with one
	// (--control-token, DUBSIM_CONTROL_TOKEN), sent as
	// "Authorization: Bearer <Token>" with every call; "" sends none.
	Token string

	// Clock reads and moves the simulated clock (/_sim/clock).
	Clock *ClockAPI
	// Accounts creates, changes and resets accounts (/_sim/accounts).
	Accounts *AccountsAPI
	// Outcomes forces how processing ends (/_sim/outcomes, the outcome of
	// a project or artifact, the status of a video).
	Outcomes *OutcomesAPI
	// Faults manages the HTTP fault rules (/_sim/faults).
	Faults *FaultsAPI
	// Journal reads and checks the request journal (/_sim/requests,
	// /_sim/report).
	Journal *JournalAPI

	base string
}

// NewClient returns a client of the dubsim at baseURL, such as
// "http://127.0.0.1:8080" (without /_sim), with its groups set.
func NewClient(baseURL string) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/")}
	c.Clock = &ClockAPI{client: c}
	c.Accounts = &AccountsAPI{client: c}
	c.Outcomes = &OutcomesAPI{client: c}
	c.Faults = &FaultsAPI{client: c}
	c.Journal = &JournalAPI{client: c}
	return c
}

// BaseURL returns the base URL the client calls.
func (c *Client) BaseURL() string { return c.base }

const maxErrorBody = 1 << 20

// do sends one control call, in as a JSON body when not nil; a 2xx answer
// is decoded into out when not nil, any other is an *APIError.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("dubsim: %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set(server.HeaderControl, "1") // also on calls without a body (reset, freeze)
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := cmp.Or(c.HTTPClient, http.DefaultClient).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return apiError(method, path, resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("dubsim: %s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

// call makes one control call whose 2xx answer is a T.
func call[T any](ctx context.Context, c *Client, method, path string, in any) (T, error) {
	var out T
	err := c.do(ctx, method, path, in, &out)
	return out, err
}

// field makes one control call whose 2xx answer is an object that holds a
// T in its field name (a missing field is the zero T).
func field[T any](ctx context.Context, c *Client, method, path, name string, in any) (T, error) {
	var v T
	out, err := call[map[string]json.RawMessage](ctx, c, method, path, in)
	if raw, ok := out[name]; ok && err == nil {
		if err = json.Unmarshal(raw, &v); err != nil {
			err = fmt.Errorf("dubsim: %s %s: decoding the answer: %w", method, path, err)
		}
	}
	return v, err
}

func apiError(method, path string, resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &APIError{Method: method, Path: path, Status: resp.StatusCode}
	var env struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &env) == nil && env.Error != "" {
		e.Name, e.Message = env.Error, env.Message
		return e
	}
	msg := strings.TrimSpace(string(raw))
	e.Message = msg[:min(len(msg), 1024)]
	return e
}

// ----- health and clock -----

// Health is the answer of GET /_sim/health.
type Health struct {
	Status        string    `json:"status"`
	Version       string    `json:"version"`
	Now           time.Time `json:"now"` // simulated time
	UptimeSeconds float64   `json:"uptime_seconds"`
}

// Health asks whether the simulator is up (GET /_sim/health; answered also
// when the control API is disabled).
func (c *Client) Health(ctx context.Context) (Health, error) {
	return call[Health](ctx, c, http.MethodGet, "/_sim/health", nil)
}

// Clock is the simulated clock. Times are reported to the millisecond.
type Clock struct {
	Now       time.Time `json:"now"`
	TimeScale float64   `json:"time_scale"`
	Frozen    bool      `json:"frozen"`
}

// Work is a piece of background work in flight: the download of an
// artifact's URL (Resource "artifact", ID its id) or the probe of a source
// video for a creation in flight. NeededAt is the simulated time from
// which answers depend on it (nil for probes): a Clock.Advance to it or
// later waits for the work.
type Work struct {
	Kind       string     `json:"kind"`
	Resource   string     `json:"resource"`
	ID         string     `json:"id"`
	URL        string     `json:"url"`
	StartedAt  time.Time  `json:"started_at"`
	NeededAt   *time.Time `json:"needed_at"`
	WaitingFor string     `json:"waiting_for"`
	Bytes      int64      `json:"bytes"`
}

// Work lists the background work in flight (GET /_sim/work), oldest first.
func (c *Client) Work(ctx context.Context) ([]Work, error) {
	return field[[]Work](ctx, c, http.MethodGet, "/_sim/work", "work", nil)
}

// ClockAPI reads and moves the simulated clock: the calls of /_sim/clock.
// Client.Clock holds one.
type ClockAPI struct {
	client *Client
}

// Get reads the simulated clock.
func (g *ClockAPI) Get(ctx context.Context) (Clock, error) {
	return call[Clock](ctx, g.client, http.MethodGet, "/_sim/clock", nil)
}

// Advance moves simulated time forward by d, applies every transition that
// became due, each at its own due time, and returns the new time. It
// returns after the downloads the new time depends on have ended (an
// artifact made from a loopback URL completes by the advance that passes
// its processing time), or with a 504 *APIError naming those still running
// after the server's --advance-wait.
func (g *ClockAPI) Advance(ctx context.Context, d time.Duration) (time.Time, error) {
	ck, err := call[Clock](ctx, g.client, http.MethodPost, "/_sim/clock/advance", map[string]float64{"seconds": d.Seconds()})
	return ck.Now, err
}

// AdvanceTo moves simulated time forward to t (to the millisecond, as the
// control API reports time). A t in the past is an error and changes
// nothing. With a running clock, time also moves between the two calls it
// takes.
func (g *ClockAPI) AdvanceTo(ctx context.Context, t time.Time) (time.Time, error) {
	ck, err := g.Get(ctx)
	if err != nil {
		return time.Time{}, err
	}
	d := t.Sub(ck.Now)
	if d < 0 {
		return ck.Now, fmt.Errorf("dubsim: cannot advance to %s: the clock is already at %s", t.UTC().Format(time.RFC3339Nano), ck.Now.Format(time.RFC3339Nano))
	}
	return g.Advance(ctx, d)
}

// SetScale sets the speed of simulated time from now on (0 stops it) and
// ends a Freeze.
func (g *ClockAPI) SetScale(ctx context.Context, scale float64) (Clock, error) {
	return call[Clock](ctx, g.client, http.MethodPost, "/_sim/clock/scale", map[string]float64{"time_scale": scale})
}

// Freeze stops simulated time; Resume restarts it at the scale it had.
func (g *ClockAPI) Freeze(ctx context.Context) (Clock, error) {
	return call[Clock](ctx, g.client, http.MethodPost, "/_sim/clock/freeze", nil)
}

// Resume restarts simulated time stopped by Freeze.
func (g *ClockAPI) Resume(ctx context.Context) (Clock, error) {
	return call[Clock](ctx, g.client, http.MethodPost, "/_sim/clock/resume", nil)
}

// ----- state and accounts -----

// Reset restores the fixture accounts and deletes every other account,
// project, studio record, uploaded file, idempotency key and forced-outcome
// rule; the clock and id sequences carry on. It does not touch fault rules
// or the journal (see Faults.Clear, Journal.Clear).
func (c *Client) Reset(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/_sim/reset", nil, nil)
}

// State dumps accounts, projects, pending transitions and rules; a
// non-empty apiKey limits it to that account.
func (c *Client) State(ctx context.Context, apiKey string) (State, error) {
	return call[State](ctx, c, http.MethodGet, "/_sim/state"+query("api_key", apiKey), nil)
}

// Ptr is a pointer to v, for the optional fields of AccountSpec.
func Ptr[T any](v T) *T { return &v }

// AccountSpec describes an account to create. Zero fields take defaults:
// a generated key ("dsk_..."), the plan "none", a new studio company and a
// generated email; a nil balance, re-translation or cloning takes the value
// of the plan's fixture account (pro: 600 minutes, cloning on), so
// AccountSpec{Plan: "pro"} behaves like dubsimtest.KeyPro. Ptr sets them:
// AccountSpec{Plan: "enterprise", BalanceMinutes: dubsimtest.Ptr[int64](0)}.
type AccountSpec struct {
	APIKey               string              `json:"api_key,omitempty"`
	Name                 string              `json:"name,omitempty"`
	Plan                 string              `json:"plan,omitempty"` // none, subscription, pro, enterprise
	BalanceMinutes       *int64              `json:"balance_minutes,omitempty"`
	RetranslationEnabled *bool               `json:"retranslation_enabled,omitempty"`
	CloningEnabled       *bool               `json:"cloning_enabled,omitempty"`
	CompanyID            string              `json:"company_id,omitempty"`
	UserEmail            string              `json:"user_email,omitempty"`
	Storage              *StorageCredentials `json:"storage,omitempty"`
	RateLimit            *RateLimit          `json:"rate_limit,omitempty"`
}

// Account is an account as the control API shows it (storage without its
// secret).
type Account struct {
	APIKey               string              `json:"api_key"`
	Name                 string              `json:"name"`
	Plan                 string              `json:"plan"`
	BalanceMinutes       int64               `json:"balance_minutes"`
	RetranslationEnabled bool                `json:"retranslation_enabled"`
	CloningEnabled       bool                `json:"cloning_enabled"`
	CreatedAt            time.Time           `json:"created_at"`
	CompanyID            string              `json:"company_id"`
	UserID               string              `json:"user_id"`
	UserEmail            string              `json:"user_email"`
	Storage              *StorageCredentials `json:"storage"`
	RateLimit            *RateLimit          `json:"rate_limit"`
}

// AccountsAPI creates, changes and resets accounts: the calls of
// /_sim/accounts and the reset of one account. Client.Accounts holds one.
type AccountsAPI struct {
	client *Client
}

// Create adds an isolated account (and its studio user).
func (g *AccountsAPI) Create(ctx context.Context, spec AccountSpec) (Account, error) {
	return call[Account](ctx, g.client, http.MethodPost, "/_sim/accounts", spec)
}

// AccountPatch changes a key's studio settings. A nil field leaves the
// setting as it is; Clear... removes it.
type AccountPatch struct {
	Storage        *StorageCredentials
	RateLimit      *RateLimit
	ClearStorage   bool
	ClearRateLimit bool
}

// MarshalJSON writes the fields to change: a removed one as null.
func (p AccountPatch) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	if p.ClearStorage {
		m["storage"] = nil
	} else if p.Storage != nil {
		m["storage"] = p.Storage
	}
	if p.ClearRateLimit {
		m["rate_limit"] = nil
	} else if p.RateLimit != nil {
		m["rate_limit"] = p.RateLimit
	}
	return json.Marshal(m)
}

// Update changes a key's storage credentials and rate limit.
func (g *AccountsAPI) Update(ctx context.Context, apiKey string, patch AccountPatch) (Account, error) {
	return call[Account](ctx, g.client, http.MethodPatch, "/_sim/accounts/"+url.PathEscape(apiKey), patch)
}

// Reset deletes one account's projects and idempotency keys and gives it
// back its initial balance.
func (g *AccountsAPI) Reset(ctx context.Context, apiKey string) error {
	return g.client.do(ctx, http.MethodPost, "/_sim/reset", map[string]string{"api_key": apiKey}, nil)
}

// LoadFixtures lays fixture content over the fixture set in use, entry by
// entry (accounts by api_key, media rules by pattern, ...; see "Fixtures at
// run time" in docs/control-api.md; "from_startup": true builds on the
// startup set instead): fixtures is
// marshaled to a JSON object with any of "accounts", "options", "voices",
// "media_rules" and "studio", each in the shape of its file in fixtures/
// (pass a json.RawMessage to send JSON as it is). It returns the counts of
// the fixture set now in use.
func (c *Client) LoadFixtures(ctx context.Context, fixtures any) (map[string]int, error) {
	return field[map[string]int](ctx, c, http.MethodPost, "/_sim/fixtures", "loaded", fixtures)
}

// ----- forced outcomes -----

// OutcomesAPI forces how the processing of projects, artifacts and videos
// ends: the calls of /_sim/outcomes and of the outcome or status of one
// resource. Client.Outcomes holds one.
type OutcomesAPI struct {
	client *Client
}

// Outcome forces how the processing of a project or artifact ends.
type Outcome struct {
	Outcome      string `json:"outcome"` // OutcomeReady or OutcomeError
	ErrorMessage string `json:"error_message,omitempty"`
	// Now ends the processing at once instead of at its due time (a ready
	// project always completes at once).
	Now bool `json:"now,omitempty"`
	// Artifacts only: the size and duration of a ready artifact (else the
	// planned ones).
	Size            *int64   `json:"size,omitempty"`
	DurationSeconds *float64 `json:"duration_seconds,omitempty"`
}

// Forced is the answer to a forced outcome: the resource's status, and,
// while it is still processing, when and how it will end.
type Forced struct {
	ProjectID      string     `json:"project_id,omitempty"`
	ArtifactID     string     `json:"artifact_id,omitempty"`
	Status         string     `json:"status"`
	DueAt          *time.Time `json:"due_at,omitempty"`
	PlannedOutcome string     `json:"planned_outcome,omitempty"`
	ErrorMessage   string     `json:"error_message,omitempty"`
}

// ForceProject decides how the current run of a platform project in
// progress ends (409 ConflictError when it is not in progress).
func (g *OutcomesAPI) ForceProject(ctx context.Context, projectID string, o Outcome) (Forced, error) {
	return call[Forced](ctx, g.client, http.MethodPost, "/_sim/projects/"+url.PathEscape(projectID)+"/outcome", o)
}

// ForceArtifact decides how a studio artifact's processing ends.
func (g *OutcomesAPI) ForceArtifact(ctx context.Context, artifactID string, o Outcome) (Forced, error) {
	return call[Forced](ctx, g.client, http.MethodPost, "/_sim/artifacts/"+url.PathEscape(artifactID)+"/outcome", o)
}

// VideoStatus is the answer of OutcomesAPI.SetVideoStatus.
type VideoStatus struct {
	VideoID          string     `json:"video_id"`
	Status           string     `json:"status"`
	NextTransitionAt *time.Time `json:"next_transition_at,omitempty"`
}

// SetVideoStatus gives a studio video a status (new, in_progress,
// completed) now; with auto its automatic lifecycle continues from there.
func (g *OutcomesAPI) SetVideoStatus(ctx context.Context, videoID, status string, auto bool) (VideoStatus, error) {
	body := map[string]any{"status": status, "auto": auto}
	return call[VideoStatus](ctx, g.client, http.MethodPost, "/_sim/videos/"+url.PathEscape(videoID)+"/status", body)
}

// OutcomeRuleSpec is a rule for the outcome of the next Count projects (or
// artifacts, with Resource "artifact") created by APIKey (any when empty)
// whose source URL matches SourceURLPattern (a glob; any when empty).
type OutcomeRuleSpec struct {
	APIKey           string `json:"api_key,omitempty"`
	SourceURLPattern string `json:"source_url_pattern,omitempty"`
	Count            int    `json:"count,omitempty"` // 0 means 1
	Outcome          string `json:"outcome"`
	ErrorMessage     string `json:"error_message,omitempty"`
	Resource         string `json:"resource,omitempty"` // "project" (default) or "artifact"
}

// AddRule adds a forced-outcome rule.
func (g *OutcomesAPI) AddRule(ctx context.Context, spec OutcomeRuleSpec) (OutcomeRule, error) {
	return call[OutcomeRule](ctx, g.client, http.MethodPost, "/_sim/outcomes", spec)
}

// Rules lists the forced-outcome rules not used up.
func (g *OutcomesAPI) Rules(ctx context.Context) ([]OutcomeRule, error) {
	return field[[]OutcomeRule](ctx, g.client, http.MethodGet, "/_sim/outcomes", "rules", nil)
}

// RemoveRule deletes a forced-outcome rule.
func (g *OutcomesAPI) RemoveRule(ctx context.Context, id string) error {
	return g.client.do(ctx, http.MethodDelete, "/_sim/outcomes/"+url.PathEscape(id), nil, nil)
}

// ----- HTTP faults -----

// FaultsAPI manages the HTTP fault rules: the calls of /_sim/faults.
// Client.Faults holds one.
type FaultsAPI struct {
	client *Client
}

// Fault is a fault rule as listed: the rule, how many more times it may
// fire (nil: unlimited), how many times it fired, when it expires (nil:
// never) and its state: "active", "spent" (fired its count) or "expired".
// Ended rules stay listed until removed or cleared.
type Fault struct {
	FaultRule
	Remaining *int64     `json:"remaining"`
	Hits      int64      `json:"hits"`
	ExpiresAt *time.Time `json:"expires_at"`
	State     string     `json:"state"`
}

// Add adds an HTTP fault rule, evaluated after the ones already there.
func (g *FaultsAPI) Add(ctx context.Context, rule FaultRule) (Fault, error) {
	return call[Fault](ctx, g.client, http.MethodPost, "/_sim/faults", rule)
}

// List lists the live fault rules in evaluation order.
func (g *FaultsAPI) List(ctx context.Context) ([]Fault, error) {
	return field[[]Fault](ctx, g.client, http.MethodGet, "/_sim/faults", "rules", nil)
}

// Remove deletes a fault rule (404 when it is gone, also after it was
// used up).
func (g *FaultsAPI) Remove(ctx context.Context, id string) error {
	return g.client.do(ctx, http.MethodDelete, "/_sim/faults/"+url.PathEscape(id), nil, nil)
}

// Clear deletes every fault rule and returns how many there were.
func (g *FaultsAPI) Clear(ctx context.Context) (int, error) {
	return field[int](ctx, g.client, http.MethodDelete, "/_sim/faults", "removed", nil)
}

// ----- request journal -----

// JournalAPI reads and checks the request journal: the calls of
// /_sim/requests and /_sim/report. Client.Journal holds one.
type JournalAPI struct {
	client *Client
}

// Request is a request recorded in the journal.
type Request struct {
	Seq                   uint64            `json:"seq"`
	Time                  time.Time         `json:"time"`     // real time of arrival
	SimTime               time.Time         `json:"sim_time"` // simulated time then
	DurationMS            float64           `json:"duration_ms"`
	Interface             string            `json:"interface"` // platform, studio or control: the answer's X-Dubsim-Interface
	RoutedBy              string            `json:"routed_by"` // header, prefix, address, path, id, body or default
	Method                string            `json:"method"`
	Path                  string            `json:"path"`
	Query                 string            `json:"query"`
	APIKey                string            `json:"api_key"`
	Headers               map[string]string `json:"headers"`
	RequestBody           string            `json:"request_body"`
	RequestBodySize       int64             `json:"request_body_size"`
	RequestBodyTruncated  bool              `json:"request_body_truncated"`
	Status                int               `json:"status"`        // 0: aborted
	ResponseBody          string            `json:"response_body"` // kept for errors only
	ResponseBodyTruncated bool              `json:"response_body_truncated"`
	ResponseBytes         int64             `json:"response_bytes"`
	Aborted               bool              `json:"aborted"`
	Truncated             bool              `json:"truncated"`
	Fault                 string            `json:"fault"` // the fault rule that answered
	Notes                 map[string]string `json:"notes"`
}

// RequestFilter selects journal entries; zero fields select everything.
type RequestFilter struct {
	Method string
	Path   string // exact, or a glob where * matches any run of characters
	Status string // a code ("404", "0" for aborted) or a class ("4xx")
	APIKey string
	Since  uint64 // only entries with a greater sequence id
	Limit  int    // the newest N; 0: no limit
}

func (f RequestFilter) query() string {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("method", f.Method)
	set("path", f.Path)
	set("status", f.Status)
	set("key", f.APIKey)
	if f.Since > 0 {
		set("since", strconv.FormatUint(f.Since, 10))
	}
	if f.Limit > 0 {
		set("limit", strconv.Itoa(f.Limit))
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// Requests returns the recorded requests that f selects, newest first.
// Control API calls are recorded too (Interface "control"), except reads
// of the journal.
func (g *JournalAPI) Requests(ctx context.Context, f RequestFilter) ([]Request, error) {
	return field[[]Request](ctx, g.client, http.MethodGet, "/_sim/requests"+f.query(), "requests", nil)
}

// Clear empties the journal (sequence ids carry on).
func (g *JournalAPI) Clear(ctx context.Context) error {
	return g.client.do(ctx, http.MethodDelete, "/_sim/requests", nil, nil)
}

// VerifyResult says how many requests matched a Match and whether that
// is what it expected; when not, NearMisses shows up to three requests
// with its method and path that differ in the rest, and why.
type VerifyResult struct {
	Matched    int        `json:"matched"`
	OK         bool       `json:"ok"`
	Expected   string     `json:"expected"`
	NearMisses []NearMiss `json:"near_misses"`
	Warning    string     `json:"warning"`
}

// NearMiss is a request that almost matched.
type NearMiss struct {
	Request Request `json:"entry"`
	Reason  string  `json:"reason"`
}

// Verify counts the journal's requests that m selects against m.Times
// (at least one when m.Times is zero). A failed check is not an
// error: see VerifyResult.OK.
func (g *JournalAPI) Verify(ctx context.Context, m Match) (VerifyResult, error) {
	return call[VerifyResult](ctx, g.client, http.MethodPost, "/_sim/requests/verify", m)
}

// Report returns the conformance report of the requests of apiKey in the
// journal.
func (g *JournalAPI) Report(ctx context.Context, apiKey string) (Report, error) {
	return call[Report](ctx, g.client, http.MethodGet, "/_sim/report"+query("api_key", apiKey), nil)
}

func query(key, value string) string {
	if value == "" {
		return ""
	}
	return "?" + key + "=" + url.QueryEscape(value)
}
