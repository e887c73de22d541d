package openapi_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/audio"
	"github.com/dubsim/dubsim/sim/openapi"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The studio contract tests: every documented response of every studio
// operation, produced by real requests to an in-process dubsim whose answers
// the harness checks against studio.json and the combined document.

// Fixture keys (fixtures/accounts.json) and studio records
// (fixtures/studio.json).
const (
	stKey      = "dubsim-free"         // Alice Johnson, Acme Media
	stKey2     = "dubsim-subscription" // Bob Martinez, Acme Media
	stKeyOther = "dubsim-pro"          // Priya Raman, Initech Learning

	stProject      = "6800ed147125e1af62bc928c" // Acme: Summer Campaign 2025, 3 videos
	stProject2     = "6821e2967125e1af62bc928d" // Acme: Product Tutorials
	stOtherProject = "6814b3a77125e1af62bc9291" // Initech: Compliance Training 2025
	stVideo        = "683b275c0a4e53a77de3f4d1" // in stProject: new, es-ES fr-FR de-DE
	stVideoHero    = "680179c50a4e53a77de3f4cf" // in stProject: completed, with guidance
	stVideo2       = "683a9ad00a4e53a77de3f4d3" // in stProject2: no duration, stringVariables
	stOtherVideo   = "6815cce40a4e53a77de3f4db" // in stOtherProject
	stGlossary     = "664dde2bbd76c09876a4bc5b" // Acme translation glossary
	stVoices       = "673494a9bd76c09876a4bc5d" // Acme voices glossary
	stUnknown      = "000000000000000000000000"

	stManager      = "bob.martinez@acme-media.example"
	stOtherManager = "priya.raman@initech-learning.example"

	stMediaURL = "https://media.dubsim.test/short.mp4" // a fixture media rule: 12 s
	stFailURL  = "https://media.dubsim.test/fail.mp4"  // a fixture media rule: processing fails
	stFailMsg  = "Processing failed: the audio track could not be decoded"

	stArtifacts = "/api/v1/artifacts/create"
	stProjects  = "/api/v1/projects"
)

func stProjectPath(id string) string      { return stProjects + "/" + id }
func stCreateVideoPath(pid string) string { return stProjects + "/" + pid + "/videos/create" }
func stVideosPath(pid string) string      { return stProjects + "/" + pid + "/videos" }
func stVideoPath(pid, vid string) string  { return stVideosPath(pid) + "/" + vid }
func stUpdateVideoPath(pid, vid string) string {
	return "/api/projects/" + pid + "/videos/" + vid
}

// stVideoBody is a valid Create Project Video body with source src.
func stVideoBody(src string) string {
	return `{"name":"Teaser","workflowType":"dubbing","sourceArtifactId":"` + src + `","sourceLanguage":"en","targetLanguages":["es-ES","fr-FR"]}`
}

// stTooLarge is a JSON body over dubsim's limit of 10 MiB (built once,
// when first used).
var stTooLarge = sync.OnceValue(func() string { return `{"name":"` + strings.Repeat("x", 10<<20) + `"}` })

// stWAV is a 0.5 s silent 16 kHz mono WAV file.
var stWAV = append(audio.WAVHeader(16000, 1, 16, 16000), make([]byte, 16000)...)

// ----- instance -----

// stEnv is an instance whose store can be made to fail or to hold a write.
type stEnv struct {
	*env
	store *stStore
}

// newStudioEnv is newEnv with the store wrapped (and mod applied).
func newStudioEnv(t *testing.T, mod func(*app.Config)) *stEnv {
	t.Helper()
	s := &stStore{}
	e := newEnv(t, func(c *app.Config) {
		s.Store, c.Store = c.Store, s
		if mod != nil {
			mod(c)
		}
	})
	return &stEnv{env: e, store: s}
}

// stStore wraps an instance's store: it can fail every read or every write
// (an I/O failure: dubsim answers 500) and hold the next write until
// released (a request in flight).
type stStore struct {
	sim.Store
	failReads, failWrites atomic.Bool
	hold                  atomic.Pointer[stHold]
}

type stHold struct{ entered, release chan struct{} }

var errStStore = errors.New("injected store failure")

func (s *stStore) View(ctx context.Context, fn func(sim.Tx) error) error {
	if s.failReads.Load() {
		return errStStore
	}
	return s.Store.View(ctx, fn)
}

func (s *stStore) Update(ctx context.Context, fn func(sim.Tx) error) error {
	if err := s.write(); err != nil {
		return err
	}
	return s.Store.Update(ctx, fn)
}

func (s *stStore) Batch(ctx context.Context, fn func(sim.Tx) error) error {
	if err := s.write(); err != nil {
		return err
	}
	return s.Store.Batch(ctx, fn)
}

func (s *stStore) write() error {
	if s.failWrites.Load() {
		return errStStore
	}
	if h := s.hold.Swap(nil); h != nil {
		close(h.entered)
		<-h.release
	}
	return nil
}

// holdNextWrite makes the next write wait; entered is closed when it
// starts waiting, and closing release lets it go on.
func (s *stStore) holdNextWrite() *stHold {
	h := &stHold{entered: make(chan struct{}), release: make(chan struct{})}
	s.hold.Store(h)
	return h
}

// ----- requests -----

// stReq is a studio request with an optional JSON body.
func stReq(method, path, key, body string) req {
	return req{Interface: openapi.Studio, Method: method, Path: path, Key: key, JSON: body}
}

// stWithHeader adds a header to a request.
func stWithHeader(r req, k, v string) req {
	h := map[string]string{k: v}
	for k2, v2 := range r.Header {
		h[k2] = v2
	}
	r.Header = h
	return r
}

// ok sends r and requires a success (200, or 201 for a creation with
// --create-status 201).
func (e *stEnv) ok(r req) resp {
	e.t.Helper()
	res := e.do(r)
	require.Contains(e.t, []int{http.StatusOK, http.StatusCreated}, res.Status, "%s %s: %s", r.Method, r.Path, res.Body)
	return res
}

// artifact creates an artifact and returns its id.
func (e *stEnv) artifact(key, body string) string {
	e.t.Helper()
	return e.ok(stReq("POST", stArtifacts, key, body)).JSON["id"].(string)
}

// readyArtifact creates a 12 s artifact of typ from a fixture media URL and
// lets simulated time run until it is upload_completed.
func (e *stEnv) readyArtifact(key, typ string) string {
	e.t.Helper()
	id := e.artifact(key, `{"name":"Source","type":"`+typ+`","url":"`+stMediaURL+`"}`)
	e.advance(10 * time.Second)
	require.Equal(e.t, sim.ArtifactCompleted, e.ok(stReq("GET", "/api/v1/artifacts/"+id, key, "")).JSON["status"])
	return id
}

// video creates a video in project pid and returns its id.
func (e *stEnv) video(key, pid string) string {
	e.t.Helper()
	return e.ok(stReq("POST", stCreateVideoPath(pid), key, stVideoBody(e.readyArtifact(key, "video")))).JSON["id"].(string)
}

// presign opens an upload slot: its s3Path and the path (with query) of
// its presigned URL on this instance.
func (e *stEnv) presign(key, fileName string) (s3Path, uploadPath string) {
	e.t.Helper()
	r := e.ok(stReq("GET", stArtifacts+"?fileName="+url.QueryEscape(fileName), key, ""))
	u := r.JSON["presignedUploadUrl"].(string)
	require.True(e.t, strings.HasPrefix(u, e.url+"/_uploads/"), u)
	return r.JSON["s3Path"].(string), strings.TrimPrefix(u, e.url)
}

// put PUTs body to a presigned upload path, without a key.
func (e *stEnv) put(uploadPath string, body []byte) resp {
	e.t.Helper()
	return e.do(req{Interface: openapi.Studio, Method: "PUT", Path: uploadPath, Body: body,
		Header: map[string]string{"Content-Type": "application/octet-stream"}})
}

// putAnnounced PUTs to a presigned upload path a request whose
// Content-Length announces contentLength bytes but sends only send (which
// net/http's client cannot do), then checks and records the answer as the
// harness's do does.
func (e *stEnv) putAnnounced(uploadPath string, contentLength int64, send []byte) resp {
	e.t.Helper()
	return e.putRaw(uploadPath, contentLength, send, false)
}

