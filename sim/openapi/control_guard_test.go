package openapi_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/openapi"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestControlProtectionOfEveryOperation: every control operation that
// documents the protection's answers gives them (README, "Protecting the
// control plane"): 401 without the configured token, 403 for a foreign
// Host, and, for a POST, 415 for a form's content type and 400 for no
// content type and no X-Dubsim-Control.
func TestControlProtectionOfEveryOperation(t *testing.T) {
	t.Parallel()
	// With sandboxes: /_sim/sandboxes is behind the same protection.
	open := newSandboxEnv(t, nil, nil).env
	tokened := newSandboxEnv(t, func(c *app.Config) { c.ControlToken = "contract-token" }, nil).env
	params := strings.NewReplacer("{id}", "x", "{api_key}", "k", "{name}", "control.json")
	for _, op := range validators[openapi.Control].Operations() {
		path := params.Replace(op.Path)
		has := func(code string) bool { return slices.Contains(op.Responses, code) }
		// Only a POST can come from another site's page without a
		// preflight (fidelity HC3).
		changes := op.Method == http.MethodPost
		t.Run(op.ID, func(t *testing.T) {
			if strings.Contains(path, "{") {
				require.False(t, has("401") || has("403"), "%s %s: a path parameter this test does not fill", op.Method, op.Path)
				return
			}
			for _, c := range []struct {
				code string
				e    *env
				r    req
			}{
				{"401", tokened, req{Header: map[string]string{"Authorization": "Bearer not-the-token"}}},
				{"403", open, req{Host: "evil.example"}},
				{"415", open, req{Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", server.HeaderControl: ""}, Body: []byte("a=b")}},
				{"400", open, req{Header: map[string]string{server.HeaderControl: ""}}},
			} {
				if !has(c.code) || (!changes && (c.code == "415" || c.code == "400")) {
					continue
				}
				r := c.r
				r.Interface, r.Method, r.Path = openapi.Control, op.Method, path
				got := c.e.do(r)
				assert.Equal(t, c.code, strconv.Itoa(got.Status), "%s %s: %s", op.Method, path, ctlClip(got.Body))
			}
		})
	}
}
