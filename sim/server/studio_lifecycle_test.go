package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ----- helpers of the studio tests -----

// studioAdvance moves the instance's simulated clock forward by d and applies
// every transition that became due.
func studioAdvance(t testing.TB, in *inst, d time.Duration) time.Time {
	t.Helper()
	now, err := in.srv.Engine.Clock.Advance(context.Background(), d)
	require.NoError(t, err)
	return now
}

// mustJSON marshals v for in.call.
func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// presign asks for a presigned upload of fileName and returns its s3Path and
// upload URL.
func presign(t testing.TB, in *inst, key, fileName string) (s3Path, uploadURL string) {
	t.Helper()
	st, m := in.call("GET", "/api/v1/artifacts/create?fileName="+url.QueryEscape(fileName), key, "")
	require.Equal(t, http.StatusOK, st, "%v", m)
	return m["s3Path"].(string), m["presignedUploadUrl"].(string)
}

// putBytes PUTs body to a presigned upload URL and returns the status, the
// ETag and the response body.
func putBytes(t testing.TB, uploadURL string, body []byte) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, uploadURL, bytes.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out bytes.Buffer
	_, err = out.ReadFrom(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("ETag"), out.String()
}

// uploadFile presigns fileName, PUTs body to it and returns the s3Path.
func uploadFile(t testing.TB, in *inst, key, fileName string, body []byte) string {
	t.Helper()
	s3, u := presign(t, in, key, fileName)
	st, _, msg := putBytes(t, u, body)
	require.Equal(t, http.StatusOK, st, msg)
	return s3
}

// createArtifact posts a Create Artifact body and returns the artifact.
func createArtifact(t testing.TB, in *inst, key string, body map[string]any) map[string]any {
	t.Helper()
	st, m := in.call("POST", "/api/v1/artifacts/create", key, mustJSON(t, body))
	require.Equal(t, http.StatusOK, st, "%v", m)
	return m
}

func getArtifact(t testing.TB, in *inst, key, id string) map[string]any {
	t.Helper()
	st, m := in.call("GET", "/api/v1/artifacts/"+id, key, "")
	require.Equal(t, http.StatusOK, st, "%v", m)
	return m
}

// wavDuration reads the exact duration of a canonical WAV file from its
// header: data chunk size / byte rate.
func wavDuration(t testing.TB, wav []byte) float64 {
	t.Helper()
	require.GreaterOrEqual(t, len(wav), 44)
	require.Equal(t, "data", string(wav[36:40]), "canonical 44-byte header")
	byteRate := binary.LittleEndian.Uint32(wav[28:32])
	data := binary.LittleEndian.Uint32(wav[40:44])
	return (time.Duration(data) * time.Second / time.Duration(byteRate)).Seconds()
}

// mediaServer is a loopback media server: GET /<anything> answers body,
// except paths starting with /missing (404).
func mediaServer(t testing.TB, body []byte) *httptest.Server {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/missing") {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "media.wav", time.Time{}, bytes.NewReader(body))
	}))
	t.Cleanup(hs.Close)
	return hs
}

// storageAccount creates an account with storage credentials for buckets
// (none: any bucket) and returns its key.
func storageAccount(t testing.TB, in *inst, key string, buckets ...string) string {
	t.Helper()
	_, err := in.srv.Engine.Accounts.CreateAccount(context.Background(), sim.AccountSpec{APIKey: key, Plan: sim.PlanPro, BalanceMinutes: 100,
		Storage: &sim.StorageCredentials{AccessKeyID: "AK", SecretAccessKey: "SK", Buckets: buckets}})
	require.NoError(t, err)
	return key
}

func studioTimeOf(t testing.TB, v any) time.Time {
	t.Helper()
	s, ok := v.(string)
	require.True(t, ok, "a timestamp string; got %v", v)
	ts, err := time.Parse("2006-01-02T15:04:05.000Z", s)
	require.NoError(t, err)
	return ts
}

func floatPtr(v float64) *float64 { return &v }

// artifactEnd is how an artifact's processing must end.
type artifactEnd struct {
	status   string   // sim.ArtifactCompleted or sim.ArtifactFailed
	size     int64    // upload_completed: the size
	duration *float64 // upload_completed: the duration (nil: null)
	errMsg   string   // upload_failed: the exact message
	errPart  string   // upload_failed: a part of the message (the whole is no constant)
	// during runs while the artifact is upload_started.
	during func(t *testing.T)
	// exactEnd: processing ends exactly at ArtifactBase plus ArtifactPerGB
	// per GB of the final size after upload_started (size 0 for a failure).
	exactEnd bool
}

// derivedArtifact creates an artifact from a URL or s3Path of a host dubsim
// may not contact, runs it to the end and returns its size and duration:
// the values that URL is given in this instance.
func derivedArtifact(t *testing.T, in *inst, key, typ, field, ref string) (int64, *float64) {
	t.Helper()
	id := createArtifact(t, in, key, map[string]any{"name": "probe", "type": typ, field: ref})["id"].(string)
	studioAdvance(t, in, time.Hour)
	a := getArtifact(t, in, key, id)
	require.Equal(t, sim.ArtifactCompleted, a["status"], "%v", a)
	size := int64(a["size"].(float64))
	if a["duration"] == nil {
		return size, nil
	}
	return size, floatPtr(a["duration"].(float64))
}

