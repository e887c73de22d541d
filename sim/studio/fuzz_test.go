package studio_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dubsim/dubsim/sim"
)

// checkReply asserts what every studio answer keeps, whatever the input:
// never a 5xx, always JSON, and every refusal is exactly {"error": <text>}
// with a non-empty text.
func checkReply(t *testing.T, what string, r reply) {
	t.Helper()
	if r.status >= 500 {
		t.Fatalf("%s: status %d: %s", what, r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Fatalf("%s: status %d with Content-Type %q: %q", what, r.status, ct, r.body)
	}
	if r.status >= 400 {
		var m map[string]any
		if err := json.Unmarshal(r.body, &m); err != nil {
			t.Fatalf("%s: error body is not a JSON object: %q", what, r.body)
		}
		if msg, ok := m["error"].(string); !ok || msg == "" || len(m) != 1 {
			t.Fatalf("%s: error body is not {\"error\": text}: %s", what, r.body)
		}
		return
	}
	if !json.Valid(r.body) {
		t.Fatalf("%s: status %d with a body that is not JSON: %q", what, r.status, r.body)
	}
}

// created returns the id of a successful creation (and checks its shape).
func created(t *testing.T, r reply) string {
	t.Helper()
	if r.status != http.StatusOK {
		return ""
	}
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("creation answer is not an object: %q", r.body)
	}
	id, _ := m["id"].(string)
	if !sim.IsStudioID(id) {
		t.Fatalf("creation answer without a studio id: %s", r.body)
	}
	return id
}

// Seed bodies shared by the targets: the shapes of the table tests and
// the decoding edge cases.
var commonSeeds = []string{
	``, ` `, `{}`, `[]`, `null`, `"x"`, `42`, `nope`, `{"name":`, `{"name":"x",}`, `{"name":tru}`,
	`{"name":"x"} {}`, `{"name":"x"}}`, `{"name":"x"}]`, `{"name":"é"}`, `{"name":"` + strings.Repeat("x", 501) + `"}`,
	`{"name":null}`, `{"name":5}`, `{"name":" \t"}`, `{"name":"\u0000"}`, `{"name":"x","name":"y"}`,
}

func seed(f *testing.F, bodies ...string) {
	for _, b := range append(commonSeeds, bodies...) {
		f.Add(b)
	}
}

func FuzzCreateArtifactBody(f *testing.F) {
	seed(f,
		`{"name":"A","type":"video","url":"https://cdn.test/a.mp4"}`,
		`{"name":"A","type":"audio","s3Path":"s3://my-bucket/dir/voice.wav"}`,
		`{"name":"A","type":"script","url":"https://cdn.test/script.txt"}`,
		`{"name":"A","type":"subtitles","url":"https://cdn.test/a.srt"}`,
		`{"name":"A","type":"video","fileName":"video.mp4"}`,
		`{"name":"A","type":"video","url":"https://cdn.test/a.mp4","s3Path":"s3://b/k.mp4","fragments":[]}`,
		`{"name":"A","type":"video","url":"ftp://cdn.test/a.mp4"}`,
		`{"name":"A","type":"video","url":"http://[::1"}`,
		`{"name":"A","type":"video","s3Path":"s3:///a.mp4"}`,
		`{"name":"A","type":"video","s3Path":"s3://dubsim-artifacts/temp/5f0c2a9e-0000-4000-8000-000000000000/a.mp4"}`,
		`{"name":"A","type":"video","s3Path":"s3://dubsim-artifacts/temp//"}`,
		`{"name":"A","type":"script","fragments":[{"url":"https://cdn.test/a.mp4","startTime":0}]}`,
		`{"name":"A","type":"video","fragments":[null]}`,
		`{"name":"A","type":"video","fragments":[1,2]}`,
		`{"name":"A","type":"video","fragments":[{"url":"https://cdn.test/a.mp4","s3Path":"s3://b/a.mp4","startTime":0}]}`,
		`{"name":"A","type":"video","fragments":[{"startTime":0}]}`,
		`{"name":"A","type":"video","fragments":[{"url":"https://cdn.test/a.mp4","startTime":"10"}]}`,
		`{"name":"A","type":"video","fragments":[{"url":"https://cdn.test/a.mp4","startTime":-0.25}]}`,
		`{"name":"A","type":"video","fragments":[{"url":"https://cdn.test/a.mp4","startTime":1e400}]}`,
		`{"name":"A","type":"audio","fragments":[{"url":"https://cdn.test/a.wav","startTime":0},{"s3Path":"s3://b/c.wav","startTime":12.5}]}`,
		`{"name":"A","type":"video","fragments":`+fragments(101)+`}`,
		`{"name":"A","type":"video","url":"https://media.dubsim.test/fail.mp4"}`,
	)
	e := newInProcess(f, nil)
	f.Fuzz(func(t *testing.T, body string) {
		r := e.send(t, call{method: "POST", path: pathArtifacts, key: keyAcme, body: body})
		checkReply(t, "create", r)
		if id := created(t, r); id != "" {
			checkReply(t, "get", e.send(t, call{method: "GET", path: "/api/v1/artifacts/" + id, key: keyAcme}))
		}
	})
}

