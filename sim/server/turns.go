package server

import (
	"net/http"

	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// turns makes each request wait for a place among the process's running
// requests (httpx.Turns, docs/design/tenancy.md) in its tenant's queue: the
// instance's (tn), or the process's queue of requests not yet attributed
// when it carries a key that does not authenticate here. A request without
// a key is the instance's: the control API, output files, presigned
// uploads and pages need none, and an interface refuses a keyless request
// at once. It sits inside routing (the control API's calls are the
// instance's, whatever Authorization carries) and after the routing's read
// of a create body, so that a body trickling in holds no place.
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
