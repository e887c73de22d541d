// Package release runs the release pipeline locally (scripts/release-snapshot:
// goreleaser's snapshot and the multi-arch image, nothing published) and
// checks what it leaves in dist/ on its own terms: the archives a user
// downloads hold a static binary for the named platform, the checksums match,
// and the image index lists linux/amd64 and linux/arm64 with the OCI labels.
//
// It needs goreleaser (.ci/bin/goreleaser, as .ci/run installs it, or on
// PATH) and buildah; without them it skips, or fails with
// DUBSIM_REQUIRE_TOOLS=1 (internal/tooltest). It rewrites dist/ at the
// repository root.
//
// It runs only in the long run (DUBSIM_LONG=1, as .ci/run sets): the
// snapshot cross-builds six binaries and two images, half a minute of both
// cores even with a warm cache, and there is no smaller release to build.
package release_test

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/internal/tooltest"

	"github.com/stretchr/testify/require"
)

const root = "../.."

var platforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

func requireTools(t *testing.T) {
	t.Helper()
	missing := func(what string) { tooltest.Missing(t, what) }
	if _, err := os.Stat(filepath.Join(root, ".ci/bin/goreleaser")); err != nil {
		if _, err := exec.LookPath("goreleaser"); err != nil {
			missing("goreleaser (GOBIN=$PWD/.ci/bin go install github.com/goreleaser/goreleaser/v2@v2.15.1)")
		}
	}
	if _, err := exec.LookPath("buildah"); err != nil {
		missing("buildah (apt-get install buildah)")
	}
}

func TestReleaseSnapshot(t *testing.T) {
	tooltest.LongOnly(t, "the release snapshot (six cross-built binaries and a two-arch image)")
	requireTools(t)
	cmd := exec.Command("scripts/release-snapshot")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "DUBSIM_REQUIRE_TOOLS=1") // buildah was found: the image must be built
	out, err := cmd.CombinedOutput()
	t.Logf("scripts/release-snapshot:\n%s", out)
	require.NoError(t, err)
	require.Contains(t, string(out), "release-snapshot OK")

	dist := filepath.Join(root, "dist")
	var meta struct{ Version string }
	readJSON(t, filepath.Join(dist, "metadata.json"), &meta)
	require.NotEmpty(t, meta.Version)

	sums := checksums(t, filepath.Join(dist, "checksums.txt"))
	require.Len(t, sums, len(platforms), "checksums.txt lists one archive per platform")
	for _, p := range platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		ext, exe := ".tar.gz", "dubsim"
		if goos == "windows" {
			ext, exe = ".zip", "dubsim.exe"
		}
		name := "dubsim_" + meta.Version + "_" + goos + "_" + goarch + ext
		data, err := os.ReadFile(filepath.Join(dist, name))
		require.NoError(t, err, p)
		sum := sha256.Sum256(data)
		require.Equal(t, sums[name], hex.EncodeToString(sum[:]), "checksum of %s", name)

		files := unpack(t, name, data)
		require.Contains(t, files, "README.md", name)
		bin, ok := files[exe]
		require.True(t, ok, "%s holds %s: %v", name, exe, keys(files))

		info, err := buildinfo.Read(bytes.NewReader(bin))
		require.NoError(t, err, name)
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		require.Equal(t, goos, settings["GOOS"], name)
		require.Equal(t, goarch, settings["GOARCH"], name)
		require.Equal(t, "0", settings["CGO_ENABLED"], name)
		require.Equal(t, "true", settings["-trimpath"], name)
		require.True(t, bytes.Contains(bin, []byte(meta.Version)), "%s: binary stamped with %s", name, meta.Version)
		if goos == "linux" {
			requireStaticELF(t, name, bin)
		}
	}

	requireImage(t, filepath.Join(dist, "image"), meta.Version)
}

// requireStaticELF: no program interpreter and no shared libraries.
func requireStaticELF(t *testing.T, name string, bin []byte) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(bin))
	require.NoError(t, err, name)
	for _, p := range f.Progs {
		require.NotEqual(t, elf.PT_INTERP, p.Type, "%s has a program interpreter", name)
	}
	libs, err := f.ImportedLibraries()
	require.NoError(t, err, name)
	require.Empty(t, libs, "%s needs shared libraries", name)
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Annotations map[string]string `json:"annotations"`
	Platform    *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	} `json:"platform"`
}

// requireImage reads the OCI layout: the reference named version is an
// index of two platforms, each config with the OCI labels and the
// HEALTHCHECK the README's compose example relies on.
func requireImage(t *testing.T, dir, version string) {
	t.Helper()
	blob := func(d descriptor, v any) {
		t.Helper()
		algo, hexd, ok := strings.Cut(d.Digest, ":")
		require.True(t, ok && algo == "sha256", d.Digest)
		data, err := os.ReadFile(filepath.Join(dir, "blobs", algo, hexd))
		require.NoError(t, err)
		sum := sha256.Sum256(data)
		require.Equal(t, hexd, hex.EncodeToString(sum[:]), "blob digest")
		require.NoError(t, json.Unmarshal(data, v))
	}
	var top struct{ Manifests []descriptor }
	readJSON(t, filepath.Join(dir, "index.json"), &top)
	var ref *descriptor
	for i, m := range top.Manifests {
		if m.Annotations["org.opencontainers.image.ref.name"] == version {
			ref = &top.Manifests[i]
		}
	}
	require.NotNil(t, ref, "index.json names %s", version)
	var index struct{ Manifests []descriptor }
	blob(*ref, &index)
	var got []string
	for _, m := range index.Manifests {
		require.NotNil(t, m.Platform)
		plat := m.Platform.OS + "/" + m.Platform.Architecture
		got = append(got, plat)
		var manifest struct{ Config descriptor }
		blob(m, &manifest)
		var config struct {
			OS           string `json:"os"`
			Architecture string `json:"architecture"`
			Config       struct {
				Labels      map[string]string
				Entrypoint  []string
				Healthcheck *struct{ Test []string }
			} `json:"config"`
		}
		blob(manifest.Config, &config)
		require.Equal(t, plat, config.OS+"/"+config.Architecture)
		for _, k := range []string{"source", "version", "licenses", "revision", "created", "title", "description"} {
			require.NotEmpty(t, config.Config.Labels["org.opencontainers.image."+k], "%s: label %s", plat, k)
		}
		require.Equal(t, version, config.Config.Labels["org.opencontainers.image.version"], plat)
		require.Equal(t, []string{"/dubsim"}, config.Config.Entrypoint, plat)
		require.NotNil(t, config.Config.Healthcheck, "%s: HEALTHCHECK", plat)
	}
	require.ElementsMatch(t, []string{"linux/amd64", "linux/arm64"}, got)
}

// checksums reads goreleaser's checksums.txt: "<sha256>  <file>" lines.
func checksums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		require.True(t, ok, "checksums.txt line %q", sc.Text())
		sums[name] = sum
	}
	require.NoError(t, sc.Err())
	return sums
}

// unpack returns an archive's regular files by name.
func unpack(t *testing.T, name string, data []byte) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	if strings.HasSuffix(name, ".zip") {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err, name)
		for _, f := range zr.File {
			rc, err := f.Open()
			require.NoError(t, err, name)
			b, err := io.ReadAll(rc)
			require.NoError(t, err, name)
			require.NoError(t, rc.Close())
			files[f.Name] = b
		}
		return files
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	require.NoError(t, err, name)
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		require.NoError(t, err, name)
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			require.NoError(t, err, name)
			files[h.Name] = b
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, v), path)
}

func keys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
