package sandbox

import (
	"strings"

	"github.com/dubsim/dubsim/sim"
)

// Keys is the rule of a sandbox's API keys (engine.APIKeys) of prefix
// KeyPrefix: every key the sandbox's engine holds starts with it, the
// fixture accounts', the keys it generates and keys given to it without the
// prefix, so that a request's key routes it to the sandbox (Dispatcher). A
// key of another sandbox is refused.
type Keys string

// Hold gives k the sandbox's prefix.
func (p Keys) Hold(k string) string { return string(p) + strings.TrimPrefix(k, string(p)) }

// Given is the key an account created with k gets: k with the sandbox's
// prefix, or a validation error when k has another sandbox's.
func (p Keys) Given(k string) (string, error) {
	if strings.HasPrefix(k, string(p)) {
		return k, nil
	}
	if strings.HasPrefix(k, sim.SandboxKeyPrefix) {
		if len(k) > 80 {
			k = k[:80] + "..."
		}
		return "", sim.Errorf(sim.CodeValidation, sim.MsgSandboxKey, k)
	}
	return string(p) + k, nil
}