// putRaw is putAnnounced; halfClose closes the connection's sending side
// after send (a client that gave up: the body ends early).
func (e *stEnv) putRaw(uploadPath string, contentLength int64, send []byte, halfClose bool) resp {
	e.t.Helper()
	u, err := url.Parse(e.url + uploadPath)
	require.NoError(e.t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(e.t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nX-Dubsim-Interface: studio\r\nContent-Length: %d\r\n\r\n",
		u.RequestURI(), u.Host, contentLength)
	require.NoError(e.t, err)
	_, err = conn.Write(send)
	require.NoError(e.t, err)
	if halfClose {
		require.NoError(e.t, conn.(*net.TCPConn).CloseWrite())
	}
	hres, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodPut})
	require.NoError(e.t, err)
	raw, err := io.ReadAll(hres.Body)
	hres.Body.Close()
	require.NoError(e.t, err)
	res, err := validators[openapi.Studio].Check("PUT", u.EscapedPath(), hres.StatusCode, hres.Header, raw)
	require.NoError(e.t, err, "PUT %s against the studio document", u.Path)
	_, err = combinedV.Check("PUT", u.EscapedPath(), hres.StatusCode, hres.Header, raw)
	require.NoError(e.t, err, "PUT %s against the combined document", u.Path)
	coverage.Lock()
	if coverage.seen[openapi.Studio] == nil {
		coverage.seen[openapi.Studio] = map[string]bool{}
	}
	coverage.seen[openapi.Studio][res.Method+" "+res.Path+" "+res.Response] = true
	coverage.Unlock()
	return resp{Status: hres.StatusCode, Header: hres.Header, Body: raw, Op: res.Operation}
}

// stList decodes an array answer.
func stList(t *testing.T, r resp) []map[string]any {
	t.Helper()
	var l []map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &l), "%s", r.Body)
	return l
}

// stS3Code returns the Code of an XML error answer.
func stS3Code(t *testing.T, r resp) string {
	t.Helper()
	var e struct {
		XMLName xml.Name `xml:"Error"`
		Code    string   `xml:"Code"`
	}
	require.NoError(t, xml.Unmarshal(r.Body, &e), "%s", r.Body)
	return e.Code
}

// ----- scenarios -----

// stCase is one scenario on a fresh instance: run sends the requests and
// returns the answer under test.
type stCase struct {
	name   string
	run    func(e *stEnv) resp
	status int
	op     string // the operationId the answer must have matched
	// err is the message of a JSON error answer; check looks at a key field
	// of any other answer.
	err   string
	check func(t *testing.T, r resp)
}

