package hostile

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sniffPost sends a create on the shared address, with no X-Dubsim-Interface
// header, and returns the status, the interface that answered and the
// answer's JSON object.
func sniffPost(t *testing.T, base, body string) (int, string, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/projects", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer dubsim-subscription")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "%.300s", b)
	return resp.StatusCode, resp.Header.Get("X-Dubsim-Interface"), m
}

// The shared address tells a platform create from a studio one by the
// whole body's top-level keys (up to the route's 10 MiB limit), not by a
// prefix: a platform create whose 100 KB name comes first is the
// platform's, and the platform says the name is too long, in its envelope,
// not the studio's ({"error": ...}).
func TestSniffHugeNameDoesNotHideThePlatformFields(t *testing.T) {
	t.Parallel()
	p := start(t)
	name := strings.Repeat("x", 100_000)
	status, iface, m := sniffPost(t, p.Base, `{"name":"`+name+`","source_lang":"en","target_lang":"fr-FR",`+
		`"source_video_url":"https://media.dubsim.test/short.mp4"}`)
	t.Logf("a 100 KB name first: %d from %s, %.120v", status, iface, m)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "platform", iface, "X-Dubsim-Interface")
	assert.Equal(t, map[string]any{"error": "ValidationError",
		"message": fmt.Sprintf("name must be at most 500 characters; got %d", len(name))}, m, "the platform envelope")

	// The same name with a studio field is the studio's, and a platform
	// field nested in another value counts for nothing.
	status, iface, m = sniffPost(t, p.Base, `{"name":"`+name+`","managerEmail":"a@b.test"}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "studio", iface, "X-Dubsim-Interface")
	assert.Len(t, m, 1, "the studio envelope: %.200v", m)
	status, iface, _ = sniffPost(t, p.Base, `{"name":"`+name+`","x":{"source_lang":"en"}}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "studio", iface, "X-Dubsim-Interface")
	assert.True(t, p.Alive())
}
