package studio_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/audio"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	pathArtifacts = "/api/v1/artifacts/create"
	pathProjects  = "/api/v1/projects"
)

func videosPath(pid string) string     { return "/api/v1/projects/" + pid + "/videos" }
func videoPath(pid, vid string) string { return "/api/v1/projects/" + pid + "/videos/" + vid }
func updateVideoPath(pid, vid string) string {
	return "/api/projects/" + pid + "/videos/" + vid
}

// ----- authentication -----

func TestAuthentication(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for _, tc := range []struct {
		name, method, path, auth, body, hint string
	}{
		{"missing header", "GET", pathProjects, "", "", "missing Authorization header; send Authorization: Bearer <API_KEY>"},
		{"basic scheme", "GET", pathProjects, "Basic ZHVic2ltLWZyZWU6", "", "Authorization header must use the Bearer scheme"},
		{"key without scheme", "GET", pathProjects, keyAcme, "", "Authorization header must use the Bearer scheme"},
		{"token scheme", "GET", pathProjects, "Token " + keyAcme, "", "Authorization header must use the Bearer scheme"},
		{"unknown key", "GET", pathProjects, "Bearer no-such-key", "", "unknown API key"},
		{"unknown key on a write", "POST", pathArtifacts, "Bearer no-such-key", `{}`, "unknown API key"},
		{"missing header before body checks", "POST", pathProjects, "", `not json`, "missing Authorization header; send Authorization: Bearer <API_KEY>"},
		{"missing header on presign", "GET", pathArtifacts + "?fileName=a.mp4", "", "", "missing Authorization header; send Authorization: Bearer <API_KEY>"},
		{"missing header on video update", "PATCH", updateVideoPath(prAcmeSummer, viSummerSocial), "", `{"name":"x"}`, "missing Authorization header; send Authorization: Bearer <API_KEY>"},
		{"unknown key on an unknown project", "GET", pathProjects + "/" + unknownID, "Bearer nobody", "", "unknown API key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := map[string]string{}
			if tc.auth != "" {
				h["Authorization"] = tc.auth
			}
			r := e.send(t, call{method: tc.method, path: tc.path, body: tc.body, header: h})
			assertError(t, r, http.StatusBadRequest, sim.MsgStudioAuth)
			assert.Equal(t, tc.hint, r.header.Get("X-Dubsim-Auth-Error"))
		})
	}

	t.Run("bearer without a token", func(t *testing.T) {
		t.Parallel()
		// net/http trims the header value, so "Bearer " arrives as "Bearer".
		r := e.send(t, call{method: "GET", path: pathProjects, header: map[string]string{"Authorization": "Bearer "}})
		assertError(t, r, http.StatusBadRequest, sim.MsgStudioAuth)
		if hint := r.header.Get("X-Dubsim-Auth-Error"); hint != "empty bearer token" {
			t.Errorf("regression: the hint for \"Authorization: Bearer \" says %q (the scheme is right; the token is missing); \"empty bearer token\" is unreachable over HTTP", hint)
		}
	})

	t.Run("scheme is case-insensitive and extra spaces are trimmed", func(t *testing.T) {
		t.Parallel()
		for _, auth := range []string{"bearer " + keyAcme, "BEARER " + keyAcme, "Bearer   " + keyAcme} {
			r := e.send(t, call{method: "GET", path: pathProjects, header: map[string]string{"Authorization": auth}})
			assert.Equal(t, http.StatusOK, r.status, "%q: %s", auth, r.body)
			assert.Empty(t, r.header.Get("X-Dubsim-Auth-Error"))
		}
	})

	t.Run("account created at run time in a fixture company", func(t *testing.T) {
		t.Parallel()
		key := e.account(sim.AccountSpec{APIKey: "acme-new-hire", Name: "New hire", CompanyID: coAcme})
		l := e.ok2list(t, call{method: "GET", path: pathProjects, key: key})
		assert.Len(t, l, 3, "the Acme fixture projects")
	})

	t.Run("account in a new company sees nothing of the fixtures", func(t *testing.T) {
		t.Parallel()
		key := e.account(sim.AccountSpec{APIKey: "loner", Name: "Loner"})
		assert.Empty(t, e.ok2list(t, call{method: "GET", path: pathProjects, key: key}))
		assertError(t, e.send(t, call{method: "GET", path: pathProjects + "/" + prAcmeSummer, key: key}), http.StatusBadRequest, sim.MsgStudioDenied)
	})
}

func (e *env) ok2list(t testing.TB, c call) []map[string]any {
	t.Helper()
	r := e.send(t, c)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	return r.list(t)
}

// ----- artifacts -----

