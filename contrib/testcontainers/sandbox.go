package dubsim

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Sandbox is a sandbox of a dubsim: a whole simulator inside that process
// with its own clock, accounts, data, rules and journal. One container
// can so serve a parallel test suite, a sandbox per test.
type Sandbox struct {
	ID string // 16 characters of lower-case Crockford base32
	// BaseURL serves every interface of the sandbox and its control API
	// (BaseURL + "/_sim/..."): the dubsim's URL plus "/sbx/<ID>".
	// PlatformURL and StudioURL are BaseURL plus PlatformPrefix and
	// StudioPrefix: each interface of the sandbox alone.
	BaseURL, PlatformURL, StudioURL string
	// Keys maps each fixture API key ("dubsim-pro", ...) to the sandbox's
	// key for that account ("sbx_<ID>_dubsim-pro"), which reaches the
	// sandbox at the dubsim's own URL too.
	Keys map[string]string
	// Client drives the sandbox's control API: its Advance moves this
	// sandbox's clock only, its Reset resets this sandbox only.
	Client *Client

	owner *Client // the dubsim's client, which deletes
}

// Key returns the sandbox's key for the fixture key name ("dubsim-pro",
// say), or "" if the fixtures have no such account.
func (s *Sandbox) Key(name string) string { return s.Keys[name] }

// Delete deletes the sandbox and its data (DELETE /_sim/sandboxes/{id}).
func (s *Sandbox) Delete(ctx context.Context) error {
	return s.owner.Do(ctx, http.MethodDelete, "/_sim/sandboxes/"+s.ID, nil, nil)
}

// SandboxSpec sets a new sandbox's clock and seed; the zero value is a
// clock frozen at the dubsim's now and the seed of the dubsim.
type SandboxSpec struct {
	Start     time.Time // zero: the dubsim's now
	TimeScale float64   // 0 freezes the clock
	Seed      *uint64   // of generated ids and content
}

// idAlphabet is lower-case Crockford base32.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// newSandboxID makes a sandbox id from crypto/rand (the module does not
// depend on dubsim's sim/sandbox).
func newSandboxID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	for i := range b {
		b[i] = idAlphabet[b[i]&31]
	}
	return string(b)
}

// CreateSandbox creates a sandbox with an id of its own
// (PUT /_sim/sandboxes/{id}). The caller deletes it (Sandbox.Delete);
// Sandbox does so at the end of a test. A dubsim without sandboxes answers
// 404, one at its cap 429 SandboxLimitError: *ControlError.
func (c *Client) CreateSandbox(ctx context.Context, spec SandboxSpec) (*Sandbox, error) {
	var body struct {
		Start     string   `json:"start,omitempty"`
		TimeScale *float64 `json:"time_scale,omitempty"`
		Seed      *uint64  `json:"seed,omitempty"`
	}
	if !spec.Start.IsZero() {
		body.Start = spec.Start.UTC().Format(time.RFC3339Nano)
	}
	if spec.TimeScale != 0 {
		body.TimeScale = &spec.TimeScale
	}
	body.Seed = spec.Seed
	var v struct {
		ID      string            `json:"id"`
		APIKeys map[string]string `json:"api_keys"`
	}
	var err error
	// An id already taken (one chance in 2^80) is a 409: draw another.
	for range 3 {
		err = c.Do(ctx, http.MethodPut, "/_sim/sandboxes/"+newSandboxID(), body, &v)
		if ce := (*ControlError)(nil); !errors.As(err, &ce) || ce.Status != http.StatusConflict {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	base := strings.TrimRight(c.BaseURL, "/") + "/sbx/" + v.ID
	return &Sandbox{
		ID: v.ID, BaseURL: base, PlatformURL: base + PlatformPrefix, StudioURL: base + StudioPrefix, Keys: v.APIKeys, owner: c,
		Client: &Client{BaseURL: base, Token: c.Token, HTTPClient: c.HTTPClient},
	}, nil
}

const sandboxDeleteTimeout = 30 * time.Second

// Sandbox gives the test t a sandbox of its own (CreateSandbox with a
// frozen clock) and deletes it at t.Cleanup; a sandbox gone already
// (deleted, expired) is no error then. Tests that each call Sandbox can
// run with t.Parallel() against one dubsim.
func (c *Client) Sandbox(ctx context.Context, t testing.TB) (*Sandbox, error) {
	sb, err := c.CreateSandbox(ctx, SandboxSpec{})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), sandboxDeleteTimeout)
		defer cancel()
		err := sb.Delete(ctx)
		if ce := (*ControlError)(nil); errors.As(err, &ce) && ce.Status == http.StatusNotFound {
			return
		}
		if err != nil {
			t.Errorf("dubsim: deleting sandbox %s: %v", sb.ID, err)
		}
	})
	return sb, nil
}

// Sandbox gives the test t a sandbox of its own on the container (with
// the container's control token) and deletes it at t.Cleanup: one
// container for a parallel test suite.
//
//	sb, err := ctr.Sandbox(ctx, t)
//	require.NoError(t, err)
//	app := myapp.New(sb.BaseURL, sb.Key("dubsim-pro"))
//	_, err = sb.Client.Advance(ctx, time.Hour) // this sandbox's clock only
func (c *Container) Sandbox(ctx context.Context, t testing.TB) (*Sandbox, error) {
	cl, err := c.Client(ctx)
	if err != nil {
		return nil, err
	}
	return cl.Sandbox(ctx, t)
}
