// Package generators runs OpenAPI tools over the documents a running dubsim
// serves (/_sim/openapi.json and /_sim/openapi/{platform,studio,control}.json):
// redocly lint, openapi-typescript with tsc --strict over the README's
// requests (readme.ts, then run with node against the same dubsim), and
// oapi-codegen generating Go clients of the platform and studio interfaces,
// built in a module of their own and used against the same dubsim
// (testdata/goclient).
//
// The npm tools are pinned in package.json and package-lock.json (the test
// runs npm ci in this directory when they are missing); oapi-codegen and its runtime come from the Go module proxy
// at the versions below. Without node or the npm packages the test skips, or
// fails with DUBSIM_REQUIRE_TOOLS=1 (internal/tooltest).
package generators

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/tooltest"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	oapiCodegen = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"
	oapiRuntime = "github.com/oapi-codegen/runtime v1.9.0"
)

// documents are the served documents, by the file name they are saved as.
var documents = map[string]string{
	"platform.json": "/_sim/openapi/platform.json",
	"studio.json":   "/_sim/openapi/studio.json",
	"control.json":  "/_sim/openapi/control.json",
	"openapi.json":  "/_sim/openapi.json",
}

// npmTool is the path of a tool of node_modules/.bin.
func npmTool(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("node_modules", ".bin", name))
	require.NoError(t, err)
	tooltest.NodeModules(t, ".", filepath.Join(".bin", name))
	return p
}

