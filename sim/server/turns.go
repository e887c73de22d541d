package server

import (
	"net/http"

	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// turns makes each request wait for a place among the process's running
// requests (httpx.Turns) in its tenant's queue: the instance's, or the
// process's unattributed queue for a key that does not authenticate here
// (a keyless request, refused at once, and a control call are the
// instance's). It sits after the routing's read of a create body, so that
// a body trickling in holds no place.
func (s *Server) turns(tn *httpx.TurnTenant, next http.Handler) http.Handler {
	if tn == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if RouteOf(r).Interface != Control && r.Header.Get("Authorization") != "" && !s.authenticated(r) {
			tn.Unattributed().Serve(w, r, next)
			return
		}
		tn.Serve(w, r, next)
	})
}
