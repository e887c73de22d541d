package server

import (
	"net/http"

	chicors "github.com/go-chi/cors"
)

// corsExposed are the answer headers a page may read besides the ones CORS
// always shows (Content-Type, Cache-Control, ...).
var corsExposed = []string{
	"Retry-After", "ETag", "Location", "Link", "Content-Disposition", "Content-Range", "Content-Length",
	"Idempotent-Replayed", HeaderInterface, "X-Dubsim-Auth-Error", "X-Dubsim-Error-Detail",
}

const corsMaxAge = 600 // seconds a browser may keep a preflight's answer

// cors lets pages of origins call the platform and studio interfaces from
// a browser (fidelity EV4): a preflight (OPTIONS with Origin and
// Access-Control-Request-Method) is answered here, 200 and empty, before
// the journal, the faults and the routers see it; an actual request from
// an allowed origin is answered with Access-Control-Allow-Origin. No
// credentials (cookies): the APIs authenticate with a bearer key a page
// sends itself. The control API is left to its guard (HC1-HC5): no CORS
// header, and its preflight goes on to the guard like any control call.
// It runs inside routing, which names the interface (RouteOf).
func cors(origins []string, next http.Handler) http.Handler {
	if len(origins) == 0 {
		return next
	}
	c := chicors.New(chicors.Options{
		AllowedOrigins: origins,
		AllowedMethods: []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete},
		AllowedHeaders: []string{"*"},
		ExposedHeaders: corsExposed,
		MaxAge:         corsMaxAge,
	}).Handler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if RouteOf(r).Interface == Control {
			next.ServeHTTP(w, r)
			return
		}
		c.ServeHTTP(w, r)
	})
}
