package server_test

// The routes the black-box fuzzer (blackbox_test.go) sends requests to, and
// the perturbations of a request.

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/stretchr/testify/require"
)

type bbRoute struct {
	name   string
	weight int
	build  func(f *fuzzer) *bbReq
}

func (f *fuzzer) platform(route, method, uri, key string, body []byte) *bbReq {
	r := &bbReq{route: route, method: method, uri: uri, header: http.Header{}, body: body}
	if a := f.auth(key); a != "" {
		r.header.Set("Authorization", a)
	}
	if body != nil {
		r.header.Set("Content-Type", "application/json")
	}
	return r
}

func (f *fuzzer) control(route, method, uri string, body []byte) *bbReq {
	r := &bbReq{route: route, method: method, uri: uri, header: http.Header{}, body: body}
	if body != nil {
		r.header.Set("Content-Type", "application/json")
	}
	return r
}

func (f *fuzzer) trackCreated(key, target, url string) func(int, []byte) {
	return func(status int, body []byte) {
		if status != http.StatusOK && status != http.StatusCreated {
			return
		}
		var m map[string]any
		if json.Unmarshal(body, &m) != nil {
			return
		}
		if id, _ := m["project_id"].(string); id != "" && !slices.ContainsFunc(f.projects, func(p *bbProject) bool { return p.id == id }) {
			f.projects = append(f.projects, &bbProject{id: id, key: key, target: target, url: url})
			if len(f.projects) > 400 {
				f.projects = slices.Delete(f.projects, 0, 100)
			}
		}
	}
}