// stRun runs each case as a parallel subtest on its own instance.
func stRun(t *testing.T, cases []stCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := tc.run(newStudioEnv(t, nil))
			require.Equal(t, tc.status, r.Status, "%s", r.Body)
			if tc.op != "" {
				assert.Equal(t, tc.op, r.Op)
			}
			if tc.err != "" {
				assert.Equal(t, map[string]any{"error": tc.err}, r.JSON)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

// stSend returns a run that sends one request.
func stSend(r req) func(*stEnv) resp {
	return func(e *stEnv) resp { return e.do(r) }
}

// stField returns a check of one top-level field of an object answer.
func stField(name string, want any) func(*testing.T, resp) {
	return func(t *testing.T, r resp) {
		t.Helper()
		assert.Equal(t, want, r.JSON[name], "%s", r.Body)
	}
}

// stAuthHint checks the X-Dubsim-Auth-Error header of a key refusal.
func stAuthHint(want string) func(*testing.T, resp) {
	return func(t *testing.T, r resp) {
		t.Helper()
		assert.Equal(t, want, r.Header.Get("X-Dubsim-Auth-Error"))
	}
}

// stReplayed checks that an answer is an idempotent replay.
func stReplayed(t *testing.T, r resp) {
	t.Helper()
	assert.Equal(t, "true", r.Header.Get("Idempotent-Replayed"))
}

// stIdem sends r twice with an Idempotency-Key and returns the replay.
func stIdem(r req) func(*stEnv) resp {
	return func(e *stEnv) resp {
		r := stWithHeader(r, "Idempotency-Key", "retry-1")
		first := e.do(r)
		again := e.do(r)
		assert.Equal(e.t, string(first.Body), string(again.Body), "the replay is the first answer")
		return again
	}
}

const stNoFields = sim.MsgNoValidFields

func TestStudioArtifactsContract(t *testing.T) {
	t.Parallel()
	get := func(id, key string) req { return stReq("GET", "/api/v1/artifacts/"+id, key, "") }
	stRun(t, []stCase{
		// GET /api/v1/artifacts/create
		{name: "presign", run: stSend(stReq("GET", stArtifacts+"?fileName=clip.wav", stKey, "")), status: 200, op: "studioGetPresignedUploadUrl",
			check: func(t *testing.T, r resp) {
				assert.Regexp(t, `^s3://dubsim-artifacts/temp/[0-9a-f-]{36}/clip\.wav$`, r.JSON["s3Path"])
				assert.Equal(t, "2026-02-05T12:00:00.000Z", r.JSON["expiresAt"])
			}},
		{name: "presign a name with spaces and unicode", run: stSend(stReq("GET", stArtifacts+"?fileName="+url.QueryEscape("Interview – take 2.mp4"), stKey, "")), status: 200,
			check: func(t *testing.T, r resp) {
				assert.True(t, strings.HasSuffix(r.JSON["s3Path"].(string), "/Interview – take 2.mp4"), r.JSON["s3Path"])
			}},
		{name: "presign without fileName", run: stSend(stReq("GET", stArtifacts, stKey, "")), status: 400,
			err: "fileName query parameter is required: the real name of the file to upload, with its extension (e.g. video.mp4)"},
		{name: "presign without an extension", run: stSend(stReq("GET", stArtifacts+"?fileName=clip", stKey, "")), status: 400,
			err: `fileName must have an extension, which determines the file type (e.g. video.mp4, audio.wav, script.txt); got "clip"`},
		{name: "presign without a key", run: stSend(stReq("GET", stArtifacts+"?fileName=clip.wav", "", "")), status: 400, err: sim.MsgStudioAuth,
			check: stAuthHint("missing Authorization header; send Authorization: Bearer <API_KEY>")},

		// POST /api/v1/artifacts/create
		{name: "create from a URL", run: stSend(stReq("POST", stArtifacts, stKey, `{"name":"Source video","type":"video","url":"`+stMediaURL+`"}`)),
			status: 200, op: "studioCreateArtifact", check: func(t *testing.T, r resp) {
				assert.Equal(t, sim.ArtifactCreated, r.JSON["status"])
				assert.Equal(t, "direct_url", r.JSON["uploadMethod"])
				assert.Equal(t, map[string]any{"id": "663266da5ec2709f7826386f", "name": "Acme Media"}, r.JSON["company"])
			}},
		{name: "create from fragments", run: stSend(stReq("POST", stArtifacts, stKey,
			`{"name":"Joined","type":"audio","fragments":[{"url":"`+stMediaURL+`","startTime":0},{"s3Path":"s3://my-bucket/b.wav","startTime":12}]}`)),
			status: 200, check: stField("uploadMethod", "fragments")},
		{name: "create from a presigned upload", run: func(e *stEnv) resp {
			s3, up := e.presign(stKey, "take.wav")
			require.Equal(t, 200, e.put(up, stWAV).Status)
			return e.do(stReq("POST", stArtifacts, stKey, `{"name":"Take","type":"audio","s3Path":"`+s3+`"}`))
		}, status: 200, check: func(t *testing.T, r resp) {
			assert.Regexp(t, `^uploads/[0-9a-f]{24}/take\.wav$`, r.JSON["s3Path"])
		}},
		{name: "create replayed", run: stIdem(stReq("POST", stArtifacts, stKey, `{"name":"A","type":"script","url":"https://cdn.example.com/a.srt"}`)),
			status: 200, check: stReplayed},
		{name: "create with two sources", run: stSend(stReq("POST", stArtifacts, stKey, `{"name":"A","type":"video","url":"`+stMediaURL+`","s3Path":"s3://b/k.mp4"}`)),
			status: 400, err: "Exactly one of s3Path, url or fragments must be given; got s3Path and url"},
		{name: "create script from fragments", run: stSend(stReq("POST", stArtifacts, stKey, `{"name":"A","type":"script","fragments":[{"url":"`+stMediaURL+`","startTime":0}]}`)),
			status: 400, err: "fragments are not supported for type script"},
		{name: "create with a negative startTime", run: stSend(stReq("POST", stArtifacts, stKey, `{"name":"A","type":"video","fragments":[{"url":"`+stMediaURL+`","startTime":-1}]}`)),
			status: 400, err: "fragments[0].startTime must be at least 0; got -1"},
		{name: "create as text/plain", run: stSend(req{Interface: openapi.Studio, Method: "POST", Path: stArtifacts, Key: stKey,
			Body: []byte(`{"name":"A","type":"video","url":"` + stMediaURL + `"}`), Header: map[string]string{"Content-Type": "text/plain"}}),
			status: 400, err: sim.MsgContentType},
		{name: "create with an unknown key", run: stSend(stReq("POST", stArtifacts, "no-such-key", `{"name":"A","type":"video","url":"`+stMediaURL+`"}`)),
			status: 400, err: sim.MsgStudioAuth, check: stAuthHint("unknown API key")},
		{name: "create with a refusal replayed", run: stIdem(stReq("POST", stArtifacts, stKey, `{"name":"A","type":"subtitles","url":"`+stMediaURL+`"}`)),
			status: 400, err: `type must be one of video, audio, script; got "subtitles" (the older name of script)`, check: stReplayed},
		{name: "create with an Idempotency-Key too long", run: stSend(stWithHeader(stReq("POST", stArtifacts, stKey, `{"name":"A","type":"video","url":"`+stMediaURL+`"}`),
			"Idempotency-Key", strings.Repeat("k", 256))), status: 400, err: "Idempotency-Key must be at most 255 characters"},
		{name: "create too large", run: stSend(stReq("POST", stArtifacts, stKey, stTooLarge())), status: 413, err: fmt.Sprintf(sim.MsgBodyTooLarge, 10<<20)},
		{name: "create too large replayed", run: stIdem(stReq("POST", stArtifacts, stKey, stTooLarge())), status: 413, check: stReplayed},
		{name: "create reusing an Idempotency-Key", run: func(e *stEnv) resp {
			e.ok(stWithHeader(stReq("POST", stArtifacts, stKey, `{"name":"A","type":"video","url":"`+stMediaURL+`"}`), "Idempotency-Key", "k1"))
			return e.do(stWithHeader(stReq("POST", stArtifacts, stKey, `{"name":"B","type":"video","url":"`+stMediaURL+`"}`), "Idempotency-Key", "k1"))
		}, status: 422, err: fmt.Sprintf(sim.MsgIdempotencyMismatch, "k1")},

		// GET /api/v1/artifacts/{artifactId}, through the lifecycle
		{name: "get created", run: func(e *stEnv) resp {
			return e.do(get(e.artifact(stKey, `{"name":"A","type":"video","url":"`+stMediaURL+`"}`), stKey))
		}, status: 200, op: "studioGetArtifact", check: func(t *testing.T, r resp) {
			assert.Equal(t, sim.ArtifactCreated, r.JSON["status"])
			assert.Equal(t, map[string]any{"id": "663266da5ec2709f7826386f"}, r.JSON["company"], "the id only")
		}},
		{name: "get upload_started", run: func(e *stEnv) resp {
			id := e.artifact(stKey, `{"name":"A","type":"video","url":"`+stMediaURL+`"}`)
			e.advance(2 * time.Second)
			return e.do(get(id, stKey))
		}, status: 200, check: stField("status", sim.ArtifactStarted)},
		{name: "get upload_completed video", run: func(e *stEnv) resp {
			return e.do(get(e.readyArtifact(stKey, "video"), stKey))
		}, status: 200, check: func(t *testing.T, r resp) {
			assert.Equal(t, sim.ArtifactCompleted, r.JSON["status"])
			assert.Equal(t, 12.0, r.JSON["duration"])
			assert.Equal(t, 3750000.0, r.JSON["size"])
		}},
		{name: "get upload_completed script", run: func(e *stEnv) resp {
			id := e.artifact(stKey, `{"name":"Script","type":"script","url":"https://cdn.example.com/script.srt"}`)
			e.advance(10 * time.Second)
			return e.do(get(id, stKey))
		}, status: 200, check: func(t *testing.T, r resp) {
			assert.Equal(t, sim.ArtifactCompleted, r.JSON["status"])
			assert.Nil(t, r.JSON["duration"], "scripts have no duration")
			assert.NotNil(t, r.JSON["size"])
		}},
		{name: "get upload_completed presigned upload", run: func(e *stEnv) resp {
			s3, up := e.presign(stKey, "take.wav")
			require.Equal(t, 200, e.put(up, stWAV).Status)
			id := e.artifact(stKey, `{"name":"Take","type":"audio","s3Path":"`+s3+`"}`)
			e.advance(10 * time.Second)
			return e.do(get(id, stKey))
		}, status: 200, check: func(t *testing.T, r resp) {
			assert.Equal(t, sim.ArtifactCompleted, r.JSON["status"])
			assert.Equal(t, float64(len(stWAV)), r.JSON["size"])
			assert.Equal(t, 0.5, r.JSON["duration"])
		}},
		{name: "get upload_failed", run: func(e *stEnv) resp {
			id := e.artifact(stKey, `{"name":"A","type":"video","url":"`+stFailURL+`"}`)
			e.advance(10 * time.Minute)
			return e.do(get(id, stKey))
		}, status: 200, check: func(t *testing.T, r resp) {
			assert.Equal(t, sim.ArtifactFailed, r.JSON["status"])
			assert.Equal(t, stFailMsg, r.JSON["errorMessage"])
		}},
		{name: "get upload_failed never uploaded", run: func(e *stEnv) resp {
			s3, _ := e.presign(stKey, "never.wav")
			id := e.artifact(stKey, `{"name":"A","type":"audio","s3Path":"`+s3+`"}`)
			e.advance(time.Minute)
			return e.do(get(id, stKey))
		}, status: 200, check: func(t *testing.T, r resp) {
			assert.Equal(t, sim.ArtifactFailed, r.JSON["status"])
			assert.Contains(t, r.JSON["errorMessage"], "File not found at s3Path")
		}},
		{name: "get another company's artifact", run: func(e *stEnv) resp {
			return e.do(get(e.artifact(stKeyOther, `{"name":"A","type":"video","url":"`+stMediaURL+`"}`), stKey))
		}, status: 400, err: sim.MsgArtifactDenied},
		{name: "get an unknown artifact", run: stSend(get(stUnknown, stKey)), status: 404, err: sim.MsgStudioNotFound},
		{name: "get with a malformed Authorization", run: stSend(stWithHeader(get(stUnknown, ""), "Authorization", "Basic abc")), status: 400,
			err: sim.MsgStudioAuth, check: stAuthHint("Authorization header must use the Bearer scheme")},
	})
}

func TestStudioProjectsContract(t *testing.T) {
	t.Parallel()
	stRun(t, []stCase{
		// GET /api/v1/projects
		{name: "list", run: stSend(stReq("GET", stProjects, stKey, "")), status: 200, op: "studioListProjects", check: func(t *testing.T, r resp) {
			var names []any
			for _, p := range stList(t, r) {
				names = append(names, p["name"])
			}
			assert.Equal(t, []any{"Product Tutorials", "Summer Campaign 2025", "Webinar Replays"}, names, "newest first")
		}},
		{name: "list with an empty token", run: stSend(stWithHeader(stReq("GET", stProjects, "", ""), "Authorization", "Bearer ")), status: 400,
			err: sim.MsgStudioAuth, check: stAuthHint("empty bearer token")},

		// POST /api/v1/projects
		{name: "create", run: stSend(stReq("POST", stProjects, stKey, `{"name":"Launch","managerEmail":"`+stManager+`","voicesGlossaryId":"`+stVoices+`"}`)),
			status: 200, op: "studioCreateProject", check: func(t *testing.T, r resp) {
				assert.Equal(t, "new", r.JSON["status"])
				assert.Equal(t, stVoices, r.JSON["voicesGlossary"])
				assert.Nil(t, r.JSON["translationGlossary"])
				assert.Equal(t, r.JSON["createdAt"], r.JSON["updatedAt"])
			}},
		{name: "create replayed", run: stIdem(stReq("POST", stProjects, stKey, `{"name":"Launch"}`)), status: 200, check: stReplayed},
		{name: "create without a name", run: stSend(stReq("POST", stProjects, stKey, `{"managerEmail":"`+stManager+`"}`)), status: 400, err: "name is required"},
		{name: "create with an unknown glossary", run: stSend(stReq("POST", stProjects, stKey, `{"name":"P","translationsGlossaryId":"`+stUnknown+`"}`)),
			status: 400, err: "translationsGlossaryId: glossary " + stUnknown + " does not exist"},
		{name: "create with a glossary of the wrong kind", run: stSend(stReq("POST", stProjects, stKey, `{"name":"P","voicesGlossaryId":"`+stGlossary+`"}`)),
			status: 400, err: "voicesGlossaryId: glossary " + stGlossary + " is a translation glossary; this field takes a voices glossary"},
		{name: "create with a refusal replayed", run: stIdem(stReq("POST", stProjects, stKey, `{"name":"P","managerEmail":"`+stOtherManager+`"}`)),
			status: 400, check: stReplayed},
		{name: "create too large", run: stSend(stReq("POST", stProjects, stKey, stTooLarge())), status: 413, err: fmt.Sprintf(sim.MsgBodyTooLarge, 10<<20)},
		{name: "create too large replayed", run: stIdem(stReq("POST", stProjects, stKey, stTooLarge())), status: 413, check: stReplayed},
		{name: "create reusing an Idempotency-Key", run: func(e *stEnv) resp {
			e.ok(stWithHeader(stReq("POST", stProjects, stKey, `{"name":"One"}`), "Idempotency-Key", "k1"))
			return e.do(stWithHeader(stReq("POST", stProjects, stKey, `{"name":"Two"}`), "Idempotency-Key", "k1"))
		}, status: 422, err: fmt.Sprintf(sim.MsgIdempotencyMismatch, "k1")},

		// GET /api/v1/projects/{projectId}
		{name: "get", run: stSend(stReq("GET", stProjectPath(stProject), stKey, "")), status: 200, op: "studioGetProject", check: func(t *testing.T, r resp) {
			assert.Equal(t, "Summer Campaign 2025", r.JSON["name"])
			assert.Equal(t, "67ffd3f86c42040bc01e8230", r.JSON["folderId"])
		}},
		{name: "get a project without glossaries", run: stSend(stReq("GET", stProjectPath("682bc6007125e1af62bc9290"), "dubsim-enterprise", "")), status: 200,
			check: stField("voicesGlossary", nil)},
		{name: "get another company's project", run: stSend(stReq("GET", stProjectPath(stOtherProject), stKey, "")), status: 400, err: sim.MsgStudioDenied},
		{name: "get an unknown project", run: stSend(stReq("GET", stProjectPath(stUnknown), stKey, "")), status: 404, err: sim.MsgStudioNotFound},

		// PATCH /api/v1/projects/{projectId}
		{name: "update", run: stSend(stReq("PATCH", stProjectPath(stProject), stKey, `{"name":"Summer 2025","voicesGlossaryId":""}`)),
			status: 200, op: "studioUpdateProject", check: func(t *testing.T, r resp) {
				assert.Equal(t, "Summer 2025", r.JSON["name"])
				assert.Nil(t, r.JSON["voicesGlossary"], `"" removes the glossary`)
			}},
		{name: "update without a known field", run: stSend(stReq("PATCH", stProjectPath(stProject), stKey, `{"remark":"x"}`)), status: 400, err: stNoFields},
		{name: "update with a manager of another company", run: stSend(stReq("PATCH", stProjectPath(stProject), stKey, `{"managerEmail":"`+stOtherManager+`"}`)),
			status: 400, err: "managerEmail: " + stOtherManager + " does not belong to your company; the manager must be a user of the same company as the API key's user"},
		{name: "update another company's project", run: stSend(stReq("PATCH", stProjectPath(stOtherProject), stKey, `{"name":"x"}`)), status: 400, err: sim.MsgStudioDenied},
		{name: "update an unknown project", run: stSend(stReq("PATCH", stProjectPath(stUnknown), stKey, `{"name":"x"}`)), status: 404, err: sim.MsgStudioNotFound},
		{name: "update too large", run: stSend(stReq("PATCH", stProjectPath(stProject), stKey, stTooLarge())), status: 413, err: fmt.Sprintf(sim.MsgBodyTooLarge, 10<<20)},
	})
}

func TestStudioVideosContract(t *testing.T) {
	t.Parallel()
	getVideo := func(pid, vid string) req { return stReq("GET", stVideoPath(pid, vid), stKey, "") }
	stRun(t, []stCase{
		// POST /api/v1/projects/{projectId}/videos/create
		{name: "create", run: func(e *stEnv) resp {
			return e.do(stReq("POST", stCreateVideoPath(stProject), stKey,
				`{"name":"Teaser","workflowType":"voiceover","sourceArtifactId":"`+e.readyArtifact(stKey, "video")+`","sourceLanguage":"en",`+
					`"targetLanguages":["es-ES"],"remark":"r","stringVariables":[{"key":"k","value":"v"}],"pipelineOptions":{"shouldAutomateTranscription":true}}`))
		}, status: 200, op: "studioCreateVideo", check: func(t *testing.T, r resp) {
			assert.Equal(t, "new", r.JSON["status"])
			assert.Equal(t, "voiceover", r.JSON["workflowType"])
			assert.Equal(t, 12.0, r.JSON["videoDuration"])
		}},
		{name: "create replayed", run: func(e *stEnv) resp {
			return stIdem(stReq("POST", stCreateVideoPath(stProject), stKey, stVideoBody(e.readyArtifact(stKey, "audio"))))(e)
		}, status: 200, check: stReplayed},
		{name: "create from an artifact still processing", run: func(e *stEnv) resp {
			src := e.artifact(stKey, `{"name":"A","type":"video","url":"`+stMediaURL+`"}`)
			return e.do(stReq("POST", stCreateVideoPath(stProject), stKey, stVideoBody(src)))
		}, status: 400, check: func(t *testing.T, r resp) {
			assert.Contains(t, r.JSON["error"], "has status created; an artifact is usable only when its status is upload_completed")
		}},
		{name: "create with multi not enabled", run: stSend(stReq("POST", stCreateVideoPath(stProject), stKey,
			`{"name":"V","workflowType":"dubbing","sourceArtifactId":"`+stUnknown+`","sourceLanguage":"multi","targetLanguages":["es-ES"]}`)),
			status: 400, err: "sourceLanguage: multi is not enabled for your organization; an administrator enables it through your account manager"},
		{name: "create with target languages without region", run: stSend(stReq("POST", stCreateVideoPath(stProject), stKey,
			`{"name":"V","workflowType":"dubbing","sourceArtifactId":"`+stUnknown+`","sourceLanguage":"en","targetLanguages":["es"]}`)),
			status: 400, err: `targetLanguages[0] must be a language code like es-ES; got "es"`},
		{name: "create in another company's project", run: stSend(stReq("POST", stCreateVideoPath(stOtherProject), stKey, stVideoBody(stUnknown))),
			status: 400, err: sim.MsgStudioDenied},
		{name: "create with a refusal replayed", run: stIdem(stReq("POST", stCreateVideoPath(stProject), stKey, `{"name":"V"}`)),
			status: 400, err: "workflowType is required", check: stReplayed},
		{name: "create in an unknown project", run: stSend(stReq("POST", stCreateVideoPath(stUnknown), stKey, stVideoBody(stUnknown))),
			status: 404, err: sim.MsgStudioNotFound},
		{name: "create in an unknown project replayed", run: stIdem(stReq("POST", stCreateVideoPath(stUnknown), stKey, stVideoBody(stUnknown))),
			status: 404, check: stReplayed},
		{name: "create too large", run: stSend(stReq("POST", stCreateVideoPath(stProject), stKey, stTooLarge())), status: 413, err: fmt.Sprintf(sim.MsgBodyTooLarge, 10<<20)},
		{name: "create too large replayed", run: stIdem(stReq("POST", stCreateVideoPath(stProject), stKey, stTooLarge())), status: 413, check: stReplayed},
		{name: "create reusing an Idempotency-Key", run: func(e *stEnv) resp {
			src := e.readyArtifact(stKey, "video")
			e.ok(stWithHeader(stReq("POST", stCreateVideoPath(stProject), stKey, stVideoBody(src)), "Idempotency-Key", "k1"))
			return e.do(stWithHeader(stReq("POST", stCreateVideoPath(stProject2), stKey, stVideoBody(src)), "Idempotency-Key", "k1"))
		}, status: 422, err: fmt.Sprintf(sim.MsgIdempotencyMismatch, "k1")},

		// GET /api/v1/projects/{projectId}/videos
		{name: "list", run: stSend(stReq("GET", stVideosPath(stProject), stKey, "")), status: 200, op: "studioListVideos", check: func(t *testing.T, r resp) {
			var ids []any
			for _, v := range stList(t, r) {
				ids = append(ids, v["id"])
			}
			assert.Equal(t, []any{stVideoHero, "682bc5cf0a4e53a77de3f4d0", stVideo}, ids, "oldest first")
		}},
		{name: "list of another company's project", run: stSend(stReq("GET", stVideosPath(stOtherProject), stKey, "")), status: 400, err: sim.MsgStudioDenied},
		{name: "list of an unknown project", run: stSend(stReq("GET", stVideosPath(stUnknown), stKey, "")), status: 404, err: sim.MsgStudioNotFound},

		// GET /api/v1/projects/{projectId}/videos/{videoId}, through the lifecycle
		{name: "get", run: stSend(getVideo(stProject, stVideoHero)), status: 200, op: "studioGetVideo", check: func(t *testing.T, r resp) {
			assert.Equal(t, "completed", r.JSON["status"])
			assert.NotContains(t, r.JSON, "translationGuidance", "only the update answer has it")
		}},
		{name: "get without duration", run: stSend(getVideo(stProject2, stVideo2)), status: 200, check: stField("videoDuration", nil)},
		{name: "get new", run: func(e *stEnv) resp { return e.do(getVideo(stProject, e.video(stKey, stProject))) },
			status: 200, check: stField("status", "new")},
		{name: "get in_progress", run: func(e *stEnv) resp {
			id := e.video(stKey, stProject)
			e.advance(time.Minute)
			return e.do(getVideo(stProject, id))
		}, status: 200, check: stField("status", "in_progress")},
		{name: "get completed", run: func(e *stEnv) resp {
			id := e.video(stKey, stProject)
			e.advance(12 * time.Minute)
			return e.do(getVideo(stProject, id))
		}, status: 200, check: stField("status", "completed")},
		{name: "get in another company's project", run: stSend(getVideo(stOtherProject, stOtherVideo)), status: 400, err: sim.MsgStudioDenied},
		{name: "get an unknown video", run: stSend(getVideo(stProject, stUnknown)), status: 404, err: sim.MsgStudioNotFound},
		{name: "get a video of another project", run: stSend(getVideo(stProject, stVideo2)), status: 404, err: sim.MsgStudioNotFound},

		// PATCH /api/projects/{projectId}/videos/{videoId}
		{name: "update", run: stSend(stReq("PATCH", stUpdateVideoPath(stProject, stVideo), stKey,
			`{"status":"in_progress","processingType":"standard","stringVariables":[{"key":"k","value":"v"}],"translationGuidance":{"common":"Formal","byLang":{"es-ES":"usted"}}}`)),
			status: 200, op: "studioUpdateVideo", check: func(t *testing.T, r resp) {
				assert.Equal(t, "in_progress", r.JSON["status"])
				assert.Equal(t, map[string]any{"common": "Formal", "byLang": map[string]any{"es-ES": "usted"}}, r.JSON["translationGuidance"])
			}},
		{name: "update removing guidance and remark", run: stSend(stReq("PATCH", stUpdateVideoPath(stProject, stVideoHero), stKey,
			`{"dstLangs":["en","fr"],"remark":null,"stringVariables":null,"translationGuidance":null}`)),
			status: 200, check: func(t *testing.T, r resp) {
				assert.Nil(t, r.JSON["translationGuidance"])
				assert.Nil(t, r.JSON["remark"])
				assert.Nil(t, r.JSON["stringVariables"])
			}},
		{name: "update without a known field", run: stSend(stReq("PATCH", stUpdateVideoPath(stProject, stVideo), stKey, `{"metadata":[]}`)), status: 400, err: stNoFields},
		{name: "update with an unknown status", run: stSend(stReq("PATCH", stUpdateVideoPath(stProject, stVideo), stKey, `{"status":"archived"}`)),
			status: 400, err: `status must be one of new, in_progress, completed; got "archived"`},
		{name: "update guidance for another language", run: stSend(stReq("PATCH", stUpdateVideoPath(stProject, stVideo), stKey, `{"translationGuidance":{"byLang":{"it-IT":"x"}}}`)),
			status: 400, err: "translationGuidance.byLang: it-IT is not a target language of the video (es-ES, fr-FR, de-DE)"},
		{name: "update in another company's project", run: stSend(stReq("PATCH", stUpdateVideoPath(stOtherProject, stOtherVideo), stKey, `{"name":"x"}`)),
			status: 400, err: sim.MsgStudioDenied},
		{name: "update an unknown video", run: stSend(stReq("PATCH", stUpdateVideoPath(stProject, stUnknown), stKey, `{"name":"x"}`)), status: 404, err: sim.MsgStudioNotFound},
		{name: "update too large", run: stSend(stReq("PATCH", stUpdateVideoPath(stProject, stVideo), stKey, stTooLarge())), status: 413, err: fmt.Sprintf(sim.MsgBodyTooLarge, 10<<20)},
	})
}

func TestStudioUploadsContract(t *testing.T) {
	t.Parallel()
	// sig replaces the signature of a presigned path.
	sig := func(p, s string) string {
		u, _ := url.Parse(p)
		q := u.Query()
		q.Set("X-Amz-Signature", s)
		u.RawQuery = q.Encode()
		return u.String()
	}
	stRun(t, []stCase{
		{name: "put", run: func(e *stEnv) resp {
			_, up := e.presign(stKey, "take.wav")
			return e.put(up, stWAV)
		}, status: 200, op: "studioUploadFile", check: func(t *testing.T, r resp) {
			sum := md5.Sum(stWAV)
			assert.Equal(t, `"`+hex.EncodeToString(sum[:])+`"`, r.Header.Get("ETag"))
		}},
		{name: "put a second time", run: func(e *stEnv) resp {
			_, up := e.presign(stKey, "take.wav")
			require.Equal(t, 200, e.put(up, []byte("first")).Status)
			return e.put(up, stWAV)
		}, status: 200},
		{name: "wrong signature", run: func(e *stEnv) resp {
			_, up := e.presign(stKey, "take.wav")
			return e.put(sig(up, strings.Repeat("0", 64)), stWAV)
		}, status: 403, check: func(t *testing.T, r resp) { assert.Equal(t, "SignatureDoesNotMatch", stS3Code(t, r)) }},
		{name: "expired", run: func(e *stEnv) resp {
			_, up := e.presign(stKey, "take.wav")
			e.advance(25 * time.Hour)
			return e.put(up, stWAV)
		}, status: 403, check: func(t *testing.T, r resp) { assert.Equal(t, "AccessDenied", stS3Code(t, r)) }},
		{name: "unknown upload", run: func(e *stEnv) resp {
			_, up := e.presign(stKey, "take.wav")
			return e.put(strings.Replace(up, "/take.wav?", "/other.wav?", 1), stWAV)
		}, status: 404, check: func(t *testing.T, r resp) { assert.Equal(t, "NoSuchUpload", stS3Code(t, r)) }},
		{name: "over 5 GB", run: func(e *stEnv) resp {
			_, up := e.presign(stKey, "take.wav")
			return e.putAnnounced(up, sim.MaxArtifactBytes+1, make([]byte, 8<<10))
		}, status: 413, check: func(t *testing.T, r resp) { assert.Equal(t, "EntityTooLarge", stS3Code(t, r)) }},
		{name: "store failure", run: func(e *stEnv) resp {
			_, up := e.presign(stKey, "take.wav")
			e.store.failWrites.Store(true)
			return e.put(up, stWAV)
		}, status: 500, check: func(t *testing.T, r resp) { assert.Equal(t, "InternalError", stS3Code(t, r)) }},
		{name: "store failure on the lookup is not a missing upload", run: func(e *stEnv) resp {
			_, up := e.presign(stKey, "take.wav")
			e.store.failReads.Store(true)
			return e.put(up, stWAV)
		}, status: 500, check: func(t *testing.T, r resp) { assert.Equal(t, "InternalError", stS3Code(t, r)) }},
	})
}

// stOperations is a request to each key-authenticated studio operation
// (the rate limit and a failing store answer before its handler runs).
var stOperations = []struct {
	op string
	r  req
}{
	{"studioGetPresignedUploadUrl", stReq("GET", stArtifacts+"?fileName=clip.wav", stKey, "")},
	{"studioCreateArtifact", stReq("POST", stArtifacts, stKey, `{"name":"A","type":"video","url":"`+stMediaURL+`"}`)},
	{"studioGetArtifact", stReq("GET", "/api/v1/artifacts/"+stUnknown, stKey, "")},
	{"studioListProjects", stReq("GET", stProjects, stKey, "")},
	{"studioCreateProject", stReq("POST", stProjects, stKey, `{"name":"P"}`)},
	{"studioGetProject", stReq("GET", stProjectPath(stProject), stKey, "")},
	{"studioUpdateProject", stReq("PATCH", stProjectPath(stProject), stKey, `{"name":"P"}`)},
	{"studioCreateVideo", stReq("POST", stCreateVideoPath(stProject), stKey, stVideoBody(stUnknown))},
	{"studioListVideos", stReq("GET", stVideosPath(stProject), stKey, "")},
	{"studioGetVideo", stReq("GET", stVideoPath(stProject, stVideo), stKey, "")},
	{"studioUpdateVideo", stReq("PATCH", stUpdateVideoPath(stProject, stVideo), stKey, `{"name":"V"}`)},
}

// TestStudioRateLimitContract: over a key's limit, every operation answers
// 429 with Retry-After.
func TestStudioRateLimitContract(t *testing.T) {
	t.Parallel()
	for _, o := range stOperations {
		t.Run(o.op, func(t *testing.T) {
			t.Parallel()
			e := newStudioEnv(t, func(c *app.Config) { c.StudioRateLimit = sim.RateLimit{PerMinute: 1} })
			e.ok(stReq("GET", stProjects, stKey, ""))
			r := e.do(o.r)
			require.Equal(t, http.StatusTooManyRequests, r.Status, "%s", r.Body)
			assert.Equal(t, o.op, r.Op)
			assert.Equal(t, "60", r.Header.Get("Retry-After"))
			assert.Equal(t, fmt.Sprintf(sim.MsgRateLimitMinute, 1, 60), r.JSON["error"])
			assert.Equal(t, http.StatusOK, e.do(stReq("GET", stProjects, stKey2, "")).Status, "per API key")
		})
	}
}

// TestStudioInternalErrorContract: when the store fails, every operation
// answers 500 with the masked message.
func TestStudioInternalErrorContract(t *testing.T) {
	t.Parallel()
	for _, o := range stOperations {
		t.Run(o.op, func(t *testing.T) {
			t.Parallel()
			e := newStudioEnv(t, nil)
			e.store.failReads.Store(true)
			r := e.do(o.r)
			require.Equal(t, http.StatusInternalServerError, r.Status, "%s", r.Body)
			assert.Equal(t, o.op, r.Op)
			assert.Equal(t, map[string]any{"error": sim.MsgInternal}, r.JSON)
		})
	}
}

// TestStudioCreatedContract: with --create-status 201, the creations
// answer 201.
func TestStudioCreatedContract(t *testing.T) {
	t.Parallel()
	e := newStudioEnv(t, func(c *app.Config) { c.CreateStatus = http.StatusCreated })
	src := e.artifact(stKey, `{"name":"A","type":"video","url":"`+stMediaURL+`"}`)
	e.advance(10 * time.Second)
	for _, tc := range []struct {
		op string
		r  req
	}{
		{"studioCreateArtifact", stReq("POST", stArtifacts, stKey, `{"name":"A","type":"audio","url":"`+stMediaURL+`"}`)},
		{"studioCreateProject", stReq("POST", stProjects, stKey, `{"name":"P"}`)},
		{"studioCreateVideo", stReq("POST", stCreateVideoPath(stProject), stKey, stVideoBody(src))},
	} {
		r := e.do(tc.r)
		require.Equal(t, http.StatusCreated, r.Status, "%s: %s", tc.op, r.Body)
		assert.Equal(t, tc.op, r.Op)
		assert.Regexp(t, `^[0-9a-f]{24}$`, r.JSON["id"])
		first := e.do(stWithHeader(tc.r, "Idempotency-Key", "k-"+tc.op))
		require.Equal(t, http.StatusCreated, first.Status, "%s: %s", tc.op, first.Body)
		replay := e.do(stWithHeader(tc.r, "Idempotency-Key", "k-"+tc.op))
		assert.Equal(t, http.StatusCreated, replay.Status, "%s: a replay keeps the status", tc.op)
		stReplayed(t, replay)
	}
}

// TestStudioIdempotencyInFlightContract: a POST whose Idempotency-Key is
// used by a request still running is refused with 409; the first request
// then completes.
func TestStudioIdempotencyInFlightContract(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		op   string
		body func(e *stEnv) req
	}{
		{"studioCreateArtifact", func(*stEnv) req {
			return stReq("POST", stArtifacts, stKey, `{"name":"A","type":"video","url":"`+stMediaURL+`"}`)
		}},
		{"studioCreateProject", func(*stEnv) req { return stReq("POST", stProjects, stKey, `{"name":"P"}`) }},
		{"studioCreateVideo", func(e *stEnv) req {
			return stReq("POST", stCreateVideoPath(stProject), stKey, stVideoBody(e.readyArtifact(stKey, "video")))
		}},
	} {
		t.Run(tc.op, func(t *testing.T) {
			t.Parallel()
			e := newStudioEnv(t, nil)
			r := stWithHeader(tc.body(e), "Idempotency-Key", "slow")
			hold := e.store.holdNextWrite()
			done := make(chan resp)
			go func() { done <- e.do(r) }()
			select {
			case <-hold.entered:
			case first := <-done:
				t.Fatalf("the first request ended without writing: %d %s", first.Status, first.Body)
			}
			second := e.do(r)
			close(hold.release)
			first := <-done
			require.Equal(t, http.StatusConflict, second.Status, "%s", second.Body)
			assert.Equal(t, tc.op, second.Op)
			assert.Equal(t, fmt.Sprintf(sim.MsgIdempotencyInFlight, "slow"), second.JSON["error"])
			assert.Equal(t, http.StatusOK, first.Status, "%s", first.Body)
			replay := e.do(r)
			assert.Equal(t, string(first.Body), string(replay.Body))
			stReplayed(t, replay)
		})
	}
}

// stSchema compiles a component schema of the studio document.
func stSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	b, err := openapi.Document(openapi.Studio)
	require.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.DefaultDraft(jsonschema.Draft2020)
	require.NoError(t, c.AddResource("mem:///studio.json", doc))
	s, err := c.Compile("mem:///studio.json#/components/schemas/" + name)
	require.NoError(t, err)
	return s
}

