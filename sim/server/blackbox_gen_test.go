package server_test

// The generators of the black-box fuzzer (blackbox_test.go): strings, JSON
// values, bodies, ids, keys and headers, valid and malformed.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/require"
)

var fixtureKeys = []string{"dubsim-free", "dubsim-subscription", "dubsim-pro", "dubsim-enterprise", "dubsim-broke"}

// fieldNames are the JSON field names of every body of the API, and a few
// others: random objects use them so that wrong types reach the decoders.
var fieldNames = []string{
	"name", "source_lang", "target_lang", "source_video_url", "mixing_mode", "use_emotional_transfer",
	"use_soundalike_voices", "source_script_content", "source_script", "use_fixed_timings", "glossary_content",
	"tts_volume", "target_script", "target_speakers", "start_ms", "end_ms", "text", "speaker_id", "voice_key",
	"style", "seconds", "time_scale", "plan", "balance_minutes", "retranslation_enabled", "cloning_enabled",
	"outcome", "error_message", "now", "count", "source_url_pattern", "accounts", "options", "voices",
	"media_rules", "pattern", "duration_seconds", "refuse", "fail", "id", "method", "path", "probability",
	"ttl_seconds", "type", "latency_ms", "status", "error", "message", "bytes", "headers",
	"body_contains", "at_least", "at_most", "source_langs", "target_langs", "rules", "__proto__", "", "X",
}

var weirdStrings = []string{
	"", " ", "\t\n", "null", "true", "0", "-1", "NaN", "Infinity", "../../etc/passwd", "%00", "\x00", "\u202e\u0644",
	"'; DROP TABLE projects; --", "<script>alert(1)</script>", "${jndi:ldap://x}", "{{7*7}}", "☃", "😀😀😀",
	"e\u0301", "\ufeff", "\ufffd", "\u2028", "a\tb", "line1\nline2", "\\", `"`, "*", "**", "?", "[", "%",
	"en", "fr-FR", "EN", "en-us", "de_DE", "zz-ZZ", "voiceover_only", "normal", "feminine", "masculine",
	"soundalike", "emotional_transfer", "pro", "enterprise", "none", "gold", "error", "ready", "in_progress",
	"https://example.com/video.mp4", "https://media.dubsim.test/short.mp4", "ftp://x/y", "http://", "//x",
}

var numbers = []string{
	"0", "-0", "1", "-1", "0.5", "-0.5", "1e3", "1E-3", "2147483647", "2147483648", "-2147483649",
	"9223372036854775807", "9223372036854775808", "-9223372036854775809", "18446744073709551616",
	"1e308", "-1e308", "1e309", "1e-400", "123456789012345678901234567890", "3153600000", "3153600001",
	"1000000", "1000001", "600000", "86400", "1e12",
}

func (f *fuzzer) str() string {
	switch f.n(10) {
	case 0, 1, 2:
		return pick(f, weirdStrings)
	case 3:
		return pick(f, f.tgtLangs)
	case 4:
		return pick(f, f.voiceKeys)
	case 5:
		return strings.Repeat(pick(f, []string{"a", "é", "☃", "\\u0000", " "}), f.n(3000))
	case 6:
		if f.chance(0.05) {
			return strings.Repeat("x", 70_000+f.n(10_000))
		}
		return f.words(1 + f.n(12))
	default:
		b := make([]rune, f.n(40))
		for i := range b {
			switch f.n(4) {
			case 0:
				b[i] = rune(f.n(0x80))
			case 1:
				b[i] = rune(0x80 + f.n(0x800))
			case 2:
				b[i] = rune(0x1F300 + f.n(0x300))
			default:
				b[i] = rune('a' + f.n(26))
			}
		}
		return string(b)
	}
}

var vocabulary = strings.Fields("hello world the quick brown fox jumps over lazy dog voice test bonjour monde hallo welt " +
	"hola mundo ciao tutti, again. yes! no? well... 42 3.14 café naïve Über straße 東京 こんにちは Привет мир")

func (f *fuzzer) words(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = pick(f, vocabulary)
	}
	return strings.Join(w, " ")
}