// TestArtifactLifecycleByUploadMethod runs one artifact per case through its
// processing with the simulated clock: created, upload_started after
// ArtifactStart, then upload_completed (size, duration) or upload_failed
// (errorMessage) when processing ends.
func TestArtifactLifecycleByUploadMethod(t *testing.T) {
	t.Parallel()
	wav := refWAVBytes(t, 180, 1500*time.Millisecond)
	wavDur := wavDuration(t, wav)
	require.InDelta(t, 1.5, wavDur, 1e-9)
	notMedia := []byte("These are meeting notes, not a media file.\n")
	media := mediaServer(t, wav)
	notMediaHost := mediaServer(t, notMedia)

	tests := []struct {
		name   string
		key    string
		create func(t *testing.T, in *inst) (string, artifactEnd)
	}{
		{"presigned upload of a WAV", "dubsim-free", func(t *testing.T, in *inst) (string, artifactEnd) {
			s3 := uploadFile(t, in, "dubsim-free", "voice.wav", wav)
			a := createArtifact(t, in, "dubsim-free", map[string]any{"name": "Voice", "type": "audio", "s3Path": s3})
			return a["id"].(string), artifactEnd{status: sim.ArtifactCompleted, size: int64(len(wav)), duration: &wavDur}
		}},
		{"presigned upload used by a colleague of the same company", "dubsim-subscription", func(t *testing.T, in *inst) (string, artifactEnd) {
			s3 := uploadFile(t, in, "dubsim-free", "voice.wav", wav)
			a := createArtifact(t, in, "dubsim-subscription", map[string]any{"name": "Voice", "type": "video", "s3Path": s3})
			return a["id"].(string), artifactEnd{status: sim.ArtifactCompleted, size: int64(len(wav)), duration: &wavDur}
		}},
		{"presigned upload of another company", "dubsim-pro", func(t *testing.T, in *inst) (string, artifactEnd) {
			s3 := uploadFile(t, in, "dubsim-free", "voice.wav", wav)
			a := createArtifact(t, in, "dubsim-pro", map[string]any{"name": "Voice", "type": "audio", "s3Path": s3})
			return a["id"].(string), artifactEnd{status: sim.ArtifactFailed, errMsg: fmt.Sprintf(sim.MsgUploadNotFound, s3), exactEnd: true}
		}},
		{"presigned s3Path never PUT", "dubsim-free", func(t *testing.T, in *inst) (string, artifactEnd) {
			s3, _ := presign(t, in, "dubsim-free", "never.mp4")
			a := createArtifact(t, in, "dubsim-free", map[string]any{"name": "Never", "type": "video", "s3Path": s3})
			return a["id"].(string), artifactEnd{status: sim.ArtifactFailed, errMsg: fmt.Sprintf(sim.MsgUploadNotFound, s3), exactEnd: true}
		}},
		{"PUT after creation, before processing ends", "dubsim-free", func(t *testing.T, in *inst) (string, artifactEnd) {
			s3, u := presign(t, in, "dubsim-free", "late.wav")
			a := createArtifact(t, in, "dubsim-free", map[string]any{"name": "Late", "type": "audio", "s3Path": s3})
			return a["id"].(string), artifactEnd{status: sim.ArtifactCompleted, size: int64(len(wav)), duration: &wavDur,
				during: func(t *testing.T) {
					st, _, msg := putBytes(t, u, wav)
					require.Equal(t, http.StatusOK, st, msg)
				}}
		}},
		{"bytes that are not media, as a video", "dubsim-free", func(t *testing.T, in *inst) (string, artifactEnd) {
			s3 := uploadFile(t, in, "dubsim-free", "notes.mp4", notMedia)
			a := createArtifact(t, in, "dubsim-free", map[string]any{"name": "Notes", "type": "video", "s3Path": s3})
			return a["id"].(string), artifactEnd{status: sim.ArtifactFailed, errPart: "Unsupported media file notes.mp4", exactEnd: true}
		}},
		{"bytes that are not media, as a script", "dubsim-free", func(t *testing.T, in *inst) (string, artifactEnd) {
			s3 := uploadFile(t, in, "dubsim-free", "notes.txt", notMedia)
			a := createArtifact(t, in, "dubsim-free", map[string]any{"name": "Notes", "type": "script", "s3Path": s3})
			return a["id"].(string), artifactEnd{status: sim.ArtifactCompleted, size: int64(len(notMedia))}
		}},
		{"a WAV as a script: no duration", "dubsim-free", func(t *testing.T, in *inst) (string, artifactEnd) {
			s3 := uploadFile(t, in, "dubsim-free", "voice.wav", wav)
			a := createArtifact(t, in, "dubsim-free", map[string]any{"name": "Script", "type": "script", "s3Path": s3})
			return a["id"].(string), artifactEnd{status: sim.ArtifactCompleted, size: int64(len(wav))}
		}},
		{"url on loopback: downloaded", "dubsim-free", func(t *testing.T, in *inst) (string, artifactEnd) {
			a := createArtifact(t, in, "dubsim-free", map[string]any{"name": "Loop", "type": "audio", "url": media.URL + "/voice.wav"})
			return a["id"].(string), artifactEnd{status: sim.ArtifactCompleted, size: int64(len(wav)), duration: &wavDur, exactEnd: true}
		}},
		{"url on loopback answering 404", "dubsim-free", func(t *testing.T, in *inst) (string, artifactEnd) {
			u := media.URL + "/missing/voice.wav"
			a := createArtifact(t, in, "dubsim-free", map[string]any{"name": "Missing", "type": "audio", "url": u})
			return a["id"].(string), artifactEnd{status: sim.ArtifactFailed, errMsg: "download of " + u + " failed: HTTP 404 Not Found", exactEnd: true}
		}},
		{"url on loopback serving bytes that are not media, as a video", "dubsim-free", func(t *testing.T, in *inst) (string, artifactEnd) {
			u := notMediaHost.URL + "/notes.mp4"
			a := createArtifact(t, in, "dubsim-free", map[string]any{"name": "Notes", "type": "video", "url": u})
			return a["id"].(string), artifactEnd{status: sim.ArtifactFailed, errPart: "Unsupported media file at " + u, exactEnd: true}
		}},
		{"url on loopback serving bytes that are not media, as a script", "dubsim-free", func(t *testing.T, in *inst) (string, artifactEnd) {
			a := createArtifact(t, in, "dubsim-free", map[string]any{"name": "Notes", "type": "script", "url": notMediaHost.URL + "/notes.txt"})
			return a["id"].(string), artifactEnd{status: sim.ArtifactCompleted, size: int64(len(notMedia)), exactEnd: true}
		}},
		{"url of a host dubsim may not contact: derived", "dubsim-free", func(t *testing.T, in *inst) (string, artifactEnd) {
			a := createArtifact(t, in, "dubsim-free", map[string]any{"name": "CDN", "type": "video", "url": "https://cdn.test/films/trailer.mp4"})
			return a["id"].(string), artifactEnd{status: sim.ArtifactCompleted, exactEnd: true}
		}},
		{"url matched by the fixture rule fail", "dubsim-free", func(t *testing.T, in *inst) (string, artifactEnd) {
			a := createArtifact(t, in, "dubsim-free", map[string]any{"name": "Fail", "type": "video", "url": "https://media.dubsim.test/fail.mp4"})
			return a["id"].(string), artifactEnd{status: sim.ArtifactFailed, errMsg: "Processing failed: the audio track could not be decoded", exactEnd: true}
		}},
		{"url matched by the fixture rule short", "dubsim-free", func(t *testing.T, in *inst) (string, artifactEnd) {
			a := createArtifact(t, in, "dubsim-free", map[string]any{"name": "Short", "type": "video", "url": "https://media.dubsim.test/short.mp4"})
			return a["id"].(string), artifactEnd{status: sim.ArtifactCompleted, size: 12 * 2_500_000 / 8, duration: floatPtr(12.0), exactEnd: true}
		}},
		{"url of a script: no duration", "dubsim-free", func(t *testing.T, in *inst) (string, artifactEnd) {
			a := createArtifact(t, in, "dubsim-free", map[string]any{"name": "Script", "type": "script", "url": "https://cdn.test/subs/en.srt"})
			return a["id"].(string), artifactEnd{status: sim.ArtifactCompleted, size: 48 << 10, exactEnd: true}
		}},
		{"external bucket without storage credentials", "dubsim-free", func(t *testing.T, in *inst) (string, artifactEnd) {
			a := createArtifact(t, in, "dubsim-free", map[string]any{"name": "Bucket", "type": "video", "s3Path": "s3://client-bucket/films/a.mp4"})
			return a["id"].(string), artifactEnd{status: sim.ArtifactFailed, errMsg: fmt.Sprintf(sim.MsgNoCredentials, "client-bucket"), exactEnd: true}
		}},
		{"external bucket with credentials covering it", "with-bucket", func(t *testing.T, in *inst) (string, artifactEnd) {
			key := storageAccount(t, in, "with-bucket", "other-bucket", "client-bucket")
			a := createArtifact(t, in, key, map[string]any{"name": "Bucket", "type": "video", "s3Path": "s3://client-bucket/films/a.mp4"})
			return a["id"].(string), artifactEnd{status: sim.ArtifactCompleted, exactEnd: true}
		}},
		{"external bucket with credentials for any bucket", "any-bucket", func(t *testing.T, in *inst) (string, artifactEnd) {
			key := storageAccount(t, in, "any-bucket")
			a := createArtifact(t, in, key, map[string]any{"name": "Bucket", "type": "audio", "s3Path": "s3://client-bucket/films/a.wav"})
			return a["id"].(string), artifactEnd{status: sim.ArtifactCompleted, exactEnd: true}
		}},
		{"external bucket with credentials for another bucket", "other-bucket", func(t *testing.T, in *inst) (string, artifactEnd) {
			key := storageAccount(t, in, "other-bucket", "other-bucket")
			a := createArtifact(t, in, key, map[string]any{"name": "Bucket", "type": "video", "s3Path": "s3://client-bucket/films/a.mp4"})
			return a["id"].(string), artifactEnd{status: sim.ArtifactFailed, errMsg: fmt.Sprintf(sim.MsgBucketNotCovered, "client-bucket"), exactEnd: true}
		}},
		{"fragments: two URLs", "dubsim-free", func(t *testing.T, in *inst) (string, artifactEnd) {
			u1, u2 := "https://cdn.test/part1.mp4", "https://cdn.test/part2.mp4"
			s1, d1 := derivedArtifact(t, in, "dubsim-free", "video", "url", u1)
			s2, d2 := derivedArtifact(t, in, "dubsim-free", "video", "url", u2)
			a := createArtifact(t, in, "dubsim-free", map[string]any{"name": "Frags", "type": "video", "fragments": []any{
				map[string]any{"url": u1, "startTime": 0}, map[string]any{"url": u2, "startTime": *d1}}})
			return a["id"].(string), artifactEnd{status: sim.ArtifactCompleted, size: s1 + s2, duration: floatPtr(*d1 + *d2), exactEnd: true}
		}},
		{"fragments: a presigned upload and a URL", "dubsim-free", func(t *testing.T, in *inst) (string, artifactEnd) {
			u := "https://cdn.test/outro.mp4"
			su, du := derivedArtifact(t, in, "dubsim-free", "video", "url", u)
			s3 := uploadFile(t, in, "dubsim-free", "intro.wav", wav)
			a := createArtifact(t, in, "dubsim-free", map[string]any{"name": "Frags", "type": "video", "fragments": []any{
				map[string]any{"s3Path": s3, "startTime": 0}, map[string]any{"url": u, "startTime": wavDur}}})
			return a["id"].(string), artifactEnd{status: sim.ArtifactCompleted, size: int64(len(wav)) + su, duration: floatPtr(wavDur + *du)}
		}},
		{"fragments: one fails by a fixture rule", "dubsim-free", func(t *testing.T, in *inst) (string, artifactEnd) {
			a := createArtifact(t, in, "dubsim-free", map[string]any{"name": "Frags", "type": "video", "fragments": []any{
				map[string]any{"url": "https://cdn.test/ok.mp4", "startTime": 0}, map[string]any{"url": "https://media.dubsim.test/fail.mp4", "startTime": 10}}})
			return a["id"].(string), artifactEnd{status: sim.ArtifactFailed, errMsg: "Processing failed: the audio track could not be decoded"}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := start(t, func(c *app.Config) { c.FetchErrorDetail = true }) // the reasons below
			id, want := tc.create(t, in)
			created := in.srv.Engine.Clock.Now()
			in.srv.Engine.Artifacts.WaitDownloads()

			a := getArtifact(t, in, tc.key, id)
			assert.Equal(t, sim.ArtifactCreated, a["status"])
			assert.Equal(t, sim.StudioTime(created), a["createdAt"])
			assert.Equal(t, a["createdAt"], a["updatedAt"])
			assert.Nil(t, a["size"])
			assert.Nil(t, a["duration"])
			assert.Nil(t, a["errorMessage"])

			started := created.Add(sim.DefaultStudioTiming.ArtifactStart)
			studioAdvance(t, in, sim.DefaultStudioTiming.ArtifactStart)
			a = getArtifact(t, in, tc.key, id)
			assert.Equal(t, sim.ArtifactStarted, a["status"])
			assert.Equal(t, sim.StudioTime(started), a["updatedAt"], "updatedAt moves with the status")
			if want.during != nil {
				want.during(t)
			}
			studioAdvance(t, in, sim.DefaultStudioTiming.ArtifactBase-time.Millisecond)
			assert.Equal(t, sim.ArtifactStarted, getArtifact(t, in, tc.key, id)["status"], "processing lasts at least ArtifactBase")

			studioAdvance(t, in, time.Hour)
			a = getArtifact(t, in, tc.key, id)
			require.Equal(t, want.status, a["status"], "%v", a)
			ended := studioTimeOf(t, a["updatedAt"])
			assert.True(t, ended.After(started), "updatedAt moves at the end of processing: %v", a["updatedAt"])
			switch want.status {
			case sim.ArtifactCompleted:
				require.NotNil(t, a["size"])
				size := int64(a["size"].(float64))
				if want.size != 0 {
					assert.Equal(t, want.size, size)
				}
				assert.Nil(t, a["errorMessage"])
				switch {
				case want.duration != nil:
					require.NotNil(t, a["duration"])
					assert.InDelta(t, *want.duration, a["duration"].(float64), 1e-9)
				case a["type"] == sim.ArtifactScript:
					assert.Nil(t, a["duration"], "a script has no duration")
				default:
					require.NotNil(t, a["duration"], "a completed %v has a duration", a["type"])
				}
				if want.exactEnd {
					assert.Equal(t, sim.StudioTime(started.Add(sim.DefaultStudioTiming.ArtifactProcessing(size))), a["updatedAt"])
				}
			case sim.ArtifactFailed:
				assert.Nil(t, a["size"])
				assert.Nil(t, a["duration"])
				require.NotNil(t, a["errorMessage"])
				if want.errMsg != "" {
					assert.Equal(t, want.errMsg, a["errorMessage"])
				}
				assert.Contains(t, a["errorMessage"], want.errPart)
				if want.exactEnd {
					assert.Equal(t, sim.StudioTime(started.Add(sim.DefaultStudioTiming.ArtifactBase)), a["updatedAt"])
				}
			}
		})
	}
}

