package browser_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/dubsim/dubsim/dubsimtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDashboardBytes measures what the dashboard reads with 2,000 projects
// idle: one round of the former polling (read every second) against the
// event stream over a window, through the real handler.
func TestDashboardBytes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("creates 2,000 projects")
	}
	sim := dubsimtest.Start(t)
	call(t, "POST", sim.URL+"/_sim/accounts", "", `{"api_key":"bulk","plan":"pro","balance_minutes":100000}`, 201, nil)
	for i := range 2000 {
		call(t, "POST", sim.URL+"/api/v1/projects", "bulk",
			fmt.Sprintf(`{"name":"Bulk %d","source_lang":"en","target_lang":"es-ES","source_video_url":"https://media.dubsim.test/short.mp4"}`, i), 200, nil)
	}
	size := func(path string) int {
		res, err := http.Get(sim.URL + path)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return len(b)
	}
	old := 0
	for _, p := range []string{"/_sim/state", "/_sim/faults", "/_sim/studio", "/_sim/requests?limit=100"} {
		old += size(p)
	}
	page := 0
	for _, p := range []string{"/_sim/state?limit=50", "/_sim/faults", "/_sim/studio", "/_sim/requests?limit=100"} {
		page += size(p)
	}
	const window = 3 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), window)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", sim.URL+"/_sim/events", nil)
	require.NoError(t, err)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	n, _ := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	t.Logf("2,000 projects idle: polling read %d bytes a second; the event stream sent %d bytes in %v (one refresh of %d bytes at connect)", old, n, window, page)
	assert.Less(t, float64(n)/window.Seconds(), float64(old)/100, "idle stream under 1%% of the polling")
}
