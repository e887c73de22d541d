package dubsimtest

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim/sandbox"
)

// Sandbox is a sandbox of a shared dubsim: a whole simulator inside that
// process with its own clock, accounts, data, rules and journal, reached
// at BaseURL or by its keys. Connect makes one per test.
//
// The embedded Client drives the sandbox's control API (BaseURL + "/_sim"):
// sb.Clock.Advance moves its clock only, sb.Reset resets it only,
// sb.Journal.Requests lists its requests only. (The field BaseURL and the
// method Client.BaseURL() name the same address.)
type Sandbox struct {
	*Client

	// ID is the sandbox's id: 16 characters of lower-case Crockford base32.
	ID string
	// BaseURL serves every interface of the sandbox: the url given to
	// Connect plus "/sbx/<ID>", such as
	// "http://127.0.0.1:8080/sbx/k7q2m9x4w3p8r5t6". PlatformURL is BaseURL
	// plus "/platform" and StudioURL BaseURL plus "/studio" (each
	// interface alone), ControlURL BaseURL plus "/_sim", DashboardURL
	// BaseURL plus "/_sim/ui". A request with one of Keys reaches the
	// sandbox at the shared dubsim's own address too.
	BaseURL, PlatformURL, StudioURL, ControlURL, DashboardURL string
	// Keys maps each fixture API key (KeyPro, ...) to the sandbox's key
	// for that account ("sbx_<id>_dubsim-pro").
	Keys map[string]string
}

// Key returns the sandbox's key for the fixture key name (KeyPro, say), or
// "" if the fixtures have no such account.
func (s *Sandbox) Key(name string) string { return s.Keys[name] }

type sandboxView struct {
	ID      string            `json:"id"`
	APIKeys map[string]string `json:"api_keys"`
}

type sandboxBody struct {
	Start     string   `json:"start,omitempty"`
	TimeScale *float64 `json:"time_scale,omitempty"`
	Seed      *uint64  `json:"seed,omitempty"`
}

const sandboxCallTimeout = 30 * time.Second

// Connect gives the test a sandbox of its own on the dubsim at url (its
// base URL, without /_sim), started with sandboxes (the default): it
// creates one with an id of its own (PUT /_sim/sandboxes/{id}) and
// deletes it at t.Cleanup. Tests that each call Connect can run with
// t.Parallel() against one dubsim: they share nothing but the HTTP
// client.
//
// Options: WithStart sets the sandbox's initial time (default: the shared
// dubsim's now), WithTimeScale makes its clock run (default: frozen),
// WithSeed sets its seed, WithControlToken sends the control token of a
// dubsim started with one. WithFixtures and WithAddr configure a process,
// not a sandbox: Connect fails the test if it is given them.
//
// Connect fails the test (t.Fatal) if the sandbox cannot be created: the
// dubsim is unreachable, runs without sandboxes (404), is at its cap of
// sandboxes (429 SandboxLimitError), or wants a control token.
func Connect(t testing.TB, url string, opts ...Option) *Sandbox {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.fixtures != "" || o.addr != "" {
		t.Fatalf("dubsimtest: Connect: WithFixtures and WithAddr configure a process; a sandbox takes its fixtures from the process it lives in")
		return nil
	}
	root := NewClient(url)
	root.Token = o.token
	var body sandboxBody
	if !o.start.IsZero() {
		body.Start = o.start.UTC().Format(time.RFC3339Nano)
	}
	if o.scale != 0 {
		body.TimeScale = &o.scale
	}
	if o.seedSet {
		body.Seed = &o.seed
	}
	ctx, cancel := context.WithTimeout(context.Background(), sandboxCallTimeout)
	defer cancel()
	var v sandboxView
	var err error
	// An id already taken (one chance in 2^80) is a 409: draw another.
	for range 3 {
		err = root.do(ctx, http.MethodPut, "/_sim/sandboxes/"+sandbox.NewID(), body, &v)
		if ae := (*APIError)(nil); !errors.As(err, &ae) || ae.Status != http.StatusConflict {
			break
		}
	}
	if err != nil {
		t.Fatalf("dubsimtest: Connect: %v", err)
		return nil
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), sandboxCallTimeout)
		defer cancel()
		err := root.do(ctx, http.MethodDelete, "/_sim/sandboxes/"+v.ID, nil, nil)
		if ae := (*APIError)(nil); errors.As(err, &ae) && ae.Status == http.StatusNotFound {
			return // deleted already, or expired
		}
		if err != nil {
			t.Errorf("dubsimtest: deleting sandbox %s: %v", v.ID, err)
		}
	})
	// The address this test reached the dubsim at, not the answer's
	// base_url (fidelity SC2).
	base := root.BaseURL() + "/sbx/" + v.ID
	client := NewClient(base)
	client.Token = o.token
	return &Sandbox{
		Client: client, ID: v.ID, BaseURL: base, PlatformURL: base + "/platform", StudioURL: base + "/studio",
		ControlURL: base + "/_sim", DashboardURL: base + "/_sim/ui", Keys: v.APIKeys,
	}
}