func FuzzCreateProjectBody(f *testing.F) {
	seed(f,
		`{"name":"P"}`,
		`{"name":"Localization Q1","managerEmail":"carol.nguyen@acme-media.example","translationsGlossaryId":"`+glAcmeTranslation+`","voicesGlossaryId":"`+glAcmeVoices+`","pronunciationGlossaryId":"`+glAcmePronunciation+`"}`,
		`{"name":"P","managerEmail":"bob"}`,
		`{"name":"P","managerEmail":"grace.liu@globex-studios.example"}`,
		`{"name":"P","managerEmail":"nobody@acme-media.example"}`,
		`{"name":"P","translationsGlossaryId":"`+glAcmeVoices+`"}`,
		`{"name":"P","voicesGlossaryId":"`+glGlobexVoices+`"}`,
		`{"name":"P","translationGlossaryId":"`+glAcmeTranslation+`"}`,
		`{"name":"P","translationsGlossaryId":"","voicesGlossaryId":null}`,
	)
	e := newInProcess(f, nil)
	f.Fuzz(func(t *testing.T, body string) {
		r := e.send(t, call{method: "POST", path: pathProjects, key: keyAcme, body: body})
		checkReply(t, "create", r)
		if id := created(t, r); id != "" {
			checkReply(t, "get", e.send(t, call{method: "GET", path: pathProjects + "/" + id, key: keyAcme}))
		}
	})
}

func FuzzUpdateProjectBody(f *testing.F) {
	seed(f,
		`{"name":"Renamed"}`,
		`{"voicesGlossaryId":""}`,
		`{"name":"N","managerEmail":"dan.okafor@acme-media.example","translationsGlossaryId":"`+glAcmeTranslation2+`","voicesGlossaryId":"`+glAcmeVoices+`","pronunciationGlossaryId":""}`,
		`{"status":"done","remark":"x"}`,
		`{"managerEmail":"priya.raman@initech-learning.example"}`,
		`{"translationsGlossaryId":"`+glAcmePronunciation+`"}`,
		`{"pronunciationGlossaryId":"`+unknownID+`"}`,
		`{"translationGlossaryId":""}`,
	)
	e := newInProcess(f, nil)
	f.Fuzz(func(t *testing.T, body string) {
		checkReply(t, "patch", e.send(t, call{method: "PATCH", path: pathProjects + "/" + prAcmeSummer, key: keyAcme, body: body}))
		checkReply(t, "get", e.send(t, call{method: "GET", path: pathProjects + "/" + prAcmeSummer, key: keyAcme}))
	})
}