func (f *fuzzer) scalar() any {
	switch f.n(9) {
	case 0:
		return nil
	case 1:
		return f.chance(0.5)
	case 2, 3:
		return json.Number(pick(f, numbers))
	case 4:
		return f.rnd.NormFloat64() * 1e4
	default:
		return f.str()
	}
}

// value is a random JSON value of at most the given depth.
func (f *fuzzer) value(depth int) any {
	if depth <= 0 {
		return f.scalar()
	}
	switch f.n(6) {
	case 0, 1:
		m := map[string]any{}
		for i := f.n(6); i > 0; i-- {
			k := pick(f, fieldNames)
			if f.chance(0.2) {
				k = f.str()
			}
			m[k] = f.value(depth - 1)
		}
		return m
	case 2:
		a := make([]any, f.n(6))
		for i := range a {
			a[i] = f.value(depth - 1)
		}
		return a
	default:
		return f.scalar()
	}
}

func (f *fuzzer) marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(f.chance(0.5))
	if err := enc.Encode(v); err != nil {
		// An invalid json.Number: send it raw, that is junk too.
		return []byte(fmt.Sprint(v))
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// junkBody is a body of no particular shape: random JSON, broken JSON,
// deep nesting, binary, huge.
func (f *fuzzer) junkBody() []byte {
	switch f.n(14) {
	case 0:
		return nil
	case 1:
		return []byte(pick(f, []string{"{}", "[]", "null", "0", `""`, "true", "{", "}", "[", `{"a":}`, `{"a" 1}`,
			`{"a":1,}`, `{,}`, `{"a":1}{"b":2}`, `{"a":1} x`, "\xef\xbb\xbf{}", "{}\x00", `{"\ud800":1}`, `{"a":"\ud800"}`,
			`{"a":"\xff\xfe"}`, `{"a":1e400}`, `{"a":-}`, `{"a":01}`, `{"a":.5}`, `{"a":+1}`, `{'a':1}`, `{a:1}`,
			`{"a":NaN}`, `{"a":Infinity}`, `/* c */ {}`, "\n\n\t ", `{"a":"b"`, `[{"a":1}`, `{"a":[1,2}`}))
	case 2, 3, 4:
		return f.marshal(f.value(1 + f.n(4)))
	case 5:
		b := f.marshal(f.value(3))
		if len(b) > 1 {
			b = b[:f.n(len(b))]
		}
		return b
	case 6:
		b := f.marshal(f.value(3))
		i := f.n(len(b) + 1)
		return slices.Concat(b[:i], []byte{byte(f.n(256))}, b[i:])
	case 7:
		d := pick(f, []int{64, 500, 5000, 10_001, 100_000})
		if f.chance(0.5) {
			return []byte(strings.Repeat("[", d) + strings.Repeat("]", d))
		}
		return []byte(strings.Repeat(`{"a":`, d) + "1" + strings.Repeat("}", d))
	case 8:
		b := make([]byte, f.n(2048))
		for i := range b {
			b[i] = byte(f.rnd.Uint32())
		}
		return b
	case 9:
		if f.chance(0.02) { // over the 10 MB limit of JSON bodies
			return []byte(`{"name":"` + strings.Repeat("x", 10<<20+f.n(1000)) + `"}`)
		}
		return []byte(`{"name":"` + strings.Repeat("x", 70_000) + `"}`)
	case 10:
		return f.marshal([]any{f.value(2), f.value(2)})
	case 11:
		b := f.marshal(f.value(2))
		return append(b, pick(f, []string{"}", "]", " {}", "\n{}", ",", " garbage"})...)
	default:
		return f.marshal(map[string]any{pick(f, fieldNames): f.value(2), pick(f, fieldNames): f.value(1)})
	}
}

// mutate perturbs a structured body: a value replaced by a random one, a key
// dropped or added, at every level, with probability p per node.
func (f *fuzzer) mutate(v any, p float64) any {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // map order must not change the sequence of a seed
		for _, k := range keys {
			switch {
			case f.chance(p / 2):
				delete(x, k)
			case f.chance(p):
				x[k] = f.value(2)
			default:
				x[k] = f.mutate(x[k], p)
			}
		}
		if f.chance(p) {
			x[pick(f, fieldNames)] = f.value(1)
		}
		return x
	case []any:
		for i := range x {
			if f.chance(p) {
				x[i] = f.value(2)
			} else {
				x[i] = f.mutate(x[i], p)
			}
		}
		if len(x) > 1 && f.chance(p) {
			i, j := f.n(len(x)), f.n(len(x))
			x[i], x[j] = x[j], x[i]
		}
		return x
	}
	if f.chance(p / 3) {
		return f.scalar()
	}
	return v
}

