package studio_test

// Artifacts: creation by URL, fragments and presigned upload, lifecycle,
// access, and the edge cases of their sources.

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim/audio"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