// TestArtifactDerivedValuesFollowTheSeed: a URL of a host dubsim may not
// contact gets a size and duration derived from the URL and the seed: the
// same in two fresh instances with one seed, others with another seed.
func TestArtifactDerivedValuesFollowTheSeed(t *testing.T) {
	t.Parallel()
	const u = "https://cdn.test/library/episode-7.mp4"
	derived := func(seed uint64) (int64, float64) {
		in := start(t, func(c *app.Config) { c.Seed = seed })
		size, d := derivedArtifact(t, in, "dubsim-free", "video", "url", u)
		require.NotNil(t, d)
		assert.GreaterOrEqual(t, *d, 30.0, "derived durations run from 30 s")
		assert.LessOrEqual(t, *d, 900.0, "to 15 min")
		assert.Equal(t, int64(*d*2_500_000/8), size, "a derived video's size is its duration at 2.5 Mbit/s")
		return size, *d
	}
	s1, d1 := derived(1)
	s1b, d1b := derived(1)
	s2, d2 := derived(2)
	assert.Equal(t, s1, s1b, "the same seed gives the same size")
	assert.Equal(t, d1, d1b, "and the same duration")
	assert.NotEqual(t, d1, d2, "another seed gives another duration")
	assert.NotEqual(t, s1, s2)
}

