package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ----- helpers of the studio tests -----

// studioAdvance moves the instance's simulated clock forward by d and applies
// every transition that became due.
func studioAdvance(t testing.TB, in *inst, d time.Duration) time.Time {
	t.Helper()
	now, err := in.srv.Engine.Advance(context.Background(), d)
	require.NoError(t, err)
	return now
}

// jsonBody marshals v for in.call.
func jsonBody(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// presign asks for a presigned upload of fileName and returns its s3Path and
// upload URL.
func presign(t testing.TB, in *inst, key, fileName string) (s3Path, uploadURL string) {
	t.Helper()
	st, m := in.call("GET", "/api/v1/artifacts/create?fileName="+fileName, key, "")
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

// upload presigns fileName, PUTs body to it and returns the s3Path.
func upload(t testing.TB, in *inst, key, fileName string, body []byte) string {
	t.Helper()
	s3, u := presign(t, in, key, fileName)
	st, _, msg := putBytes(t, u, body)
	require.Equal(t, http.StatusOK, st, msg)
	return s3
}

// createArtifact posts a Create Artifact body and returns the artifact.
func createArtifact(t testing.TB, in *inst, key string, body map[string]any) map[string]any {
	t.Helper()
	st, m := in.call("POST", "/api/v1/artifacts/create", key, jsonBody(t, body))
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

// serveBytes is a loopback media server: GET /<anything> answers body,
// except paths starting with /missing (404).
func serveBytes(t testing.TB, body []byte) *httptest.Server {
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
	_, err := in.srv.Engine.CreateAccount(context.Background(), sim.AccountSpec{APIKey: key, Plan: sim.PlanPro, BalanceMinutes: 100,
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

func TestProbe(t *testing.T) {
	in := start(t, nil)
	wav := refWAVBytes(t, 180, 1500*time.Millisecond)
	media := serveBytes(t, wav)
	const key = "dubsim-free"
	show := func(label, id string) {
		a := getArtifact(t, in, key, id)
		t.Logf("%s: status=%v size=%v duration=%v err=%v updated=%v", label, a["status"], a["size"], a["duration"], a["errorMessage"], a["updatedAt"])
	}
	ids := map[string]string{}
	ids["loopback+fail"] = createArtifact(t, in, key, map[string]any{"name": "x", "type": "video", "fragments": []any{
		map[string]any{"url": media.URL + "/a.wav", "startTime": 0}, map[string]any{"url": "https://media.dubsim.test/fail.mp4", "startTime": 1}}})["id"].(string)
	s3 := upload(t, in, key, "u.wav", wav)
	ids["loopback+upload"] = createArtifact(t, in, key, map[string]any{"name": "x", "type": "video", "fragments": []any{
		map[string]any{"url": media.URL + "/a.wav", "startTime": 0}, map[string]any{"s3Path": s3, "startTime": 1}}})["id"].(string)
	s3never, _ := presign(t, in, key, "never.wav")
	ids["loopback+never"] = createArtifact(t, in, key, map[string]any{"name": "x", "type": "video", "fragments": []any{
		map[string]any{"url": media.URL + "/a.wav", "startTime": 0}, map[string]any{"s3Path": s3never, "startTime": 1}}})["id"].(string)
	wrong := strings.TrimSuffix(s3, "u.wav") + "other.wav"
	ids["wrong file name"] = createArtifact(t, in, key, map[string]any{"name": "x", "type": "audio", "s3Path": wrong})["id"].(string)
	big := upload(t, in, key, "big.wav", append(wav, make([]byte, 300<<20)...))
	ids["big upload"] = createArtifact(t, in, key, map[string]any{"name": "x", "type": "audio", "s3Path": big})["id"].(string)
	ids["big derived"] = createArtifact(t, in, key, map[string]any{"name": "x", "type": "video", "url": "https://media.dubsim.test/long.mp4"})["id"].(string)
	in.srv.Engine.WaitDownloads()
	studioAdvance(t, in, 7*time.Second)
	for k, id := range ids {
		show(k+" @7s", id)
	}
	studioAdvance(t, in, time.Hour)
	for k, id := range ids {
		show(k+" @1h", id)
	}
	fmt.Println()
}

var _ = server.Config{}
var _ = assert.Equal
