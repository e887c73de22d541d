package server

import (
	"net/http"
	"strings"

	"github.com/dubsim/dubsim/sim/control/ui"
	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// pages answers the project pages (and, with dashboard, redirects a
// browser's GET / to the dashboard) in front of the fault rules: a fault
// meant for the API must not break the page a person reads.
func pages(next http.Handler, u *ui.UI, dashboard bool, guard *controlGuard) http.Handler {
	page := u.PageRoutes(dashboard)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case isPage(r):
			if f, refused := guard.checkPage(r); refused {
				f.ServeHTTP(w, r)
				return
			}
			page.ServeHTTP(w, r)
		case dashboard && isDashboardRequest(r):
			http.Redirect(w, r, httpx.BasePath(r.Context())+ui.DashboardPath, http.StatusFound)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

func isPage(r *http.Request) bool { return isPagePath(r.Method, r.URL.Path) }

func isPagePath(method, path string) bool {
	if method != http.MethodGet && method != http.MethodHead {
		return false
	}
	id, ok := strings.CutPrefix(path, "/projects/")
	return ok && id != "" && !strings.Contains(id, "/")
}

// isDashboardRequest reports whether r is a browser's GET (or HEAD) of /.
func isDashboardRequest(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		r.URL.Path == "/" && strings.Contains(r.Header.Get("Accept"), "text/html")
}

// IsPageView reports whether r is answered by the project page, on its
// path or under StudioPrefix.
func IsPageView(r *http.Request) bool {
	if isPage(r) {
		return true
	}
	rest, ok := strings.CutPrefix(r.URL.Path, StudioPrefix)
	return ok && RouteOf(r).By == ByPrefix && isPagePath(r.Method, rest)
}
