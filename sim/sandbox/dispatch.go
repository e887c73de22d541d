package sandbox

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/dubsim/dubsim/sim/server"
)

// PathPrefix starts the paths that name a sandbox: /sbx/<id>/<path>.
const PathPrefix = "/sbx/"

// controlPrefix is the other form of a sandbox's control API:
// /_sim/sandboxes/<id>/<rest> is /sbx/<id>/_sim/<rest>.
const controlPrefix = "/_sim/sandboxes/"

// HeaderError says why a request that named a sandbox was not served by it.
const HeaderError = "X-Dubsim-Sandbox-Error"

type pickFunc func(*server.Server) http.Handler

// Pick the handler of one listener from a sandbox's server.
var (
	PickMain    pickFunc = func(s *server.Server) http.Handler { return s.Handler }
	PickStudio  pickFunc = func(s *server.Server) http.Handler { return s.StudioHandler }
	PickControl pickFunc = func(s *server.Server) http.Handler { return s.ControlHandler }
)

// Handler serves, on one listener, the requests that name a sandbox with
// that sandbox's handler (pick) and every other request with def (fidelity
// SB4). The path prefix is removed and kept for the links of the answer
// (httpx.WithBasePath), also for a request routed by its key, since those
// URLs carry no key.
func (m *Manager) Handler(def http.Handler, pick pickFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, rest, byPath := target(r)
		if id == "" {
			def.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(httpx.WithBasePath(r.Context(), PathPrefix+id))
		defer cancel()
		fw := &fencedWriter{w: w, cancel: cancel, stream: cmp.Or(rest, r.URL.Path) == eventsPath}
		sb := m.acquire(id, fw)
		if sb == nil {
			m.unknown(w, r, id, byPath, def)
			return
		}
		defer m.release(sb, fw)
		h := pick(sb.Server)
		if h == nil { // a listener the process does not have
			def.ServeHTTP(w, r)
			return
		}
		r2 := r.WithContext(ctx)
		if byPath {
			u := *r.URL
			u.Path, u.RawPath = rest, ""
			// The escaped form, when the path has one: the same cut.
			removed := strings.TrimSuffix(r.URL.Path, rest)
			if raw, ok := strings.CutPrefix(r.URL.RawPath, removed); ok && raw != "" {
				u.RawPath = raw
			}
			if strings.HasPrefix(r.URL.Path, controlPrefix) {
				u.RawPath = ""
			}
			r2.URL = &u
		}
		fw.fence = sb.fence.Done()
		if r2.Body != nil && r2.Body != http.NoBody {
			r2.Body = fencedBody{ReadCloser: r2.Body, fence: fw.fence}
		}
		h.ServeHTTP(fw, r2)
		if iface, ended := fw.done(); ended {
			answer(w, http.StatusNotFound, cmp.Or(iface, server.InterfaceOf(r2)), fmt.Sprintf(msgFenced, id))
		}
	})
}

// InterfaceOf is the interface whose envelope answers r on the main
// address, a sandbox's path judged as the sandbox serves it.
func InterfaceOf(r *http.Request) string {
	if _, rest, byPath := target(r); byPath {
		r2, u := *r, *r.URL
		u.Path, r2.URL = rest, &u
		return server.InterfaceOf(&r2)
	}
	return server.InterfaceOf(r)
}

// target returns the sandbox a request names and, when it names it by its
// path, the path the sandbox serves.
func target(r *http.Request) (id, rest string, byPath bool) {
	p := r.URL.Path
	if after, ok := strings.CutPrefix(p, PathPrefix); ok {
		if id, rest, ok := cutID(after); ok {
			if rest == "" {
				rest = "/"
			}
			return id, rest, true
		}
	}
	if after, ok := strings.CutPrefix(p, controlPrefix); ok {
		// /_sim/sandboxes/<id> itself is the default control API's.
		if id, rest, ok := cutID(after); ok && len(rest) > 1 {
			return id, "/_sim" + rest, true
		}
	}
	if p == "/_sim/sandboxes" || strings.HasPrefix(p, controlPrefix) {
		// The sandboxes resource is the default control API's, whatever
		// key comes with it (a sandbox's own key included).
		return "", "", false
	}
	if h := r.Header.Get("Authorization"); strings.Contains(h, "sbx_") {
		if key, _ := httpx.Bearer(h); key != "" {
			if id, ok := IDOfKey(key); ok {
				return id, "", false
			}
		}
	}
	return "", "", false
}

func cutID(s string) (id, rest string, ok bool) {
	if len(s) < IDLength || (len(s) > IDLength && s[IDLength] != '/') {
		return "", "", false
	}
	id = s[:IDLength]
	return id, s[IDLength:], ValidID(id)
}

// unknown answers a request that names a sandbox that does not exist
// (fidelity SB5): the default simulator does, by key or by
// /_sim/sandboxes/<id>/...; by /sbx/<id>/... a 404 in the envelope of the
// interface the rest names.
func (m *Manager) unknown(w http.ResponseWriter, r *http.Request, id string, byPath bool, def http.Handler) {
	msg := notFound(id).Error()
	w.Header().Set(HeaderError, msg)
	if !byPath || strings.HasPrefix(r.URL.Path, controlPrefix) {
		def.ServeHTTP(w, r)
		return
	}
	answer(w, http.StatusNotFound, InterfaceOf(r), msg)
}

// answer writes a NotFoundError of the dispatcher itself.
func answer(w http.ResponseWriter, status int, iface, msg string) {
	ct, body := server.EnvelopeOf(iface, "NotFoundError", msg)
	w.Header().Set(HeaderError, msg)
	w.Header().Set("Content-Type", ct)
	w.Header().Set(server.HeaderInterface, iface)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