// TestArtifactProcessingTimeFollowsTheSize: processing lasts ArtifactBase plus
// ArtifactPerGB per gigabyte; a one-hour video (1.125 GB derived) takes 72.5 s.
func TestArtifactProcessingTimeFollowsTheSize(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	const key = "dubsim-free"
	id := createArtifact(t, in, key, map[string]any{"name": "Hour", "type": "video", "url": "https://media.dubsim.test/hour.mp4"})["id"].(string)
	created := in.srv.Engine.Clock.Now()
	size := int64(3600 * 2_500_000 / 8)
	processing := sim.DefaultStudioTiming.ArtifactProcessing(size)
	require.Equal(t, 5*time.Second+time.Duration(float64(size)/float64(1<<30)*float64(time.Minute)), processing)

	studioAdvance(t, in, sim.DefaultStudioTiming.ArtifactStart+processing-time.Millisecond)
	assert.Equal(t, sim.ArtifactStarted, getArtifact(t, in, key, id)["status"], "1 ms before the end")
	studioAdvance(t, in, time.Millisecond)
	a := getArtifact(t, in, key, id)
	assert.Equal(t, sim.ArtifactCompleted, a["status"])
	assert.Equal(t, float64(size), a["size"])
	assert.Equal(t, 3600.0, a["duration"])
	assert.Equal(t, sim.StudioTime(created.Add(sim.DefaultStudioTiming.ArtifactStart+processing)), a["updatedAt"])
}

// TestArtifactOutcomeRules: rules with resource "artifact" decide how the
// next matching artifacts end; they leave platform projects alone, and
// project rules leave artifacts alone.
func TestArtifactOutcomeRules(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	ctx := context.Background()
	const key = "dubsim-free"
	_, err := in.srv.Engine.Outcomes.AddOutcomeRule(ctx, sim.OutcomeRule{Resource: sim.RuleArtifact, Outcome: sim.ForceError,
		ErrorMessage: "Transcoding cluster unavailable", Remaining: 1, SourceURLPattern: "*/flaky/*"})
	require.NoError(t, err)
	_, err = in.srv.Engine.Outcomes.AddOutcomeRule(ctx, sim.OutcomeRule{Resource: sim.RuleArtifact, Outcome: sim.ForceReady, Remaining: 1,
		SourceURLPattern: "*://media.dubsim.test/fail*"})
	require.NoError(t, err)
	_, err = in.srv.Engine.Outcomes.AddOutcomeRule(ctx, sim.OutcomeRule{Resource: sim.RuleArtifact, Outcome: sim.ForceError, Remaining: 1,
		APIKey: "dubsim-pro"})
	require.NoError(t, err)
	_, err = in.srv.Engine.Outcomes.AddOutcomeRule(ctx, sim.OutcomeRule{Resource: sim.RuleProject, Outcome: sim.ForceError, Remaining: 5,
		SourceURLPattern: "*/project-only/*"})
	require.NoError(t, err)

	flaky := createArtifact(t, in, key, map[string]any{"name": "a", "type": "video", "url": "https://cdn.test/flaky/1.mp4"})["id"].(string)
	flaky2 := createArtifact(t, in, key, map[string]any{"name": "b", "type": "video", "url": "https://cdn.test/flaky/2.mp4"})["id"].(string)
	rescued := createArtifact(t, in, key, map[string]any{"name": "c", "type": "video", "url": "https://media.dubsim.test/fail.mp4"})["id"].(string)
	projectRule := createArtifact(t, in, key, map[string]any{"name": "d", "type": "video", "url": "https://cdn.test/project-only/x.mp4"})["id"].(string)
	proErr := createArtifact(t, in, "dubsim-pro", map[string]any{"name": "e", "type": "audio", "url": "https://cdn.test/any.wav"})["id"].(string)
	platform := in.create("dubsim-enterprise", "https://cdn.test/flaky/p.mp4")

	rules, err := in.srv.Engine.Outcomes.OutcomeRules(ctx)
	require.NoError(t, err)
	require.Len(t, rules, 1, "the three artifact rules are used up: %v", rules)
	assert.Equal(t, sim.RuleProject, rules[0].Resource)

	studioAdvance(t, in, time.Hour)
	for _, tc := range []struct {
		name, key, id, status, msg string
	}{
		{"error rule by URL pattern", key, flaky, sim.ArtifactFailed, "Transcoding cluster unavailable"},
		{"the rule is used up", key, flaky2, sim.ArtifactCompleted, ""},
		{"ready rule over a fixture failure", key, rescued, sim.ArtifactCompleted, ""},
		{"project rules do not apply to artifacts", key, projectRule, sim.ArtifactCompleted, ""},
		{"rule of an API key, default message", "dubsim-pro", proErr, sim.ArtifactFailed, sim.DefaultForcedError},
	} {
		a := getArtifact(t, in, tc.key, tc.id)
		assert.Equal(t, tc.status, a["status"], tc.name)
		if tc.msg != "" {
			assert.Equal(t, tc.msg, a["errorMessage"], tc.name)
		}
	}
	assert.Equal(t, "ready", in.project("dubsim-enterprise", platform)["status"], "artifact rules do not apply to platform projects")
}