// maybeSet sets each of the key, value pairs kv in m with probability p, in
// order (not a map's: the sequence of a seed must not vary).
func (f *fuzzer) maybeSet(m map[string]any, p float64, kv ...any) {
	for i := 0; i+1 < len(kv); i += 2 {
		if f.chance(p) {
			m[kv[i].(string)] = kv[i+1]
		}
	}
}

// jsonBody encodes a structured body, mutated now and then.
func (f *fuzzer) jsonBody(v any) []byte {
	if f.chance(0.3) {
		v = f.mutate(v, 0.15)
	}
	return f.marshal(v)
}

var junkIDs = []string{
	"0", "-1", "1", "123456789", "999999999", "18446744073709551616", strings.Repeat("9", 300), "..", "%2e%2e",
	"%2F", "..%2F..%2Fetc%2Fpasswd", "%00", "%ff%fe", "%E2%98%83", "☃", "null", "undefined", "%7Bproject_id%7D",
	"{id}", "a;b", "a,b", "~", "*", "%20", "+", "%2B", "a%2Fb", "%25", "%252e", strings.Repeat("a", 5000),
	"%zz", "%", "%%", "%u0041", ".", "flt_1", "out_1", "802323387", "0x1F", "1e3", "%C0%AE%C0%AE",
}

var junkPaths = []string{
	"/", "//", "/api", "/api/v1", "/api/v1/", "/api/v2/projects", "/API/V1/OPTIONS", "/api/v1/options/",
	"/api/v1//options", "/api/v1/./options", "/api/v1/projects/../balance", "/api/v1/projects/%2e%2e/balance",
	"/api/v1/projects/..%2f..%2fbalance", "/files/projects/../../../../etc/passwd",
	"/files/projects/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/files/..%2f..%2f..%2fetc%2fpasswd",
	"/files/projects/1/1/..%5c..%5cwin.ini", "/_sim", "/_sim/", "/_sim/../api/v1/options", "/_sim/%2e%2e/api/v1/balance",
	"/_sim/clock/", "/_sim/clock/advance/x", "/_sim/projects//outcome", "/_sim/outcomes/", "/_sim/faults/a/b",
	"/_sim/requests/", "/_sim/requests/verify/", "/%00", "/%ff", "/%E2%98%83", "/☃", "/api/v1/projects/%00/translations",
	"/favicon.ico", "/.env", "/.git/config", "/api/v1/projects?project_id=1", "/api/v1/cloning",
	"/api/v1/cloning/synthesize/", "/files", "/files/projects", "/files/projects/1", "/files/projects/1/1",
	"/files/projects/1/1/x/y", "/api/v1/projects/1/translations/1", "/api/v1/projects/1/2/3/4/5/6/7/8",
	"/%2e%2e/%2e%2e/etc/passwd", "/api/v1/balance%00", "/api/v1/balance;jsessionid=1", "/api/v1/balance/..",
	"/_sim/%63lock", "/api/v1/%6Fptions", "/api/%zz", "/api/v1/projects/%", "/" + strings.Repeat("a/", 2000),
}

func (f *fuzzer) junkID() string {
	if f.chance(0.2) {
		var b strings.Builder
		for i := f.n(12); i >= 0; i-- {
			switch f.n(5) {
			case 0:
				fmt.Fprintf(&b, "%%%02X", f.n(256))
			case 1:
				b.WriteString(pick(f, []string{"%", "%g1", "%2", "%%", "%0", "%C0"}))
			case 2:
				b.WriteString(pick(f, []string{"..", ".", "/", "%2f", "%5c", ";", "?", "&", "=", "#"}))
			default:
				b.WriteByte(byte('a' + f.n(26)))
			}
		}
		return b.String()
	}
	return pick(f, junkIDs)
}

