package httpx

import (
	"cmp"
	"net/http"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"
)

// allowProbe are the methods an Allow header may list.
var allowProbe = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// RoutePath is the path routes match r by: the part below the mount point
// in a mounted router, else the request's path (as chi routes it).
func RoutePath(r *http.Request) string {
	if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.RoutePath != "" {
		return rctx.RoutePath
	}
	return cmp.Or(r.URL.RawPath, r.URL.Path, "/")
}

// Allowed lists the methods any of routes serves on path, in allowProbe's order.
func Allowed(path string, routes ...chi.Routes) []string {
	var out []string
	for _, m := range allowProbe {
		if slices.ContainsFunc(routes, func(rt chi.Routes) bool { return rt.Match(chi.NewRouteContext(), m, path) }) {
			out = append(out, m)
		}
	}
	return out
}

// WithAllow wraps the 405 handler of routes: it sets the Allow header (RFC
// 9110, 15.5.6), which chi sets for its own default handler only, then lets
// h write the interface's envelope.
func WithAllow(routes chi.Routes, h http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// An address that serves two routers (the shared one) has set it.
		if _, set := w.Header()["Allow"]; !set {
			SetAllow(w, Allowed(RoutePath(r), routes))
		}
		h.ServeHTTP(w, r)
	}
}

// SetAllow sets the Allow header to methods (none: an empty Allow).
func SetAllow(w http.ResponseWriter, methods []string) {
	w.Header().Set("Allow", strings.Join(methods, ", "))
}