func fragments(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"url":"https://cdn.test/part%d.mp4","startTime":%d}`, i, i*10)
	}
	return "[" + strings.Join(items, ",") + "]"
}

func TestCreateArtifactRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	const s3Msg = "%s must be a storage path like s3://bucket/path/file.mp4 (GET /api/v1/artifacts/create returns one for a presigned upload); got %q"
	const urlMsg = "%s must be an absolute http or https URL; got %q"
	post := func(body string) call { return call{method: "POST", path: pathArtifacts, key: keyAcme, body: body} }
	v := func(rest string) call { return post(`{"name":"A","type":"video",` + rest + `}`) }
	frag := func(items string) call { return v(`"fragments":` + items) }
	cases := []errCase{
		{name: "name missing", call: post(`{"type":"video","url":"https://cdn.test/a.mp4"}`), msg: "name is required"},
		{name: "name null", call: post(`{"name":null,"type":"video","url":"https://cdn.test/a.mp4"}`), msg: "name is required"},
		{name: "name empty", call: post(`{"name":"","type":"video","url":"https://cdn.test/a.mp4"}`), msg: "name must not be empty"},
		{name: "name blank", call: post(`{"name":"  ","type":"video","url":"https://cdn.test/a.mp4"}`), msg: "name must not be empty"},
		{name: "name not a string", call: post(`{"name":5,"type":"video","url":"https://cdn.test/a.mp4"}`), msg: "name must be a string; got 5"},
		{name: "name too long", call: post(`{"name":"` + repeat("é", 501) + `","type":"video","url":"https://cdn.test/a.mp4"}`), msg: "name must be at most 500 characters; got 501"},
		{name: "url too long", call: v(`"url":"https://cdn.test/` + repeat("u", 8192) + `"`), msg: "url must be at most 8192 bytes; got 8209"},
		{name: "s3Path too long", call: v(`"s3Path":"s3://b/` + repeat("k", 8192) + `"`), msg: "s3Path must be at most 8192 bytes; got 8199"},
		{name: "fragment url too long", call: frag(`[{"url":"https://cdn.test/` + repeat("u", 8192) + `","startTime":0}]`), msg: "fragments[0].url must be at most 8192 bytes; got 8209"},
		{name: "type too long", call: post(`{"name":"A","type":"` + repeat("t", 65537) + `","url":"https://cdn.test/a.mp4"}`), msg: "type must be at most 65536 bytes; got 65537"},
		{name: "type missing", call: post(`{"name":"A","url":"https://cdn.test/a.mp4"}`), msg: "type is required"},
		{name: "type null", call: post(`{"name":"A","type":null,"url":"https://cdn.test/a.mp4"}`), msg: "type is required"},
		{name: "type not a string", call: post(`{"name":"A","type":["video"],"url":"https://cdn.test/a.mp4"}`), msg: `type must be a string; got ["video"]`},
		{name: "type unknown", call: post(`{"name":"A","type":"image","url":"https://cdn.test/a.mp4"}`), msg: `type must be one of video, audio, script; got "image"`},
		{name: "type empty", call: post(`{"name":"A","type":"","url":"https://cdn.test/a.mp4"}`), msg: `type must be one of video, audio, script; got ""`},
		{name: "type case", call: post(`{"name":"A","type":"Video","url":"https://cdn.test/a.mp4"}`), msg: `type must be one of video, audio, script; got "Video"`},
		{name: "type subtitles hint", call: post(`{"name":"A","type":"subtitles","url":"https://cdn.test/a.srt"}`), msg: `type must be one of video, audio, script; got "subtitles" (the older name of script)`},
		{name: "no source", call: v(`"remark":"x"`), msg: "Exactly one of s3Path, url or fragments is required"},
		{name: "null sources count as absent", call: v(`"url":null,"s3Path":null,"fragments":null`), msg: "Exactly one of s3Path, url or fragments is required"},
		{name: "no source with fileName hint", call: v(`"fileName":"video.mp4"`), msg: "Exactly one of s3Path, url or fragments is required; to upload a local file, get a presigned URL with GET /api/v1/artifacts/create?fileName=..., PUT the file to it, then create the artifact with its s3Path"},
		{name: "two sources", call: v(`"url":"https://cdn.test/a.mp4","s3Path":"s3://b/k.mp4"`), msg: "Exactly one of s3Path, url or fragments must be given; got s3Path and url"},
		{name: "url and fragments", call: v(`"url":"https://cdn.test/a.mp4","fragments":[]`), msg: "Exactly one of s3Path, url or fragments must be given; got url and fragments"},
		{name: "three sources", call: v(`"url":"https://cdn.test/a.mp4","s3Path":"s3://b/k.mp4","fragments":` + fragments(1)), msg: "Exactly one of s3Path, url or fragments must be given; got s3Path and url and fragments"},
		{name: "url not a string", call: v(`"url":5`), msg: "url must be a string; got 5"},
		{name: "url ftp", call: v(`"url":"ftp://cdn.test/a.mp4"`), msg: fmt.Sprintf(urlMsg, "url", "ftp://cdn.test/a.mp4")},
		{name: "url relative", call: v(`"url":"/media/a.mp4"`), msg: fmt.Sprintf(urlMsg, "url", "/media/a.mp4")},
		{name: "url without host", call: v(`"url":"https://"`), msg: fmt.Sprintf(urlMsg, "url", "https://")},
		{name: "url empty", call: v(`"url":""`), msg: fmt.Sprintf(urlMsg, "url", "")},
		{name: "url unparsable", call: v(`"url":"http://[::1"`), msg: fmt.Sprintf(urlMsg, "url", "http://[::1")},
		{name: "url s3 scheme", call: v(`"url":"s3://bucket/a.mp4"`), msg: fmt.Sprintf(urlMsg, "url", "s3://bucket/a.mp4")},
		{name: "s3Path not a string", call: v(`"s3Path":{}`), msg: "s3Path must be a string; got {}"},
		{name: "s3Path without scheme", call: v(`"s3Path":"my-bucket/a.mp4"`), msg: fmt.Sprintf(s3Msg, "s3Path", "my-bucket/a.mp4")},
		{name: "s3Path https", call: v(`"s3Path":"https://my-bucket.s3.amazonaws.com/a.mp4"`), msg: fmt.Sprintf(s3Msg, "s3Path", "https://my-bucket.s3.amazonaws.com/a.mp4")},
		{name: "s3Path bucket only", call: v(`"s3Path":"s3://my-bucket"`), msg: fmt.Sprintf(s3Msg, "s3Path", "s3://my-bucket")},
		{name: "s3Path bucket and slash", call: v(`"s3Path":"s3://my-bucket/"`), msg: fmt.Sprintf(s3Msg, "s3Path", "s3://my-bucket/")},
		{name: "s3Path no bucket", call: v(`"s3Path":"s3:///a.mp4"`), msg: fmt.Sprintf(s3Msg, "s3Path", "s3:///a.mp4")},
		{name: "s3Path folder", call: v(`"s3Path":"s3://my-bucket/dir/"`), msg: fmt.Sprintf(s3Msg, "s3Path", "s3://my-bucket/dir/")},
		{name: "s3Path empty", call: v(`"s3Path":""`), msg: fmt.Sprintf(s3Msg, "s3Path", "")},
		{name: "fragments for script", call: post(`{"name":"A","type":"script","fragments":` + fragments(1) + `}`), msg: "fragments are not supported for type script"},
		{name: "fragments not an array", call: frag(`"x"`), msg: `fragments must be an array of objects with url or s3Path and startTime; got "x"`},
		{name: "fragments object", call: frag(`{"url":"https://cdn.test/a.mp4","startTime":0}`), msg: `fragments must be an array of objects with url or s3Path and startTime; got {"url":"https://cdn.test/a.mp4","startTime":0}`},
		{name: "fragments of numbers", call: frag(`[1,2]`), msg: "fragments must be an array of objects with url or s3Path and startTime; got [1,2]"},
		{name: "fragments empty", call: frag(`[]`), msg: "fragments must have at least one fragment"},
		{name: "fragment null", call: frag(`[null]`), msg: "fragments[0] must be an object"},
		{name: "fragment with both", call: frag(`[{"url":"https://cdn.test/a.mp4","s3Path":"s3://b/a.mp4","startTime":0}]`), msg: "fragments[0] must have exactly one of url or s3Path; got both"},
		{name: "fragment with neither", call: frag(`[{"startTime":0}]`), msg: "fragments[0] must have url or s3Path"},
		{name: "fragment with null url", call: frag(`[{"url":null,"startTime":0}]`), msg: "fragments[0] must have url or s3Path"},
		{name: "second fragment with neither", call: frag(`[{"url":"https://cdn.test/a.mp4","startTime":0},{"startTime":5}]`), msg: "fragments[1] must have url or s3Path"},
		{name: "fragment url not a string", call: frag(`[{"url":1,"startTime":0}]`), msg: "fragments[0].url must be a string"},
		{name: "fragment url ftp", call: frag(`[{"url":"ftp://cdn.test/a.mp4","startTime":0}]`), msg: fmt.Sprintf(urlMsg, "fragments[0].url", "ftp://cdn.test/a.mp4")},
		{name: "fragment s3Path not a string", call: frag(`[{"s3Path":true,"startTime":0}]`), msg: "fragments[0].s3Path must be a string"},
		{name: "fragment s3Path bad", call: frag(`[{"s3Path":"bucket/a.mp4","startTime":0}]`), msg: fmt.Sprintf(s3Msg, "fragments[0].s3Path", "bucket/a.mp4")},
		{name: "fragment startTime missing", call: frag(`[{"url":"https://cdn.test/a.mp4"}]`), msg: "fragments[0].startTime is required"},
		{name: "fragment startTime null", call: frag(`[{"url":"https://cdn.test/a.mp4","startTime":null}]`), msg: "fragments[0].startTime is required"},
		{name: "fragment startTime string", call: frag(`[{"url":"https://cdn.test/a.mp4","startTime":"10"}]`), msg: `fragments[0].startTime must be a number of seconds; got "10"`},
		{name: "fragment startTime bool", call: frag(`[{"url":"https://cdn.test/a.mp4","startTime":true}]`), msg: `fragments[0].startTime must be a number of seconds; got true`},
		{name: "fragment startTime too large", call: frag(`[{"url":"https://cdn.test/a.mp4","startTime":1e400}]`), msg: `fragments[0].startTime must be a number of seconds; got 1e400`},
		{name: "fragment startTime negative", call: frag(`[{"url":"https://cdn.test/a.mp4","startTime":-1}]`), msg: "fragments[0].startTime must be at least 0; got -1"},
		{name: "fragment startTime negative fraction", call: frag(`[{"url":"https://cdn.test/a.mp4","startTime":0},{"s3Path":"s3://b/k.mp4","startTime":-0.25}]`), msg: "fragments[1].startTime must be at least 0; got -0.25"},
		{name: "too many fragments", call: frag(fragments(101)), msg: "fragments must have at most 100 fragments; got 101"},
	}
	for i := range cases {
		cases[i].status = http.StatusBadRequest
	}
	runErrors(t, e, cases)
}

func TestCreateArtifactAccepts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for _, tc := range []struct {
		name, body, method, path string
	}{
		{"url", `{"name":"A","type":"video","url":"https://cdn.test/media/a.mp4?sig=1#t"}`, "direct_url", "a.mp4"},
		{"url without a path", `{"name":"A","type":"audio","url":"http://cdn.test"}`, "direct_url", "source"},
		{"s3Path", `{"name":"A","type":"audio","s3Path":"s3://my-bucket/dir/voice.wav"}`, "direct_url", "voice.wav"},
		{"script from a url", `{"name":"A","type":"script","url":"https://cdn.test/script.txt"}`, "direct_url", "script.txt"},
		{"fragments", `{"name":"A","type":"video","fragments":` + fragments(100) + `}`, "fragments", "fragments"},
		{"fragments mixed", `{"name":"A","type":"audio","fragments":[{"url":"https://cdn.test/a.wav","startTime":0},{"s3Path":"s3://b/c.wav","startTime":12.5}]}`, "fragments", "fragments"},
		{"null sources ignored", `{"name":"A","type":"video","url":"https://cdn.test/a.mp4","s3Path":null,"fragments":null}`, "direct_url", "a.mp4"},
		{"name of 500 characters", `{"name":"` + repeat("é", 500) + `","type":"video","url":"https://cdn.test/a.mp4"}`, "direct_url", "a.mp4"},
		{"unknown fields ignored", `{"name":"A","type":"video","url":"https://cdn.test/a.mp4","description":"x","fileName":"a.mp4"}`, "direct_url", "a.mp4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.send(t, call{method: "POST", path: pathArtifacts, key: keyAcme, body: tc.body})
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			m := r.json(t)
			id := m["id"].(string)
			assert.True(t, sim.IsStudioID(id), id)
			assert.Equal(t, "created", m["status"])
			assert.Equal(t, tc.method, m["uploadMethod"])
			assert.Equal(t, "uploads/"+id+"/"+tc.path, m["s3Path"])
			assert.Equal(t, "dubsim-artifacts", m["s3Bucket"])
			assert.Nil(t, m["size"])
			assert.Nil(t, m["duration"])
			assert.Nil(t, m["errorMessage"])
		})
	}
}

func TestArtifactLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	r := e.do(call{method: "POST", path: pathArtifacts, key: keyAcme, body: `{"name":"Source video","type":"video","url":"https://media.dubsim.test/short.mp4"}`})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	golden(t, "artifact_create", r.body)
	id := r.json(t)["id"].(string)

	get := func() map[string]any { return e.ok(call{method: "GET", path: "/api/v1/artifacts/" + id, key: keyAcme}) }
	a := get()
	assert.Equal(t, "created", a["status"])
	assert.NotContains(t, a, "s3Bucket", "Get Artifact has no s3Bucket")
	assert.Equal(t, map[string]any{"id": coAcme}, a["company"], "Get Artifact's company has only the id")

	e.advance(2 * time.Second)
	a = get()
	assert.Equal(t, "upload_started", a["status"])
	assert.Equal(t, "2026-02-04T12:00:02.000Z", a["updatedAt"])
	assert.Nil(t, a["size"])

	e.advance(time.Minute)
	r = e.do(call{method: "GET", path: "/api/v1/artifacts/" + id, key: keyAcme})
	require.Equal(t, http.StatusOK, r.status)
	golden(t, "artifact_get_completed", r.body)
	a = r.json(t)
	assert.Equal(t, "upload_completed", a["status"])
	assert.Equal(t, 12.0, a["duration"], "the media rule's duration")
	assert.Equal(t, float64(12*2_500_000/8), a["size"])
	assert.Equal(t, "2026-02-04T12:00:00.000Z", a["createdAt"])

	t.Run("another user of the same company reads it", func(t *testing.T) {
		assert.Equal(t, id, e.ok(call{method: "GET", path: "/api/v1/artifacts/" + id, key: keyAcme2})["id"])
	})

	t.Run("failures are not HTTP errors", func(t *testing.T) {
		fail := e.artifact(keyAcme, `{"name":"F","type":"video","url":"https://media.dubsim.test/fail.mp4"}`)
		noCreds := e.artifact(keyAcme, `{"name":"B","type":"video","s3Path":"s3://acme-private/in/a.mp4"}`)
		missing := e.artifact(keyAcme, `{"name":"U","type":"video","s3Path":"s3://dubsim-artifacts/temp/5f0c2a9e-0000-4000-8000-000000000000/a.mp4"}`)
		e.advance(time.Minute)
		for id, msg := range map[string]string{
			fail:    "Processing failed: the audio track could not be decoded",
			noCreds: fmt.Sprintf(sim.MsgNoCredentials, "acme-private"),
			missing: fmt.Sprintf(sim.MsgUploadNotFound, "s3://dubsim-artifacts/temp/5f0c2a9e-0000-4000-8000-000000000000/a.mp4"),
		} {
			a := e.ok(call{method: "GET", path: "/api/v1/artifacts/" + id, key: keyAcme})
			assert.Equal(t, "upload_failed", a["status"], id)
			assert.Equal(t, msg, a["errorMessage"], id)
			assert.Nil(t, a["size"], id)
		}
	})

	t.Run("bucket credentials", func(t *testing.T) {
		key := e.account(sim.AccountSpec{APIKey: "acme-with-bucket", Name: "Bucket", CompanyID: coAcme,
			Storage: &sim.StorageCredentials{AccessKeyID: "AKIA", Buckets: []string{"acme-media"}}})
		covered := e.artifact(key, `{"name":"C","type":"audio","s3Path":"s3://acme-media/a.wav"}`)
		other := e.artifact(key, `{"name":"O","type":"audio","s3Path":"s3://elsewhere/a.wav"}`)
		e.advance(time.Minute)
		assert.Equal(t, "upload_completed", e.ok(call{method: "GET", path: "/api/v1/artifacts/" + covered, key: keyAcme})["status"])
		o := e.ok(call{method: "GET", path: "/api/v1/artifacts/" + other, key: key})
		assert.Equal(t, "upload_failed", o["status"])
		assert.Equal(t, fmt.Sprintf(sim.MsgBucketNotCovered, "elsewhere"), o["errorMessage"])
	})
}

func TestArtifactAccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	initech := e.artifact(keyInitech, `{"name":"I","type":"video","url":"https://cdn.test/i.mp4"}`)
	runErrors(t, e, []errCase{
		{name: "another company's artifact", call: call{method: "GET", path: "/api/v1/artifacts/" + initech, key: keyAcme}, status: http.StatusBadRequest, msg: sim.MsgArtifactDenied},
		{name: "unknown artifact", call: call{method: "GET", path: "/api/v1/artifacts/" + unknownID, key: keyAcme}, status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		{name: "id of another shape", call: call{method: "GET", path: "/api/v1/artifacts/nope", key: keyAcme}, status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		{name: "a project id is not an artifact", call: call{method: "GET", path: "/api/v1/artifacts/" + prAcmeSummer, key: keyAcme}, status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
	})
}

// ----- presigned uploads -----

func TestPresignRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	const extMsg = "fileName must have an extension, which determines the file type (e.g. video.mp4, audio.wav, script.txt); got %q"
	get := func(q string) call { return call{method: "GET", path: pathArtifacts + q, key: keyAcme} }
	cases := []errCase{
		{name: "no query", call: get(""), msg: "fileName query parameter is required: the real name of the file to upload, with its extension (e.g. video.mp4)"},
		{name: "other parameter", call: get("?name=video.mp4"), msg: "fileName query parameter is required: the real name of the file to upload, with its extension (e.g. video.mp4)"},
		{name: "empty", call: get("?fileName="), msg: "fileName must not be empty"},
		{name: "blank", call: get("?fileName=%20%20"), msg: "fileName must not be empty"},
		{name: "path", call: get("?fileName=dir%2Fvideo.mp4"), msg: `fileName must be a file name without a path; got "dir/video.mp4"`},
		{name: "windows path", call: get("?fileName=C:%5Cvideo.mp4"), msg: `fileName must be a file name without a path; got "C:\\video.mp4"`},
		{name: "dot dot", call: get("?fileName=.."), msg: `fileName must be a file name; got ".."`},
		{name: "no extension", call: get("?fileName=video"), msg: fmt.Sprintf(extMsg, "video")},
		{name: "only an extension", call: get("?fileName=.mp4"), msg: fmt.Sprintf(extMsg, ".mp4")},
		{name: "trailing dot", call: get("?fileName=video."), msg: fmt.Sprintf(extMsg, "video.")},
		{name: "control character", call: get("?fileName=a%01b.mp4"), msg: "fileName must not contain control characters"},
		{name: "too long", call: get("?fileName=" + repeat("a", 252) + ".mp4"), msg: "fileName must be at most 255 bytes; got 256"},
	}
	for i := range cases {
		cases[i].status = http.StatusBadRequest
	}
	runErrors(t, e, cases)
}

var uuidPattern = `[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`

func TestPresignAndUpload(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	base, err := url.Parse(e.url)
	require.NoError(t, err)

	m := e.ok(call{method: "GET", path: pathArtifacts + "?fileName=my-video.mp4", key: keyAcme})
	assert.Len(t, m, 3)
	s3 := m["s3Path"].(string)
	assert.Regexp(t, `^s3://dubsim-artifacts/temp/`+uuidPattern+`/my-video\.mp4$`, s3)
	assert.Equal(t, "2026-02-05T12:00:00.000Z", m["expiresAt"], "24 hours after the frozen clock")
	up, err := url.Parse(m["presignedUploadUrl"].(string))
	require.NoError(t, err)
	assert.Equal(t, base.Scheme, up.Scheme)
	assert.Equal(t, base.Host, up.Host, "on the test server's host")
	uploadID := strings.Split(strings.TrimPrefix(s3, "s3://dubsim-artifacts/temp/"), "/")[0]
	assert.Equal(t, "/_uploads/"+uploadID+"/my-video.mp4", up.Path)
	q := up.Query()
	assert.Equal(t, "AWS4-HMAC-SHA256", q.Get("X-Amz-Algorithm"))
	assert.Equal(t, "20260204T120000Z", q.Get("X-Amz-Date"))
	assert.Equal(t, "86400", q.Get("X-Amz-Expires"))
	assert.Equal(t, "host", q.Get("X-Amz-SignedHeaders"))
	assert.NotEmpty(t, q.Get("X-Amz-Signature"))

	second := e.ok(call{method: "GET", path: pathArtifacts + "?fileName=my-video.mp4", key: keyAcme})
	assert.NotEqual(t, s3, second["s3Path"], "each presign opens a new slot")

	put := func(rawURL, body string) (int, string) {
		req, err := http.NewRequest("PUT", rawURL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/octet-stream")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b := new(strings.Builder)
		_, _ = fmt.Fprint(b, resp.Header.Get("Content-Type"))
		return resp.StatusCode, b.String()
	}
	st, _ := put(up.String(), "not really a video")
	require.Equal(t, http.StatusOK, st)

	// A file that is not media: the artifact fails when processing ends.
	id := e.artifact(keyAcme, `{"name":"Upload","type":"video","s3Path":"`+s3+`"}`)
	e.advance(time.Minute)
	a := e.ok(call{method: "GET", path: "/api/v1/artifacts/" + id, key: keyAcme})
	assert.Equal(t, "upload_failed", a["status"])
	assert.Equal(t, "Unsupported media file my-video.mp4: not a recognised audio or video container (WAV, MP4/MOV, WebM/Matroska, MP3, FLAC) with a readable duration", a["errorMessage"])
	assert.Equal(t, "uploads/"+id+"/my-video.mp4", a["s3Path"])

	// A script is not inspected: it completes with its size and no duration.
	sm := e.ok(call{method: "GET", path: pathArtifacts + "?fileName=lines.txt", key: keyAcme})
	sURL := sm["presignedUploadUrl"].(string)
	st, _ = put(sURL, "Hello there.\n")
	require.Equal(t, http.StatusOK, st)
	sid := e.artifact(keyAcme, `{"name":"Script","type":"script","s3Path":"`+sm["s3Path"].(string)+`"}`)
	e.advance(time.Minute)
	sa := e.ok(call{method: "GET", path: "/api/v1/artifacts/" + sid, key: keyAcme})
	assert.Equal(t, "upload_completed", sa["status"])
	assert.Equal(t, float64(len("Hello there.\n")), sa["size"])
	assert.Nil(t, sa["duration"])

	t.Run("storage endpoint refusals are S3 XML", func(t *testing.T) {
		bad := *up
		bq := bad.Query()
		bq.Set("X-Amz-Signature", "0000")
		bad.RawQuery = bq.Encode()
		st, ct := put(bad.String(), "x")
		assert.Equal(t, http.StatusForbidden, st)
		assert.Equal(t, "application/xml", ct)

		wrongName := strings.Replace(up.String(), "/my-video.mp4?", "/other.mp4?", 1)
		st, _ = put(wrongName, "x")
		assert.Equal(t, http.StatusNotFound, st)

		st, _ = put(e.url+"/_uploads/"+unknownID+"/a.mp4", "x")
		assert.Equal(t, http.StatusNotFound, st)

		e.advance(24 * time.Hour)
		st, _ = put(sURL, "late")
		assert.Equal(t, http.StatusForbidden, st, "expired")
	})
}

func TestPresignFileNamesRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for _, name := range []string{"my video.mp4", "100%.wav", "a+b.mp4", "ça.mp4", "x?y#z.mp4", "a;b=c.txt"} {
		t.Run(name, func(t *testing.T) {
			m := e.ok(call{method: "GET", path: pathArtifacts + "?fileName=" + url.QueryEscape(name), key: keyAcme})
			s3 := m["s3Path"].(string)
			assert.True(t, strings.HasSuffix(s3, "/"+name), s3)
			req, err := http.NewRequest("PUT", m["presignedUploadUrl"].(string), strings.NewReader("bytes"))
			require.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode, "the presigned URL of %q must accept the upload", name)
		})
	}
}

