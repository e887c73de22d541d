package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/go-chi/chi/v5"
)

// HeaderInterface chooses the interface of a request on the shared address;
// every answer carries it, naming the interface that served the request.
const HeaderInterface = "X-Dubsim-Interface"

// Interface names.
const (
	Platform = "platform"
	Studio   = "studio"
	Control  = "control"
)

// Path prefixes under which the shared address serves one interface alone.
const (
	StudioPrefix   = "/studio"
	PlatformPrefix = "/platform"
)

// Why a request went to its interface (Route.By, the journal's routed_by).
const (
	ByHeader  = "header"  // X-Dubsim-Interface named the interface
	ByPrefix  = "prefix"  // the path is under StudioPrefix or PlatformPrefix
	ByAddress = "address" // the studio-only listener (--studio-addr)
	ByPath    = "path"    // the method and path belong to one interface only
	ByID      = "id"      // GET /api/v1/projects/{id}: the shape of the id
	ByBody    = "body"    // POST /api/v1/projects: a field only one create body has
	ByDefault = "default" // POST /api/v1/projects without such a field: Rules.SharedCreate
)

// Route is the interface that serves a request and why.
type Route struct {
	Interface string // Platform, Studio or Control
	By        string // ByHeader, ByPrefix, ...
}

// Rules configure Decide.
type Rules struct {
	// SharedCreate is the interface of a create whose body has "name" but
	// no other create field: Studio ("" too) or Platform.
	SharedCreate string
	// Pages: the web application's pages are served (the control API is on).
	Pages bool
	// StudioOnly and ControlOnly: the listener serves that interface alone.
	StudioOnly, ControlOnly bool
	// Authenticated tells whether a request's key authenticates here; a
	// create it refuses is routed on at most prefixLimit bytes, outside the
	// body budget (nil: every request counts as authenticated).
	Authenticated func(*http.Request) bool
}

// sniffLimit is the most of a create body read to decide it: the body
// limit of both create routes, which refuse a larger one.
const sniffLimit = httpx.DefaultMaxBody

// sniffMin is read in any case (or to the end), even once decided, so that
// early answers (fidelity X4) to bodies up to that size stay the same.
const sniffMin = 64 << 10

// prefixLimit is the most of a body read for a key that does not
// authenticate (fidelity TB2): enough for a create written by hand, little
// held across every connection the process accepts.
const prefixLimit = 4 << 10

// Fields only one of the two Create Project bodies has.
var (
	platformCreateFields = []string{"source_lang", "target_lang", "source_video_url", "mixing_mode", "use_emotional_transfer",
		"use_soundalike_voices", "source_script_content", "source_script", "use_fixed_timings", "glossary_content", "tts_volume"}
	studioCreateFields = []string{"managerEmail", "translationsGlossaryId", "voicesGlossaryId", "pronunciationGlossaryId"}
)

// Decide is the one rule of which interface serves a request (fidelity
// SA1); everything else asks it through RouteOf. A create of an
// authenticated key is decided by its body's top-level keys, read (bytes
// and the handler's copy reserved from the body budget) until a platform
// field, the object's end or sniffLimit; r.Body then gives the whole body
// again. A key that does not authenticate gets at most prefixLimit bytes
// read, nothing reserved; a target over MaxRequestURI is not read at all.
func Decide(r *http.Request, rules Rules) Route {
	rt, sniff := decidePath(r, rules)
	if !sniff {
		return rt
	}
	if uriTooLong(r) {
		return unread // refused unread (limitURI)
	}
	var keys keyScan
	limit := int64(sniffLimit)
	if rules.Authenticated != nil && !rules.Authenticated(r) {
		limit = prefixLimit
	} else {
		// Reserved at once, so the request never waits for more budget
		// while it holds some.
		size := httpx.ReserveSize(r, sniffLimit)
		if httpx.ReserveBody(r, 2*size) != nil {
			return unread // the request ended while it waited
		}
	}
	head, err := keys.read(r.Body, r.ContentLength, limit)
	rest := io.Reader(r.Body)
	if err != nil {
		// The body did not arrive whole: the handler reads what came,
		// then the same error, and says so (not that the body is empty).
		rest = errReader{err}
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), rest), r.Body}
	return keys.route(rules)
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// unread is the route of a POST /api/v1/projects decided without its body:
// the platform's, as a body without a name.
var unread = Route{Platform, ByDefault}

// InterfaceOf is the interface whose envelope answers r when no instance
// can (a sandbox that does not exist, or ended under it): decided by path
// and headers as on the shared address, without the body.
func InterfaceOf(r *http.Request) string { return pathRoute(r).Interface }