func (f *fuzzer) routes() []bbRoute {
	return []bbRoute{
		{"GET balance", 4, func(f *fuzzer) *bbReq { return f.platform("balance", "GET", "/api/v1/balance", f.key(), nil) }},
		{"GET options", 3, func(f *fuzzer) *bbReq { return f.platform("options", "GET", "/api/v1/options", f.key(), nil) }},
		{"GET voices", 2, func(f *fuzzer) *bbReq { return f.platform("voices", "GET", "/api/v1/voices", f.key(), nil) }},
		{"POST projects", 16, func(f *fuzzer) *bbReq {
			key := f.key()
			body := f.createBody()
			var m map[string]any
			_ = json.Unmarshal(body, &m)
			target, _ := m["target_lang"].(string)
			u, _ := m["source_video_url"].(string)
			r := f.platform("create", "POST", "/api/v1/projects", key, body)
			r.after = f.trackCreated(key, target, u)
			return r
		}},
		{"GET project", 10, func(f *fuzzer) *bbReq {
			id, key, p := f.projectRef()
			r := f.platform("get project", "GET", "/api/v1/projects/"+id, key, nil)
			r.after = func(status int, body []byte) {
				var m map[string]any
				if p == nil || status != http.StatusOK || json.Unmarshal(body, &m) != nil {
					return
				}
				for _, k := range []string{"output_tts_audio_url", "output_video_url"} {
					if u, _ := m[k].(string); strings.HasPrefix(u, f.in.url) && !slices.Contains(p.files, strings.TrimPrefix(u, f.in.url)) {
						p.files = append(p.files, strings.TrimPrefix(u, f.in.url))
					}
				}
			}
			return r
		}},
		{"DELETE project", 4, func(f *fuzzer) *bbReq {
			id, key, _ := f.projectRef()
			return f.platform("delete project", "DELETE", "/api/v1/projects/"+id, key, nil)
		}},
		{"POST translations", 7, func(f *fuzzer) *bbReq {
			id, key, p := f.projectRef()
			return f.platform("retranslate", "POST", "/api/v1/projects/"+id+"/translations", key, f.retranslationBody(p))
		}},
		{"POST validate", 7, func(f *fuzzer) *bbReq {
			id, key, p := f.projectRef()
			return f.platform("validate", "POST", "/api/v1/projects/"+id+"/validate-translation-request", key, f.retranslationBody(p))
		}},
		{"POST cloning", 5, func(f *fuzzer) *bbReq {
			key := pick(f, []string{"dubsim-pro", "dubsim-enterprise", "dubsim-enterprise", "dubsim-free", "dubsim-subscription", f.key()})
			ct, body := f.multipartBody()
			r := f.platform("cloning", "POST", "/api/v1/cloning/synthesize", key, body)
			r.header.Set("Content-Type", ct)
			if ct == "" {
				r.header.Del("Content-Type")
			}
			r.readMax = 1 << 20
			return r
		}},
		{"GET files", 6, func(f *fuzzer) *bbReq {
			var uri string
			if p := f.project(); p != nil && len(p.files) > 0 && f.chance(0.7) {
				uri = pick(f, p.files)
			} else {
				id, _, _ := f.projectRef()
				uri = "/files/projects/" + id + "/" + pick(f, []string{"1", "0", "2", "-1", "abc", "99999999999999999999", f.junkID()}) +
					"/" + pick(f, []string{"dubbed_audio.wav", "dubbed_video.mov", "x.wav", "..", "%2e%2e", f.junkID()})
			}
			r := &bbReq{route: "files", method: pick(f, []string{"GET", "GET", "HEAD"}), uri: uri, header: http.Header{}, readMax: 256 << 10}
			if f.chance(0.6) {
				r.header.Set("Range", pick(f, []string{"bytes=0-1023", "bytes=44-", "bytes=-100", "bytes=100-50", "bytes=999999999999-",
					"bytes=0-0,5-5,9-9", "bytes=", "bytes=a-b", "items=0-1", "bytes=0-1023, 0-1023", "bytes=-0", "bytes=18446744073709551615-"}))
			}
			if f.chance(0.1) {
				r.header.Set(pick(f, []string{"If-None-Match", "If-Match", "If-Modified-Since", "If-Unmodified-Since", "If-Range"}),
					pick(f, []string{"*", `"x"`, "Mon, 02 Jan 2006 15:04:05 GMT", "junk", "Thu, 01 Jan 1970 00:00:00 GMT"}))
			}
			return r
		}},
		{"junk path", 4, func(f *fuzzer) *bbReq {
			uri := pick(f, junkPaths)
			if f.chance(0.3) {
				uri = "/api/v1/" + f.junkID()
			}
			r := f.platform("junk path", pick(f, []string{"GET", "POST", "DELETE", "PUT"}), uri, f.key(), nil)
			if r.method == "POST" || r.method == "PUT" {
				r.body = f.junkBody()
				r.header.Set("Content-Type", "application/json")
			}
			return r
		}},

		// Control API.
		{"GET clock", 1, func(f *fuzzer) *bbReq { return f.control("clock", "GET", "/_sim/clock", nil) }},
		{"POST advance", 4, func(f *fuzzer) *bbReq {
			var s any = json.Number(strconv.Itoa(f.n(7200)))
			switch f.n(12) {
			case 0:
				s = json.Number(pick(f, numbers))
			case 1:
				s = pick(f, []any{"60", nil, true, []any{1}, map[string]any{}, -5, 0.001, 86400 * 2})
			}
			m := map[string]any{"seconds": s}
			if f.chance(0.05) {
				delete(m, "seconds")
			}
			return f.control("advance", "POST", "/_sim/clock/advance", f.jsonBody(m))
		}},
		{"POST scale", 1, func(f *fuzzer) *bbReq {
			return f.control("scale", "POST", "/_sim/clock/scale", f.jsonBody(map[string]any{"time_scale": pick(f, []any{0, 1, 60, 1e6, 1e7, -1, "2", nil, 0.5, json.Number("1e400")})}))
		}},
		{"POST freeze", 1, func(f *fuzzer) *bbReq {
			return f.control("freeze", "POST", pick(f, []string{"/_sim/clock/freeze", "/_sim/clock/resume"}), nil)
		}},
		{"POST accounts", 3, func(f *fuzzer) *bbReq {
			m := map[string]any{"plan": pick(f, []any{"none", "subscription", "pro", "enterprise", "gold", "", nil, 3}),
				"balance_minutes": pick(f, []any{0, 10, 100, 1000, 1e12, 1e12 + 1, -1, 1.5, "10", nil})}
			if f.chance(0.5) {
				m["retranslation_enabled"] = f.chance(0.7)
			}
			if f.chance(0.5) {
				m["cloning_enabled"] = f.chance(0.7)
			}
			if f.chance(0.2) {
				m["api_key"] = pick(f, []any{"dubsim-pro", "team-" + strconv.Itoa(f.n(50)), f.str(), 5, strings.Repeat("k", 40_000)})
			}
			if f.chance(0.2) {
				m["name"] = f.str()
			}
			r := f.control("accounts", "POST", "/_sim/accounts", f.jsonBody(m))
			r.after = func(status int, body []byte) {
				var m map[string]any
				if status == http.StatusCreated && json.Unmarshal(body, &m) == nil {
					if k, _ := m["api_key"].(string); k != "" && sendable(k) && k != f.unusedKey {
						f.keys = append(f.keys, k)
					}
				}
			}
			return r
		}},
		{"POST reset", 2, func(f *fuzzer) *bbReq {
			if f.fullResets < f.maxFullReset && f.chance(0.05) {
				f.fullResets++
				return f.control("reset (full)", "POST", "/_sim/reset", pick(f, [][]byte{nil, []byte("{}")}))
			}
			k := pick(f, []string{pick(f, f.keys), "nobody", ""})
			if k == "" {
				k = "x" // an empty api_key would reset everything
			}
			r := f.control("reset (account)", "POST", "/_sim/reset", f.marshal(map[string]any{"api_key": k}))
			if f.chance(0.1) {
				r.body = []byte(pick(f, []string{`{"api_key":5}`, `{"api_key":"dubsim-pro","x":1}`, `[]`, `{"api_key":"dubsim-pro"`, `null`}))
			}
			return r
		}},
		{"GET web views", 1, func(f *fuzzer) *bbReq {
			id := f.junkID()
			if p := f.project(); p != nil && f.chance(0.5) {
				id = p.id
			}
			switch f.n(5) {
			case 0:
				return f.control("project view", pick(f, []string{"GET", "HEAD"}), "/_sim/projects/"+url.PathEscape(id), nil)
			case 1:
				return f.control("project audio", "GET", "/_sim/projects/"+url.PathEscape(id)+"/audio.wav", nil)
			case 2:
				return f.control("studio dump", "GET", "/_sim/studio"+pick(f, []string{"", "?company_id=" + url.QueryEscape(id), "?x=1", "?company_id=%zz"}), nil)
			case 3:
				return f.control("dashboard file", "GET", "/_sim/ui/"+pick(f, []string{"", "index.html", "app.js", "app.css", url.PathEscape(id), "%2e%2e/ui.go", "static/app.js"}), nil)
			}
			r := f.control("project page", pick(f, []string{"GET", "HEAD"}), "/projects/"+url.PathEscape(id), nil)
			r.page = true
			return r
		}},
		{"GET state", 1, func(f *fuzzer) *bbReq {
			q := pick(f, []string{"?api_key=" + url.QueryEscape(pick(f, f.keys)) + "&limit=20", "?limit=5", "?limit=0", "?limit=-1", "?limit=x",
				"?limit=99999999999999999999", "?api_key=nobody", "?api_key=%zz", "?limit=1&limit=2", "?api_key=dubsim-enterprise&limit=3"})
			return f.control("state", "GET", "/_sim/state"+q, nil)
		}},
		{"POST fixtures", 2, func(f *fuzzer) *bbReq {
			var m map[string]any
			switch f.n(6) {
			case 0:
				m = map[string]any{"accounts": []any{map[string]any{"api_key": pick(f, []any{"team-" + strconv.Itoa(f.n(20)), "team-" + strconv.Itoa(f.n(20)), strings.Repeat("t", 33_000)}), "plan": pick(f, []any{"pro", "gold", "enterprise", nil}),
					"balance_minutes": pick(f, []any{5, 500, -1, 1e15, "x"}), "retranslation_enabled": true, "cloning_enabled": f.chance(0.5)}}}
			case 1:
				// No duration between about 1e6 s and 9e9 s: the script of
				// such a source exhausts memory (reported, not fuzzed).
				m = map[string]any{"media_rules": []any{map[string]any{"pattern": pick(f, []any{"*/bbx-*", "", "*", "https://cdn.test/x*", 5}),
					"duration_seconds": pick(f, []any{30, 0, -1, 0.001, 86400, 1e12, 1e300, json.Number("1e400"), "9"}), pick(f, []string{"note", "refuse", "fail", "x"}): f.str()}}}
			case 2:
				m = map[string]any{"options": f.value(2), "voices": f.value(2)}
			case 3:
				m = map[string]any{"options": map[string]any{"source_langs": []any{"en", "xx"}, "target_langs": []any{"en-US", f.str()}, "soundalike_langs": []any{"en"}},
					"voices": map[string]any{"en-US": []any{map[string]any{"name": "A", "voice_key": "k1:en-US-A", "style": pick(f, []any{"feminine", "odd"})}}}}
			case 4:
				var raw map[string]any
				require.NoError(f.t, json.Unmarshal(f.restore, &raw))
				m = raw
			default:
				m = map[string]any{}
			}
			return f.control("fixtures", "POST", "/_sim/fixtures", f.jsonBody(m))
		}},
		{"POST project outcome", 3, func(f *fuzzer) *bbReq {
			id, _, _ := f.projectRef()
			m := map[string]any{"outcome": pick(f, []any{"error", "ready", "maybe", "", nil, 1})}
			if f.chance(0.5) {
				m["error_message"] = f.str()
			}
			if f.chance(0.5) {
				m["now"] = pick(f, []any{true, false, "yes"})
			}
			return f.control("force outcome", "POST", "/_sim/projects/"+id+"/outcome", f.jsonBody(m))
		}},
		{"outcomes", 3, func(f *fuzzer) *bbReq {
			switch f.n(3) {
			case 0:
				return f.control("outcomes list", "GET", "/_sim/outcomes", nil)
			case 1:
				id := f.junkID()
				if len(f.outcomeIDs) > 0 && f.chance(0.7) {
					id = pick(f, f.outcomeIDs)
				}
				return f.control("outcomes delete", "DELETE", "/_sim/outcomes/"+id, nil)
			}
			m := map[string]any{"outcome": pick(f, []any{"error", "ready", "x"}), "count": pick(f, []any{1, 2, 0, -1, 1e10, "1", nil})}
			if f.chance(0.5) {
				m["api_key"] = pick(f, append(slices.Clone(f.keys), "nobody"))
			}
			if f.chance(0.5) {
				m["source_url_pattern"] = pick(f, []any{"*/short-1*", "*", "", "**", "https://cdn.test/*", 4})
			}
			if f.chance(0.3) {
				m["error_message"] = f.str()
			}
			r := f.control("outcomes add", "POST", "/_sim/outcomes", f.jsonBody(m))
			r.after = func(status int, body []byte) {
				var m map[string]any
				if status == http.StatusCreated && json.Unmarshal(body, &m) == nil {
					if id, _ := m["id"].(string); id != "" {
						f.outcomeIDs = append(f.outcomeIDs, id)
					}
				}
			}
			return r
		}},
		{"faults", 3, func(f *fuzzer) *bbReq {
			switch f.n(5) {
			case 0:
				return f.control("faults list", "GET", "/_sim/faults", nil)
			case 1:
				id := f.junkID()
				if len(f.faultIDs) > 0 && f.chance(0.7) {
					id = pick(f, f.faultIDs)
				}
				return f.control("faults delete", "DELETE", "/_sim/faults/"+id, nil)
			case 2:
				if f.chance(0.2) {
					return f.control("faults clear", "DELETE", "/_sim/faults", nil)
				}
			}
			// Every rule added gets the unused api_key (enforced again in
			// send), so none fires on the requests of this test.
			action := map[string]any{"type": pick(f, []any{"latency", "error", "rate_limit", "drop", "truncate", "bogus", "", 1})}
			for i := f.n(4); i > 0; i-- {
				action[pick(f, []string{"latency_ms", "distribution", "min_ms", "max_ms", "mean_ms", "stddev_ms", "median_ms", "sigma",
					"status", "error", "message", "retry_after_seconds", "bytes", "x"})] = pick(f, []any{1, 100, 600001, -1, 0.5, 503, 404, "uniform", "lognormal", "normal", "x", 1 << 41, nil})
			}
			m := map[string]any{"api_key": f.unusedKey, "action": action}
			f.maybeSet(m, 0.3, "method", pick(f, []any{"GET", "post", "POST", ""}), "path", pick(f, []any{"/api/v1/*", "x", "*", ""}),
				"count", pick(f, []any{0, 1, 5, -1, 2e9}), "probability", pick(f, []any{0.5, 1, 0, 2}), "ttl_seconds", pick(f, []any{0, 60, -1, 1e9}),
				"id", pick(f, []any{"r-" + strconv.Itoa(f.n(30)), "bad id", strings.Repeat("i", 65)}))
			r := f.control("faults add", "POST", "/_sim/faults", f.jsonBody(m))
			r.after = func(status int, body []byte) {
				var m map[string]any
				if status == http.StatusCreated && json.Unmarshal(body, &m) == nil {
					if id, _ := m["id"].(string); id != "" {
						f.faultIDs = append(f.faultIDs, id)
					}
				}
			}
			return r
		}},
		{"requests", 2, func(f *fuzzer) *bbReq {
			if f.chance(0.1) {
				return f.control("requests reset", "DELETE", "/_sim/requests"+pick(f, []string{"", "?x=1"}), nil)
			}
			// Mostly with a limit: the whole journal (4 MiB of entries
			// with bodies up to 8 KiB) is slow to encode under the race
			// detector.
			q := pick(f, []string{"?limit=10", "?status=4xx&limit=5", "?status=0&limit=5", "?status=6xx", "?path=/api/v1/*&method=post&limit=5",
				"?key=dubsim-enterprise&limit=3", "?since=5&limit=5", "?since=-1", "?limit=99999999999", "?bogus=1", "?path=x", "?method=%20",
				"?limit=1&limit=2", "?%zz", "?limit=0&status=404", "?limit=-3"})
			if f.chance(0.05) {
				q = ""
			}
			return f.control("requests list", "GET", "/_sim/requests"+q, nil)
		}},
		{"verify", 2, func(f *fuzzer) *bbReq {
			m := map[string]any{}
			f.maybeSet(m, 0.35, "method", pick(f, []any{"POST", "GET", "bad method", 1}), "path", pick(f, []any{"/api/v1/projects", "/api/v1/*", "x", ""}),
				"api_key", pick(f, f.keys), "status", pick(f, []any{200, "4xx", "9xx", 0, -1, "200", true}), "body_contains", f.str(),
				"headers", pick(f, []any{map[string]any{"Idempotency-Key": ""}, map[string]any{"X-Nope": "1"}, map[string]any{"content-type": "a", "Content-Type": "b"}, "x"}),
				"count", pick(f, []any{0, 1, -1, "1"}), "at_least", pick(f, []any{0, 2}), "at_most", pick(f, []any{1, 0}))
			return f.control("verify", "POST", "/_sim/requests/verify", f.jsonBody(m))
		}},
		{"report", 2, func(f *fuzzer) *bbReq {
			q := pick(f, []string{"?api_key=" + url.QueryEscape(pick(f, f.keys)), "?api_key=dubsim-enterprise&format=text", "?api_key=dubsim-enterprise&format=xml",
				"", "?format=json", "?api_key=", "?api_key=a&api_key=b", "?api_key=dubsim-pro&x=1"})
			r := f.control("report", "GET", "/_sim/report"+q, nil)
			if f.chance(0.2) {
				r.header.Set("Accept", pick(f, []string{"text/plain", "application/json", "*/*", "text/*;q=0.1, application/json", "junk"}))
			}
			return r
		}},
		{"control junk", 1, func(f *fuzzer) *bbReq {
			r := f.control("control junk", pick(f, []string{"GET", "POST", "DELETE", "PATCH"}), "/_sim/"+f.junkID(), nil)
			if r.method == "POST" {
				r.body = f.junkBody()
				r.header.Set("Content-Type", "application/json")
			}
			return r
		}},
	}
}