// project picks a tracked project, or nil.
func (f *fuzzer) project() *bbProject {
	if len(f.projects) == 0 {
		return nil
	}
	if f.chance(0.5) { // the newest ones are the most likely to exist
		return f.projects[len(f.projects)-1-f.n(min(len(f.projects), 10))]
	}
	return pick(f, f.projects)
}

// projectRef returns a project id for a path and the key to use with it:
// mostly a real project with its owner, sometimes another key or a junk id.
func (f *fuzzer) projectRef() (string, string, *bbProject) {
	p := f.project()
	if p == nil || f.chance(0.3) {
		return f.junkID(), f.key(), nil
	}
	if f.chance(0.1) {
		return p.id, f.key(), p
	}
	return p.id, p.key, p
}

func (f *fuzzer) key() string {
	switch {
	case f.chance(0.45):
		return "dubsim-enterprise"
	case f.chance(0.9):
		return pick(f, f.keys)
	default:
		return pick(f, []string{"nobody", "dubsim-ENTERPRISE", "dubsim-enterprise ", "dsk_", "x", strings.Repeat("k", 300)})
	}
}

func (f *fuzzer) headerJunk() string {
	n := f.n(200)
	if f.chance(0.01) {
		n = 20_000
	}
	b := make([]byte, n)
	for i := range b {
		switch f.n(8) {
		case 0:
			b[i] = 0x80 + byte(f.n(0x80)) // obs-text
		case 1:
			b[i] = '\t'
		default:
			b[i] = byte(0x20 + f.n(0x5f))
		}
	}
	return string(b)
}

func (f *fuzzer) auth(key string) string {
	switch f.n(24) {
	case 0:
		return ""
	case 1:
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(key+":x"))
	case 2:
		return "Bearer"
	case 3:
		return "Bearer    "
	case 4:
		return "bearer " + key
	case 5:
		return "BEARER   " + key + "   "
	case 6:
		return "Bearer " + f.headerJunk()
	case 7:
		return "Token " + key
	case 8:
		return "Bearer " + key + " " + key
	default:
		return "Bearer " + key
	}
}

var contentTypes = []string{
	"application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "application/problem+json",
	"application/json; charset=latin1", "application/json;;;", "application/jsonx", "text/json", "text/plain",
	"application/x-www-form-urlencoded", "multipart/form-data", "multipart/form-data; boundary=", "multipart/form-data; boundary=xyz",
	"multipart/mixed; boundary=xyz", "application/octet-stream", "*/*", "json", "/", ";", "a/b/c", "application/json; boundary=\"",
	"audio/wav", "", "\u00e9/\u00e9",
}

func (f *fuzzer) videoURL() string {
	switch f.n(20) {
	case 0, 1, 2, 3, 4, 5, 6, 7:
		return "https://media.dubsim.test/short-" + strconv.Itoa(f.n(1000)) + ".mp4"
	case 8:
		return "https://example.com/video.mp4"
	case 9:
		return pick(f, []string{"https://media.dubsim.test/fail.mp4", "https://media.dubsim.test/no-speech.mp4"})
	case 10:
		return pick(f, []string{"https://media.dubsim.test/unreadable.mp4", "https://media.dubsim.test/private/x.mp4"})
	case 11:
		return pick(f, []string{"https://media.dubsim.test/hour.mp4", "https://media.dubsim.test/long.mp4"})
	case 12:
		return "https://cdn.test/" + f.words(1) + strconv.Itoa(f.n(1e6)) + ".mp4"
	case 13: // matched by the media rules the fuzzer loads
		return pick(f, []string{"https://cdn.test/bbx-" + strconv.Itoa(f.n(100)) + ".mp4", "https://cdn.test/x" + strconv.Itoa(f.n(100))})
	case 14:
		// Loopback: the media prober reads the file's real header, here
		// from the instance itself.
		if p := f.project(); p != nil && len(p.files) > 0 && f.chance(0.7) {
			return f.in.url + pick(f, p.files)
		}
		return pick(f, []string{"http://127.0.0.1:1/clip.mp4", f.in.url + "/api/v1/options", f.in.url + "/nothing.wav", "http://[::1]:1/x.wav", "http://localhost:1/a.mp4"})
	default:
		return pick(f, []string{"", "not a url", "ftp://example.com/a.mp4", "https://", "https:///x", "//example.com/a.mp4",
			"https://example.com/%zz", "https://" + strings.Repeat("a", 300) + ".com/x.mp4", "javascript:alert(1)",
			"file:///etc/passwd", "https://example.com/a b.mp4", "HTTPS://EXAMPLE.COM/VIDEO.MP4", "https://[::1/x"})
	}
}