// pathRoute decides r on the shared address without reading its body.
func pathRoute(r *http.Request) Route {
	if rt, sniff := decidePath(r, Rules{}); !sniff {
		return rt
	}
	return unread
}

// decidePath is Decide without the body; sniff says the body decides.
func decidePath(r *http.Request, rules Rules) (rt Route, sniff bool) {
	p := r.URL.Path
	switch {
	case rules.StudioOnly && p == HealthPath:
		return Route{Control, ByPath}, false
	case rules.StudioOnly:
		return Route{Studio, ByAddress}, false
	case rules.ControlOnly:
		return Route{Control, ByAddress}, false
	case p == "/_sim" || strings.HasPrefix(p, "/_sim/"):
		return Route{Control, ByPath}, false
	case underPrefix(p, StudioPrefix):
		return Route{Studio, ByPrefix}, false
	case underPrefix(p, PlatformPrefix):
		return Route{Platform, ByPrefix}, false
	case rules.Pages && isPage(r):
		return Route{Studio, ByPath}, false
	case rules.Pages && isDashboardRequest(r):
		return Route{Control, ByPath}, false
	}
	switch h := strings.ToLower(strings.TrimSpace(r.Header.Get(HeaderInterface))); h {
	case Platform, Studio:
		return Route{h, ByHeader}, false
	}
	switch {
	case strings.HasPrefix(p, "/api/v1/artifacts/") || p == "/api/v1/artifacts" ||
		strings.HasPrefix(p, "/api/projects/") || strings.HasPrefix(p, "/_uploads/"):
		return Route{Studio, ByPath}, false
	case p == "/api/v1/projects" || p == "/api/v1/projects/":
		switch r.Method {
		case http.MethodGet:
			return Route{Studio, ByPath}, false
		case http.MethodPost:
			return Route{}, true
		}
		return Route{Platform, ByPath}, false
	case strings.HasPrefix(p, "/api/v1/projects/"):
		id, rest, _ := strings.Cut(strings.TrimPrefix(p, "/api/v1/projects/"), "/")
		switch {
		case rest == "videos" || strings.HasPrefix(rest, "videos/"):
			return Route{Studio, ByPath}, false // only the studio interface has videos
		case rest != "":
			return Route{Platform, ByPath}, false // translations, validate-translation-request
		case r.Method == http.MethodDelete:
			return Route{Platform, ByPath}, false // only the platform interface deletes projects
		case r.Method == http.MethodPatch:
			return Route{Studio, ByPath}, false // only the studio interface updates projects
		case sim.IsStudioID(id):
			return Route{Studio, ByID}, false
		}
		return Route{Platform, ByID}, false
	}
	return Route{Platform, ByPath}, false
}

// maxKeyBytes holds the longest create field with every character escaped.
const maxKeyBytes = 256

// keyScan finds the top-level keys of a JSON object as its bytes arrive,
// following strings and nesting only (the route checks the syntax). It is
// done at a platform create field, the object's end, or a body that does
// not open an object.
type keyScan struct {
	started, done     bool
	depth             int
	inString, escaped bool
	isKey, wantKey    bool // the string is a top-level key; the next string at depth 1 is one
	key               []byte
	long              bool // the key is longer than maxKeyBytes
	platform, studio  bool // a platform (studio) create field was seen
	name              bool // "name" was seen
}

// read reads at least sniffMin bytes (or to the end), then on while
// undecided, up to limit; length (-1: unknown) sizes the buffer at once.
func (s *keyScan) read(body io.Reader, length, limit int64) ([]byte, error) {
	lim := int(limit)
	buf := make([]byte, 0, min(512, lim))
	if length >= 0 {
		buf = make([]byte, 0, min(length+1, limit))
	}
	for len(buf) < lim && (!s.done || len(buf) < sniffMin) {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(cap(buf), lim-len(buf)))
		}
		n, err := body.Read(buf[len(buf):min(cap(buf), lim)])
		s.feed(buf[len(buf) : len(buf)+n])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

