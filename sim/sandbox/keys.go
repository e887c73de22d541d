package sandbox

import (
	"strings"

	"github.com/dubsim/dubsim/sim"
)

// Keys is the rule of a sandbox's API keys (engine.APIKeys): every key
// its engine holds starts with the prefix KeyPrefix, so that a request's
// key routes it to the sandbox (fidelity SB2).
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
