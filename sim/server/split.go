package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/go-chi/chi/v5"
)

// HeaderInterface is the header of the interface a request is for. A client
// sends it on the address that serves both interfaces to choose one
// ("platform" or "studio"); every answer of a dubsim address carries it,
// naming the interface that served the request ("platform", "studio" or
// "control").
const HeaderInterface = "X-Dubsim-Interface"

// Interface names.
const (
	Platform = "platform"
	Studio   = "studio"
	Control  = "control"
)

// StudioPrefix and PlatformPrefix are the path prefixes under which the
// shared address serves one interface alone ({studio_url}, {base_url}).
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
	// SharedCreate is the interface of a POST /api/v1/projects whose body
	// has "name" but no other create field: Studio ("" too) or Platform.
	SharedCreate string
	// Pages: the web application's pages are served (the control API is on).
	Pages bool
	// StudioOnly and ControlOnly: the listener serves that interface alone.
	StudioOnly, ControlOnly bool
	// Authenticated says whether a request's key authenticates on the
	// instance. A POST /api/v1/projects it refuses is routed on at most
	// the first prefixLimit bytes of its body, read outside the body
	// budget: the routing never holds budget before authentication. nil:
	// every request is read as an authenticated one.
	Authenticated func(*http.Request) bool
}

// sniffLimit is the most of a POST /api/v1/projects body read to tell the
// two create requests apart: the body limit of both create routes. A
// larger body is refused by the route that gets it.
const sniffLimit = httpx.DefaultMaxBody

// sniffMin is how much of the body is read in any case (or to its end),
// even once the decision is made: as much as was read when only the first
// 64 KiB decided, so that early answers (fidelity X4) to a body up to that
// size do not change.
const sniffMin = 64 << 10

// prefixLimit is the most of a body the routing reads of a request whose
// key does not authenticate (fidelity TB2): enough for the fields of any
// create a client writes by hand, small enough that every connection the
// process accepts reading one at once (--max-connections) holds little.
const prefixLimit = 4 << 10

// Fields only one of the two Create Project bodies has.
var (
	platformCreateFields = []string{"source_lang", "target_lang", "source_video_url", "mixing_mode", "use_emotional_transfer",
		"use_soundalike_voices", "source_script_content", "source_script", "use_fixed_timings", "glossary_content", "tts_volume"}
	studioCreateFields = []string{"managerEmail", "translationsGlossaryId", "voicesGlossaryId", "pronunciationGlossaryId"}
)

// Decide is the one rule of which interface serves a request; the routing,
// the error envelopes of the server and of injected faults, the response
// header and the journal all ask it (through RouteOf). The rule, in order,
// is decidePath's (README, "One address, two interfaces"; fidelity SA1).
//
// Deciding a POST /api/v1/projects of an authenticated key reads its body
// (at least 64 KiB, or to its end) until a platform field, the end of the
// top-level object or the route's body limit; r.Body is replaced by one
// that gives the whole body again. The read takes its bytes, and the
// handler's copy, from the instance's share of the body budget
// (httpx.ReserveBody) first. For a key that does not authenticate, at most
// the first prefixLimit bytes are read, and nothing is reserved.
// A request whose target is longer than MaxRequestURI is refused unread:
// its body is not read to decide it.
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
		// The sniffed bytes and the handler's own copy of them (it
		// reads them again from the replay) are reserved at once, so
		// the request never waits for more budget while it holds some.
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

// maxKeyBytes is the most of a top-level key kept to compare it with the
// create fields: the longest of them, every character escaped as \uXXXX,
// fits.
const maxKeyBytes = 256

// keyScan finds the top-level keys of a JSON object as its bytes arrive.
// It keeps nothing of the values and at most maxKeyBytes of a key: it
// follows strings (and their escapes) and the depth of nested objects and
// arrays, without checking the rest of the syntax (the route that gets the
// body does). It stops (done) at a platform create field, at the end of the
// top-level object, or at a first non-blank byte that does not open one.
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

// read reads body for the decision: at least sniffMin bytes (or to its
// end), then on while undecided, up to limit bytes in all; it returns what
// it read. length is the body's declared length (-1: none): the buffer is
// made that large at once, instead of growing by copies.
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

// feed scans the next bytes of the body.
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

// endKey looks at a top-level key that has ended.
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

// route is the decision from the keys seen: a platform-only field makes it
// platform, else a studio-only field studio, else a name
// rules.SharedCreate. A body without even a name is a valid create of
// neither interface: the platform's validation, the interface of the
// base URL, says what is missing.
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

type routeKey struct{}

// RouteOf returns the route Decide gave r (the routing middleware keeps it
// in r's context); for a request that did not pass it, pathRoute's.
func RouteOf(r *http.Request) Route {
	if rt, ok := r.Context().Value(routeKey{}).(Route); ok {
		return rt
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
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), routeKey{}, rt)))
	})
}

// JournalRoute is the journal's Config.Route: what RouteOf says.
func JournalRoute(r *http.Request) (string, string) {
	rt := RouteOf(r)
	return rt.Interface, rt.By
}

// byPrefix serves a request routed by its prefix with that interface alone
// (studio under StudioPrefix, platform under PlatformPrefix), the prefix
// removed from its path and kept for the links of the answer
// (httpx.BaseURL); every other request goes to next.
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

// dispatch serves what the root router leaves to it (everything outside
// /_sim when the control API is on) with the interface RouteOf names.
type dispatch struct {
	platform, studio chi.Router
	control          http.Handler
}

func (d dispatch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The shared address serves a path with the methods of both
	// interfaces (GET /api/v1/projects is the studio's, POST either's): a
	// 405 of the one chosen names them all in Allow.
	if i := RouteOf(r).Interface; i != Control {
		routes := d.platform
		if i == Studio {
			routes = d.studio
		}
		if !routes.Match(chi.NewRouteContext(), r.Method, httpx.RoutePath(r)) {
			if allow := d.allowed(httpx.RoutePath(r)); len(allow) > 0 {
				httpx.SetAllow(w, allow)
			}
		}
	}
	switch RouteOf(r).Interface {
	case Studio:
		d.studio.ServeHTTP(w, r)
	case Control:
		d.control.ServeHTTP(w, r)
	default:
		d.platform.ServeHTTP(w, r)
	}
}

// allowed lists the methods either interface serves on path.
func (d dispatch) allowed(path string) []string {
	p, st := httpx.Allowed(d.platform, path), httpx.Allowed(d.studio, path)
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if slices.Contains(p, m) || slices.Contains(st, m) {
			out = append(out, m)
		}
	}
	return out
}