func FuzzCreateVideoBody(f *testing.F) {
	e := newInProcess(f, nil)
	src := e.readyArtifact(keyAcme, "video")
	audio := e.readyArtifact(keyAcme, "audio")
	script := e.readyArtifact(keyAcme, "script")
	pending := e.artifact(keyAcme, `{"name":"P","type":"video","url":"https://cdn.test/p.mp4"}`)
	failed := e.artifact(keyAcme, `{"name":"F","type":"video","url":"https://cdn.test/f.mp4"}`)
	if _, err := e.srv.Engine.Outcomes.ForceArtifact(context.Background(), failed, sim.ForceError, "Codec not supported", nil, nil, true); err != nil {
		f.Fatal(err)
	}
	valid := func(rest string) string {
		return `{"name":"Clip","workflowType":"dubbing","sourceArtifactId":"` + src + `","sourceLanguage":"en","targetLanguages":["es-ES","fr-FR"]` + rest + `}`
	}
	seed(f,
		valid(``),
		valid(`,"backgroundWavArtifactId":"`+audio+`","internationalMixWavArtifactId":"`+audio+`","vocalsHitlWavArtifactId":"`+audio+`","remark":"r","stringVariables":[{"key":"a","value":"b"}],"pipelineOptions":{"shouldAutomateTranscription":true,"shouldAutomateTranslation":false}}`),
		valid(`,"stringVariables":[null]`),
		valid(`,"stringVariables":[{"key":"","value":"v"}]`),
		valid(`,"stringVariables":`+varList(101)),
		valid(`,"pipelineOptions":"auto"`),
		valid(`,"pipelineOptions":{"shouldAutomateTranslation":"yes"}`),
		valid(`,"backgroundWavArtifactId":"`+src+`"`),
		`{"name":"Clip","processingType":"dubbing","sourceArtifactId":"`+src+`","sourceLanguage":"en","targetLanguages":["es-ES"]}`,
		`{"name":"Clip","workflowType":"dubbing","originalVideoArtifactId":"`+src+`","sourceLanguage":"en","targetLanguages":["es-ES"]}`,
		`{"name":"Clip","workflowType":"standard","sourceArtifactId":"`+src+`","sourceLanguage":"en","targetLanguages":["es-ES"]}`,
		`{"name":"Clip","workflowType":"dubbing","sourceArtifactId":"`+src+`","sourceLanguage":"multi","targetLanguages":["es-ES"]}`,
		`{"name":"Clip","workflowType":"dubbing","sourceArtifactId":"`+src+`","sourceLanguage":"en-US","targetLanguages":["es"]}`,
		`{"name":"Clip","workflowType":"dubbing","sourceArtifactId":"`+src+`","sourceLanguage":"en","targetLanguages":["es-ES","es-ES"]}`,
		`{"name":"Clip","workflowType":"dubbing","sourceArtifactId":"`+src+`","sourceLanguage":"en","targetLanguages":`+langList(101)+`}`,
		`{"name":"Clip","workflowType":"dubbing","sourceArtifactId":"`+script+`","sourceLanguage":"en","targetLanguages":["es-ES"]}`,
		`{"name":"Clip","workflowType":"dubbing","sourceArtifactId":"`+pending+`","sourceLanguage":"en","targetLanguages":["es-ES"]}`,
		`{"name":"Clip","workflowType":"dubbing","sourceArtifactId":"`+failed+`","sourceLanguage":"en","targetLanguages":["es-ES"]}`,
		`{"name":"Clip","workflowType":"dubbing","sourceArtifactId":"`+unknownID+`","sourceLanguage":"en","targetLanguages":["es-ES"]}`,
	)
	path := "/api/v1/projects/" + prAcmeTutorials + "/videos/create"
	f.Fuzz(func(t *testing.T, body string) {
		r := e.send(t, call{method: "POST", path: path, key: keyAcme, body: body})
		checkReply(t, "create", r)
		if id := created(t, r); id != "" {
			checkReply(t, "get", e.send(t, call{method: "GET", path: videoPath(prAcmeTutorials, id), key: keyAcme}))
		}
	})
}

