package server

import (
	"crypto/subtle"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// Headers of the control API's protection (fidelity HC1-HC5).
const (
	// HeaderControlToken carries the control token, as Authorization: Bearer does.
	HeaderControlToken = "X-Dubsim-Control-Token"
	// HeaderControl (any value) or a JSON Content-Type, which no HTML form
	// can send, marks a control POST as a program's.
	HeaderControl = "X-Dubsim-Control"
)

// Messages of the control plane's refusals. Tests quote them.
const (
	MsgControlToken = "The control API needs the control token: send \"Authorization: Bearer TOKEN\" or " +
		HeaderControlToken + ": TOKEN (the --control-token or DUBSIM_CONTROL_TOKEN the simulator was started with)"
	MsgControlHost = "The control API answers only requests for localhost, an IP address or a name given by --control-hosts " +
		"(DUBSIM_CONTROL_HOSTS); Host %q is none of them. Add the name to --control-hosts, or start dubsim with --control-token"
	MsgControlOrigin = "The control API refuses calls from another site's page (Origin %q). Add that host to " +
		"--control-hosts (DUBSIM_CONTROL_HOSTS), or start dubsim with --control-token"
	MsgControlMediaType = "A POST to the control API needs Content-Type: application/json or the header " +
		HeaderControl + " (any value), which no HTML form can send; got Content-Type %q"
	MsgControlNoMediaType = "A POST to the control API needs Content-Type: application/json or the header " +
		HeaderControl + " (any value), which no HTML form can send; send one of them, even with an empty body"
)

// controlGuard protects the control API (fidelity HC1-HC5): with a token,
// every call must carry it; without one, only requests for an IP literal,
// localhost, *.localhost or a configured host, from no foreign page. A POST
// must be one no HTML form can send (other methods need a preflight
// cross-site already).
type controlGuard struct {
	token []byte
	hosts map[string]bool // lower case, without a trailing dot
}

func newControlGuard(token string, hosts []string) *controlGuard {
	g := &controlGuard{hosts: map[string]bool{}}
	if token != "" {
		g.token = []byte(token)
	}
	for _, h := range hosts {
		if h = normalHost(h); h != "" {
			g.hosts[h] = true
		}
	}
	return g
}

// refusal is an answer of the guard, in the control envelope.
type refusal struct {
	status        int
	name, message string
}

func (f refusal) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="dubsim control"`)
	}
	setRefusal(r, f.message) // the journal does not record it
	writeError(w, r, f.status, f.name, f.message)
}

// wrap puts the guard in front of next's control calls; answer wraps its
// refusals (early answers).
func (g *controlGuard) wrap(next http.Handler, answer func(http.Handler) http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if RouteOf(r).Interface != Control {
			next.ServeHTTP(w, r)
			return
		}
		if f, refused := g.check(r); refused {
			answer(f).ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodPost || r.Header.Get(HeaderControl) != "" {
			// No form sent this: read its JSON whatever the Content-Type
			// (curl's -d names a form).
			r = r.WithContext(httpx.WithAnyBodyType(r.Context()))
		}
		if g.token != nil {
			// Nothing behind the guard (journal, log) sees the token.
			r = r.Clone(r.Context())
			r.Header.Del(HeaderControlToken)
			if key, _ := httpx.Bearer(r.Header.Get("Authorization")); key != "" {
				r.Header.Del("Authorization")
			}
		}
		next.ServeHTTP(w, r)
	})
}

// check decides whether a control call is refused, and how.
func (g *controlGuard) check(r *http.Request) (refusal, bool) {
	if isDashboardFile(r) {
		return refusal{}, false
	}
	if g.token != nil {
		if !g.hasToken(r) {
			return refusal{http.StatusUnauthorized, "UnauthorizedError", MsgControlToken}, true
		}
	} else {
		if !g.allowedHost(hostOnly(r.Host)) {
			return refusal{http.StatusForbidden, "ForbiddenError", fmt.Sprintf(MsgControlHost, r.Host)}, true
		}
		if o := r.Header.Values("Origin"); len(o) > 0 && !g.allowedOrigin(o, hostOnly(r.Host)) {
			return refusal{http.StatusForbidden, "ForbiddenError", fmt.Sprintf(MsgControlOrigin, strings.Join(o, ", "))}, true
		}
	}
	if r.Method != http.MethodPost || r.Header.Get(HeaderControl) != "" {
		// A browser sends another method, or a header of its own,
		// cross-site only after a preflight, never granted (HC3).
		return refusal{}, false
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return refusal{http.StatusBadRequest, "ValidationError", MsgControlNoMediaType}, true
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || !isJSONType(mt) {
		return refusal{http.StatusUnsupportedMediaType, "UnsupportedMediaTypeError", fmt.Sprintf(MsgControlMediaType, ct)}, true
	}
	return refusal{}, false
}

// checkPage refuses a project page without the token, when there is one:
// it shows any company's records (fidelity TN7).
func (g *controlGuard) checkPage(r *http.Request) (refusal, bool) {
	if g.token != nil && !g.hasToken(r) {
		return refusal{http.StatusUnauthorized, "UnauthorizedError", MsgControlToken}, true
	}
	return refusal{}, false
}

func (g *controlGuard) hasToken(r *http.Request) bool {
	ok := false
	for _, v := range r.Header.Values(HeaderControlToken) {
		ok = subtle.ConstantTimeCompare([]byte(strings.TrimSpace(v)), g.token) == 1 || ok
	}
	if t, _ := httpx.Bearer(r.Header.Get("Authorization")); t != "" {
		ok = subtle.ConstantTimeCompare([]byte(t), g.token) == 1 || ok
	}
	return ok
}

// allowedHost reports whether a host (no port) may use the control API
// without a token: an IP literal, localhost, *.localhost (loopback, RFC
// 6761) or a configured name.
func (g *controlGuard) allowedHost(h string) bool {
	h = normalHost(h)
	switch {
	case h == "":
		return false
	case net.ParseIP(h) != nil:
		return true
	case h == "localhost" || strings.HasSuffix(h, ".localhost"):
		return true
	}
	return g.hosts[h]
}

// allowedOrigin reports whether the Origin values are pages of this host, of
// loopback or of a configured name ("null", a sandboxed page, is foreign).
func (g *controlGuard) allowedOrigin(origins []string, reqHost string) bool {
	for _, o := range origins {
		u, err := url.Parse(strings.TrimSpace(o))
		if err != nil || u.Host == "" {
			return false
		}
		h := normalHost(u.Hostname())
		if h == normalHost(reqHost) && h != "" {
			continue
		}
		if ip := net.ParseIP(h); ip != nil {
			if !ip.IsLoopback() {
				return false
			}
			continue
		}
		if !g.allowedHost(h) {
			return false
		}
	}
	return true
}

// isDashboardFile reports whether r reads the dashboard's own files, or is
// a browser's GET / (redirected to them): they hold no data, and the page
// must load before it can ask for the token. What it reads is guarded.
func isDashboardFile(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	p := r.URL.Path
	return p == "/_sim/ui" || strings.HasPrefix(p, "/_sim/ui/") || isDashboardRequest(r)
}

func isJSONType(mt string) bool {
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// hostOnly is a Host value without its port and IPv6 brackets.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

func normalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
}