// run runs a command in dir (with env added) and returns its combined
// output, logging how long it took.
func run(t *testing.T, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("%s %s: %s", filepath.Base(name), strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return string(out), err
}

// quiet keeps redocly from asking the network about updates and telemetry.
var quiet = []string{"REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1"}

func TestGenerators(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		tooltest.Missing(t, "node")
	}
	redocly, openapiTS, tsc := npmTool(t, "redocly"), npmTool(t, "openapi-typescript"), npmTool(t, "tsc")

	sim := proctest.Start(t, proctest.Binary(t), nil, "--addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "dubsim.db"), "--log-level", "off")
	dir := t.TempDir()
	for file, path := range documents {
		res, err := http.Get(sim.Base + path)
		require.NoError(t, err)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", path, b)
		var doc struct {
			Servers []struct{ URL string } `json:"servers"`
		}
		require.NoError(t, json.Unmarshal(b, &doc), path)
		require.NotEmpty(t, doc.Servers, path)
		assert.Equal(t, sim.Base, doc.Servers[0].URL, "%s names the address it was served from first", path)
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), b, 0o644))
	}

	// The three tools work in separate folders of dir, on documents they
	// only read: they run in parallel.
	t.Run("redocly lint", func(t *testing.T) {
		t.Parallel()
		// One run lints the four documents (a start of redocly costs more
		// CPU than a document); its output names each file.
		out, err := run(t, dir, quiet, redocly, "lint", "--format=summary", "platform.json", "studio.json", "control.json", "openapi.json")
		assert.NoError(t, err, "redocly lint reports errors:\n%s", out)
		t.Logf("redocly lint: %s", summary(out))
	})

	t.Run("openapi-typescript and tsc", func(t *testing.T) {
		t.Parallel()
		gen := filepath.Join(dir, "gen")
		require.NoError(t, os.MkdirAll(gen, 0o755))
		// One run generates the four documents' types, listed as the apis
		// of gen/redocly.yaml (the tool's way to take several; a start of
		// it costs more than a document). The file is in gen, so that
		// redocly lint, run in dir, does not take it for its own config.
		var cfg strings.Builder
		cfg.WriteString("apis:\n")
		for _, name := range []string{"platform", "studio", "control", "openapi"} {
			fmt.Fprintf(&cfg, "  %s:\n    root: ../%s.json\n    x-openapi-ts:\n      output: ./%s.ts\n", name, name, name)
		}
		require.NoError(t, os.WriteFile(filepath.Join(gen, "redocly.yaml"), []byte(cfg.String()), 0o644))
		// --default-non-nullable false: a property with a default stays
		// optional in a request (the tool's default makes it required
		// everywhere).
		out, err := run(t, gen, nil, openapiTS, "--default-non-nullable", "false")
		require.NoError(t, err, "openapi-typescript:\n%s", out)
		for _, name := range []string{"platform", "studio", "control", "openapi"} {
			st, err := os.Stat(filepath.Join(gen, name+".ts"))
			require.NoError(t, err, "openapi-typescript made no %s.ts:\n%s", name, out)
			require.Positive(t, st.Size(), "%s.ts", name)
		}
		for _, f := range []string{"readme.ts", "testdata/wrong.ts"} {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644))
		}
		// --skipLibCheck: TypeScript's own lib.dom.d.ts is not checked again
		// (a third of tsc's CPU); the generated types are .ts files, checked
		// with readme.ts and wrong.ts.
		tscArgs := []string{"--strict", "--skipLibCheck", "--target", "es2022", "--module", "es2022", "--moduleResolution", "bundler", "--lib", "es2022,dom", "--outDir", "out"}
		// One run checks both files (each start of tsc loads lib.dom): it
		// must refuse wrong.ts and find nothing wrong in readme.ts, which
		// it still compiles.
		out, err = run(t, dir, nil, tsc, append(tscArgs, "readme.ts", "wrong.ts")...)
		require.Error(t, err, "tsc accepts a body without target_lang:\n%s", out)
		assert.Contains(t, out, "target_lang", "tsc names the missing field")
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "error TS") {
				require.True(t, strings.HasPrefix(line, "wrong.ts("), "tsc --strict finds an error outside wrong.ts:\n%s", out)
			}
		}

		require.NoError(t, os.WriteFile(filepath.Join(dir, "out", "package.json"), []byte(`{"type":"module"}`), 0o644))
		out, err = run(t, dir, nil, "node", filepath.Join("out", "readme.js"), sim.Base)
		require.NoError(t, err, "the README's requests with the generated types:\n%s", out)
		var got struct {
			Platform, Studio string
			OK               bool
		}
		require.NoError(t, json.Unmarshal([]byte(lastLine(out)), &got), out)
		assert.True(t, got.OK)
		assert.Regexp(t, `^[0-9]{9}$`, got.Platform)
		assert.Regexp(t, `^[0-9a-f]{24}$`, got.Studio)
	})

	t.Run("oapi-codegen", func(t *testing.T) {
		t.Parallel()
		mod := goclientDir(t)
		require.NoError(t, os.MkdirAll(filepath.Join(mod, "goclient"), 0o755))
		goEnv := []string{"GOFLAGS=-mod=mod", "GOWORK=off"}
		// The two generations are independent: they run at once (each go
		// run is mostly the go command's own start).
		ifaces := []string{"platform", "studio"}
		outs, errs := make([]string, len(ifaces)), make([]error, len(ifaces))
		var wg sync.WaitGroup
		for i, iface := range ifaces {
			pkg := iface + "client"
			require.NoError(t, os.MkdirAll(filepath.Join(mod, pkg), 0o755))
			cfg := "package: " + pkg + "\ngenerate:\n  client: true\n  models: true\noutput: " + pkg + "/client.gen.go\n"
			require.NoError(t, os.WriteFile(filepath.Join(mod, pkg+".yaml"), []byte(cfg), 0o644))
			wg.Go(func() {
				outs[i], errs[i] = run(t, mod, goEnv, "go", "run", oapiCodegen, "-config", pkg+".yaml", filepath.Join(dir, iface+".json"))
			})
		}
		wg.Wait()
		for i, iface := range ifaces {
			if errs[i] != nil && offline(outs[i]) {
				tooltest.Missing(t, "oapi-codegen from the Go module proxy ("+strings.TrimSpace(outs[i])+")")
			}
			require.NoError(t, errs[i], "oapi-codegen %s:\n%s", iface, outs[i])
		}
		main, err := os.ReadFile(filepath.Join("testdata", "goclient", "main.go"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(mod, "goclient", "main.go"), main, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/generated\n\ngo 1.24\n\nrequire "+oapiRuntime+"\n"), 0o644))
		out, err := run(t, mod, goEnv, "go", "mod", "tidy")
		require.NoError(t, err, "go mod tidy:\n%s", out)
		out, err = run(t, mod, goEnv, "go", "vet", "./...")
		require.NoError(t, err, "go vet of the generated clients:\n%s", out)
		cmd := exec.Command("go", "run", "./goclient", sim.Base)
		cmd.Dir, cmd.Env = mod, append(os.Environ(), goEnv...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		require.NoError(t, err, "the generated clients against dubsim:\n%s", stderr.String())
		var got struct {
			PlatformProject string `json:"platform_project"`
			CostMinutes     int    `json:"cost_minutes"`
			Status, Name    string
			FrenchVoices    int    `json:"french_voices"`
			StudioProject   string `json:"studio_project"`
			StudioName      string `json:"studio_name"`
			StudioListHasIt bool   `json:"studio_list_has_it"`
			UnknownKey      int    `json:"unknown_key_status"`
		}
		require.NoError(t, json.Unmarshal(stdout, &got), "%s", stdout)
		assert.Regexp(t, `^[0-9]{9}$`, got.PlatformProject)
		assert.Equal(t, 10, got.CostMinutes, "the docs' example video is 10 minutes")
		assert.Equal(t, "in_progress", got.Status)
		assert.Equal(t, "My Project", got.Name)
		assert.Positive(t, got.FrenchVoices, "voices for fr-FR")
		assert.Regexp(t, `^[0-9a-f]{24}$`, got.StudioProject)
		assert.Equal(t, "Launch", got.StudioName)
		assert.True(t, got.StudioListHasIt, "the new studio project is listed")
		assert.Equal(t, http.StatusUnauthorized, got.UnknownKey)
		t.Logf("generated clients against dubsim: %s", bytes.TrimSpace(stdout))
	})
}

// goclientDir is an empty folder for the generated Go module, the same for
// every run of this checkout (under the user's cache, named after the
// test's folder, as proctest does with the dubsim binary), held by this
// test until it ends: go's build cache keys a package on its folder as
// well as its files, so in a new temporary folder go vet and go run
// compiled the 10,000 generated lines again on every run (about 3.5 s of
// CPU), while in the same folder the clients of an unchanged document
// come from the cache.
func goclientDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256([]byte(wd))
	dir := filepath.Join(cache, "dubsim-test-goclient", hex.EncodeToString(sum[:8]))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	// Two runs of this test in one checkout at once take turns.
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	require.NoError(t, err)
	t.Cleanup(func() { lock.Close() }) // and so unlocked
	require.NoError(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_EX))
	mod := filepath.Join(dir, "module")
	require.NoError(t, os.RemoveAll(mod))
	require.NoError(t, os.Mkdir(mod, 0o755))
	return mod
}

