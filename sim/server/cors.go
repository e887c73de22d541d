package server

import (
	"net/http"

	chicors "github.com/go-chi/cors"
)

// corsExposed are the answer headers a page may read besides the safelisted ones.
var corsExposed = []string{
	"Retry-After", "ETag", "Location", "Link", "Content-Disposition", "Content-Range", "Content-Length",
	"Idempotent-Replayed", HeaderInterface, "X-Dubsim-Auth-Error", "X-Dubsim-Error-Detail",
}

const corsMaxAge = 600 // seconds a browser may keep a preflight's answer

// cors lets pages of origins call the platform and studio interfaces
// (fidelity EV4): preflights are answered here, before the journal and the
// faults; no credentials, as the APIs take a bearer key. The control API
// gets no CORS header: its guard (HC1-HC5) answers its preflights.
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