// TestStudioRequestSchemas: the documented request bodies accept what the
// handlers accept and refuse what they refuse (with 400), for the rules a
// schema can state. Each body is sent to dubsim and checked against its
// schema; "{src}" stands for an upload_completed video artifact.
func TestStudioRequestSchemas(t *testing.T) {
	t.Parallel()
	const (
		createArtifact = "CreateArtifactRequest"
		createProject  = "CreateProjectRequest"
		updateProject  = "UpdateProjectRequest"
		createVideo    = "CreateVideoRequest"
		updateVideo    = "UpdateVideoRequest"
	)
	paths := map[string]struct{ method, path string }{
		createArtifact: {"POST", stArtifacts},
		createProject:  {"POST", stProjects},
		updateProject:  {"PATCH", stProjectPath(stProject)},
		createVideo:    {"POST", stCreateVideoPath(stProject)},
		updateVideo:    {"PATCH", stUpdateVideoPath(stProject, stVideo)},
	}
	long := strings.Repeat("n", 501)
	video := func(fields string) string {
		return `{"name":"V","workflowType":"dubbing","sourceArtifactId":"{src}","sourceLanguage":"en","targetLanguages":["es-ES"]` + fields + `}`
	}
	for _, tc := range []struct {
		schema, body string
		valid        bool
	}{
		{createArtifact, `{"name":"A","type":"video","url":"` + stMediaURL + `"}`, true},
		{createArtifact, `{"name":"A","type":"audio","s3Path":"s3://dubsim-artifacts/temp/x/a.wav"}`, true},
		{createArtifact, `{"name":"A","type":"script","url":"https://cdn.example.com/a.srt"}`, true},
		{createArtifact, `{"name":"A","type":"video","fragments":[{"url":"` + stMediaURL + `","startTime":0},{"s3Path":"s3://b/k.mp4","startTime":1.5}]}`, true},
		{createArtifact, `{"name":"A","url":"` + stMediaURL + `"}`, false},
		{createArtifact, `{"name":"A","type":"subtitles","url":"` + stMediaURL + `"}`, false},
		{createArtifact, `{"name":"   ","type":"video","url":"` + stMediaURL + `"}`, false},
		{createArtifact, `{"name":"` + long + `","type":"video","url":"` + stMediaURL + `"}`, false},
		{createArtifact, `{"name":"A","type":"video"}`, false},
		{createArtifact, `{"name":"A","type":"video","url":"` + stMediaURL + `","s3Path":"s3://b/k.mp4"}`, false},
		{createArtifact, `{"name":"A","type":"video","url":"ftp://cdn.example.com/a.mp4"}`, false},
		{createArtifact, `{"name":"A","type":"video","s3Path":"s3://bucket"}`, false},
		{createArtifact, `{"name":"A","type":"video","fragments":[]}`, false},
		{createArtifact, `{"name":"A","type":"script","fragments":[{"url":"` + stMediaURL + `","startTime":0}]}`, false},
		{createArtifact, `{"name":"A","type":"video","fragments":[{"url":"` + stMediaURL + `","startTime":-1}]}`, false},
		{createArtifact, `{"name":"A","type":"video","fragments":[{"url":"` + stMediaURL + `"}]}`, false},
		{createArtifact, `{"name":"A","type":"video","fragments":[{"url":"` + stMediaURL + `","s3Path":"s3://b/k.mp4","startTime":0}]}`, false},

		{createProject, `{"name":"P"}`, true},
		{createProject, `{"name":"P","managerEmail":"` + stManager + `","translationsGlossaryId":"` + stGlossary + `","voicesGlossaryId":""}`, true},
		{createProject, `{}`, false},
		{createProject, `{"name":""}`, false},
		{createProject, `{"name":42}`, false},
		{createProject, `{"name":"P","managerEmail":"nobody"}`, false},
		{createProject, `{"name":"P","voicesGlossaryId":"voices_7c92e3a1f56d8"}`, false},

		{updateProject, `{"voicesGlossaryId":""}`, true},
		{updateProject, `{"name":"P","pronunciationGlossaryId":"676604f4bd76c09876a4bc5e"}`, true},
		{updateProject, `{}`, false},
		{updateProject, `{"remark":"not a request field"}`, false},
		{updateProject, `{"name":null}`, false},

		{createVideo, video(``), true},
		{createVideo, video(`,"remark":"r","stringVariables":[{"key":"k","value":""}],"pipelineOptions":{"shouldAutomateTranslation":false}`), true},
		{createVideo, `{"name":"V","workflowType":"dubbing","sourceArtifactId":"{src}","sourceLanguage":"en"}`, false},
		{createVideo, video(`,"targetLanguages":["es"]`), false},
		{createVideo, video(`,"targetLanguages":[]`), false},
		{createVideo, video(`,"targetLanguages":["es-ES","es-ES"]`), false},
		{createVideo, `{"name":"V","workflowType":"standard","sourceArtifactId":"{src}","sourceLanguage":"en","targetLanguages":["es-ES"]}`, false},
		{createVideo, `{"name":"V","workflowType":"dubbing","sourceArtifactId":"{src}","sourceLanguage":"eng","targetLanguages":["es-ES"]}`, false},
		{createVideo, video(`,"pipelineOptions":{"shouldAutomateTranscription":"yes"}`), false},
		{createVideo, video(`,"stringVariables":[{"key":"","value":"v"}]`), false},

		{updateVideo, `{"status":"completed"}`, true},
		{updateVideo, `{"dstLangs":["en","fr-FR"],"processingType":"standard"}`, true},
		{updateVideo, `{"remark":null}`, true},
		{updateVideo, `{"translationGuidance":null,"stringVariables":[]}`, true},
		{updateVideo, `{"translationGuidance":{"common":"Formal"}}`, true},
		{updateVideo, `{}`, false},
		{updateVideo, `{"status":"archived"}`, false},
		{updateVideo, `{"processingType":""}`, false},
		{updateVideo, `{"dstLangs":[]}`, false},
		{updateVideo, `{"dstLangs":["EN"]}`, false},
		{updateVideo, `{"translationGuidance":{}}`, false},
		{updateVideo, `{"translationGuidance":{"byLang":{}}}`, false},
		{updateVideo, `{"translationGuidance":{"common":1}}`, false},
		{updateVideo, `{"stringVariables":[{"key":"k"}]}`, false},
	} {
		t.Run(tc.schema+" "+tc.body, func(t *testing.T) {
			t.Parallel()
			e := newStudioEnv(t, nil)
			body := tc.body
			if strings.Contains(body, "{src}") {
				body = strings.ReplaceAll(body, "{src}", e.readyArtifact(stKey, "video"))
			}
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
			require.NoError(t, err)
			schemaErr := stSchema(t, tc.schema).Validate(inst)
			assert.Equal(t, tc.valid, schemaErr == nil, "schema verdict: %v", schemaErr)
			p := paths[tc.schema]
			r := e.do(stReq(p.method, p.path, stKey, body))
			if tc.valid {
				assert.Equal(t, http.StatusOK, r.Status, "dubsim accepts it: %s", r.Body)
			} else {
				assert.Equal(t, http.StatusBadRequest, r.Status, "dubsim refuses it: %s", r.Body)
			}
		})
	}
}