func (f *fuzzer) segments(n int, withSpeakers int) []any {
	segs := make([]any, n)
	t := int64(f.n(500))
	for i := range segs {
		start := t + int64(f.n(400))
		end := start + 300 + int64(f.n(4000))
		t = end
		s := map[string]any{"start_ms": start, "end_ms": end, "text": f.words(1 + f.n(10))}
		if withSpeakers > 0 {
			s["speaker_id"] = 1 + f.n(withSpeakers)
		}
		segs[i] = s
	}
	return segs
}

func (f *fuzzer) createBody() []byte {
	m := map[string]any{"source_lang": pick(f, f.srcLangs), "target_lang": pick(f, f.tgtLangs), "source_video_url": f.videoURL()}
	opt := func(p float64, k string, v func() any) {
		if f.chance(p) {
			m[k] = v()
		}
	}
	opt(0.5, "name", func() any { return f.str() })
	opt(0.2, "mixing_mode", func() any { return pick(f, append(slices.Clone(sim.MixingModes), "loud")) })
	opt(0.1, "use_emotional_transfer", func() any { return f.chance(0.5) })
	opt(0.15, "use_soundalike_voices", func() any { return f.chance(0.5) })
	opt(0.15, "tts_volume", func() any { return pick(f, append(slices.Clone(sim.TTSVolumes), "max")) })
	opt(0.1, "use_fixed_timings", func() any { return f.chance(0.5) })
	switch f.n(12) {
	case 0:
		m["source_script"] = f.segments(1+f.n(20), 0)
	case 1:
		m["source_script_content"] = pick(f, []string{
			"1\n00:00:00,100 --> 00:00:01,500\nHello world\n\n2\n00:00:02,000 --> 00:00:03,000\nAgain\n",
			"WEBVTT\n\n00:00.100 --> 00:01.500\n<v Bob>Hello\n", "Hello world. How are you?\n\nFine.", "", "   ",
			"1\n00:00:00,100 --> \n", "\xff\xfe", "WEBVTT\n\nNOTE only a note\n", f.words(50),
		})
	case 2:
		m["glossary_content"] = pick(f, []string{"hello\tbonjour\nworld\tmonde", "no tab here", "\t", "a\tb\r\n\r\nc\td", "", f.words(5)})
	}
	return f.jsonBody(m)
}

func (f *fuzzer) retranslationBody(p *bbProject) []byte {
	lang := pick(f, f.tgtLangs)
	if p != nil && p.target != "" && f.chance(0.9) {
		lang = p.target
	}
	voices := f.fx.Catalog.Voices[lang]
	nSpk := 1 + f.n(3)
	speakers := make([]any, nSpk)
	for i := range speakers {
		vk := pick(f, f.voiceKeys)
		if len(voices) > 0 && f.chance(0.85) {
			vk = pick(f, voices).VoiceKey
		} else if f.chance(0.3) {
			vk = pick(f, []string{sim.VoiceSoundalike, sim.VoiceEmotionalTransfer, "", "nope:xx-XX-Nobody"})
		}
		speakers[i] = map[string]any{"speaker_id": i + 1, "voice_key": vk, "style": pick(f, []string{"masculine", "feminine", "feminine", "neutral"})}
	}
	n := 1 + f.n(30)
	if f.chance(0.03) {
		n = 200 + f.n(300)
	}
	m := map[string]any{"target_script": f.segments(n, nSpk), "target_speakers": speakers}
	if f.chance(0.2) {
		m["mixing_mode"] = pick(f, append(slices.Clone(sim.MixingModes), "x"))
	}
	if f.chance(0.2) {
		m["tts_volume"] = pick(f, sim.TTSVolumes)
	}
	if f.chance(0.2) {
		m["use_fixed_timings"] = f.chance(0.5)
	}
	return f.jsonBody(m)
}

