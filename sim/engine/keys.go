package engine

import (
	"strings"

	"github.com/dubsim/dubsim/sim"
)

// APIKeys is the form of the API keys an engine holds, for an instance
// whose keys have a form of their own (sandboxes).
type APIKeys interface {
	// Hold is the key an account of key k (a fixture's, or one generated)
	// is held under.
	Hold(k string) string
	// Given is the key an account created with key k gets, or a
	// *sim.Error that refuses k.
	Given(k string) (string, error)
}

// plainKeys holds keys as given and refuses those that start with
// sim.SandboxKeyPrefix (fidelity SB2).
type plainKeys struct{}

func (plainKeys) Hold(k string) string { return k }

func (plainKeys) Given(k string) (string, error) {
	if strings.HasPrefix(k, sim.SandboxKeyPrefix) {
		return "", sim.Errorf(sim.CodeValidation, sim.MsgSandboxKey, clip(k, 80))
	}
	return k, nil
}

// ownFixtures is fx with every account key in the form keys holds it: a
// copy, as the set may be shared with other engines.
func ownFixtures(keys APIKeys, fx *sim.Fixtures) *sim.Fixtures {
	if _, plain := keys.(plainKeys); plain || fx == nil {
		return fx
	}
	own := *fx
	own.Accounts = make([]sim.AccountSpec, len(fx.Accounts))
	for i, a := range fx.Accounts {
		a.APIKey = keys.Hold(a.APIKey)
		own.Accounts[i] = a
	}
	return &own
}
