package server

import (
	"cmp"
	"encoding/json"
	"net/http"
	"time"

	"github.com/dubsim/dubsim/sim/control"
	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// HealthPath answers as soon as a listener accepts connections (an
// instance is ready before it listens), in front of the journal and the
// faults (a probe is not client traffic), even without the control API.
const HealthPath = "/_sim/health"

// Health is the body of GET /_sim/health.
type Health struct {
	Status        string  `json:"status"`
	Version       string  `json:"version"`
	Now           string  `json:"now"`            // simulated time
	UptimeSeconds float64 `json:"uptime_seconds"` // wall time since assembly
}

// health answers HealthPath; answer wraps its answers (early answers).
func (s *Server) health(next http.Handler, answer func(http.Handler) http.Handler, version string, started time.Time, now func() time.Time) http.Handler {
	version = cmp.Or(version, "dev")
	own := answer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, r, http.StatusMethodNotAllowed, "MethodNotAllowedError", "Method "+r.Method+" is not allowed on "+HealthPath+"; use GET or HEAD")
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Type", httpx.ContentTypeJSON)
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			b, _ := json.Marshal(Health{Status: "ok", Version: version, Now: control.Time(now()),
				UptimeSeconds: float64(time.Since(started).Milliseconds()) / 1000})
			_, _ = w.Write(append(b, '\n'))
		}
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != HealthPath {
			next.ServeHTTP(w, r)
			return
		}
		own.ServeHTTP(w, r)
	})
}