// TestForceArtifact decides the end of one artifact from the control side.
func TestForceArtifact(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	ctx := context.Background()
	const key = "dubsim-free"
	eng := in.srv.Engine
	newArtifact := func(name string) string {
		return createArtifact(t, in, key, map[string]any{"name": name, "type": "video", "url": "https://cdn.test/" + name + ".mp4"})["id"].(string)
	}
	readyNow, failNow, failLater, readySized := newArtifact("ready-now"), newArtifact("fail-now"), newArtifact("fail-later"), newArtifact("sized")
	now := eng.Clock.Now()

	_, err := eng.Outcomes.ForceArtifact(ctx, readyNow, sim.ForceReady, "", nil, nil, true)
	require.NoError(t, err)
	a := getArtifact(t, in, key, readyNow)
	assert.Equal(t, sim.ArtifactCompleted, a["status"], "finished at once")
	assert.Equal(t, sim.StudioTime(now), a["updatedAt"])
	assert.NotNil(t, a["size"])
	assert.NotNil(t, a["duration"])

	_, err = eng.Outcomes.ForceArtifact(ctx, failNow, sim.ForceError, "Corrupt upload", nil, nil, true)
	require.NoError(t, err)
	a = getArtifact(t, in, key, failNow)
	assert.Equal(t, sim.ArtifactFailed, a["status"])
	assert.Equal(t, "Corrupt upload", a["errorMessage"])

	_, err = eng.Outcomes.ForceArtifact(ctx, failLater, sim.ForceError, "", nil, nil, false)
	require.NoError(t, err)
	size, dur := int64(123456), 42.5
	_, err = eng.Outcomes.ForceArtifact(ctx, readySized, sim.ForceReady, "", &size, &dur, false)
	require.NoError(t, err)
	assert.Equal(t, sim.ArtifactCreated, getArtifact(t, in, key, failLater)["status"], "without now, processing keeps its schedule")
	studioAdvance(t, in, sim.DefaultStudioTiming.ArtifactStart)
	assert.Equal(t, sim.ArtifactStarted, getArtifact(t, in, key, failLater)["status"])
	studioAdvance(t, in, time.Hour)
	a = getArtifact(t, in, key, failLater)
	assert.Equal(t, sim.ArtifactFailed, a["status"])
	assert.Equal(t, sim.DefaultForcedError, a["errorMessage"])
	a = getArtifact(t, in, key, readySized)
	assert.Equal(t, sim.ArtifactCompleted, a["status"])
	assert.Equal(t, float64(size), a["size"])
	assert.Equal(t, dur, a["duration"])

	for _, tc := range []struct {
		name, id, outcome string
		code              sim.Code
	}{
		{"a completed artifact", readyNow, sim.ForceError, sim.CodeConflict},
		{"a failed artifact", failNow, sim.ForceReady, sim.CodeConflict},
		{"an unknown artifact", "0123456789abcdef01234567", sim.ForceReady, sim.CodeNotFound},
		{"an unknown outcome", failLater, "maybe", sim.CodeValidation},
	} {
		_, err := eng.Outcomes.ForceArtifact(ctx, tc.id, tc.outcome, "", nil, nil, true)
		require.Error(t, err, tc.name)
		assert.Equal(t, tc.code, sim.ErrorCode(err), "%s: %v", tc.name, err)
	}
	_, err = eng.Outcomes.ForceArtifact(ctx, readyNow, sim.ForceError, "", nil, nil, false)
	assert.EqualError(t, err, "Artifact "+readyNow+" has already finished processing (status upload_completed)")
}