var methods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "PURGE", "get", "Post", "FOO-BAR", "M", "PROPFIND"}

// perturb applies the cross-cutting mutations: method, headers, body,
// query, chunked transfer.
func (f *fuzzer) perturb(r *bbReq) {
	fullReset := r.route == "reset (full)" || r.route == "reset (account)"
	if f.chance(0.06) && !fullReset {
		r.method = pick(f, methods)
	}
	if f.chance(0.06) && !fullReset {
		r.body = f.junkBody()
	}
	if f.chance(0.05) {
		if ct := pick(f, contentTypes); ct != "" {
			r.header.Set("Content-Type", ct)
		} else {
			r.header.Del("Content-Type")
		}
	}
	if f.chance(0.04) && !fullReset {
		sep := "?"
		if strings.Contains(r.uri, "?") {
			sep = "&"
		}
		r.uri += sep + pick(f, []string{"a=%zz", "&&&", "=", "x=" + strings.Repeat("y", 3000), "limit=1;2", "api_key=dubsim-pro", "%00=%00", "a[]=1&a[]=2"})
	}
	if f.chance(0.03) && !fullReset {
		r.uri += pick(f, []string{"/", "//", "/x", "%2F..", "/..", "/.", ";x"})
	}
	if r.method == "POST" && f.chance(0.3) {
		switch {
		case len(f.idemKeys) > 0 && f.chance(0.5):
			r.header.Set("Idempotency-Key", pick(f, f.idemKeys))
		case f.chance(0.1):
			r.header.Set("Idempotency-Key", pick(f, []string{strings.Repeat("k", 256), strings.Repeat("k", 255), " ", "☃", "\xff", f.headerJunk()}))
		default:
			k := "idem-" + strconv.Itoa(f.n(1e6))
			r.header.Set("Idempotency-Key", k)
			if len(f.idemKeys) < 12 {
				f.idemKeys = append(f.idemKeys, k)
			} else {
				f.idemKeys[f.n(len(f.idemKeys))] = k
			}
		}
	}
	if f.chance(0.04) {
		r.header.Set(pick(f, []string{"Accept", "X-Forwarded-Proto", "Accept-Encoding", "Content-Encoding", "X-Request-Id", "Cookie", "Origin"}),
			pick(f, []string{"text/plain", "https", "gzip", "junk", "*/*", f.headerJunk()}))
	}
	if len(r.body) > 0 && f.chance(0.08) {
		r.chunked = true
	}
	if r.body == nil && r.method != "GET" && r.method != "HEAD" && f.chance(0.03) {
		r.chunked = true // an empty chunked body: Content-Length unknown
	}
}
