package browser_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/dubsim/dubsim/dubsimtest"
)

// TestDashboardActionsInChromium drives the dashboard's actions, its
// project pages and its event stream (actions.mjs) against a dubsim with
// two pages of projects.
func TestDashboardActionsInChromium(t *testing.T) {
	t.Parallel()
	requireTools(t)
	sim := dubsimtest.Start(t) // frozen clock
	const projects = 60
	var ids []string
	for i := range projects {
		var created struct {
			ID string `json:"project_id"`
		}
		call(t, "POST", sim.URL+"/api/v1/projects", dubsimtest.KeyPro,
			fmt.Sprintf(`{"name":"Paged %02d","source_lang":"en","target_lang":"es-ES","source_video_url":"https://media.dubsim.test/short.mp4"}`, i), 200, &created)
		ids = append(ids, created.ID)
	}
	var artifact struct {
		ID string `json:"id"`
	}
	call(t, "POST", sim.URL+"/api/v1/artifacts/create", dubsimtest.KeyPro,
		`{"name":"Trailer","type":"video","url":"https://media.dubsim.test/short.mp4"}`, 200, &artifact)

	scenario(t, "actions.mjs", map[string]string{
		"DUBSIM_URL":  sim.URL,
		"PROJECT_ID":  ids[0],
		"ARTIFACT_ID": artifact.ID,
		"VIDEO_ID":    "683b275c0a4e53a77de3f4d1", // a fixture video, status new
		"API_KEY":     dubsimtest.KeyPro,
		"PROJECTS":    strconv.Itoa(projects),
	})
}
