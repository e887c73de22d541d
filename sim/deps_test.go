package sim_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImportDirection keeps the layout of STYLE.md true: imports point
// inward, the two API packages never import each other or the store, and
// only sim/app (the composition root cmd/dubsim and the tests use) wires
// everything.
func TestImportDirection(t *testing.T) {
	t.Parallel()
	const mod = "github.com/dubsim/dubsim/"
	allowed := map[string][]string{
		"sim":                   {},
		"sim/audio":             {},
		"sim/probe":             {},
		"sim/blob":              {},
		"fixtures":              {"sim"}, // the default data and its loader
		"fixtures/gen/voices":   {},
		"sim/script":            {"sim"},
		"sim/store":             {"sim", "go.etcd.io/bbolt", "github.com/google/btree"},
		"sim/statemachine":      {"sim"}, // pure lifecycle rules
		"sim/engine":            {"sim", "sim/statemachine", "sim/script", "sim/internal/gencache", "fixtures"},
		"sim/media":             {"sim", "sim/probe"},
		"sim/internal/httpx":    {"sim", "github.com/go-chi/chi/v5", "golang.org/x/sync/semaphore"}, // routing details of shared answers (Allow); the body budget
		"sim/internal/gencache": {},
		"sim/idempotency":       {"sim", "sim/internal/httpx"},
		"sim/platform":          {"sim", "sim/audio", "sim/probe", "sim/script", "sim/internal/httpx", "sim/idempotency", "sim/internal/gencache", "github.com/go-chi/chi/v5", "github.com/go-playground/validator/v10"},
		"sim/studio":            {"sim", "sim/internal/httpx", "sim/idempotency", "github.com/go-chi/chi/v5"},
		"sim/control":           {"sim", "sim/internal/httpx", "github.com/go-chi/chi/v5"},
		"sim/faults":            {"sim", "sim/internal/httpx", "github.com/go-chi/chi/v5"},
		"sim/journal":           {"sim", "sim/internal/httpx", "github.com/go-chi/chi/v5", "golang.org/x/net/http/httpguts"},
		"sim/server":            {"sim", "sim/control", "sim/faults", "sim/journal", "sim/platform", "sim/engine", "sim/studio", "sim/control/ui", "sim/internal/httpx", "sim/idempotency", "github.com/go-chi/chi/v5", "github.com/go-chi/cors", "github.com/go-chi/chi/v5/middleware"}, // the router: mounts the parts sim/app builds
		// the composition root: builds every part of a simulator and of a process
		"sim/app":              {"sim", "fixtures", "sim/blob", "sim/control", "sim/faults", "sim/journal", "sim/control/ui", "sim/engine", "sim/internal/httpx", "sim/idempotency", "sim/media", "sim/openapi", "sim/platform", "sim/sandbox", "sim/server", "sim/studio", "golang.org/x/net/netutil"},
		"sim/openapi":          {},
		"sim/sandbox":          {"sim", "sim/server", "sim/store", "sim/control", "sim/internal/httpx", "github.com/go-chi/chi/v5", "github.com/go-chi/chi/v5/middleware", "golang.org/x/sync/errgroup"}, // sandboxes: simulators sim/app builds, behind one dispatcher; sim/server never imports it
		"sim/control/ui":       {"sim", "sim/audio", "sim/control", "sim/internal/httpx", "github.com/go-chi/chi/v5"},
		"sim/openapi/validate": {"github.com/santhosh-tekuri/jsonschema/v6"},
		"sim/parity":           {"sim/openapi", "sim/openapi/validate"},
		"test/crash":           nil, // tests only
		"test/hostile":         nil, // tests only: attacks on the real binary
		"test/browser":         nil, // tests only: drives chromium against the dashboard
		"test/consumer":        nil, // tests only: a module outside this one built from a file-based module proxy
		"test/generators":      nil, // tests only: OpenAPI generators over the served documents
		"test/release":         nil, // tests only: the release snapshot and its checks
		"test/shard":           nil, // tests only: two dubsims behind HAProxy and nginx, routed by sandbox
		"test/docs":            nil, // tests only: runs the documentation's shell blocks against a real dubsim
		"bench/ceiling":        {},  // the benchmark's minimal handler: stdlib only
		"bench/seed":           nil, // benchmark tooling: fills a data file through the store
		"bench/startwait":      {},
		"cmd/dubsim":           nil, // the composition root may import anything
		"examples":             nil, // tests only: runs the client examples against a real dubsim
		"clients":              nil, // tests only: runs the Python and JavaScript control clients against a real dubsim
		"examples/goclient":    {},  // client example: standard library only
		// in-process dubsim for Go tests, and the control API client
		"dubsimtest": {"sim", "sim/app", "sim/journal", "sim/sandbox", "sim/server", "internal/simtest"},
		// the in-process assembly dubsimtest and the module's own tests share
		"internal/simtest":  {"sim", "sim/app", "sim/server", "sim/store", "sim/sandbox", "fixtures"},
		"internal/proctest": {},  // runs the real binary in tests: stdlib only
		"internal/tooltest": {},  // finds the programs a test needs: stdlib only
		"docs":              nil, // tests only: checks the paths the documentation names
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, mod+"...").CombinedOutput()
	require.NoError(t, err, "%s", out)
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], mod)
		rules, known := allowed[pkg]
		if !assert.True(t, known, "package %s is not in the dependency table of this test; add it with its allowed imports", pkg) {
			continue
		}
		seen++
		if rules == nil {
			continue
		}
		for _, imp := range fields[1:] {
			first, _, _ := strings.Cut(imp, "/")
			if !strings.Contains(first, ".") {
				continue // standard library
			}
			ok := false
			for _, a := range rules {
				if imp == a || imp == mod+a {
					ok = true
				}
			}
			assert.True(t, ok, "%s must not import %s", pkg, imp)
		}
	}
	assert.Equal(t, len(allowed), seen, "every package of the table exists")
}
