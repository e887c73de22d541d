package browser_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/dubsim/dubsim/dubsimtest"
)

// TestDashboardLayoutInChromium loads the dashboard at 1400×1000 with more
// than a page of platform projects, a studio artifact and a journal with a
// refused request, and checks by element geometry that the projects and the
// requests start on the first screen, before the action forms
// (layout.mjs). It takes a screenshot of the first screen, and of the whole
// page with DUBSIM_SCREENSHOTS.
func TestDashboardLayoutInChromium(t *testing.T) {
	t.Parallel()
	requireTools(t)
	sim := dubsimtest.Start(t) // frozen clock
	for i := range 55 {
		call(t, "POST", sim.URL+"/api/v1/projects", dubsimtest.KeyPro,
			fmt.Sprintf(`{"name":"Episode %02d","source_lang":"en","target_lang":"es-ES","source_video_url":"https://media.dubsim.test/short.mp4"}`, i+1), 200, nil)
	}
	call(t, "POST", sim.URL+"/api/v1/projects", dubsimtest.KeyPro,
		`{"name":"Refused","source_lang":"en","target_lang":"xx-XX","source_video_url":"https://media.dubsim.test/short.mp4"}`, 400, nil)
	call(t, "POST", sim.URL+"/api/v1/artifacts/create", dubsimtest.KeyPro,
		`{"name":"Trailer","type":"video","url":"https://media.dubsim.test/short.mp4"}`, 200, nil)

	// The first screen is always taken: that the dashboard can be
	// checked by a screenshot at this size is part of what is tested.
	shots := screenshots(t)
	first := filepath.Join(t.TempDir(), "layout-1400x1000.png")
	if shots != "" {
		first = filepath.Join(shots, "layout-1400x1000.png")
	}
	scenario(t, "layout.mjs", map[string]string{"DUBSIM_URL": sim.URL, "FIRST_SCREEN": first, "SCREENSHOTS": shots})
	requireShots(t, filepath.Dir(first), "layout-1400x1000.png")
	if shots != "" {
		requireShots(t, shots, "layout-full.png")
	}
}