// ----- studio projects -----

func TestListProjects(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withPublicURL)
	r := e.do(call{method: "GET", path: pathProjects, key: keyAcme})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	golden(t, "project_list_acme", r.body)
	l := r.list(t)
	var names []string
	for _, p := range l {
		names = append(names, p["name"].(string))
		assert.ElementsMatch(t, []string{"id", "name", "status", "translationGlossary", "voicesGlossary", "pronunciationGlossary",
			"remark", "clientName", "folderId", "projectUrl", "createdAt", "updatedAt"}, keys(p))
	}
	assert.Equal(t, []string{"Product Tutorials", "Summer Campaign 2025", "Webinar Replays"}, names, "newest first")

	assert.Equal(t, l, e.ok2list(t, call{method: "GET", path: pathProjects, key: keyAcme2}), "same company, same list")
	initech := e.ok2list(t, call{method: "GET", path: pathProjects, key: keyInitech})
	require.Len(t, initech, 1)
	assert.Equal(t, prInitech, initech[0]["id"])
	assert.Len(t, e.ok2list(t, call{method: "GET", path: pathProjects, key: keyGlobex}), 2)

	id := e.project(keyAcme2, `{"name":"Newest"}`)
	e.advance(time.Second)
	id2 := e.project(keyAcme, `{"name":"Newer still"}`)
	l = e.ok2list(t, call{method: "GET", path: pathProjects, key: keyAcme})
	require.Len(t, l, 5)
	assert.Equal(t, id2, l[0]["id"])
	assert.Equal(t, id, l[1]["id"])
	assert.Len(t, e.ok2list(t, call{method: "GET", path: pathProjects, key: keyInitech}), 1, "other companies unaffected")
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestCreateProjectRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	post := func(body string) call { return call{method: "POST", path: pathProjects, key: keyAcme, body: body} }
	n := func(rest string) call { return post(`{"name":"P",` + rest + `}`) }
	cases := []errCase{
		{name: "name missing", call: post(`{"managerEmail":"bob.martinez@acme-media.example"}`), msg: "name is required"},
		{name: "name null", call: post(`{"name":null,"managerEmail":"bob.martinez@acme-media.example"}`), msg: "name is required"},
		{name: "name empty", call: post(`{"name":"","managerEmail":"bob.martinez@acme-media.example"}`), msg: "name must not be empty"},
		{name: "name blank", call: post(`{"name":" \t","managerEmail":"bob.martinez@acme-media.example"}`), msg: "name must not be empty"},
		{name: "name not a string", call: post(`{"name":true,"managerEmail":"bob.martinez@acme-media.example"}`), msg: "name must be a string; got true"},
		{name: "name too long", call: post(`{"name":"` + repeat("x", 501) + `","managerEmail":"bob.martinez@acme-media.example"}`), msg: "name must be at most 500 characters; got 501"},
		{name: "name of 9 MB", call: post(`{"name":"` + repeat("x", 9<<20) + `"}`), msg: "name must be at most 500 characters; got 9437184"},
		{name: "managerEmail too long", call: n(`"managerEmail":"` + repeat("m", 251) + `@a.b"`), msg: "managerEmail must be at most 254 bytes; got 255"},
		{name: "managerEmail not a string", call: n(`"managerEmail":42`), msg: "managerEmail must be a string; got 42"},
		{name: "managerEmail not an email", call: n(`"managerEmail":"bob"`), msg: `managerEmail must be an email address; got "bob"`},
		{name: "managerEmail empty", call: n(`"managerEmail":""`), msg: `managerEmail must be an email address; got ""`},
		{name: "managerEmail unknown", call: n(`"managerEmail":"nobody@acme-media.example"`), msg: "managerEmail: no user with email nobody@acme-media.example"},
		{name: "managerEmail of another company", call: n(`"managerEmail":"grace.liu@globex-studios.example"`), msg: "managerEmail: grace.liu@globex-studios.example does not belong to your company; the manager must be a user of the same company as the API key's user"},
		{name: "translationsGlossaryId not a string", call: n(`"translationsGlossaryId":1`), msg: "translationsGlossaryId must be a string; got 1"},
		{name: "translationsGlossaryId unknown", call: n(`"translationsGlossaryId":"` + unknownID + `"`), msg: "translationsGlossaryId: glossary " + unknownID + " does not exist"},
		{name: "voicesGlossaryId unknown", call: n(`"voicesGlossaryId":"gloss_5f83a14b2ec1b"`), msg: "voicesGlossaryId: glossary gloss_5f83a14b2ec1b does not exist"},
		{name: "pronunciationGlossaryId unknown", call: n(`"pronunciationGlossaryId":"x"`), msg: "pronunciationGlossaryId: glossary x does not exist"},
		{name: "translationsGlossaryId of voices kind", call: n(`"translationsGlossaryId":"` + glAcmeVoices + `"`), msg: "translationsGlossaryId: glossary " + glAcmeVoices + " is a voices glossary; this field takes a translation glossary"},
		{name: "voicesGlossaryId of translation kind", call: n(`"voicesGlossaryId":"` + glAcmeTranslation + `"`), msg: "voicesGlossaryId: glossary " + glAcmeTranslation + " is a translation glossary; this field takes a voices glossary"},
		{name: "pronunciationGlossaryId of voices kind", call: n(`"pronunciationGlossaryId":"` + glAcmeVoices + `"`), msg: "pronunciationGlossaryId: glossary " + glAcmeVoices + " is a voices glossary; this field takes a pronunciation glossary"},
		{name: "translationsGlossaryId of another company", call: n(`"translationsGlossaryId":"` + glGlobexTranslation + `"`), msg: "translationsGlossaryId: glossary " + glGlobexTranslation + " does not belong to your organization"},
		{name: "voicesGlossaryId of another company", call: n(`"voicesGlossaryId":"` + glGlobexVoices + `"`), msg: "voicesGlossaryId: glossary " + glGlobexVoices + " does not belong to your organization"},
		{name: "translationGlossaryId misspelling", call: n(`"translationGlossaryId":"` + glAcmeTranslation + `"`), msg: "Unknown field translationGlossaryId; the request field is translationsGlossaryId (the response field is translationGlossary)"},
	}
	for i := range cases {
		cases[i].status = http.StatusBadRequest
	}
	runErrors(t, e, cases)
	assert.Len(t, e.ok2list(t, call{method: "GET", path: pathProjects, key: keyAcme}), 3, "no refused request created a project")
}