// studioProject creates a studio project for key (a user of Acme Media) and
// returns its id.
func studioProject(t testing.TB, in *inst, key string) string {
	t.Helper()
	st, m := in.call("POST", "/api/v1/projects", key, `{"name":"Season 1","managerEmail":"alice.johnson@acme-media.example"}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	id := m["id"].(string)
	require.True(t, sim.IsStudioID(id), id)
	return id
}

func createVideo(t testing.TB, in *inst, key, projectID, artifactID string) map[string]any {
	t.Helper()
	st, m := in.call("POST", "/api/v1/projects/"+projectID+"/videos/create", key, mustJSON(t, map[string]any{
		"name": "Episode 1", "workflowType": "dubbing", "sourceArtifactId": artifactID, "sourceLanguage": "en", "targetLanguages": []string{"es-ES"}}))
	require.Equal(t, http.StatusOK, st, "%v", m)
	return m
}

func getVideo(t testing.TB, in *inst, key, projectID, videoID string) map[string]any {
	t.Helper()
	st, m := in.call("GET", "/api/v1/projects/"+projectID+"/videos/"+videoID, key, "")
	require.Equal(t, http.StatusOK, st, "%v", m)
	return m
}

// TestVideoLifecycle: a video made from a completed artifact is new, then
// in_progress after VideoStart, then completed after VideoBase plus
// VideoPerMinute per minute of the artifact; a status written by the client
// stops that, and SetVideoStatus with auto resumes it.
func TestVideoLifecycle(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	ctx := context.Background()
	const key = "dubsim-free"
	eng := in.srv.Engine
	timing := sim.DefaultStudioTiming
	pid := studioProject(t, in, key)

	pending := createArtifact(t, in, key, map[string]any{"name": "Source", "type": "video", "url": "https://cdn.test/episode-1.mp4"})["id"].(string)
	studioAdvance(t, in, timing.ArtifactStart)
	st, m := in.call("POST", "/api/v1/projects/"+pid+"/videos/create", key, mustJSON(t, map[string]any{
		"name": "Too early", "workflowType": "dubbing", "sourceArtifactId": pending, "sourceLanguage": "en", "targetLanguages": []string{"es-ES"}}))
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Equal(t, "sourceArtifactId: artifact "+pending+" has status upload_started; an artifact is usable only when its status is upload_completed", m["error"])
	studioAdvance(t, in, time.Hour)
	art := getArtifact(t, in, key, pending)
	require.Equal(t, sim.ArtifactCompleted, art["status"])
	seconds := art["duration"].(float64)
	processing := timing.VideoProcessing(time.Duration(seconds * float64(time.Second)))
	require.Equal(t, timing.VideoBase+time.Duration(seconds/60*float64(timing.VideoPerMinute)), processing)

	created := eng.Clock.Now()
	auto := createVideo(t, in, key, pid, pending)
	stopped := createVideo(t, in, key, pid, pending)
	resumed := createVideo(t, in, key, pid, pending)
	assert.Equal(t, sim.VideoNew, auto["status"])
	assert.Equal(t, seconds, auto["videoDuration"], "the video lasts as long as its source artifact")
	assert.Equal(t, sim.StudioTime(created), auto["updatedAt"])
	id := func(v map[string]any) string { return v["id"].(string) }

	// A client-written status stops the automatic lifecycle.
	st, m = in.call("PATCH", "/api/projects/"+pid+"/videos/"+id(stopped), key, `{"status":"in_progress"}`)
	require.Equal(t, http.StatusOK, st, "%v", m)
	assert.Equal(t, sim.VideoInProgress, m["status"])

	studioAdvance(t, in, timing.VideoStart-time.Millisecond)
	assert.Equal(t, sim.VideoNew, getVideo(t, in, key, pid, id(auto))["status"])
	studioAdvance(t, in, time.Millisecond)
	v := getVideo(t, in, key, pid, id(auto))
	assert.Equal(t, sim.VideoInProgress, v["status"])
	assert.Equal(t, sim.StudioTime(created.Add(timing.VideoStart)), v["updatedAt"])

	studioAdvance(t, in, processing-time.Millisecond)
	assert.Equal(t, sim.VideoInProgress, getVideo(t, in, key, pid, id(auto))["status"], "1 ms before the end of processing")
	studioAdvance(t, in, time.Millisecond)
	v = getVideo(t, in, key, pid, id(auto))
	assert.Equal(t, sim.VideoCompleted, v["status"])
	assert.Equal(t, sim.StudioTime(created.Add(timing.VideoStart+processing)), v["updatedAt"])

	studioAdvance(t, in, 24*time.Hour)
	assert.Equal(t, sim.VideoInProgress, getVideo(t, in, key, pid, id(stopped))["status"], "a client-written status stays")
	assert.Equal(t, sim.VideoCompleted, getVideo(t, in, key, pid, id(resumed))["status"])

	// The control side moves a video and lets the lifecycle continue (auto)
	// or not.
	_, err := eng.Videos.SetVideoStatus(ctx, id(resumed), sim.VideoNew, true)
	require.NoError(t, err)
	_, err = eng.Videos.SetVideoStatus(ctx, id(stopped), sim.VideoNew, false)
	require.NoError(t, err)
	restarted := eng.Clock.Now()
	studioAdvance(t, in, timing.VideoStart)
	v = getVideo(t, in, key, pid, id(resumed))
	assert.Equal(t, sim.VideoInProgress, v["status"])
	assert.Equal(t, sim.StudioTime(restarted.Add(timing.VideoStart)), v["updatedAt"])
	studioAdvance(t, in, processing)
	assert.Equal(t, sim.VideoCompleted, getVideo(t, in, key, pid, id(resumed))["status"])
	assert.Equal(t, sim.VideoNew, getVideo(t, in, key, pid, id(stopped))["status"], "without auto the video stays")

	_, err = eng.Videos.SetVideoStatus(ctx, id(stopped), sim.VideoInProgress, true)
	require.NoError(t, err)
	studioAdvance(t, in, processing)
	assert.Equal(t, sim.VideoCompleted, getVideo(t, in, key, pid, id(stopped))["status"], "in_progress with auto completes after the processing time")

	_, err = eng.Videos.SetVideoStatus(ctx, id(stopped), "archived", true)
	assert.Equal(t, sim.CodeValidation, sim.ErrorCode(err), "%v", err)
	_, err = eng.Videos.SetVideoStatus(ctx, "0123456789abcdef01234567", sim.VideoNew, true)
	assert.Equal(t, sim.CodeNotFound, sim.ErrorCode(err), "%v", err)
}

// blockingMedia is a loopback media server whose answers wait until release
// is closed (or the client gives up); every request's path is sent to
// requests first.
func blockingMedia(t testing.TB, body []byte) (srv *httptest.Server, requests chan string, release func()) {
	t.Helper()
	gate := make(chan struct{})
	requests = make(chan string, 16)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests <- r.URL.Path
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		http.ServeContent(w, r, "slow.wav", time.Time{}, bytes.NewReader(body))
	}))
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(srv.Close)
	t.Cleanup(release) // runs before srv.Close
	return srv, requests, release
}

// nextRequest returns the next request path the media server saw. The
// timeout only turns a hang into a failure; nothing waits on it for state.
func nextRequest(t testing.TB, requests <-chan string) string {
	t.Helper()
	select {
	case p := <-requests:
		return p
	case <-time.After(time.Minute):
		t.Fatal("no request reached the media server")
		return ""
	}
}

// reopenable returns a function that opens an instance on one store file
// and blob directory, so a test can close an instance and open the next.
func reopenable(t *testing.T) func() (*inst, *store.Store) {
	dir := t.TempDir()
	return func() (*inst, *store.Store) {
		st, err := store.Open(filepath.Join(dir, "d.db"), store.NoSync())
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return start(t, func(c *app.Config) {
			c.Store, c.BlobDir = st, filepath.Join(dir, "blobs")
			c.AdvanceWait = 200 * time.Millisecond // the download below blocks until released
		}), st
	}
}

// TestArtifactDownloadResumesAfterRestart: an instance closed while a
// download runs leaves the artifact upload_started; an instance opened on
// the same store and blob directory downloads it again at Start and
// completes it.
func TestArtifactDownloadResumesAfterRestart(t *testing.T) {
	t.Parallel()
	wav := refWAVBytes(t, 220, 2*time.Second)
	media, requests, release := blockingMedia(t, wav)
	open := reopenable(t)
	const key = "dubsim-free"

	first, firstStore := open()
	id := createArtifact(t, first, key, map[string]any{"name": "Slow", "type": "audio", "url": media.URL + "/slow.wav"})["id"].(string)
	assert.Equal(t, "/slow.wav", nextRequest(t, requests), "the download is under way")
	_, err := first.srv.Engine.Clock.Advance(context.Background(), time.Hour)
	var pending *sim.PendingError
	require.ErrorAs(t, err, &pending, "the advance waited for the download in vain")
	require.Len(t, pending.Pending, 1)
	assert.Equal(t, id, pending.Pending[0].ID)
	assert.Equal(t, sim.ArtifactStarted, getArtifact(t, first, key, id)["status"], "processing waits for the download")
	require.NoError(t, first.srv.Close(), "stops the download")
	require.NoError(t, firstStore.Close())

	second, _ := open()
	assert.Equal(t, "/slow.wav", nextRequest(t, requests), "Start resumed the download")
	assert.Equal(t, sim.ArtifactStarted, getArtifact(t, second, key, id)["status"])
	release()
	second.srv.Engine.Artifacts.WaitDownloads()
	studioAdvance(t, second, time.Minute)

	a := getArtifact(t, second, key, id)
	require.Equal(t, sim.ArtifactCompleted, a["status"], "%v", a)
	assert.Equal(t, float64(len(wav)), a["size"])
	assert.InDelta(t, wavDuration(t, wav), a["duration"], 1e-9)
}

// callWith is in.call with extra request headers.
func callWith(t testing.TB, in *inst, method, path, key, body string, header map[string]string) (int, map[string]any) {
	t.Helper()
	a := tagged(t, in.url, "", method, path, key, body, header)
	var m map[string]any
	require.NoError(t, json.Unmarshal(a.body, &m), "%s", a.body)
	return a.status, m
}

// TestSharedAddressRouting: one address serves both interfaces. The create
// body decides POST /api/v1/projects (platform fields, studio fields, else
// the configured default for a body with a name, studio unless
// --shared-create platform, else the platform; or the X-Dubsim-Interface
// header); the id shape
// decides GET /api/v1/projects/{id}; the journal names the interface.
func TestSharedAddressRouting(t *testing.T) {
	t.Parallel()
	const key = "dubsim-free"
	platformBody := `{"source_lang":"en","target_lang":"de-DE","source_video_url":"https://cdn.test/route.mp4"}`
	studioBody := `{"name":"Studio","managerEmail":"alice.johnson@acme-media.example"}`
	nameOnly := `{"name":"Which one?"}`
	studioHeader := map[string]string{server.HeaderInterface: "studio"}
	platformHeader := map[string]string{server.HeaderInterface: "platform"}
	isPlatformProject := func(t *testing.T, m map[string]any) {
		id, _ := m["project_id"].(string)
		assert.Regexp(t, `^\d{9}$`, id, "a platform receipt: %v", m)
	}
	isStudioProject := func(t *testing.T, m map[string]any) {
		id, _ := m["id"].(string)
		assert.True(t, sim.IsStudioID(id), "a studio project: %v", m)
		assert.Equal(t, "new", m["status"])
	}
	tests := []struct {
		name         string
		sharedCreate string
		body         string
		header       map[string]string
		status       int
		check        func(t *testing.T, m map[string]any)
	}{
		{"platform fields", "", platformBody, nil, http.StatusOK, isPlatformProject},
		{"platform fields, platform default", server.Platform, platformBody, nil, http.StatusOK, isPlatformProject},
		{"managerEmail", "", studioBody, nil, http.StatusOK, isStudioProject},
		{"managerEmail, platform default", server.Platform, studioBody, nil, http.StatusOK, isStudioProject},
		{"name only: studio by default", "", nameOnly, nil, http.StatusOK, isStudioProject},
		{"name only, platform default", server.Platform, nameOnly, nil, http.StatusBadRequest, func(t *testing.T, m map[string]any) {
			assert.Equal(t, map[string]any{"error": "ValidationError", "message": "source_lang is required"}, m)
		}},
		{"name only, platform default, studio header", server.Platform, nameOnly, studioHeader, http.StatusOK, isStudioProject},
		{"empty object: the platform's validation", "", `{}`, nil, http.StatusBadRequest, func(t *testing.T, m map[string]any) {
			assert.Equal(t, map[string]any{"error": "ValidationError", "message": "source_lang is required"}, m)
		}},
		{"empty object with the studio header", "", `{}`, studioHeader, http.StatusBadRequest, func(t *testing.T, m map[string]any) {
			assert.Equal(t, map[string]any{"error": "name is required"}, m)
		}},
		{"name only with the platform header", "", nameOnly, platformHeader, http.StatusBadRequest, func(t *testing.T, m map[string]any) {
			assert.Equal(t, "ValidationError", m["error"])
		}},
		{"studio fields with the platform header", "", studioBody, platformHeader, http.StatusBadRequest, func(t *testing.T, m map[string]any) {
			assert.Equal(t, "source_lang is required", m["message"])
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := start(t, func(c *app.Config) { c.SharedCreate = tc.sharedCreate })
			st, m := callWith(t, in, "POST", "/api/v1/projects", key, tc.body, tc.header)
			assert.Equal(t, tc.status, st, "%v", m)
			tc.check(t, m)
		})
	}

	t.Run("GET by id shape, and the journal", func(t *testing.T) {
		t.Parallel()
		in := start(t, nil)
		platformID := in.create(key, "https://cdn.test/route.mp4")
		studioID := studioProject(t, in, key)

		st, m := in.call("GET", "/api/v1/projects/"+platformID, key, "")
		assert.Equal(t, http.StatusOK, st)
		assert.Equal(t, "de-DE", m["target_lang"], "9 digits: the platform project")
		assert.Equal(t, "in_progress", m["status"])
		st, m = in.call("GET", "/api/v1/projects/"+studioID, key, "")
		assert.Equal(t, http.StatusOK, st)
		assert.Equal(t, studioID, m["id"], "24 hex characters: the studio project")
		assert.Contains(t, m["projectUrl"], studioID)
		st, m = in.call("GET", "/api/v1/projects/987654321", key, "")
		assert.Equal(t, http.StatusNotFound, st)
		assert.Equal(t, "NotFoundError", m["error"], "the platform envelope")
		assert.NotEmpty(t, m["message"])
		st, m = in.call("GET", "/api/v1/projects/0123456789abcdef01234567", key, "")
		assert.Equal(t, http.StatusNotFound, st)
		assert.Equal(t, map[string]any{"error": sim.MsgStudioNotFound}, m, "the studio envelope")

		_, up := presign(t, in, key, "a.wav")
		st, _, _ = putBytes(t, up, refWAVBytes(t, 200, 300*time.Millisecond))
		require.Equal(t, http.StatusOK, st)

		st, j := in.call("GET", "/_sim/requests?limit=0", "", "")
		require.Equal(t, http.StatusOK, st, "%v", j)
		type seen struct{ method, path, iface string }
		var got []seen
		for _, e := range j["requests"].([]any) {
			r := e.(map[string]any)
			got = append(got, seen{r["method"].(string), r["path"].(string), r["interface"].(string)})
		}
		for _, want := range []seen{
			{"POST", "/api/v1/projects", "platform"},
			{"POST", "/api/v1/projects", "studio"},
			{"GET", "/api/v1/projects/" + platformID, "platform"},
			{"GET", "/api/v1/projects/" + studioID, "studio"},
			{"GET", "/api/v1/projects/987654321", "platform"},
			{"GET", "/api/v1/projects/0123456789abcdef01234567", "studio"},
			{"GET", "/api/v1/artifacts/create", "studio"},
		} {
			assert.Contains(t, got, want)
		}
		uploads := 0
		for _, g := range got {
			if g.method == "PUT" {
				uploads++
				assert.True(t, strings.HasPrefix(g.path, "/_uploads/"), g.path)
				assert.Equal(t, "studio", g.iface, "a presigned upload is a studio request")
			}
		}
		assert.Equal(t, 1, uploads)
	})
}

// TestArtifactFragmentsWithADownloadedURL: when one fragment is a URL dubsim
// downloads (loopback or allow-listed), the other fragments still count:
// their failures fail the artifact, and presigned uploads add their size and
// duration.
func TestArtifactFragmentsWithADownloadedURL(t *testing.T) {
	t.Parallel()
	wav := refWAVBytes(t, 180, 1500*time.Millisecond)
	wavDur := wavDuration(t, wav)
	media := mediaServer(t, wav)
	const key = "dubsim-free"
	tests := []struct {
		name  string
		other func(t *testing.T, in *inst) map[string]any // the second fragment
		want  artifactEnd
	}{
		{"with a fragment failing by a fixture rule", func(t *testing.T, in *inst) map[string]any {
			return map[string]any{"url": "https://media.dubsim.test/fail.mp4", "startTime": 1.5}
		}, artifactEnd{status: sim.ArtifactFailed, errMsg: "Processing failed: the audio track could not be decoded"}},
		{"with a presigned path never PUT", func(t *testing.T, in *inst) map[string]any {
			s3, _ := presign(t, in, key, "never.wav")
			return map[string]any{"s3Path": s3, "startTime": 1.5}
		}, artifactEnd{status: sim.ArtifactFailed, errPart: "nothing was uploaded to its presigned URL"}},
		{"with a presigned upload", func(t *testing.T, in *inst) map[string]any {
			return map[string]any{"s3Path": uploadFile(t, in, key, "second.wav", wav), "startTime": 1.5}
		}, artifactEnd{status: sim.ArtifactCompleted, size: 2 * int64(len(wav)), duration: floatPtr(2 * wavDur)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := start(t, nil)
			id := createArtifact(t, in, key, map[string]any{"name": "Frags", "type": "audio", "fragments": []any{
				map[string]any{"url": media.URL + "/first.wav", "startTime": 0}, tc.other(t, in)}})["id"].(string)
			in.srv.Engine.Artifacts.WaitDownloads()
			studioAdvance(t, in, time.Hour)
			a := getArtifact(t, in, key, id)
			require.Equal(t, tc.want.status, a["status"], "%v", a)
			if tc.want.status == sim.ArtifactFailed {
				if tc.want.errMsg != "" {
					assert.Equal(t, tc.want.errMsg, a["errorMessage"])
				}
				assert.Contains(t, a["errorMessage"], tc.want.errPart)
				return
			}
			assert.Equal(t, float64(tc.want.size), a["size"])
			assert.InDelta(t, *tc.want.duration, a["duration"], 1e-9)
		})
	}
}

// TestArtifactS3PathNamesTheUploadedFile: a presigned path is the upload's
// id and file name; the id with another file name names no file.
func TestArtifactS3PathNamesTheUploadedFile(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	const key = "dubsim-free"
	s3 := uploadFile(t, in, key, "take.wav", refWAVBytes(t, 180, time.Second))
	wrong := strings.TrimSuffix(s3, "take.wav") + "other.wav"
	id := createArtifact(t, in, key, map[string]any{"name": "Wrong", "type": "audio", "s3Path": wrong})["id"].(string)
	studioAdvance(t, in, time.Hour)
	a := getArtifact(t, in, key, id)
	assert.Equal(t, sim.ArtifactFailed, a["status"], "%v", a)
	assert.Equal(t, fmt.Sprintf(sim.MsgUploadNotFound, wrong), a["errorMessage"])
}

// TestArtifactDownloadResumesWithItsBucketFragment: a download resumed at
// Start keeps the share of a fragment in the client's bucket, which the
// account's storage credentials gave at creation.
func TestArtifactDownloadResumesWithItsBucketFragment(t *testing.T) {
	t.Parallel()
	wav := refWAVBytes(t, 220, 2*time.Second)
	media, requests, release := blockingMedia(t, wav)
	open := reopenable(t)
	const key = "restart-bucket"

	first, firstStore := open()
	storageAccount(t, first, key, "client-bucket")
	id := createArtifact(t, first, key, map[string]any{"name": "Slow+bucket", "type": "video", "fragments": []any{
		map[string]any{"url": media.URL + "/frag.wav", "startTime": 0}, map[string]any{"s3Path": "s3://client-bucket/outro.mp4", "startTime": 2}}})["id"].(string)
	nextRequest(t, requests)
	require.NoError(t, first.srv.Close())
	require.NoError(t, firstStore.Close())

	second, _ := open()
	nextRequest(t, requests)
	release()
	second.srv.Engine.Artifacts.WaitDownloads()
	bucketSize, bucketDur := derivedArtifact(t, second, key, "video", "s3Path", "s3://client-bucket/outro.mp4")
	a := getArtifact(t, second, key, id)
	require.Equal(t, sim.ArtifactCompleted, a["status"], "%v", a)
	assert.Equal(t, float64(int64(len(wav))+bucketSize), a["size"], "the downloaded fragment and the bucket fragment")
	assert.InDelta(t, wavDuration(t, wav)+*bucketDur, a["duration"], 1e-9)
}
