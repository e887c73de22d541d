package openapi_test

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/audio"
	"github.com/dubsim/dubsim/sim/openapi"
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
