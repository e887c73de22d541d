package crash

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// client talks to one dubsim process.
type client struct {
	base string
	hc   *http.Client
}

func newClient(base string) *client {
	tr := &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}
	return &client{base: base, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

func (c *client) close() { c.hc.CloseIdleConnections() }

// response is a fully read answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request. An error means the answer was not fully read: the
// request may or may not have taken effect.
func (c *client) do(ctx context.Context, method, path, apiKey, idemKey string, body []byte) (response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return response{}, err
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if strings.HasPrefix(path, "/_sim/") {
		req.Header.Set("X-Dubsim-Control", "1") // as the Go client and ctl send it (fidelity HC3)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// control calls the control API (or any call that must succeed) and
// decodes the answer into out (when not nil).
func (c *client) control(method, path string, in, out any, want int) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := c.do(ctx, method, path, "", "", body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if r.status != want {
		return fmt.Errorf("%s %s: status %d, want %d: %s", method, path, r.status, want, r.body)
	}
	if out != nil {
		if err := json.Unmarshal(r.body, out); err != nil {
			return fmt.Errorf("%s %s: %w: %s", method, path, err, r.body)
		}
	}
	return nil
}

// receipt is the answer to a create or re-translate request.
type receipt struct {
	ProjectID         string `json:"project_id"`
	CostMinutes       int64  `json:"cost_minutes"`
	BalanceMinutes    int64  `json:"balance_minutes"`
	TranslationsCount int    `json:"translations_count"`
}

type segment struct {
	StartMS   int64  `json:"start_ms"`
	EndMS     int64  `json:"end_ms"`
	Text      string `json:"text"`
	SpeakerID int    `json:"speaker_id"`
}

type speaker struct {
	SpeakerID int    `json:"speaker_id"`
	Style     string `json:"style"`
	VoiceKey  string `json:"voice_key"`
}

// projectView is Get Project.
type projectView struct {
	Status               string    `json:"status"`
	CostMinutes          int64     `json:"cost_minutes"`
	CompletionDate       string    `json:"completion_date"`
	ErrorMessage         string    `json:"error_message"`
	OutputTargetScript   []segment `json:"output_target_script"`
	OutputTargetSpeakers []speaker `json:"output_target_speakers"`
}

type retranslationBody struct {
	TargetScript   []segment `json:"target_script"`
	TargetSpeakers []speaker `json:"target_speakers"`
}

// The state dump of GET /_sim/state.
type stateDump struct {
	Now                string         `json:"now"`
	Accounts           []accountState `json:"accounts"`
	Projects           []projectState `json:"projects"`
	PendingTransitions []struct {
		ID    string    `json:"id"`
		DueAt time.Time `json:"due_at"`
	} `json:"pending_transitions"`
	OutcomeRules []struct {
		ID               string `json:"id"`
		SourceURLPattern string `json:"source_url_pattern"`
		Remaining        int    `json:"remaining"`
	} `json:"outcome_rules"`
	Truncated               bool   `json:"truncated"`
	NextCursor              string `json:"next_cursor"`
	PendingTransitionsTotal int    `json:"pending_transitions_total"`
}

type accountState struct {
	APIKey         string `json:"api_key"`
	BalanceMinutes int64  `json:"balance_minutes"`
	InitialBalance int64  `json:"initial_balance_minutes"`
}

type projectState struct {
	ID                string     `json:"id"`
	APIKey            string     `json:"api_key"`
	Name              string     `json:"name"`
	Status            string     `json:"status"`
	SourceVideoURL    string     `json:"source_video_url"`
	CostMinutes       int64      `json:"cost_minutes"`
	Refunded          bool       `json:"refunded"`
	CreatedAt         time.Time  `json:"created_at"`
	DueAt             *time.Time `json:"due_at"`
	CompletedAt       *time.Time `json:"completed_at"`
	ErrorMessage      string     `json:"error_message"`
	TranslationsCount int        `json:"translations_count"`
	OutputGeneration  int        `json:"output_generation"`
	RetranslationRun  bool       `json:"retranslation_running"`
	History           []event    `json:"history"`
}

type event struct {
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"`
	Message string    `json:"message"`
}

// state reads the whole dump, page after page (the checks read it while
// no load runs).
func (c *client) state() (*stateDump, time.Time, error) {
	var st stateDump
	if err := c.control(http.MethodGet, "/_sim/state?limit=100000000", nil, &st, http.StatusOK); err != nil {
		return nil, time.Time{}, err
	}
	for st.NextCursor != "" {
		var page stateDump
		if err := c.control(http.MethodGet, "/_sim/state?cursor="+url.QueryEscape(st.NextCursor), nil, &page, http.StatusOK); err != nil {
			return nil, time.Time{}, err
		}
		st.Projects, st.NextCursor = append(st.Projects, page.Projects...), page.NextCursor
	}
	if st.PendingTransitionsTotal > 0 {
		return nil, time.Time{}, fmt.Errorf("state: %d pending transitions, more than one dump shows", st.PendingTransitionsTotal)
	}
	st.Truncated = false
	now, err := time.Parse(time.RFC3339Nano, st.Now)
	if err != nil {
		return nil, now, fmt.Errorf("state: now %q: %w", st.Now, err)
	}
	if st.Truncated {
		return nil, now, fmt.Errorf("state: truncated dump")
	}
	return &st, now, nil
}
