package server

import (
	"net/http"
	"strings"

	"github.com/dubsim/dubsim/sim/ui"
)

// pages answers the web application's pages in front of the fault rules
// (a fault meant for the API must not break the page a person reads): GET
// and HEAD of /projects/{id}, the page behind a studio project's
// projectUrl, and, when dashboard is true, a browser's GET / (Accept:
// text/html), redirected to the dashboard. Every other request, including
// other methods on those paths, goes on to next as before.
func pages(next http.Handler, u *ui.UI, dashboard bool) http.Handler {
	page := u.PageRoutes(dashboard)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			if isProjectPage(r.URL.Path) {
				page.ServeHTTP(w, r)
				return
			}
			if dashboard && r.URL.Path == "/" && strings.Contains(r.Header.Get("Accept"), "text/html") {
				http.Redirect(w, r, ui.DashboardPath, http.StatusFound)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// isProjectPage reports whether path is /projects/{id} with a non-empty id.
func isProjectPage(path string) bool {
	id, ok := strings.CutPrefix(path, "/projects/")
	return ok && id != "" && !strings.Contains(id, "/")
}