func TestCreateProject(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withPublicURL)
	r := e.do(call{method: "POST", path: pathProjects, key: keyAcme, body: `{"name":"Localization Q1","managerEmail":"carol.nguyen@acme-media.example",` +
		`"translationsGlossaryId":"` + glAcmeTranslation + `","voicesGlossaryId":"` + glAcmeVoices + `","pronunciationGlossaryId":"` + glAcmePronunciation + `"}`})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	golden(t, "project_create", r.body)
	p := r.json(t)
	id := p["id"].(string)
	assert.True(t, sim.IsStudioID(id), id)
	assert.Equal(t, publicURL+"/projects/"+id, p["projectUrl"])
	assert.Equal(t, p, e.ok(call{method: "GET", path: pathProjects + "/" + id, key: keyAcme2}), "Get Project returns the same object")

	for _, tc := range []struct{ name, body string }{
		{"name only", `{"name":"Bare"}`},
		{"both translation fields", `{"name":"Both","translationsGlossaryId":"` + glAcmeTranslation2 + `","translationGlossaryId":"ignored"}`},
		{"empty glossary ids", `{"name":"Empty","translationsGlossaryId":"","voicesGlossaryId":""}`},
		{"null fields", `{"name":"Nulls","managerEmail":null,"voicesGlossaryId":null}`},
		{"unknown fields ignored", `{"name":"Extra","color":"red","folderId":"x"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := e.ok(call{method: "POST", path: pathProjects, key: keyAcme, body: tc.body})
			assert.Equal(t, "new", p["status"])
			assert.Equal(t, p["createdAt"], p["updatedAt"])
			assert.Nil(t, p["remark"])
			assert.Nil(t, p["clientName"])
			assert.Nil(t, p["folderId"])
			assert.Nil(t, p["voicesGlossary"])
		})
	}
}

func TestProjectAccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	runErrors(t, e, []errCase{
		{name: "get another company's project", call: call{method: "GET", path: pathProjects + "/" + prGlobexNight, key: keyAcme}, status: http.StatusBadRequest, msg: sim.MsgStudioDenied},
		{name: "patch another company's project", call: call{method: "PATCH", path: pathProjects + "/" + prGlobexNight, key: keyAcme, body: `{"name":"Mine"}`}, status: http.StatusBadRequest, msg: sim.MsgStudioDenied},
		{name: "patch another company's project with a bad body", call: call{method: "PATCH", path: pathProjects + "/" + prGlobexNight, key: keyAcme, body: `[`}, status: http.StatusBadRequest, msg: sim.MsgStudioDenied},
		{name: "get unknown project", call: call{method: "GET", path: pathProjects + "/" + unknownID, key: keyAcme}, status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		{name: "patch unknown project", call: call{method: "PATCH", path: pathProjects + "/" + unknownID, key: keyAcme, body: `{"name":"x"}`}, status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		{name: "patch unknown project with no field", call: call{method: "PATCH", path: pathProjects + "/" + unknownID, key: keyAcme, body: `{}`}, status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		{name: "get platform-shaped id", call: call{method: "GET", path: pathProjects + "/123456789", key: keyAcme}, status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
	})
	assert.Equal(t, "The Long Night - Season 1", e.ok(call{method: "GET", path: pathProjects + "/" + prGlobexNight, key: keyGlobex})["name"], "not renamed")
}

func TestUpdateProjectRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	patch := func(body string) call {
		return call{method: "PATCH", path: pathProjects + "/" + prAcmeSummer, key: keyAcme, body: body}
	}
	cases := []errCase{
		{name: "empty object", call: patch(`{}`), msg: sim.MsgNoValidFields},
		{name: "only unknown fields", call: patch(`{"status":"done","remark":"x"}`), msg: sim.MsgNoValidFields},
		{name: "only nulls", call: patch(`{"name":null,"managerEmail":null,"voicesGlossaryId":null}`), msg: sim.MsgNoValidFields},
		{name: "name empty", call: patch(`{"name":""}`), msg: "name must not be empty"},
		{name: "name not a string", call: patch(`{"name":{}}`), msg: "name must be a string; got {}"},
		{name: "name too long", call: patch(`{"name":"` + repeat("x", 501) + `"}`), msg: "name must be at most 500 characters; got 501"},
		{name: "managerEmail not an email", call: patch(`{"managerEmail":"carol"}`), msg: `managerEmail must be an email address; got "carol"`},
		{name: "managerEmail unknown", call: patch(`{"managerEmail":"zed@acme-media.example"}`), msg: "managerEmail: no user with email zed@acme-media.example"},
		{name: "managerEmail of another company", call: patch(`{"managerEmail":"priya.raman@initech-learning.example"}`), msg: "managerEmail: priya.raman@initech-learning.example does not belong to your company; the manager must be a user of the same company as the API key's user"},
		{name: "glossary of another company", call: patch(`{"voicesGlossaryId":"` + glGlobexVoices + `"}`), msg: "voicesGlossaryId: glossary " + glGlobexVoices + " does not belong to your organization"},
		{name: "glossary of the wrong kind", call: patch(`{"translationsGlossaryId":"` + glAcmePronunciation + `"}`), msg: "translationsGlossaryId: glossary " + glAcmePronunciation + " is a pronunciation glossary; this field takes a translation glossary"},
		{name: "glossary unknown", call: patch(`{"pronunciationGlossaryId":"` + unknownID + `"}`), msg: "pronunciationGlossaryId: glossary " + unknownID + " does not exist"},
		{name: "translationGlossaryId misspelling", call: patch(`{"translationGlossaryId":""}`), msg: "Unknown field translationGlossaryId; the request field is translationsGlossaryId (the response field is translationGlossary)"},
		{name: "valid field then invalid one", call: patch(`{"name":"Renamed","voicesGlossaryId":"` + unknownID + `"}`), msg: "voicesGlossaryId: glossary " + unknownID + " does not exist"},
	}
	for i := range cases {
		cases[i].status = http.StatusBadRequest
	}
	runErrors(t, e, cases)
	assert.Equal(t, "Summer Campaign 2025", e.ok(call{method: "GET", path: pathProjects + "/" + prAcmeSummer, key: keyAcme})["name"], "a refused update changes nothing")
}

func TestUpdateProject(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	path := pathProjects + "/" + prAcmeSummer
	before := e.ok(call{method: "GET", path: path, key: keyAcme})
	assert.Equal(t, glAcmeVoices, before["voicesGlossary"])

	e.advance(90 * time.Second)
	p := e.ok(call{method: "PATCH", path: path, key: keyAcme2, body: `{"voicesGlossaryId":""}`})
	assert.Nil(t, p["voicesGlossary"], "an empty string removes the glossary")
	assert.Equal(t, glAcmeTranslation, p["translationGlossary"], "other glossaries unchanged")
	assert.Equal(t, glAcmePronunciation, p["pronunciationGlossary"])
	assert.Equal(t, before["name"], p["name"])
	assert.Equal(t, before["createdAt"], p["createdAt"])
	assert.Equal(t, "2026-02-04T12:01:30.000Z", p["updatedAt"])
	assert.Equal(t, p, e.ok(call{method: "GET", path: path, key: keyAcme}), "stored")

	e.advance(time.Hour)
	p = e.ok(call{method: "PATCH", path: path, key: keyAcme, body: `{"name":"Summer Campaign 2025 (final)","managerEmail":"dan.okafor@acme-media.example",` +
		`"translationsGlossaryId":"` + glAcmeTranslation2 + `","voicesGlossaryId":"` + glAcmeVoices + `","pronunciationGlossaryId":""}`})
	assert.Equal(t, "Summer Campaign 2025 (final)", p["name"])
	assert.Equal(t, glAcmeTranslation2, p["translationGlossary"])
	assert.Equal(t, glAcmeVoices, p["voicesGlossary"])
	assert.Nil(t, p["pronunciationGlossary"])
	assert.Equal(t, "2026-02-04T13:01:30.000Z", p["updatedAt"])
	assert.Equal(t, before["remark"], p["remark"], "fields the request cannot change stay")
	assert.Equal(t, before["clientName"], p["clientName"])
	assert.Equal(t, before["folderId"], p["folderId"])

	t.Run("unknown fields beside a valid one are ignored", func(t *testing.T) {
		p := e.ok(call{method: "PATCH", path: path, key: keyAcme, body: `{"name":"X","remark":"ignored"}`})
		assert.Equal(t, "X", p["name"])
		assert.Equal(t, before["remark"], p["remark"])
	})
}

// ----- videos -----

func TestCreateVideoRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ready := e.readyArtifact(keyAcme, "video")
	script := e.readyArtifact(keyAcme, "script")
	pending := e.artifact(keyAcme, `{"name":"P","type":"video","url":"https://cdn.test/p.mp4"}`)
	failed := e.artifact(keyAcme, `{"name":"F","type":"video","url":"https://cdn.test/f.mp4"}`)
	_, err := e.srv.Engine.Outcomes.ForceArtifact(context.Background(), failed, sim.ForceError, "Codec not supported", nil, nil, true)
	require.NoError(t, err)
	initech := e.readyArtifact(keyInitech, "video")

	post := func(pid, body string) call {
		return call{method: "POST", path: "/api/v1/projects/" + pid + "/videos/create", key: keyAcme, body: body}
	}
	// with builds a valid body with one field replaced (or removed with "-").
	with := func(field, value string) call {
		f := map[string]string{"name": `"Clip"`, "workflowType": `"dubbing"`, "sourceArtifactId": `"` + ready + `"`,
			"sourceLanguage": `"en"`, "targetLanguages": `["es-ES","fr-FR"]`}
		order := []string{"name", "workflowType", "sourceArtifactId", "sourceLanguage", "targetLanguages"}
		if _, ok := f[field]; !ok {
			order = append(order, field)
		}
		f[field] = value
		var parts []string
		for _, k := range order {
			if f[k] != "-" {
				parts = append(parts, `"`+k+`":`+f[k])
			}
		}
		return post(prAcmeSummer, "{"+strings.Join(parts, ",")+"}")
	}
	const wfMsg = "workflowType must be one of dubbing, voiceover, audio_description, transcription, translation, subtitling; got %q"
	const srcMsg = "sourceLanguage must be an ISO 639-1 code like en, or multi; got %q"
	const usable = "; an artifact is usable only when its status is upload_completed"
	cases := []errCase{
		{name: "name missing", call: with("name", "-"), msg: "name is required"},
		{name: "name empty", call: with("name", `""`), msg: "name must not be empty"},
		{name: "name not a string", call: with("name", `1`), msg: "name must be a string; got 1"},
		{name: "name too long", call: with("name", `"`+repeat("v", 501)+`"`), msg: "name must be at most 500 characters; got 501"},
		{name: "workflowType missing", call: with("workflowType", "-"), msg: "workflowType is required"},
		{name: "workflowType null", call: with("workflowType", "null"), msg: "workflowType is required"},
		{name: "processingType instead of workflowType", call: post(prAcmeSummer, `{"name":"Clip","processingType":"dubbing","sourceArtifactId":"`+ready+`","sourceLanguage":"en","targetLanguages":["es-ES"]}`), msg: "workflowType is required (video creation names the processing type workflowType)"},
		{name: "workflowType not a string", call: with("workflowType", `["dubbing"]`), msg: `workflowType must be a string; got ["dubbing"]`},
		{name: "workflowType standard", call: with("workflowType", `"standard"`), msg: fmt.Sprintf(wfMsg, "standard")},
		{name: "workflowType unknown", call: with("workflowType", `"karaoke"`), msg: fmt.Sprintf(wfMsg, "karaoke")},
		{name: "workflowType empty", call: with("workflowType", `""`), msg: fmt.Sprintf(wfMsg, "")},
		{name: "sourceArtifactId missing", call: with("sourceArtifactId", "-"), msg: "sourceArtifactId is required"},
		{name: "originalVideoArtifactId hint", call: post(prAcmeSummer, `{"name":"Clip","workflowType":"dubbing","originalVideoArtifactId":"`+ready+`","sourceLanguage":"en","targetLanguages":["es-ES"]}`), msg: "sourceArtifactId is required (originalVideoArtifactId is its older name)"},
		{name: "sourceArtifactId empty", call: with("sourceArtifactId", `""`), msg: "sourceArtifactId must not be empty"},
		{name: "sourceArtifactId not a string", call: with("sourceArtifactId", `123`), msg: "sourceArtifactId must be a string; got 123"},
		{name: "sourceLanguage missing", call: with("sourceLanguage", "-"), msg: "sourceLanguage is required"},
		{name: "sourceLanguage empty", call: with("sourceLanguage", `""`), msg: "sourceLanguage must not be empty"},
		{name: "sourceLanguage with region", call: with("sourceLanguage", `"en-US"`), msg: fmt.Sprintf(srcMsg, "en-US")},
		{name: "sourceLanguage upper case", call: with("sourceLanguage", `"EN"`), msg: fmt.Sprintf(srcMsg, "EN")},
		{name: "sourceLanguage three letters", call: with("sourceLanguage", `"eng"`), msg: fmt.Sprintf(srcMsg, "eng")},
		{name: "sourceLanguage Multi", call: with("sourceLanguage", `"Multi"`), msg: fmt.Sprintf(srcMsg, "Multi")},
		{name: "sourceLanguage multi not enabled", call: with("sourceLanguage", `"multi"`), msg: "sourceLanguage: multi is not enabled for your organization; an administrator enables it through your account manager"},
		{name: "sourceLanguage not offered", call: with("sourceLanguage", `"xx"`), msg: `sourceLanguage "xx" is not a supported source language (the source_langs of the platform's GET /api/v1/options, or multi)`},
		{name: "targetLanguages not offered", call: with("targetLanguages", `["es-ES","qq-QQ"]`), msg: `targetLanguages[1] "qq-QQ" is not a supported target language (the target_langs of the platform's GET /api/v1/options)`},
		{name: "targetLanguages region not offered", call: with("targetLanguages", `["fr-US"]`), msg: `targetLanguages[0] "fr-US" is not a supported target language (the target_langs of the platform's GET /api/v1/options)`},
		{name: "targetLanguages missing", call: with("targetLanguages", "-"), msg: "targetLanguages is required"},
		{name: "targetLanguages null", call: with("targetLanguages", "null"), msg: "targetLanguages is required"},
		{name: "targetLanguages a string", call: with("targetLanguages", `"es-ES"`), msg: `targetLanguages must be an array of strings; got "es-ES"`},
		{name: "targetLanguages empty", call: with("targetLanguages", `[]`), msg: "targetLanguages must name at least one language"},
		{name: "targetLanguages of numbers", call: with("targetLanguages", `["es-ES",7]`), msg: "targetLanguages[1] must be a string; got 7"},
		{name: "targetLanguages without region", call: with("targetLanguages", `["es"]`), msg: `targetLanguages[0] must be a language code like es-ES; got "es"`},
		{name: "targetLanguages lower-case region", call: with("targetLanguages", `["es-ES","fr-fr"]`), msg: `targetLanguages[1] must be a language code like es-ES; got "fr-fr"`},
		{name: "targetLanguages duplicate", call: with("targetLanguages", `["es-ES","fr-FR","es-ES"]`), msg: "targetLanguages[2]: es-ES is listed twice"},
		{name: "targetLanguages too many", call: with("targetLanguages", langList(101)), msg: "targetLanguages must name at most 100 languages; got 101"},
		{name: "source artifact unknown", call: with("sourceArtifactId", `"`+unknownID+`"`), msg: "sourceArtifactId: artifact " + unknownID + " does not exist"},
		{name: "source artifact of another company", call: with("sourceArtifactId", `"`+initech+`"`), msg: "sourceArtifactId: artifact " + initech + " does not belong to your company"},
		{name: "source artifact not processed yet", call: with("sourceArtifactId", `"`+pending+`"`), msg: "sourceArtifactId: artifact " + pending + " has status created" + usable},
		{name: "source artifact failed", call: with("sourceArtifactId", `"`+failed+`"`), msg: "sourceArtifactId: artifact " + failed + " has status upload_failed: Codec not supported" + usable},
		{name: "source artifact is a script", call: with("sourceArtifactId", `"`+script+`"`), msg: "sourceArtifactId: artifact " + script + " is of type script; this field takes an artifact of type video or audio"},
		{name: "background is a video", call: with("backgroundWavArtifactId", `"`+ready+`"`), msg: "backgroundWavArtifactId: artifact " + ready + " is of type video; this field takes an artifact of type audio"},
		{name: "international mix unknown", call: with("internationalMixWavArtifactId", `"`+unknownID+`"`), msg: "internationalMixWavArtifactId: artifact " + unknownID + " does not exist"},
		{name: "vocals not a string", call: with("vocalsHitlWavArtifactId", `5`), msg: "vocalsHitlWavArtifactId must be a string; got 5"},
		{name: "remark not a string", call: with("remark", `["x"]`), msg: `remark must be a string; got ["x"]`},
		{name: "stringVariables not an array", call: with("stringVariables", `{"key":"a","value":"b"}`), msg: `stringVariables must be an array of {key, value} objects; got {"key":"a","value":"b"}`},
		{name: "stringVariables item not an object", call: with("stringVariables", `["a"]`), msg: `stringVariables[0] must be an object with string fields key and value; got "a"`},
		{name: "stringVariables item null", call: with("stringVariables", `[null]`), msg: `stringVariables[0] must be an object with string fields key and value; got null`},
		{name: "stringVariables key empty", call: with("stringVariables", `[{"key":"a","value":"b"},{"key":"","value":"v"}]`), msg: "stringVariables[1].key must be a non-empty string"},
		{name: "stringVariables key missing", call: with("stringVariables", `[{"value":"v"}]`), msg: "stringVariables[0].key must be a non-empty string"},
		{name: "stringVariables value missing", call: with("stringVariables", `[{"key":"k"}]`), msg: "stringVariables[0].value must be a string"},
		{name: "stringVariables value a number", call: with("stringVariables", `[{"key":"k","value":1}]`), msg: "stringVariables[0].value must be a string"},
		{name: "stringVariables too many", call: with("stringVariables", varList(101)), msg: "stringVariables must have at most 100 entries; got 101"},
		{name: "pipelineOptions not an object", call: with("pipelineOptions", `"auto"`), msg: `pipelineOptions must be an object; got "auto"`},
		{name: "pipelineOptions flag not a boolean", call: with("pipelineOptions", `{"shouldAutomateTranslation":"yes"}`), msg: "pipelineOptions.shouldAutomateTranslation must be a boolean"},
	}
	for i := range cases {
		cases[i].status = http.StatusBadRequest
	}
	valid := with("remark", `"x"`).body
	cases = append(cases,
		errCase{name: "unknown project", call: post(unknownID, valid), status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		errCase{name: "another company's project", call: post(prInitech, valid), status: http.StatusBadRequest, msg: sim.MsgStudioDenied},
		errCase{name: "another company's project with a bad body", call: post(prInitech, `{}`), status: http.StatusBadRequest, msg: sim.MsgStudioDenied},
	)
	runErrors(t, e, cases)
	assert.Len(t, e.ok2list(t, call{method: "GET", path: videosPath(prAcmeSummer), key: keyAcme}), 3, "no refused request created a video")
}

func langList(n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(`"%c%c-%c%c"`, 'a'+i/26%26, 'a'+i%26, 'A'+i/26%26, 'A'+i%26)
	}
	return "[" + strings.Join(out, ",") + "]"
}

func varList(n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(`{"key":"k%d","value":"v"}`, i)
	}
	return "[" + strings.Join(out, ",") + "]"
}

func TestCreateVideo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withPublicURL)
	src := e.readyArtifact(keyAcme, "video")
	bg := e.readyArtifact(keyAcme, "audio")
	body := `{"name":"New Marketing Video","workflowType":"dubbing","sourceArtifactId":"` + src + `","sourceLanguage":"en","targetLanguages":["es-ES","fr-FR"],` +
		`"backgroundWavArtifactId":"` + bg + `","internationalMixWavArtifactId":"` + bg + `","vocalsHitlWavArtifactId":"` + bg + `",` +
		`"pipelineOptions":{"shouldAutomateTranscription":true,"shouldAutomateTranslation":true,"shouldAutomateVoiceSelection":false},` +
		`"remark":"Optional comment","stringVariables":[{"key":"storyTitleId","value":"12345"},{"key":"storyDeeplink","value":"https://cms.test/?titleId=12345&view=7"}]}`
	r := e.do(call{method: "POST", path: "/api/v1/projects/" + prAcmeSummer + "/videos/create", key: keyAcme, body: body})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	golden(t, "video_create", r.body)
	v := r.json(t)
	id := v["id"].(string)
	assert.Equal(t, "dubbing", v["workflowType"])
	assert.NotContains(t, v, "processingType", "creation names it workflowType")
	assert.Equal(t, 12.0, v["videoDuration"], "from the source artifact")
	assert.Equal(t, publicURL+videoPath(prAcmeSummer, id), v["videoUrl"])

	r = e.do(call{method: "GET", path: videoPath(prAcmeSummer, id), key: keyAcme2})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	golden(t, "video_get", r.body)
	g := r.json(t)
	assert.Equal(t, "dubbing", g["processingType"])
	assert.NotContains(t, g, "workflowType")
	assert.NotContains(t, g, "translationGuidance", "Get Video has no guidance")

	l := e.ok2list(t, call{method: "GET", path: videosPath(prAcmeSummer), key: keyAcme})
	require.Len(t, l, 4)
	assert.Equal(t, g, l[3], "oldest first; the list entry is the Get shape")

	t.Run("lifecycle", func(t *testing.T) {
		e.advance(time.Minute)
		assert.Equal(t, "in_progress", e.ok(call{method: "GET", path: videoPath(prAcmeSummer, id), key: keyAcme})["status"])
		e.advance(10 * time.Minute)
		assert.Equal(t, "in_progress", e.ok(call{method: "GET", path: videoPath(prAcmeSummer, id), key: keyAcme})["status"])
		e.advance(12 * time.Second)
		done := e.ok(call{method: "GET", path: videoPath(prAcmeSummer, id), key: keyAcme})
		assert.Equal(t, "completed", done["status"])
		assert.Equal(t, "2026-02-04T12:11:12.000Z", done["updatedAt"], "10 min + 1 min per minute of video after starting")
	})

	t.Run("audio source, minimal body", func(t *testing.T) {
		v := e.ok(call{method: "POST", path: "/api/v1/projects/" + prAcmeTutorials + "/videos/create", key: keyAcme,
			body: `{"name":"Audio","workflowType":"subtitling","sourceArtifactId":"` + bg + `","sourceLanguage":"de","targetLanguages":["en-US"]}`})
		assert.Equal(t, "subtitling", v["workflowType"])
		assert.Nil(t, v["remark"])
		assert.Nil(t, v["stringVariables"])
	})

	t.Run("multi for a company that has it", func(t *testing.T) {
		gsrc := e.readyArtifact(keyGlobex, "video")
		v := e.ok(call{method: "POST", path: "/api/v1/projects/" + prGlobexNight + "/videos/create", key: keyGlobex,
			body: `{"name":"Episode 3","workflowType":"dubbing","sourceArtifactId":"` + gsrc + `","sourceLanguage":"multi","targetLanguages":["ja-JP"]}`})
		assert.Equal(t, "multi", v["srcLang"])
	})

	t.Run("artifact whose processing ended by now is usable", func(t *testing.T) {
		a := e.artifact(keyAcme, `{"name":"Late","type":"video","url":"https://media.dubsim.test/short.mp4"}`)
		// Only the simulated clock moves; no read applies the transition
		// before the video creation does.
		e.advanceClockOnly(time.Minute)
		v := e.ok(call{method: "POST", path: "/api/v1/projects/" + prAcmeSummer + "/videos/create", key: keyAcme,
			body: `{"name":"Late","workflowType":"dubbing","sourceArtifactId":"` + a + `","sourceLanguage":"en","targetLanguages":["es-ES"]}`})
		assert.Equal(t, 12.0, v["videoDuration"])
	})
}

func TestReadVideoRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	get := func(path string) call { return call{method: "GET", path: path, key: keyAcme} }
	runErrors(t, e, []errCase{
		{name: "list of unknown project", call: get(videosPath(unknownID)), status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		{name: "get in unknown project", call: get(videoPath(unknownID, viSummerHero)), status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		{name: "unknown video", call: get(videoPath(prAcmeSummer, unknownID)), status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		{name: "video of another project", call: get(videoPath(prAcmeTutorials, viSummerHero)), status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		{name: "list of another company's project", call: get(videosPath(prGlobexNight)), status: http.StatusBadRequest, msg: sim.MsgStudioDenied},
		{name: "get in another company's project", call: get(videoPath(prGlobexNight, viGlobexEp1)), status: http.StatusBadRequest, msg: sim.MsgStudioDenied},
		{name: "another company's video through an own project", call: get(videoPath(prAcmeSummer, viGlobexEp1)), status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
	})
	l := e.ok2list(t, call{method: "GET", path: videosPath(prAcmeSummer), key: keyAcme})
	require.Len(t, l, 3)
	for _, v := range l {
		assert.ElementsMatch(t, []string{"id", "name", "status", "processingType", "srcLang", "dstLangs", "videoUrl", "videoDuration",
			"remark", "stringVariables", "createdAt", "updatedAt"}, keys(v))
	}
	assert.Equal(t, viSummerHero, l[0]["id"], "oldest first")
}

func TestUpdateVideoRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	patch := func(body string) call {
		return call{method: "PATCH", path: updateVideoPath(prAcmeSummer, viSummerSocial), key: keyAcme, body: body}
	}
	const ptMsg = "processingType must be one of dubbing, voiceover, audio_description, transcription, translation, subtitling, standard; got %q"
	cases := []errCase{
		{name: "empty object", call: patch(`{}`), msg: sim.MsgNoValidFields},
		{name: "only unknown fields", call: patch(`{"workflowType":"dubbing","srcLang":"fr"}`), msg: sim.MsgNoValidFields},
		{name: "nulls of scalar fields", call: patch(`{"name":null,"status":null,"processingType":null,"dstLangs":null}`), msg: sim.MsgNoValidFields},
		{name: "name empty", call: patch(`{"name":""}`), msg: "name must not be empty"},
		{name: "name too long", call: patch(`{"name":"` + repeat("n", 501) + `"}`), msg: "name must be at most 500 characters; got 501"},
		{name: "remark too long", call: patch(`{"remark":"` + repeat("r", 65537) + `"}`), msg: "remark must be at most 65536 bytes; got 65537"},
		{name: "guidance too long", call: patch(`{"translationGuidance":{"common":"` + repeat("g", 65537) + `"}}`), msg: "translationGuidance.common must be at most 65536 bytes; got 65537"},
		{name: "guidance byLang too long", call: patch(`{"translationGuidance":{"byLang":{"es":"` + repeat("g", 65537) + `"}}}`), msg: "translationGuidance.byLang.es must be at most 65536 bytes; got 65537"},
		{name: "stringVariables value too long", call: patch(`{"stringVariables":[{"key":"k","value":"` + repeat("s", 65537) + `"}]}`), msg: "stringVariables[0].value must be at most 65536 bytes; got 65537"},
		{name: "dstLangs a string", call: patch(`{"dstLangs":"en"}`), msg: `dstLangs must be an array of strings; got "en"`},
		{name: "dstLangs empty", call: patch(`{"dstLangs":[]}`), msg: "dstLangs must name at least one language"},
		{name: "dstLangs bad code", call: patch(`{"dstLangs":["en","EN"]}`), msg: `dstLangs[1] must be a language code like es-ES or es; got "EN"`},
		{name: "dstLangs underscore", call: patch(`{"dstLangs":["es_ES"]}`), msg: `dstLangs[0] must be a language code like es-ES or es; got "es_ES"`},
		{name: "dstLangs duplicate", call: patch(`{"dstLangs":["fr","fr"]}`), msg: "dstLangs[1]: fr is listed twice"},
		{name: "dstLangs language not offered", call: patch(`{"dstLangs":["fr","qq"]}`), msg: `dstLangs[1] "qq" is not a supported target language (the target_langs of the platform's GET /api/v1/options)`},
		{name: "dstLangs code not offered", call: patch(`{"dstLangs":["qq-QQ"]}`), msg: `dstLangs[0] "qq-QQ" is not a supported target language (the target_langs of the platform's GET /api/v1/options)`},
		{name: "processingType unknown", call: patch(`{"processingType":"karaoke"}`), msg: fmt.Sprintf(ptMsg, "karaoke")},
		{name: "processingType empty", call: patch(`{"processingType":""}`), msg: "processingType must not be empty"},
		{name: "processingType not a string", call: patch(`{"processingType":1}`), msg: "processingType must be a string; got 1"},
		{name: "status unknown", call: patch(`{"status":"done"}`), msg: `status must be one of new, in_progress, completed; got "done"`},
		{name: "status empty", call: patch(`{"status":""}`), msg: "status must not be empty"},
		{name: "remark not a string", call: patch(`{"remark":false}`), msg: "remark must be a string; got false"},
		{name: "stringVariables not an array", call: patch(`{"stringVariables":"x"}`), msg: `stringVariables must be an array of {key, value} objects; got "x"`},
		{name: "stringVariables key empty", call: patch(`{"stringVariables":[{"key":"","value":"v"}]}`), msg: "stringVariables[0].key must be a non-empty string"},
		{name: "translationGuidance a string", call: patch(`{"translationGuidance":"formal"}`), msg: `translationGuidance must be an object {common, byLang}; got "formal"`},
		{name: "translationGuidance empty", call: patch(`{"translationGuidance":{}}`), msg: "translationGuidance must have common or byLang (send null to remove the guidance)"},
		{name: "translationGuidance common not a string", call: patch(`{"translationGuidance":{"common":5}}`), msg: "translationGuidance.common must be a string"},
		{name: "translationGuidance byLang not an object", call: patch(`{"translationGuidance":{"byLang":["es-ES"]}}`), msg: `translationGuidance.byLang must be an object of strings keyed by target language; got ["es-ES"]`},
		{name: "translationGuidance byLang value not a string", call: patch(`{"translationGuidance":{"byLang":{"es-ES":1}}}`), msg: "translationGuidance.byLang.es-ES must be a string"},
		{name: "translationGuidance byLang value null", call: patch(`{"translationGuidance":{"byLang":{"es-ES":null}}}`), msg: "translationGuidance.byLang.es-ES must be a string"},
		{name: "byLang key not a stored target", call: patch(`{"translationGuidance":{"byLang":{"es-ES":"tu","ja-JP":"x"}}}`), msg: "translationGuidance.byLang: ja-JP is not a target language of the video (es-ES, fr-FR, de-DE)"},
		{name: "byLang key not a target sent in the same request", call: patch(`{"dstLangs":["ja-JP"],"translationGuidance":{"byLang":{"es-ES":"tu"}}}`), msg: "translationGuidance.byLang: es-ES is not a target language of the video (ja-JP)"},
		{name: "translationGuidance with an empty byLang", call: patch(`{"translationGuidance":{"byLang":{}}}`), msg: "translationGuidance must have common or byLang (send null to remove the guidance)"},
		{name: "byLang key without region", call: patch(`{"translationGuidance":{"byLang":{"es":"tu"}}}`), msg: "translationGuidance.byLang: es is not a target language of the video (es-ES, fr-FR, de-DE)"},
	}
	for i := range cases {
		cases[i].status = http.StatusBadRequest
	}
	cases = append(cases,
		errCase{name: "unknown video", call: call{method: "PATCH", path: updateVideoPath(prAcmeSummer, unknownID), key: keyAcme, body: `{"name":"x"}`}, status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		errCase{name: "unknown project", call: call{method: "PATCH", path: updateVideoPath(unknownID, viSummerSocial), key: keyAcme, body: `{"name":"x"}`}, status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		errCase{name: "video of another project", call: call{method: "PATCH", path: updateVideoPath(prAcmeTutorials, viSummerSocial), key: keyAcme, body: `{"name":"x"}`}, status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		errCase{name: "unknown video with no field", call: call{method: "PATCH", path: updateVideoPath(prAcmeSummer, unknownID), key: keyAcme, body: `{}`}, status: http.StatusNotFound, msg: sim.MsgStudioNotFound},
		errCase{name: "another company's video", call: call{method: "PATCH", path: updateVideoPath(prGlobexNight, viGlobexEp1), key: keyAcme, body: `{"name":"x"}`}, status: http.StatusBadRequest, msg: sim.MsgStudioDenied},
	)
	runErrors(t, e, cases)
	v := e.ok(call{method: "GET", path: videoPath(prAcmeSummer, viSummerSocial), key: keyAcme})
	assert.Equal(t, "Social cutdown 15s", v["name"], "a refused update changes nothing")
	assert.Equal(t, []any{"es-ES", "fr-FR", "de-DE"}, v["dstLangs"])
}

func TestUpdateVideo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withPublicURL)
	path := updateVideoPath(prAcmeSummer, viSummerHero)
	get := func() map[string]any {
		return e.ok(call{method: "GET", path: videoPath(prAcmeSummer, viSummerHero), key: keyAcme})
	}
	before := get()

	e.advance(5 * time.Minute)
	r := e.do(call{method: "PATCH", path: path, key: keyAcme, body: `{"name":"New video name","dstLangs":["en","fr"],"processingType":"standard","status":"in_progress",` +
		`"remark":"Updated video description","stringVariables":[{"key":"campaignId","value":"SUM25-HERO-v2"}],` +
		`"translationGuidance":{"common":"Keep Acme Fizz","byLang":{"fr":"Vous"}}}`})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	golden(t, "video_update", r.body)
	u := r.json(t)
	assert.Equal(t, map[string]any{"common": "Keep Acme Fizz", "byLang": map[string]any{"fr": "Vous"}}, u["translationGuidance"])
	assert.Equal(t, "2026-02-04T12:05:00.000Z", u["updatedAt"])
	assert.Equal(t, before["createdAt"], u["createdAt"])
	assert.Equal(t, before["srcLang"], u["srcLang"])
	assert.Equal(t, before["videoDuration"], u["videoDuration"])
	g := get()
	assert.NotContains(t, g, "translationGuidance")
	delete(u, "translationGuidance")
	assert.Equal(t, u, g, "the update response is the Get shape plus the guidance")

	for _, tc := range []struct {
		name, body string
		check      func(t *testing.T, v map[string]any)
	}{
		{"stringVariables replace the whole array", `{"stringVariables":[{"key":"a","value":"1"},{"key":"b","value":""}]}`, func(t *testing.T, v map[string]any) {
			assert.Equal(t, []any{map[string]any{"key": "a", "value": "1"}, map[string]any{"key": "b", "value": ""}}, v["stringVariables"])
		}},
		{"stringVariables empty array", `{"stringVariables":[]}`, func(t *testing.T, v map[string]any) {
			assert.Equal(t, []any{}, v["stringVariables"])
		}},
		{"stringVariables null clears", `{"stringVariables":null}`, func(t *testing.T, v map[string]any) {
			assert.Contains(t, v, "stringVariables")
			assert.Nil(t, v["stringVariables"])
		}},
		{"guidance checked against stored targets", `{"translationGuidance":{"byLang":{"en":"x","fr":"y"}}}`, func(t *testing.T, v map[string]any) {
			assert.Equal(t, map[string]any{"byLang": map[string]any{"en": "x", "fr": "y"}}, v["translationGuidance"])
		}},
		{"guidance checked against targets sent with it", `{"dstLangs":["ja-JP"],"translationGuidance":{"byLang":{"ja-JP":"keigo"}}}`, func(t *testing.T, v map[string]any) {
			assert.Equal(t, []any{"ja-JP"}, v["dstLangs"])
			assert.Equal(t, map[string]any{"byLang": map[string]any{"ja-JP": "keigo"}}, v["translationGuidance"])
		}},
		{"guidance replaced, not merged", `{"translationGuidance":{"common":"Only this"}}`, func(t *testing.T, v map[string]any) {
			assert.Equal(t, map[string]any{"common": "Only this"}, v["translationGuidance"])
		}},
		{"guidance kept when not sent", `{"remark":"r"}`, func(t *testing.T, v map[string]any) {
			assert.Equal(t, map[string]any{"common": "Only this"}, v["translationGuidance"])
			assert.Equal(t, "r", v["remark"])
		}},
		{"guidance null removes", `{"translationGuidance":null}`, func(t *testing.T, v map[string]any) {
			assert.Contains(t, v, "translationGuidance")
			assert.Nil(t, v["translationGuidance"])
		}},
		{"remark empty string", `{"remark":""}`, func(t *testing.T, v map[string]any) {
			assert.Equal(t, "", v["remark"])
		}},
		{"unknown fields beside a valid one ignored", `{"name":"N","workflowType":"x"}`, func(t *testing.T, v map[string]any) {
			assert.Equal(t, "N", v["name"])
			assert.Equal(t, "standard", v["processingType"])
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := e.ok(call{method: "PATCH", path: path, key: keyAcme, body: tc.body})
			tc.check(t, v)
			g := get()
			for _, k := range []string{"stringVariables", "dstLangs", "remark", "name"} {
				assert.Equal(t, v[k], g[k], "%s stored", k)
			}
		})
	}

	t.Run("a status written by the client stops the lifecycle", func(t *testing.T) {
		src := e.readyArtifact(keyAcme, "video")
		id := e.video(keyAcme, prAcmeSummer, src)
		v := e.ok(call{method: "PATCH", path: updateVideoPath(prAcmeSummer, id), key: keyAcme, body: `{"status":"new"}`})
		assert.Equal(t, "new", v["status"])
		e.advance(24 * time.Hour)
		assert.Equal(t, "new", e.ok(call{method: "GET", path: videoPath(prAcmeSummer, id), key: keyAcme})["status"])

		other := e.video(keyAcme, prAcmeSummer, src)
		e.ok(call{method: "PATCH", path: updateVideoPath(prAcmeSummer, other), key: keyAcme, body: `{"remark":"still automatic"}`})
		e.advance(time.Minute)
		assert.Equal(t, "in_progress", e.ok(call{method: "GET", path: videoPath(prAcmeSummer, other), key: keyAcme})["status"], "other fields keep the lifecycle")
	})
}

func TestUpdateVideoTargetsKeepGuidanceConsistent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	// The fixture video has guidance for es-ES and fr-FR: dropping those
	// targets without sending new guidance is refused.
	r := e.do(call{method: "PATCH", path: updateVideoPath(prAcmeSummer, viSummerHero), key: keyAcme, body: `{"dstLangs":["ja-JP"]}`})
	assertError(t, r, http.StatusBadRequest, "dstLangs: the video's translationGuidance.byLang has entries for es-ES, fr-FR, which would no longer be target languages; send translationGuidance in the same request (or null to remove it)")
	// With the guidance in the same request, it goes through.
	v := e.ok(call{method: "PATCH", path: updateVideoPath(prAcmeSummer, viSummerHero), key: keyAcme, body: `{"dstLangs":["ja-JP"],"translationGuidance":{"byLang":{"ja-JP":"丁寧語"}}}`})
	assert.Equal(t, []any{"ja-JP"}, v["dstLangs"])
	assert.Equal(t, map[string]any{"byLang": map[string]any{"ja-JP": "丁寧語"}}, v["translationGuidance"])
}

func TestCreateStatus201(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *app.Config) { c.CreateStatus = http.StatusCreated })
	r := e.do(call{method: "POST", path: pathArtifacts, key: keyAcme, body: `{"name":"A","type":"video","url":"https://media.dubsim.test/short.mp4"}`})
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	src := r.json(t)["id"].(string)
	assert.Equal(t, http.StatusCreated, e.do(call{method: "POST", path: pathProjects, key: keyAcme, body: `{"name":"P"}`}).status)
	_, err := e.srv.Engine.Outcomes.ForceArtifact(context.Background(), src, sim.ForceReady, "", nil, nil, true)
	require.NoError(t, err)
	body := `{"name":"V","workflowType":"dubbing","sourceArtifactId":"` + src + `","sourceLanguage":"en","targetLanguages":["es-ES"]}`
	h := map[string]string{"Idempotency-Key": "k"}
	for range 2 {
		r := e.do(call{method: "POST", path: "/api/v1/projects/" + prAcmeSummer + "/videos/create", key: keyAcme, body: body, header: h})
		assert.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	}
	assert.Equal(t, http.StatusOK, e.do(call{method: "PATCH", path: pathProjects + "/" + prAcmeSummer, key: keyAcme, body: `{"name":"P"}`}).status, "updates stay 200")
}

func TestUpdateVideoLaxEnums(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *app.Config) { c.StudioLaxEnums = true })
	v := e.ok(call{method: "PATCH", path: updateVideoPath(prAcmeSummer, viSummerSocial), key: keyAcme, body: `{"status":"qa_review","processingType":"lipsync"}`})
	assert.Equal(t, "qa_review", v["status"])
	assert.Equal(t, "lipsync", v["processingType"])
	assertError(t, e.do(call{method: "PATCH", path: updateVideoPath(prAcmeSummer, viSummerSocial), key: keyAcme, body: `{"status":""}`}),
		http.StatusBadRequest, "status must not be empty")
}