// offline says whether a go command failed for want of the module proxy.
func offline(out string) bool {
	for _, s := range []string{"dial tcp", "no such host", "proxyconnect", "connection refused", "i/o timeout"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

// summary is the problem counts of redocly's summary format, on one line.
func summary(out string) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "error") || strings.HasPrefix(l, "warning") {
			lines = append(lines, strings.Join(strings.Fields(l), " "))
		}
	}
	if len(lines) == 0 {
		return "no problems"
	}
	return strings.Join(lines, "; ")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestReferencePage: the real binary serves the API reference page (with
// no tool needed), linked from the dashboard, with its own address as the
// server and an entry per operation.
func TestReferencePage(t *testing.T) {
	t.Parallel()
	sim := proctest.Start(t, proctest.Binary(t), nil, "--addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "dubsim.db"), "--log-level", "off")
	get := func(path string) string {
		res, err := http.Get(sim.Base + path)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", path, b)
		return string(b)
	}
	assert.Contains(t, get("/_sim/ui/"), `href="api.html"`, "the dashboard links the reference")
	page := get("/_sim/ui/api.html")
	assert.Contains(t, page, "<code>"+sim.Base+"</code>")
	assert.Contains(t, page, `data-operation-id="getProject_or_studioGetProject"`)
	var doc struct {
		Paths map[string]map[string]json.RawMessage
	}
	require.NoError(t, json.Unmarshal([]byte(get("/_sim/openapi.json")), &doc))
	ops := 0
	for _, item := range doc.Paths {
		for m := range item {
			if m != "parameters" && m != "servers" {
				ops++
			}
		}
	}
	assert.Equal(t, ops, strings.Count(page, `<details class="op"`), "an entry per operation")
	assert.Contains(t, get("/_sim/ui/api.js"), "openTarget")
}