func FuzzUpdateVideoBody(f *testing.F) {
	seed(f,
		`{"name":"New video name","dstLangs":["en","fr"],"processingType":"standard","status":"in_progress","remark":"Updated","stringVariables":[{"key":"a","value":"b"}],"translationGuidance":{"common":"c","byLang":{"fr":"v"}}}`,
		`{"dstLangs":["ja-JP"],"translationGuidance":{"byLang":{"ja-JP":"keigo"}}}`,
		`{"dstLangs":["ja-JP"],"translationGuidance":{"byLang":{"es-ES":"tu"}}}`,
		`{"translationGuidance":{"byLang":{"es-ES":"tu","ja-JP":"x"}}}`,
		`{"translationGuidance":null}`,
		`{"translationGuidance":{}}`,
		`{"translationGuidance":{"common":5}}`,
		`{"translationGuidance":{"byLang":["es-ES"]}}`,
		`{"translationGuidance":{"byLang":{"es-ES":null}}}`,
		`{"stringVariables":null}`,
		`{"stringVariables":[]}`,
		`{"stringVariables":"x"}`,
		`{"dstLangs":[]}`, `{"dstLangs":["fr","fr"]}`, `{"dstLangs":"en"}`,
		`{"processingType":"karaoke"}`, `{"processingType":""}`, `{"status":"done"}`, `{"status":"new"}`,
		`{"remark":false}`, `{"remark":""}`, `{"workflowType":"dubbing"}`,
	)
	e := newInProcess(f, nil)
	path := updateVideoPath(prAcmeSummer, viSummerSocial)
	f.Fuzz(func(t *testing.T, body string) {
		checkReply(t, "patch", e.send(t, call{method: "PATCH", path: path, key: keyAcme, body: body}))
		checkReply(t, "get", e.send(t, call{method: "GET", path: videoPath(prAcmeSummer, viSummerSocial), key: keyAcme}))
	})
}

// FuzzPresign fuzzes the fileName query parameter: refusals keep the
// envelope, and a presigned URL accepts its upload.
func FuzzPresign(f *testing.F) {
	for _, s := range []string{"video.mp4", "", "  ", "dir/video.mp4", `C:\video.mp4`, "..", "video", ".mp4", "video.",
		"a\x01b.mp4", strings.Repeat("a", 252) + ".mp4", "my video.mp4", "100%.wav", "a+b.mp4", "ça.mp4", "x?y#z.mp4", "\xff.mp4"} {
		f.Add(s)
	}
	e := newInProcess(f, nil)
	f.Fuzz(func(t *testing.T, name string) {
		r := e.send(t, call{method: "GET", path: pathArtifacts + "?fileName=" + url.QueryEscape(name), key: keyAcme})
		checkReply(t, "presign", r)
		if r.status != http.StatusOK {
			return
		}
		var m map[string]string
		if err := json.Unmarshal(r.body, &m); err != nil {
			t.Fatalf("presign answer: %s", r.body)
		}
		if strings.Contains(name, "%") || !utf8.ValidString(name) {
			return // known bugs: see TestUploadFileNamesWithPercentEscapes and TestUploadFileNameNotUTF8
		}
		u, err := url.Parse(m["presignedUploadUrl"])
		if err != nil {
			t.Fatalf("presignedUploadUrl %q: %v", m["presignedUploadUrl"], err)
		}
		put := e.send(t, call{method: "PUT", path: u.RequestURI(), body: "x", header: map[string]string{"Content-Type": "application/octet-stream"}})
		if put.status != http.StatusOK {
			t.Fatalf("PUT to the presigned URL of %q: %d %s", name, put.status, put.body)
		}
	})
}

// FuzzAuthorization fuzzes the Authorization header.
func FuzzAuthorization(f *testing.F) {
	for _, s := range []string{"", "Bearer " + keyAcme, "bearer " + keyAcme, "Bearer", "Bearer  ", "Basic eDp5", keyAcme, "Bearer nobody", "Bearer \x7f"} {
		f.Add(s)
	}
	e := newInProcess(f, nil)
	f.Fuzz(func(t *testing.T, auth string) {
		req := call{method: "GET", path: pathProjects, header: map[string]string{"Authorization": auth}}
		if strings.ContainsAny(auth, "\r\n\x00") {
			return // not a header value a client can send
		}
		r := e.send(t, req)
		checkReply(t, "list", r)
		if r.status != http.StatusOK {
			if r.status != http.StatusBadRequest || r.header.Get("X-Dubsim-Auth-Error") == "" {
				t.Fatalf("refusal of %q: %d %s without a hint", auth, r.status, r.body)
			}
		}
	})
}