// multipartBody is a voice cloning form: valid, broken, or in between.
func (f *fuzzer) multipartBody() (string, []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if f.chance(0.2) {
		_ = mw.SetBoundary(pick(f, []string{"a", "xyz", strings.Repeat("b", 70), "with space", "----WebKitFormBoundary7MA4YWxkTrZu0gW"}))
	}
	valid := f.chance(0.45)
	field := func(name, value string) {
		w, err := mw.CreateFormField(name)
		require.NoError(f.t, err)
		_, _ = io.WriteString(w, value)
	}
	file := func(name string, data []byte) {
		w, err := mw.CreateFormFile("reference_audio_files", name)
		require.NoError(f.t, err)
		_, _ = w.Write(data)
	}
	text := func() string {
		switch f.n(12) {
		case 0:
			return ""
		case 1:
			return "   "
		case 2:
			return "!!! ... ???"
		case 3:
			return strings.Repeat("a", 5001)
		case 4:
			return "\xff\xfe invalid"
		case 5:
			if f.chance(0.1) {
				return strings.Repeat("é", 5000) // the limit in characters, not bytes
			}
			return strings.Repeat("ab ", 200)
		default:
			return f.words(1 + f.n(20))
		}
	}
	if valid {
		field("text", f.words(1+f.n(15)))
		field("language", pick(f, f.tgtLangs))
		file("ref.wav", f.wav)
	} else {
		for i := f.n(6); i >= 0; i-- {
			switch f.n(7) {
			case 0:
				field("text", text())
			case 1:
				field("language", pick(f, []string{pick(f, f.tgtLangs), "en", "xx-XX", "", strings.Repeat("l", 300)}))
			case 2, 3:
				data := pick(f, [][]byte{f.wav, f.wav[:44], f.wav[:10], nil, []byte("ID3\x04\x00\x00\x00\x00\x00\x00junk"),
					[]byte("fLaC\x00\x00\x00\x22"), []byte("\x00\x00\x00\x18ftypM4A "), []byte("not audio at all"),
					[]byte("\x1aE\xdf\xa3"), []byte{0xff, 0xfb, 0x90, 0x64, 0, 0}})
				file(pick(f, []string{"ref.wav", "", "../../etc/passwd", "☃.mp3", strings.Repeat("n", 500)}), data)
			case 4:
				h := textproto.MIMEHeader{}
				h.Set("Content-Disposition", pick(f, []string{`form-data`, `form-data; name=`, `attachment; name="text"`,
					`form-data; name="reference_audio_files"; filename*=UTF-8''%E2%98%83.wav`, `form-data; name="text"; name="language"`, "junk"}))
				if f.chance(0.5) {
					h.Set("Content-Type", pick(f, contentTypes))
				}
				if w, err := mw.CreatePart(h); err == nil {
					_, _ = w.Write([]byte(f.str()))
				}
			case 5:
				field(f.str(), f.str())
			default:
				for j := 0; j < 11; j++ {
					file("r.wav", f.wav)
				}
			}
		}
	}
	if !f.chance(0.05) {
		_ = mw.Close()
	}
	body := buf.Bytes()
	if f.chance(0.08) && len(body) > 0 {
		body = body[:f.n(len(body))]
	}
	ct := mw.FormDataContentType()
	if f.chance(0.15) {
		ct = pick(f, []string{"multipart/form-data", "multipart/form-data; boundary=other", "multipart/mixed; boundary=" + mw.Boundary(),
			"application/json", "", "multipart/form-data; boundary=\"" + mw.Boundary() + "\"", "MULTIPART/FORM-DATA; BOUNDARY=" + mw.Boundary()})
	}
	return ct, body
}