// ----- routes -----

func TestRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	shared := &env{t: t, srv: e.srv, h: e.srv.Handler}
	for _, tc := range []struct {
		name   string
		env    *env
		c      call
		status int
		msg    string
	}{
		{"video update with /v1", e, call{method: "PATCH", path: videoPath(prAcmeSummer, viSummerSocial), key: keyAcme, body: `{"name":"x"}`},
			http.StatusMethodNotAllowed, "Method PATCH is not allowed on " + videoPath(prAcmeSummer, viSummerSocial)},
		{"video update with /v1 on the shared address", shared, call{method: "PATCH", path: videoPath(prAcmeSummer, viSummerSocial), key: keyAcme, body: `{"name":"x"}`},
			http.StatusMethodNotAllowed, "Method PATCH is not allowed on " + videoPath(prAcmeSummer, viSummerSocial)},
		{"get on the update path", e, call{method: "GET", path: updateVideoPath(prAcmeSummer, viSummerSocial), key: keyAcme},
			http.StatusMethodNotAllowed, "Method GET is not allowed on " + updateVideoPath(prAcmeSummer, viSummerSocial)},
		{"put on a project", e, call{method: "PUT", path: pathProjects + "/" + prAcmeSummer, key: keyAcme, body: `{"name":"x"}`},
			http.StatusMethodNotAllowed, "Method PUT is not allowed on " + pathProjects + "/" + prAcmeSummer},
		{"delete a video", e, call{method: "DELETE", path: videoPath(prAcmeSummer, viSummerSocial), key: keyAcme},
			http.StatusMethodNotAllowed, "Method DELETE is not allowed on " + videoPath(prAcmeSummer, viSummerSocial)},
		{"project path without /v1", e, call{method: "PATCH", path: "/api/projects/" + prAcmeSummer, key: keyAcme, body: `{"name":"x"}`},
			http.StatusNotFound, "No route PATCH /api/projects/" + prAcmeSummer + " in the studio interface; see the endpoint list in the dubsim README"},
		{"old artifact path", e, call{method: "POST", path: "/api/v1/artifacts", key: keyAcme, body: `{"fileName":"a.mp4","type":"video"}`},
			http.StatusNotFound, "No route POST /api/v1/artifacts in the studio interface; see the endpoint list in the dubsim README"},
		{"video create without /create", e, call{method: "POST", path: videosPath(prAcmeSummer), key: keyAcme, body: `{}`},
			http.StatusMethodNotAllowed, "Method POST is not allowed on " + videosPath(prAcmeSummer)},
		{"unknown route without a key", e, call{method: "GET", path: "/api/v1/glossaries"},
			http.StatusNotFound, "No route GET /api/v1/glossaries in the studio interface; see the endpoint list in the dubsim README"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertError(t, tc.env.send(t, tc.c), tc.status, tc.msg)
		})
	}
	assert.Equal(t, "Social cutdown 15s", e.ok(call{method: "GET", path: videoPath(prAcmeSummer, viSummerSocial), key: keyAcme})["name"])
}

