package engine

import (
	"strings"

	"github.com/dubsim/dubsim/sim"
)

// APIKeys names the API keys of the accounts an engine holds
// (Config.APIKeys): an instance whose keys have a form of their own gives
// its rule.
type APIKeys interface {
	// Hold is the key an account of key k is held under: a fixture
	// account's, or one the engine generates.
	Hold(k string) string
	// Given is the key an account created with key k gets (CreateAccount),
	// or a validation error (*sim.Error) that refuses k.
	Given(k string) (string, error)
}

// plainKeys is the rule of an engine without one of its own: keys are held
// as given, and a key that starts with sim.SandboxKeyPrefix is refused:
// no key of the default simulator has that form (fidelity SB2).
type plainKeys struct{}

func (plainKeys) Hold(k string) string { return k }

func (plainKeys) Given(k string) (string, error) {
	if strings.HasPrefix(k, sim.SandboxKeyPrefix) {
		return "", sim.Errorf(sim.CodeValidation, sim.MsgSandboxKey, clip(k, 80))
	}
	return k, nil
}

// ownFixtures is fx with every account key in the form keys holds it (a
// copy: the set may be shared with other engines), or fx itself under the
// plain rule.
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
