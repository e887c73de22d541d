package shard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	require.NoError(t, err)
	return string(b)
}

// TestDocsShowTheTestedConfigs: docs/sharding.md shows the two balancer
// configurations the sharding tests run, verbatim, so they cannot drift.
func TestDocsShowTheTestedConfigs(t *testing.T) {
	t.Parallel()
	doc := read(t, "docs/sharding.md")
	for _, f := range []string{"docs/sharding/haproxy.cfg", "docs/sharding/nginx.conf"} {
		assert.Contains(t, doc, "\n"+read(t, f)+"```\n", "docs/sharding.md shows %s as it is, in a code block of its own", f)
	}
	assert.Contains(t, read(t, "README.md"), "routed by sandbox id ([docs/sharding.md](docs/sharding.md))", "the README links the sharding guide")
}

// routing is the lines of an HAProxy configuration that route: the
// frontend's rules and the sandboxes backend's balance, without the
// indentation.
func routing(cfg string) []string {
	var out []string
	for _, l := range strings.Split(cfg, "\n") {
		l = strings.TrimSpace(l)
		for _, p := range []string{"acl ", "http-request ", "use_backend ", "default_backend ", "balance ", "hash-type ", "option httpchk"} {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
			}
		}
	}
	return out
}

// k8sObject is what the test reads of a manifest.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		ServiceName string `yaml:"serviceName"`
		Replicas    int    `yaml:"replicas"`
		ClusterIP   string `yaml:"clusterIP"`
	} `yaml:"spec"`
}

func manifests(t *testing.T, path string) []k8sObject {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader([]byte(read(t, path))))
	var out []k8sObject
	for {
		var o k8sObject
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err, path)
		require.NotEmpty(t, o.APIVersion, "%s: object %d", path, len(out))
		require.NotEmpty(t, o.Metadata.Name, "%s: object %d", path, len(out))
		out = append(out, o)
	}
}

// TestK8sManifests: docs/k8s parses as YAML; the balancer's configuration
// names one server per StatefulSet replica by its stable DNS name with a
// fixed id, routes with the tested rules, and is valid for haproxy -c.
func TestK8sManifests(t *testing.T) {
	t.Parallel()
	objs := map[string]k8sObject{}
	for _, f := range []string{"docs/k8s/dubsim.yaml", "docs/k8s/haproxy.yaml"} {
		for _, o := range manifests(t, f) {
			objs[o.Kind+"/"+o.Metadata.Name] = o
		}
	}
	sts, ok := objs["StatefulSet/dubsim"]
	require.True(t, ok, "a StatefulSet dubsim: %v", objs)
	svc := objs["Service/"+sts.Spec.ServiceName]
	assert.Equal(t, "None", svc.Spec.ClusterIP, "the StatefulSet's service is headless")
	require.Contains(t, objs, "Deployment/dubsim-lb")
	require.Contains(t, objs, "Service/dubsim-lb")
	require.Contains(t, objs, "Secret/dubsim")
	cfg := objs["ConfigMap/dubsim-lb"].Data["haproxy.cfg"]
	require.NotEmpty(t, cfg, "ConfigMap dubsim-lb holds haproxy.cfg")

	assert.Equal(t, routing(read(t, "docs/sharding/haproxy.cfg")), routing(cfg), "the same routing as the tested configuration")
	servers := regexp.MustCompile(`(?m)^\s+server (\S+) (\S+) id (\d+)$`).FindAllStringSubmatch(cfg, -1)
	require.Len(t, servers, sts.Spec.Replicas, "one server with an id per StatefulSet replica")
	for i, s := range servers {
		pod := fmt.Sprintf("%s-%d", sts.Metadata.Name, i)
		assert.Equal(t, pod, s[1])
		assert.Equal(t, fmt.Sprintf("%s.%s.%s.svc.cluster.local:8080", pod, sts.Spec.ServiceName, sts.Metadata.Namespace), s[2])
		assert.Equal(t, fmt.Sprint(i+1), s[3])
	}

	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o644))
	out, err := exec.Command(tool(t, "haproxy"), "-c", "-f", path).CombinedOutput()
	require.NoError(t, err, "haproxy -c:\n%s", out)
}
