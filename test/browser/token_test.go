package browser_test

import (
	"testing"

	"github.com/dubsim/dubsim/dubsimtest"
)

// TestDashboardControlTokenInChromium: with --control-token the dashboard
// asks for the token, says when it is refused, loads with the right one,
// sends it with every call (an advance, the audio) and never puts it in an
// address (token.mjs; fidelity HC4).
func TestDashboardControlTokenInChromium(t *testing.T) {
	t.Parallel()
	requireTools(t)
	const token = "browser-test-control-token-5c1e"
	sim := dubsimtest.Start(t, dubsimtest.WithControlToken(token))

	var created struct {
		ID string `json:"project_id"`
	}
	call(t, "POST", sim.URL+"/api/v1/projects", dubsimtest.KeyPro,
		`{"name":"Token demo","source_lang":"en","target_lang":"es-ES","source_video_url":"https://media.dubsim.test/short.mp4"}`, 200, &created)

	shots := screenshots(t)
	scenario(t, "token.mjs", map[string]string{
		"DUBSIM_URL":    sim.URL,
		"CONTROL_TOKEN": token,
		"PROJECT_ID":    created.ID,
		"SCREENSHOTS":   shots,
	})
	if shots != "" {
		requireShots(t, shots, "token-01-refused.png", "token-02-loaded.png")
	}
}