// stAbsent, as a value of stMod, deletes the field.
const stAbsent = "<absent>"

// stMod returns base with the fields of mod set (or deleted).
func stMod(base, mod map[string]any) map[string]any {
	for k, v := range mod {
		if v == stAbsent {
			delete(base, k)
		} else {
			base[k] = v
		}
	}
	return base
}

// TestStudioDocumentRefuses: the document is strict: answers that break a
// rule of the studio (a field in the wrong status, a missing or extra field,
// a value outside an enumeration, a missing header, the wrong XML root) do
// not validate, while the same answers without the fault do.
func TestStudioDocumentRefuses(t *testing.T) {
	t.Parallel()
	artifact := func(mod map[string]any) map[string]any {
		a := map[string]any{"id": "698334c05758d9ae85903469", "name": "Source video", "type": "video", "status": "upload_completed",
			"uploadMethod": "direct_url", "size": 3750000, "duration": 12, "errorMessage": nil,
			"createdAt": "2026-02-04T12:00:00.000Z", "updatedAt": "2026-02-04T12:00:07.209Z",
			"s3Path": "uploads/698334c05758d9ae85903469/short.mp4", "company": map[string]any{"id": "663266da5ec2709f7826386f"},
			"createdBy": map[string]any{"id": "6633800fe4e6d9a72a921bb6"}}
		return stMod(a, mod)
	}
	created := func(mod map[string]any) map[string]any {
		a := artifact(map[string]any{"status": "created", "size": nil, "duration": nil, "s3Bucket": "dubsim-artifacts",
			"company":   map[string]any{"id": "663266da5ec2709f7826386f", "name": "Acme Media"},
			"createdBy": map[string]any{"id": "6633800fe4e6d9a72a921bb6", "name": "Alice Johnson"}})
		return stMod(a, mod)
	}
	video := func(mod map[string]any) map[string]any {
		v := map[string]any{"id": "683b275c0a4e53a77de3f4d1", "name": "Social cutdown 15s", "status": "new", "processingType": "subtitling",
			"srcLang": "en", "dstLangs": []any{"es-ES"}, "videoUrl": "http://127.0.0.1/api/v1/projects/" + stProject + "/videos/683b275c0a4e53a77de3f4d1",
			"videoDuration": 15, "remark": nil, "stringVariables": nil, "createdAt": "2026-02-03T16:00:00.000Z", "updatedAt": "2026-02-03T16:00:00.000Z"}
		return stMod(v, mod)
	}
	project := func(mod map[string]any) map[string]any {
		p := map[string]any{"id": stProject, "name": "Summer", "status": "new", "translationGlossary": nil, "voicesGlossary": nil,
			"pronunciationGlossary": nil, "remark": nil, "clientName": nil, "folderId": nil, "projectUrl": "http://127.0.0.1/projects/" + stProject,
			"createdAt": "2026-02-04T12:00:00.000Z", "updatedAt": "2026-02-04T12:00:00.000Z"}
		return stMod(p, mod)
	}
	js := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	xmlH := http.Header{"Content-Type": {"application/xml"}}
	getArtifact, getVideo := "/api/v1/artifacts/"+stUnknown, stVideoPath(stProject, stVideo)
	upload := "/_uploads/00000000-0000-4000-8000-000000000000/a.wav"
	for _, tc := range []struct {
		name, method, path string
		status             int
		header             http.Header
		body               any // JSON-encoded unless a string
		valid              bool
	}{
		{"artifact completed", "GET", getArtifact, 200, js, artifact(nil), true},
		{"artifact completed script", "GET", getArtifact, 200, js, artifact(map[string]any{"type": "script", "duration": nil}), true},
		{"artifact started", "GET", getArtifact, 200, js, artifact(map[string]any{"status": "upload_started", "size": nil, "duration": nil}), true},
		{"artifact failed", "GET", getArtifact, 200, js, artifact(map[string]any{"status": "upload_failed", "size": nil, "duration": nil, "errorMessage": "x"}), true},
		{"artifact failed without errorMessage", "GET", getArtifact, 200, js, artifact(map[string]any{"status": "upload_failed", "size": nil, "duration": nil}), false},
		{"artifact failed with a size", "GET", getArtifact, 200, js, artifact(map[string]any{"status": "upload_failed", "duration": nil, "errorMessage": "x"}), false},
		{"artifact created with a size", "GET", getArtifact, 200, js, artifact(map[string]any{"status": "created", "duration": nil}), false},
		{"artifact started with an errorMessage", "GET", getArtifact, 200, js, artifact(map[string]any{"status": "upload_started", "size": nil, "duration": nil, "errorMessage": "x"}), false},
		{"artifact completed video without duration", "GET", getArtifact, 200, js, artifact(map[string]any{"duration": nil}), false},
		{"artifact completed without size", "GET", getArtifact, 200, js, artifact(map[string]any{"size": nil}), false},
		{"artifact completed script with a duration", "GET", getArtifact, 200, js, artifact(map[string]any{"type": "script"}), false},
		{"artifact in the docs' middle status", "GET", getArtifact, 200, js, artifact(map[string]any{"status": "ready"}), false},
		{"artifact without errorMessage", "GET", getArtifact, 200, js, artifact(map[string]any{"errorMessage": stAbsent}), false},
		{"artifact with s3Bucket", "GET", getArtifact, 200, js, artifact(map[string]any{"s3Bucket": "b"}), false},
		{"artifact with the company's name", "GET", getArtifact, 200, js, artifact(map[string]any{"company": map[string]any{"id": "663266da5ec2709f7826386f", "name": "Acme"}}), false},
		{"artifact with a non-hex id", "GET", getArtifact, 200, js, artifact(map[string]any{"id": "67a8f9b0c1d2e3f4g5h6i7j8"}), false},
		{"artifact with a timestamp without milliseconds", "GET", getArtifact, 200, js, artifact(map[string]any{"createdAt": "2026-02-04T12:00:00Z"}), false},
		{"artifact created", "POST", stArtifacts, 200, js, created(nil), true},
		{"artifact created in another status", "POST", stArtifacts, 200, js, created(map[string]any{"status": "upload_started"}), false},
		{"artifact created without the company's name", "POST", stArtifacts, 200, js, created(map[string]any{"company": map[string]any{"id": "663266da5ec2709f7826386f"}}), false},
		{"video", "GET", getVideo, 200, js, video(nil), true},
		{"video with guidance", "GET", getVideo, 200, js, video(map[string]any{"translationGuidance": nil}), false},
		{"video with an unknown status", "GET", getVideo, 200, js, video(map[string]any{"status": "archived"}), false},
		{"video without remark", "GET", getVideo, 200, js, video(map[string]any{"remark": stAbsent}), false},
		{"video without stringVariables", "GET", getVideo, 200, js, video(map[string]any{"stringVariables": stAbsent}), false},
		{"video with empty stringVariables", "GET", getVideo, 200, js, video(map[string]any{"stringVariables": []any{}}), true},
		{"video created with processingType", "POST", stCreateVideoPath(stProject), 200, js, video(nil), false},
		{"video updated without guidance", "PATCH", stUpdateVideoPath(stProject, stVideo), 200, js, video(nil), false},
		{"video updated", "PATCH", stUpdateVideoPath(stProject, stVideo), 200, js, video(map[string]any{"translationGuidance": map[string]any{"common": "x"}}), true},
		{"project", "GET", stProjectPath(stProject), 200, js, project(nil), true},
		{"project in another status", "GET", stProjectPath(stProject), 200, js, project(map[string]any{"status": "in_progress"}), false},
		{"project with a relative projectUrl", "GET", stProjectPath(stProject), 200, js, project(map[string]any{"projectUrl": "/projects/x"}), false},
		{"error", "GET", stProjectPath(stProject), 404, js, map[string]any{"error": "Not Found"}, true},
		{"error in the platform's envelope", "GET", stProjectPath(stProject), 404, js, map[string]any{"error": "NotFoundError", "message": "x"}, false},
		{"rate limit", "GET", stProjects, 429, http.Header{"Content-Type": js["Content-Type"], "Retry-After": {"60"}}, map[string]any{"error": "x"}, true},
		{"rate limit without Retry-After", "GET", stProjects, 429, js, map[string]any{"error": "x"}, false},
		{"a status the operation never answers", "GET", stProjects, 404, js, map[string]any{"error": "Not Found"}, false},
		{"upload", "PUT", upload, 200, http.Header{"Etag": {`"0123456789abcdef0123456789abcdef"`}}, "", true},
		{"upload without ETag", "PUT", upload, 200, http.Header{}, "", false},
		{"upload with a body", "PUT", upload, 200, http.Header{"Etag": {`"0123456789abcdef0123456789abcdef"`}}, "ok", false},
		{"upload error", "PUT", upload, 404, xmlH, `<?xml version="1.0" encoding="UTF-8"?>` + "\n<Error><Code>NoSuchUpload</Code></Error>", true},
		{"upload error with another root", "PUT", upload, 404, xmlH, `<Err><Code>NoSuchUpload</Code></Err>`, false},
		{"upload error in JSON", "PUT", upload, 404, js, `{"error":"Not Found"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body, ok := tc.body.(string)
			if !ok {
				b, err := json.Marshal(tc.body)
				require.NoError(t, err)
				body = string(b)
			}
			_, err := validators[openapi.Studio].Check(tc.method, tc.path, tc.status, tc.header, []byte(body))
			assert.Equal(t, tc.valid, err == nil, "%v", err)
		})
	}
}

// TestStudioFixturesContract: every fixture project and video of the three
// fixture companies matches the document, through list and get.
func TestStudioFixturesContract(t *testing.T) {
	t.Parallel()
	for _, key := range []string{stKey, stKeyOther, "dubsim-enterprise"} {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			e := newStudioEnv(t, nil)
			projects := stList(t, e.ok(stReq("GET", stProjects, key, "")))
			require.NotEmpty(t, projects)
			for _, p := range projects {
				id := p["id"].(string)
				assert.Equal(t, p, e.ok(stReq("GET", stProjectPath(id), key, "")).JSON, "get equals the list entry")
				for _, v := range stList(t, e.ok(stReq("GET", stVideosPath(id), key, ""))) {
					assert.Equal(t, v, e.ok(stReq("GET", stVideoPath(id, v["id"].(string)), key, "")).JSON, "get equals the list entry")
				}
			}
		})
	}
}

// The quotas' answers (docs/fidelity.md HB6, HB7): a presign past the
// company's outstanding ones, and a PUT past the company's stored bytes.
func TestStudioQuotaContract(t *testing.T) {
	t.Parallel()
	e := newStudioEnv(t, func(c *app.Config) {
		c.Quota = sim.BlobQuota{PerCompany: 10, PresignsPerCompany: 2}
	})
	_, first := e.presign(stKey, "a.wav")
	e.presign(stKey, "b.wav")
	r := e.do(stReq("GET", stArtifacts+"?fileName=c.wav", stKey, ""))
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	assert.Equal(t, "studioGetPresignedUploadUrl", r.Op)
	assert.Equal(t, map[string]any{"error": fmt.Sprintf(sim.MsgPresignsOutstanding, 2)}, r.JSON)

	r = e.put(first, make([]byte, 11))
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	assert.Contains(t, string(r.Body), "<Code>QuotaExceeded</Code>")
}

// A body that did not arrive (docs/fidelity.md HW2, HW5): stalled, or
// trickled below the minimum rate, it is S3's RequestTimeout; shorter than
// its Content-Length when the client closes, IncompleteBody.
func TestStudioBodyNotReceivedContract(t *testing.T) {
	t.Parallel()
	e := newStudioEnv(t, func(c *app.Config) {
		c.BodyIdleTimeout = 200 * time.Millisecond
	})
	_, up := e.presign(stKey, "a.wav")
	r := e.putRaw(up, 100, make([]byte, 10), false)
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.Contains(t, string(r.Body), "<Code>RequestTimeout</Code>")

	_, up = e.presign(stKey, "b.wav")
	r = e.putRaw(up, 100, make([]byte, 10), true)
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.Contains(t, string(r.Body), "<Code>IncompleteBody</Code>")
}

// A creation past the company's pending downloads (docs/fidelity.md HX1).
func TestStudioDownloadsContract(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(hold) }) // runs first: the download ends
	e := newStudioEnv(t, func(c *app.Config) {
		c.Quota = sim.BlobQuota{DownloadsPerCompany: 1}
	})
	body := `{"name":"Slow","type":"video","url":"` + slow.URL + `/slow.mp4"}`
	e.ok(stReq("POST", stArtifacts, stKey, body))
	r := e.do(stReq("POST", stArtifacts, stKey, body))
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	assert.Equal(t, "studioCreateArtifact", r.Op)
	assert.Equal(t, map[string]any{"error": fmt.Sprintf(sim.MsgDownloadsPending, 1)}, r.JSON)
}