// ----- request bodies -----

type endpoint struct {
	name, method, path, valid string
}

func writeEndpoints(src string) []endpoint {
	return []endpoint{
		{"create artifact", "POST", pathArtifacts, `{"name":"A","type":"video","url":"https://cdn.test/a.mp4"}`},
		{"create project", "POST", pathProjects, `{"name":"P"}`},
		{"update project", "PATCH", pathProjects + "/" + prAcmeSummer, `{"name":"P"}`},
		{"create video", "POST", "/api/v1/projects/" + prAcmeSummer + "/videos/create", `{"name":"V","workflowType":"dubbing","sourceArtifactId":"` + src + `","sourceLanguage":"en","targetLanguages":["es-ES"]}`},
		{"update video", "PATCH", updateVideoPath(prAcmeSummer, viSummerSocial), `{"name":"V"}`},
	}
}

func TestRequestBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	src := e.readyArtifact(keyAcme, "video")
	const trailing = "Malformed JSON body: unexpected data after the JSON object"
	for _, ep := range writeEndpoints(src) {
		c := func(body string, h map[string]string) call {
			return call{method: ep.method, path: ep.path, key: keyAcme, body: body, header: h}
		}
		cases := []errCase{
			{name: "text/plain", call: c(ep.valid, map[string]string{"Content-Type": "text/plain"}), msg: sim.MsgContentType},
			{name: "form", call: c(ep.valid, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}), msg: sim.MsgContentType},
			{name: "no Content-Type", call: c(ep.valid, map[string]string{"Content-Type": ""}), msg: sim.MsgContentType},
			{name: "bad Content-Type", call: c(ep.valid, map[string]string{"Content-Type": "application/json; charset"}), msg: sim.MsgContentType},
			{name: "empty body", call: c("", map[string]string{"Content-Type": "application/json"}), msg: sim.MsgBodyNotObject},
			{name: "blank body", call: c(" \n", nil), msg: sim.MsgBodyNotObject},
			{name: "array", call: c(`[`+ep.valid+`]`, nil), msg: sim.MsgBodyNotObject},
			{name: "null", call: c(`null`, nil), msg: sim.MsgBodyNotObject},
			{name: "string", call: c(`"name"`, nil), msg: sim.MsgBodyNotObject},
			{name: "number", call: c(`42`, nil), msg: sim.MsgBodyNotObject},
			{name: "not JSON", call: c(`name=P`, nil), msg: "Malformed JSON body: the body is not valid JSON"},
			{name: "truncated", call: c(ep.valid[:len(ep.valid)-1], nil), msg: "Malformed JSON body: the JSON ends early: the body stops before the value is complete (truncated?)"},
			{name: "trailing comma", call: c(`{"name":"P",}`, nil), msg: "Malformed JSON body: invalid character '}' looking for beginning of object key string"},
			{name: "bad literal", call: c(`{"name":tru}`, nil), msg: "Malformed JSON body: invalid character '}' in literal true (expecting 'e')"},
			{name: "second object", call: c(ep.valid+` {}`, nil), msg: trailing},
			{name: "trailing garbage", call: c(ep.valid+`x`, nil), msg: trailing},
			{name: "trailing brace", call: c(ep.valid+`}`, nil), msg: trailing},
			{name: "trailing bracket", call: c(ep.valid+`]`, nil), msg: trailing},
		}
		for i := range cases {
			cases[i].status = http.StatusBadRequest
		}
		cases = append(cases, errCase{name: "too large", call: c(`{"name":"`+repeat("x", 10<<20)+`"}`, nil),
			status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf(sim.MsgBodyTooLarge, 10<<20)})
		t.Run(ep.name, func(t *testing.T) {
			t.Parallel()
			runErrors(t, e, cases)
		})
	}

	t.Run("JSON media types accepted", func(t *testing.T) {
		t.Parallel()
		for _, ct := range []string{"application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json"} {
			r := e.send(t, call{method: "PATCH", path: pathProjects + "/" + prAcmeTutorials, key: keyAcme, body: `{"name":"Product Tutorials"}`, header: map[string]string{"Content-Type": ct}})
			assert.Equal(t, http.StatusOK, r.status, "%s: %s", ct, r.body)
		}
	})
}

func TestUnknownFields(t *testing.T) {
	t.Parallel()
	lenient := newEnv(t, nil)
	strict := newEnv(t, func(c *app.Config) { c.RejectUnknownFields = true })
	srcL := lenient.readyArtifact(keyAcme, "video")
	srcS := strict.readyArtifact(keyAcme, "video")
	eps := writeEndpoints(srcL)
	for i, ep := range writeEndpoints(srcS) {
		t.Run(ep.name, func(t *testing.T) {
			t.Parallel()
			withExtra := func(valid string) string { return valid[:len(valid)-1] + `,"color":"red","zIndex":1}` }
			r := lenient.send(t, call{method: ep.method, path: eps[i].path, key: keyAcme, body: withExtra(eps[i].valid)})
			assert.Equal(t, http.StatusOK, r.status, "ignored by default: %s", r.body)
			assertError(t, strict.send(t, call{method: ep.method, path: ep.path, key: keyAcme, body: withExtra(ep.valid)}),
				http.StatusBadRequest, "Unknown field color, zIndex")
		})
	}
	t.Run("strict still gives the misspelling hint's field", func(t *testing.T) {
		t.Parallel()
		assertError(t, strict.send(t, call{method: "POST", path: pathProjects, key: keyAcme, body: `{"name":"P","translationGlossaryId":"x"}`}),
			http.StatusBadRequest, "Unknown field translationGlossaryId")
	})
	t.Run("strict update video with only an unknown field", func(t *testing.T) {
		t.Parallel()
		assertError(t, strict.send(t, call{method: "PATCH", path: updateVideoPath(prAcmeSummer, viSummerSocial), key: keyAcme, body: `{"metadata":[]}`}),
			http.StatusBadRequest, "Unknown field metadata")
	})
}

// ----- idempotency -----

func TestIdempotency(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	src := e.readyArtifact(keyAcme, "video")
	for _, tc := range []struct {
		name, path, body, other string
		count                   func(t *testing.T) int
	}{
		{"artifact", pathArtifacts, `{"name":"A","type":"video","url":"https://cdn.test/a.mp4"}`, `{"name":"B","type":"video","url":"https://cdn.test/a.mp4"}`, nil},
		{"project", pathProjects, `{"name":"Idempotent"}`, `{"name":"Idempotent "}`, func(t *testing.T) int {
			return len(e.ok2list(t, call{method: "GET", path: pathProjects, key: keyAcme}))
		}},
		{"video", "/api/v1/projects/" + prAcmeTutorials + "/videos/create",
			`{"name":"V","workflowType":"dubbing","sourceArtifactId":"` + src + `","sourceLanguage":"en","targetLanguages":["es-ES"]}`,
			`{"name":"V","workflowType":"voiceover","sourceArtifactId":"` + src + `","sourceLanguage":"en","targetLanguages":["es-ES"]}`,
			func(t *testing.T) int {
				return len(e.ok2list(t, call{method: "GET", path: videosPath(prAcmeTutorials), key: keyAcme}))
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "idem-" + tc.name
			h := map[string]string{"Idempotency-Key": key}
			var before int
			if tc.count != nil {
				before = tc.count(t)
			}
			first := e.do(call{method: "POST", path: tc.path, key: keyAcme, body: tc.body, header: h})
			require.Equal(t, http.StatusOK, first.status, "%s", first.body)
			assert.Empty(t, first.header.Get("Idempotent-Replayed"))
			e.advance(time.Second)
			again := e.do(call{method: "POST", path: tc.path, key: keyAcme, body: tc.body, header: h})
			require.Equal(t, http.StatusOK, again.status, "%s", again.body)
			assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
			assert.Equal(t, string(first.body), string(again.body), "the first answer, byte for byte")
			if tc.count != nil {
				assert.Equal(t, before+1, tc.count(t), "one resource")
			}

			assertError(t, e.do(call{method: "POST", path: tc.path, key: keyAcme, body: tc.other, header: h}),
				http.StatusUnprocessableEntity, fmt.Sprintf(sim.MsgIdempotencyMismatch, key))

			other := e.do(call{method: "POST", path: tc.path, key: keyAcme2, body: tc.body, header: h})
			require.Equal(t, http.StatusOK, other.status, "%s", other.body)
			assert.Empty(t, other.header.Get("Idempotent-Replayed"), "keys are scoped to the API key")
			assert.NotEqual(t, first.json(t)["id"], other.json(t)["id"])

			fresh := e.do(call{method: "POST", path: tc.path, key: keyAcme, body: tc.body})
			assert.NotEqual(t, first.json(t)["id"], fresh.json(t)["id"], "without the header, a new resource")
		})
	}

	t.Run("a refusal is replayed too", func(t *testing.T) {
		h := map[string]string{"Idempotency-Key": "idem-refused"}
		body := `{"name":"P","voicesGlossaryId":"` + unknownID + `"}`
		first := e.do(call{method: "POST", path: pathProjects, key: keyAcme, body: body, header: h})
		assertError(t, first, http.StatusBadRequest, "voicesGlossaryId: glossary "+unknownID+" does not exist")
		again := e.do(call{method: "POST", path: pathProjects, key: keyAcme, body: body, header: h})
		assertError(t, again, http.StatusBadRequest, "voicesGlossaryId: glossary "+unknownID+" does not exist")
		assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	})

	t.Run("PATCH ignores the header", func(t *testing.T) {
		h := map[string]string{"Idempotency-Key": "idem-patch"}
		a := e.ok(call{method: "PATCH", path: pathProjects + "/" + prAcmeTutorials, key: keyAcme, body: `{"name":"One"}`, header: h})
		b := e.ok(call{method: "PATCH", path: pathProjects + "/" + prAcmeTutorials, key: keyAcme, body: `{"name":"Two"}`, header: h})
		assert.Equal(t, "One", a["name"])
		assert.Equal(t, "Two", b["name"])
	})

	t.Run("key too long", func(t *testing.T) {
		key := repeat("k", 256)
		assertError(t, e.do(call{method: "POST", path: pathProjects, key: keyAcme, body: `{"name":"P"}`, header: map[string]string{"Idempotency-Key": key}}),
			http.StatusBadRequest, "Idempotency-Key must be at most 255 characters")
	})
}

