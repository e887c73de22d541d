package openapi_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/dubsim/dubsim/sim/openapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the copies in docs/openapi from the embedded documents")

// TestDocsCopies keeps docs/openapi/ identical to what dubsim serves.
func TestDocsCopies(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "docs", "openapi")
	want := map[string][]byte{}
	for _, n := range openapi.Names {
		b, err := openapi.Document(n)
		require.NoError(t, err)
		want[n+".json"] = b
	}
	b, err := openapi.Combined()
	require.NoError(t, err)
	want["openapi.json"] = b
	for name, b := range want {
		path := filepath.Join(dir, name)
		if *update {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(path, b, 0o644))
			continue
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err, "run go test ./sim/openapi -run TestDocsCopies -update")
		assert.Equal(t, string(b), string(got), "%s differs from the embedded document; run go test ./sim/openapi -run TestDocsCopies -update", path)
	}
}