func (s *keyScan) feed(p []byte) {
	for _, c := range p {
		if s.done {
			return
		}
		if s.inString {
			switch {
			case s.escaped:
				s.escaped = false
			case c == '\\':
				s.escaped = true
			case c == '"':
				s.inString = false
				if s.isKey {
					s.endKey()
				}
				continue
			}
			if s.isKey {
				if len(s.key) < maxKeyBytes {
					s.key = append(s.key, c)
				} else {
					s.long = true
				}
			}
			continue
		}
		if !s.started {
			switch c {
			case ' ', '\t', '\r', '\n':
			case '{':
				s.started, s.depth, s.wantKey = true, 1, true
			default:
				s.done = true // not an object
			}
			continue
		}
		switch c {
		case '"':
			s.inString, s.isKey = true, s.depth == 1 && s.wantKey
			s.wantKey, s.key, s.long = false, s.key[:0], false
		case '{', '[':
			s.depth++
		case '}', ']':
			s.depth--
			s.done = s.depth <= 0
		case ',':
			s.wantKey = s.depth == 1
		}
	}
}

func (s *keyScan) endKey() {
	if s.long {
		return
	}
	key := string(s.key)
	if bytes.IndexByte(s.key, '\\') >= 0 {
		quoted := append(append([]byte{'"'}, s.key...), '"')
		if json.Unmarshal(quoted, &key) != nil {
			return
		}
	}
	if slices.Contains(platformCreateFields, key) {
		s.platform, s.done = true, true
	}
	if slices.Contains(studioCreateFields, key) {
		s.studio = true
	}
	if key == "name" {
		s.name = true
	}
}

// route decides on the keys seen; a body without even a name goes to the
// platform, whose validation says what is missing.
func (s *keyScan) route(rules Rules) Route {
	switch {
	case s.platform:
		return Route{Platform, ByBody}
	case s.studio:
		return Route{Studio, ByBody}
	case s.name && rules.SharedCreate != Platform:
		return Route{Studio, ByDefault}
	}
	return Route{Platform, ByDefault}
}

func underPrefix(p, prefix string) bool {
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}

// RouteOf returns the route Decide gave r (the routing middleware records
// it, httpx.WithRoute); for a request that did not pass it, pathRoute's.
func RouteOf(r *http.Request) Route {
	if iface, by := httpx.RouteFrom(r.Context()); iface != "" {
		return Route{iface, by}
	}
	return pathRoute(r)
}

// routing decides every request once, keeps the route in its context for
// RouteOf and sets HeaderInterface on the answer before anything else can
// write it.
func routing(rules Rules, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt := Decide(r, rules)
		w.Header().Set(HeaderInterface, rt.Interface)
		if ctx := httpx.WithRoute(r.Context(), rt.Interface, rt.By); ctx != r.Context() {
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

// JournalRoute is the journal's Config.Route: what RouteOf says.
func JournalRoute(r *http.Request) (string, string) {
	rt := RouteOf(r)
	return rt.Interface, rt.By
}

// byPrefix serves a request routed by its prefix with that interface, the
// prefix moved from the path to httpx.BasePath (for links); others go to next.
func byPrefix(studio, platform, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt := RouteOf(r)
		if rt.By != ByPrefix {
			next.ServeHTTP(w, r)
			return
		}
		prefix, h := StudioPrefix, studio
		if rt.Interface == Platform {
			prefix, h = PlatformPrefix, platform
		}
		r2 := r.WithContext(httpx.WithBasePath(r.Context(), prefix))
		u := *r.URL
		u.Path = strings.TrimPrefix(u.Path, prefix)
		if u.Path == "" {
			u.Path = "/"
		}
		if rest, ok := strings.CutPrefix(u.RawPath, prefix); ok && rest != "" {
			u.RawPath = rest
		} else {
			u.RawPath = ""
		}
		r2.URL = &u
		h.ServeHTTP(w, r2)
	})
}

// matchContexts are the routing contexts dispatch matches a request with
// before it is served: one per request would be an allocation each.
var matchContexts = sync.Pool{New: func() any { return chi.NewRouteContext() }}

// dispatch serves what the root router leaves to it (everything outside
// /_sim when the control API is on) with the interface RouteOf names.
type dispatch struct {
	platform, studio chi.Router
	control          http.Handler
}

func (d dispatch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	routes := d.platform
	switch RouteOf(r).Interface {
	case Control:
		d.control.ServeHTTP(w, r)
		return
	case Studio:
		routes = d.studio
	}
	// A 405 names in Allow the methods of both interfaces on the path.
	rctx := matchContexts.Get().(*chi.Context)
	rctx.Reset()
	matched := routes.Match(rctx, r.Method, httpx.RoutePath(r))
	matchContexts.Put(rctx)
	if !matched {
		if allow := httpx.Allowed(httpx.RoutePath(r), d.platform, d.studio); len(allow) > 0 {
			httpx.SetAllow(w, allow)
		}
	}
	routes.ServeHTTP(w, r)
}