// ----- rate limits -----

func TestRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *app.Config) { c.StudioRateLimit = sim.RateLimit{PerMinute: 3, PerDay: 5} })
	get := func(key string) reply { return e.do(call{method: "GET", path: pathProjects, key: key}) }
	limited := func(r reply, retry, msg string) {
		t.Helper()
		assertError(t, r, http.StatusTooManyRequests, msg)
		assert.Equal(t, retry, r.header.Get("Retry-After"))
	}
	perMinute := func(s int) string { return fmt.Sprintf(sim.MsgRateLimitMinute, 3, s) }
	perDay := func(s int) string { return fmt.Sprintf(sim.MsgRateLimitDay, 5, s) }

	for i := range 3 {
		require.Equal(t, http.StatusOK, get(keyAcme).status, "request %d", i+1)
	}
	limited(get(keyAcme), "60", perMinute(60))
	limited(e.do(call{method: "POST", path: pathProjects, key: keyAcme, body: `{"name":"P"}`}), "60", perMinute(60))
	assert.Equal(t, http.StatusOK, get(keyAcme2).status, "per API key, not per company")
	assertError(t, get("no-such-key"), http.StatusBadRequest, sim.MsgStudioAuth)

	e.advance(45 * time.Second)
	limited(get(keyAcme), "15", perMinute(15))
	e.advance(15 * time.Second)
	require.Equal(t, http.StatusOK, get(keyAcme).status, "a new minute")
	require.Equal(t, http.StatusOK, get(keyAcme).status)
	// 12:01:00: 5 requests today; the day ends at midnight UTC.
	limited(get(keyAcme), "43140", perDay(43140))
	e.advance(30 * time.Minute)
	limited(get(keyAcme), "41340", perDay(41340))
	e.advance(11*time.Hour + 28*time.Minute + 59*time.Second)
	limited(get(keyAcme), "1", perDay(1))
	e.advance(time.Second)
	assert.Equal(t, http.StatusOK, get(keyAcme).status, "a new day")

	t.Run("a key's own limit wins", func(t *testing.T) {
		key := e.account(sim.AccountSpec{APIKey: "limited-key", Name: "Limited", CompanyID: coAcme, RateLimit: &sim.RateLimit{PerMinute: 1}})
		require.Equal(t, http.StatusOK, get(key).status)
		r := get(key)
		assert.Equal(t, http.StatusTooManyRequests, r.status)
		assert.Equal(t, fmt.Sprintf(sim.MsgRateLimitMinute, 1, 60), r.json(t)["error"])
	})
}

func TestNoRateLimitByDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for range 100 {
		r := e.do(call{method: "GET", path: pathProjects, key: keyAcme})
		require.Equal(t, http.StatusOK, r.status)
	}
}

func TestPresignedUploadAcrossUsersAndCompanies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s3 := e.upload(t, keyAcme, "lines.txt", "Hello.\n")
	colleague := e.artifact(keyAcme2, `{"name":"S","type":"script","s3Path":"`+s3+`"}`)
	stranger := e.artifact(keyInitech, `{"name":"S","type":"script","s3Path":"`+s3+`"}`)
	e.advance(time.Minute)
	assert.Equal(t, "upload_completed", e.ok(call{method: "GET", path: "/api/v1/artifacts/" + colleague, key: keyAcme2})["status"], "same company")
	a := e.ok(call{method: "GET", path: "/api/v1/artifacts/" + stranger, key: keyInitech})
	assert.Equal(t, "upload_failed", a["status"], "another company's upload")
	assert.Equal(t, fmt.Sprintf(sim.MsgUploadNotFound, s3), a["errorMessage"])

	t.Run("uploaded after the artifact was created, before processing ended", func(t *testing.T) {
		m := e.ok(call{method: "GET", path: pathArtifacts + "?fileName=late.txt", key: keyAcme})
		id := e.artifact(keyAcme, `{"name":"L","type":"script","s3Path":"`+m["s3Path"].(string)+`"}`)
		req, err := http.NewRequest("PUT", m["presignedUploadUrl"].(string), strings.NewReader("abc"))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		e.advance(time.Minute)
		a := e.ok(call{method: "GET", path: "/api/v1/artifacts/" + id, key: keyAcme})
		assert.Equal(t, "upload_completed", a["status"])
		assert.Equal(t, 3.0, a["size"])
	})
}

// ----- artifact sources: edge cases -----

// upload presigns fileName for key, PUTs body to the presigned URL and
// returns the s3Path; it fails the test when the PUT is refused.
func (e *env) upload(t *testing.T, key, fileName, body string) string {
	t.Helper()
	m := e.ok(call{method: "GET", path: pathArtifacts + "?fileName=" + url.QueryEscape(fileName), key: key})
	req, err := http.NewRequest("PUT", m["presignedUploadUrl"].(string), strings.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "PUT %s", m["presignedUploadUrl"])
	return m["s3Path"].(string)
}

func TestUploadFileNamesWithPercentEscapes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for _, name := range []string{"a%41.mp4", "50%25off.wav", "x%2Fy.mp4"} {
		t.Run(name, func(t *testing.T) {
			m := e.ok(call{method: "GET", path: pathArtifacts + "?fileName=" + url.QueryEscape(name), key: keyAcme})
			req, err := http.NewRequest("PUT", m["presignedUploadUrl"].(string), strings.NewReader("bytes"))
			require.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			if resp.StatusCode == http.StatusNotFound {
				t.Errorf("regression: uploads.go handleUpload unescapes the fileName URL parameter a second time: the presigned URL of %q is refused with 404 NoSuchUpload", name)
			}
			assert.Equal(t, http.StatusOK, resp.StatusCode)
		})
	}
}

func TestUploadFileNameNotUTF8(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	r := e.do(call{method: "GET", path: pathArtifacts + "?fileName=%FF.mp4", key: keyAcme})
	if r.status == http.StatusBadRequest {
		return // refused up front: fine
	}
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	m := r.json(t)
	req, err := http.NewRequest("PUT", m["presignedUploadUrl"].(string), strings.NewReader("bytes"))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("regression: uploads.go checkFileName accepts a fileName that is not UTF-8 (\xff.mp4): the s3Path answered is %q, the stored name is sanitised by JSON, and the presigned PUT is refused with %d", m["s3Path"], resp.StatusCode)
	}
}

func TestTempPathMustNameTheUploadedFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s3 := e.upload(t, keyAcme, "lines.txt", "Hello.\n")
	other := strings.TrimSuffix(s3, "lines.txt") + "other.txt"
	id := e.artifact(keyAcme, `{"name":"S","type":"script","s3Path":"`+other+`"}`)
	e.advance(time.Minute)
	a := e.ok(call{method: "GET", path: "/api/v1/artifacts/" + id, key: keyAcme})
	if a["status"] == "upload_completed" {
		t.Errorf("regression: statemachine/studio.go uploadIDOf keeps only the upload id of s3://dubsim-artifacts/temp/<id>/<file>: %s resolves to the file uploaded as %s (artifact %v, size %v)", other, s3, a["status"], a["size"])
	}
	assert.Equal(t, "upload_failed", a["status"])
	assert.Equal(t, fmt.Sprintf(sim.MsgUploadNotFound, other), a["errorMessage"])
}

// mediaServer serves body at every path on a loopback address, which dubsim
// downloads for real.
func mediaServer(t *testing.T, body string) string {
	t.Helper()
	hs := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "video/mp4")
		_, _ = w.Write([]byte(body))
	}))
	return hs
}

func TestDownloadedArtifacts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	src := mediaServer(t, "<html>not a video</html>")

	t.Run("a download that is not media", func(t *testing.T) {
		id := e.artifact(keyAcme, `{"name":"D","type":"video","url":"`+src+`/clip.mp4"}`)
		e.srv.Engine.Artifacts.WaitDownloads()
		e.advance(time.Minute)
		a := e.ok(call{method: "GET", path: "/api/v1/artifacts/" + id, key: keyAcme})
		if a["status"] == "upload_completed" {
			t.Errorf("regression: statemachine/studio.go startDownload/download: a downloaded file whose duration cannot be read completes with duration %v (a presigned upload of the same bytes fails with \"Unsupported media file\")", a["duration"])
		}
		assert.Equal(t, "upload_failed", a["status"])
	})

	t.Run("fragments: a download and a presigned path never uploaded", func(t *testing.T) {
		m := e.ok(call{method: "GET", path: pathArtifacts + "?fileName=part2.mp4", key: keyAcme})
		never := m["s3Path"].(string)
		wav := mediaServer(t, string(audio.WAVHeader(16000, 1, 16, 32000))+strings.Repeat("\x00", 32000)) // 1 s of silence
		id := e.artifact(keyAcme, `{"name":"F","type":"video","fragments":[{"url":"`+wav+`/part1.wav","startTime":0},{"s3Path":"`+never+`","startTime":10}]}`)
		e.srv.Engine.Artifacts.WaitDownloads()
		e.advance(time.Minute)
		a := e.ok(call{method: "GET", path: "/api/v1/artifacts/" + id, key: keyAcme})
		if a["status"] == "upload_completed" {
			t.Errorf("regression: statemachine/studio.go startDownload marks the result known, so resolveUploads never checks the presigned fragment %s: the artifact completes (size %v) although nothing was uploaded", never, a["size"])
		}
		assert.Equal(t, "upload_failed", a["status"])
		assert.Equal(t, fmt.Sprintf(sim.MsgUploadNotFound, never), a["errorMessage"])
	})
}

// TestFixtureIDsEncodeCreatedAt: the createdAt of every fixture project and
// video the API shows is, to the second, the time its ObjectId encodes.
func TestFixtureIDsEncodeCreatedAt(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	idTime := func(id string) string {
		sec, err := strconv.ParseUint(id[:8], 16, 32)
		require.NoError(t, err, id)
		return sim.StudioTime(time.Unix(int64(sec), 0))
	}
	n := 0
	for _, key := range []string{keyAcme, keyInitech, keyGlobex} {
		for _, p := range e.ok2list(t, call{method: "GET", path: pathProjects, key: key}) {
			id := p["id"].(string)
			assert.Equal(t, idTime(id), p["createdAt"], "project %s", id)
			n++
			for _, v := range e.ok2list(t, call{method: "GET", path: videosPath(id), key: key}) {
				assert.Equal(t, idTime(v["id"].(string)), v["createdAt"], "video %s", v["id"])
				n++
			}
		}
	}
	assert.Equal(t, 21, n, "the 6 fixture projects and their 15 videos")
}
