package server_test

// Request bodies through the real listener: JSON numbers with an integral
// value are integers whatever their spelling, and an idempotent retry is
// compared by value.

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const frDenise = "53f154:fr-FR-DeniseNeural"

// readyProject creates a French project for key and lets it finish.
func readyProject(t *testing.T, in *inst, key string) string {
	t.Helper()
	st, m := in.call("POST", "/api/v1/projects", key, `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://cdn.test/body.mp4"}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	id := m["project_id"].(string)
	st, m = in.call("POST", "/_sim/clock/advance", "", `{"seconds":3600}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	require.Equal(t, "ready", in.project(key, id)["status"])
	return id
}

// retranslationBody is a valid re-translation request with the given
// numbers spelled as written.
func retranslationBody(start, end, scriptSpeaker, speaker string) string {
	return `{"target_script":[{"start_ms":` + start + `,"end_ms":` + end + `,"text":"Au revoir","speaker_id":` + scriptSpeaker + `}],` +
		`"target_speakers":[{"speaker_id":` + speaker + `,"voice_key":"` + frDenise + `","style":"feminine"}]}`
}

func createBody(start, end string) string {
	return `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://cdn.test/script.mp4",` +
		`"source_script":[{"start_ms":` + start + `,"end_ms":` + end + `,"text":"Hello there"}]}`
}

// exactBody is the body as sent, without the newline every JSON answer ends
// with.
func exactBody(a answer) string { return strings.TrimSuffix(string(a.body), "\n") }

func TestIntegralNumbersAreIntegers(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	const key = "dubsim-enterprise"
	c := newPClient(t, in.url)
	id := readyProject(t, in, key)
	validate := "/api/v1/projects/" + id + "/validate-translation-request"

	accepted := []struct {
		name, path, body string
	}{
		{"validate: 100.0 and 1544.0", validate, retranslationBody("100.0", "1544.0", "1", "1")},
		{"validate: 1e2, 1.544e3, speaker_id 1.0 and 1e0", validate, retranslationBody("1e2", "1.544e3", "1.0", "1e0")},
		{"validate: exponent with sign and capital E", validate, retranslationBody("10E+1", "154400e-2", "1", "1")},
		{"validate: -0.0 is 0", validate, retranslationBody("-0.0", "1544", "1", "1")},
		{"validate: 2^53+1 exactly", validate, retranslationBody("9007199254740992", "9007199254740993", "1", "1")},
		{"validate: 2^53+1 with a fraction of zeros", validate, retranslationBody("9007199254740992.000", "9007199254740993.0", "1", "1")},
		{"create: source_script 1e2 and 1500.0", "/api/v1/projects", createBody("1e2", "1500.0")},
		{"control: outcome count 2.0", "/_sim/outcomes", `{"outcome":"ready","count":2.0,"api_key":"dubsim-pro"}`},
		{"control: fault latency_ms 1e1", "/_sim/faults", `{"path":"/nothing","action":{"type":"latency","latency_ms":1e1},"count":1.0}`},
		{"control: verify at_least 0.0", "/_sim/requests/verify", `{"path":"/nothing","at_least":0.0}`},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			k := key
			if strings.HasPrefix(tc.path, "/_sim") {
				k = ""
			}
			a := c.json("POST", tc.path, k, tc.body, nil)
			require.NoError(t, a.err)
			assert.Contains(t, []int{200, 201}, a.status, "%s", a.body)
		})
	}

	// The value decoded is the integer: the project keeps start_ms 100.
	created := c.json("POST", "/api/v1/projects", key, createBody("1e2", "1.5e3"), nil)
	require.Equal(t, http.StatusOK, created.status, "%s", created.body)
	st, m := in.call("POST", "/_sim/clock/advance", "", `{"seconds":3600}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	p := in.project(key, created.json()["project_id"].(string))
	seg := p["output_source_script"].([]any)[0].(map[string]any)
	assert.Equal(t, float64(100), seg["start_ms"])
	assert.Equal(t, float64(1500), seg["end_ms"])

	// A re-translation with 1e2-style numbers runs.
	r := c.json("POST", "/api/v1/projects/"+id+"/translations", key, retranslationBody("1e2", "1544.0", "1.0", "1e0"), nil)
	assert.Equal(t, http.StatusOK, r.status, "%s", r.body)
}

func TestNonIntegralNumbersAreRefused(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	const key = "dubsim-enterprise"
	c := newPClient(t, in.url)
	id := readyProject(t, in, key)
	validate := "/api/v1/projects/" + id + "/validate-translation-request"
	const int64Range = "from -9223372036854775808 to 9223372036854775807"
	refused := []struct {
		name, key, path, body, want string
	}{
		{"fraction", key, validate, retranslationBody("100.5", "1544", "1", "1"),
			`{"error":"ValidationError","message":"target_script.start_ms must be an integer; got number 100.5"}`},
		{"fraction in exponent form", key, validate, retranslationBody("100", "1544", "1", "15e-1"),
			`{"error":"ValidationError","message":"target_speakers.speaker_id must be an integer; got number 15e-1"}`},
		{"tiny fraction", key, validate, retranslationBody("100.0000000000000000001", "1544", "1", "1"),
			`{"error":"ValidationError","message":"target_script.start_ms must be an integer; got number 100.0000000000000000001"}`},
		{"1e400 out of range", key, validate, retranslationBody("100", "1544", "1e400", "1"),
			`{"error":"ValidationError","message":"target_script.speaker_id must be an integer ` + int64Range + `; got 1e400"}`},
		{"1e30 out of range", key, validate, retranslationBody("100", "1e30", "1", "1"),
			`{"error":"ValidationError","message":"target_script.end_ms must be an integer ` + int64Range + `; got 1e30"}`},
		{"2^63 out of range", key, validate, retranslationBody("9223372036854775808", "1544", "1", "1"),
			`{"error":"ValidationError","message":"target_script.start_ms must be an integer ` + int64Range + `; got 9223372036854775808"}`},
		{"huge exponent", key, validate, retranslationBody("1e9999999999", "1544", "1", "1"),
			`{"error":"ValidationError","message":"target_script.start_ms must be an integer ` + int64Range + `; got 1e9999999999"}`},
		{"create: fraction", key, "/api/v1/projects", createBody("100.5", "1500"),
			`{"error":"ValidationError","message":"source_script.start_ms must be an integer; got number 100.5"}`},
		{"create: out of range", key, "/api/v1/projects", createBody("0", "-1e19"),
			`{"error":"ValidationError","message":"source_script.end_ms must be an integer ` + int64Range + `; got -1e19"}`},
		{"a number in a string is still a string", key, validate, retranslationBody(`"1e2"`, "1544", "1", "1"),
			`{"error":"ValidationError","message":"target_script.start_ms must be an integer; got string"}`},
		{"control: fraction", "", "/_sim/outcomes", `{"outcome":"ready","count":1.5}`,
			`{"error":"ValidationError","message":"count must be an integer; got number 1.5"}`},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			a := c.json("POST", tc.path, tc.key, tc.body, nil)
			require.NoError(t, a.err)
			assert.Equal(t, http.StatusBadRequest, a.status)
			assert.Equal(t, tc.want, exactBody(a))
		})
	}
}

func TestIdempotentRetryIsComparedByValue(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	const key = "dubsim-enterprise"
	c := newPClient(t, in.url)
	idem := func(k string) map[string]string { return map[string]string{"Idempotency-Key": k} }

	first := c.json("POST", "/api/v1/projects", key, createBody("100", "1500"), idem("same-value"))
	require.Equal(t, http.StatusOK, first.status, "%s", first.body)
	respelled := "{\n  \"source_script\": [ { \"text\": \"Hello there\", \"end_ms\": 1.5e3, \"start_ms\": 100.0 } ],\n" +
		"  \"source_video_url\": \"https://cdn.test/script.mp4\",\t\"target_lang\": \"fr-\\u0046R\", \"source_lang\": \"en\"\n}\n"
	again := c.do("POST", "/api/v1/projects", key, "application/json; charset=utf-8", []byte(respelled), idem("same-value"))
	require.NoError(t, again.err)
	assert.Equal(t, http.StatusOK, again.status, "%s", again.body)
	assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	assert.Equal(t, string(first.body), string(again.body), "the first answer, replayed")

	other := c.json("POST", "/api/v1/projects", key, createBody("200", "1500"), idem("same-value"))
	assert.Equal(t, http.StatusUnprocessableEntity, other.status)
	assert.Equal(t, `{"error":"IdempotencyError","message":"Idempotency-Key \"same-value\" was already used with a different request (method, path or body); use a new key"}`, exactBody(other))
	assert.Empty(t, other.header.Get("Idempotent-Replayed"))

	// A duplicate key: the last one counts, as for the handler.
	dup := c.json("POST", "/api/v1/projects", key, `{"source_lang":"de","source_lang":"en",`+createBody("100", "1500")[len(`{"source_lang":"en",`):], idem("same-value"))
	assert.Equal(t, http.StatusOK, dup.status, "%s", dup.body)
	assert.Equal(t, "true", dup.header.Get("Idempotent-Replayed"))

	// One project was made under the key.
	made := 0
	for _, p := range projectsOf(t, in, key) {
		if p["source_video_url"] == "https://cdn.test/script.mp4" {
			made++
		}
	}
	assert.Equal(t, 1, made, "one creation under the key")

	// The studio interface: the same rule.
	const studioKey = "dubsim-free"
	s1 := c.json("POST", "/api/v1/projects", studioKey, `{"name":"Season 2","managerEmail":"alice.johnson@acme-media.example"}`, idem("studio-value"))
	require.Equal(t, http.StatusOK, s1.status, "%s", s1.body)
	s2 := c.json("POST", "/api/v1/projects", studioKey, ` { "managerEmail" : "alice.johnson@acme-media.example" , "name" : "Season 2" } `, idem("studio-value"))
	assert.Equal(t, http.StatusOK, s2.status, "%s", s2.body)
	assert.Equal(t, "true", s2.header.Get("Idempotent-Replayed"))
	assert.Equal(t, string(s1.body), string(s2.body))
	s3 := c.json("POST", "/api/v1/projects", studioKey, `{"name":"Season 3","managerEmail":"alice.johnson@acme-media.example"}`, idem("studio-value"))
	assert.Equal(t, http.StatusUnprocessableEntity, s3.status, "%s", s3.body)
}
