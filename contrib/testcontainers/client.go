package dubsim

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client makes control calls (/_sim/...) to a dubsim over HTTP. Its
// methods cover what a container test needs most; Do makes any other call
// of the control API (docs/openapi/control.json in the dubsim repository).
// dubsimtest.NewClient(BaseURL), with Token, is the typed client of the
// whole control API, for a test module that also requires
// github.com/dubsim/dubsim.
type Client struct {
	// BaseURL is the simulator's base URL, without /_sim.
	BaseURL string
	// Token is the control token, sent as "Authorization: Bearer <Token>";
	// "" sends none.
	Token string
	// HTTPClient sends the requests; nil is http.DefaultClient.
	HTTPClient *http.Client
}

// ControlError is an answer of the control API other than 2xx: the HTTP
// status and the envelope {"error": Name, "message": Message} (Message is
// the body, cut to 1 KiB, when the answer is not in the envelope).
type ControlError struct {
	Method, Path string
	Status       int
	Name         string
	Message      string
}

func (e *ControlError) Error() string {
	return fmt.Sprintf("dubsim: %s %s: %d %s: %s", e.Method, e.Path, e.Status, e.Name, e.Message)
}

// Clock is the simulated clock as the control API reports it.
type Clock struct {
	Now       time.Time `json:"now"`
	TimeScale float64   `json:"time_scale"`
	Frozen    bool      `json:"frozen"`
}

// Health is the answer of GET /_sim/health.
type Health struct {
	Status  string `json:"status"`
	Version string `json:"version"`
}

// Health reads GET /_sim/health.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	return h, c.Do(ctx, http.MethodGet, "/_sim/health", nil, &h)
}

// Clock reads the simulated clock.
func (c *Client) Clock(ctx context.Context) (Clock, error) {
	var ck Clock
	return ck, c.Do(ctx, http.MethodGet, "/_sim/clock", nil, &ck)
}

// Advance moves simulated time forward by d, applies every transition that
// became due and returns the new time.
func (c *Client) Advance(ctx context.Context, d time.Duration) (time.Time, error) {
	var ck Clock
	err := c.Do(ctx, http.MethodPost, "/_sim/clock/advance", map[string]float64{"seconds": d.Seconds()}, &ck)
	return ck.Now, err
}

// Reset restores the fixture accounts and deletes every other account,
// project and idempotency key.
func (c *Client) Reset(ctx context.Context) error {
	return c.Do(ctx, http.MethodPost, "/_sim/reset", nil, nil)
}

// Do makes one control call: in, when not nil, is sent as a JSON body; a
// 2xx answer is decoded into out when out is not nil; any other answer is
// a *ControlError.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("dubsim: %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	// No HTML form can send it: dubsim needs it (or a JSON body) on calls
	// that change state.
	req.Header.Set("X-Dubsim-Control", "1")
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
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		e := &ControlError{Method: method, Path: path, Status: resp.StatusCode}
		var env struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &env) == nil && env.Error != "" {
			e.Name, e.Message = env.Error, env.Message
		} else {
			e.Name = http.StatusText(resp.StatusCode)
			e.Message = string(raw[:min(len(raw), 1024)])
		}
		return e
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
