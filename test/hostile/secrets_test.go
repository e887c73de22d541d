package hostile

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A generated API key must not follow from the seed: were it "dsk_" + the
// seed's token of sequence 1, the first key POST /_sim/accounts generates
// on a fresh store would be the same in every dubsim of that seed. Three
// fresh processes of one seed generate three different keys, none of them
// the seed's.
func TestGeneratedKeysAreNotTheSeeds(t *testing.T) {
	t.Parallel()
	seedKey := "dsk_" + sim.NewIDs(0).Token(16, "account", "1") // what the seed alone gave
	seen := map[string]int{}
	for i := range 3 {
		p := start(t, "--seed", "0")
		key := secretsNewAccount(t, p)
		assert.Regexp(t, `^dsk_[0-9a-f]{32}$`, key, "process %d: the documented shape", i)
		assert.NotEqual(t, seedKey, key, "process %d: the first generated key is the seed's", i)
		if j, ok := seen[key]; ok {
			t.Errorf("processes %d and %d of one seed generated the same key %s", j, i, key)
		}
		seen[key] = i
		assert.True(t, p.Alive())
	}
}

// A presigned upload URL must not be derivable: were upload ids and
// signatures the seed's tokens of the upload sequence, a user of one
// company could compute another company's upload URL and overwrite its
// file. The seed's URL names no upload (404),
// the seed's signature on the real id is refused (403), and a signature
// of another store of the same seed does not validate here (403).
func TestUploadURLsCannotBeForged(t *testing.T) {
	t.Parallel()
	p := start(t, "--seed", "0", "--time-scale", "0")
	// The victim (dubsim-pro) presigns and uploads; the attacker
	// (dubsim-free, another company) presigns its own slot and so learns
	// the expiry (the clock is frozen).
	victim := secretsPresign(t, p, "dubsim-pro", "victim.wav")
	require.Equal(t, http.StatusOK, secretsPut(t, victim.PresignedUploadURL, "the victim's file"))
	own := secretsPresign(t, p, "dubsim-free", "mine.wav")
	expires, err := time.Parse(time.RFC3339, own.ExpiresAt)
	require.NoError(t, err)

	// What the seed alone gives for the first upload of a store.
	ids := sim.NewIDs(0)
	seedID := secretsSeedUUID(ids, "upload", "1")
	seedSig := func(id string) string {
		return ids.Token(32, "presign", id, "victim.wav", fmt.Sprint(expires.Unix()))
	}
	forged := p.Base + "/_uploads/" + seedID + "/victim.wav?X-Amz-Signature=" + seedSig(seedID)
	assert.Equal(t, http.StatusNotFound, secretsPut(t, forged, "the attacker's file"), "a URL derived from the seed")

	realID := secretsUploadID(t, victim.S3Path)
	assert.NotEqual(t, seedID, realID, "the upload id is the seed's")
	forged = p.Base + "/_uploads/" + realID + "/victim.wav?X-Amz-Signature=" + seedSig(realID)
	assert.Equal(t, http.StatusForbidden, secretsPut(t, forged, "the attacker's file"), "the seed's signature on the real id")

	// Another store of the same seed signs its own first upload; that
	// signature does not validate the victim's URL here.
	q := start(t, "--seed", "0", "--time-scale", "0")
	other := secretsPresign(t, q, "dubsim-pro", "victim.wav")
	assert.Equal(t, http.StatusForbidden, secretsPut(t, secretsWithSignature(t, victim.PresignedUploadURL, secretsSignature(t, other.PresignedUploadURL)), "x"),
		"a signature of another store")
	// Nor does the victim's signature validate the other store's URL.
	assert.Equal(t, http.StatusForbidden, secretsPut(t, secretsWithSignature(t, other.PresignedUploadURL, secretsSignature(t, victim.PresignedUploadURL)), "x"),
		"this store's signature in another store")
	assert.True(t, p.Alive())
	assert.True(t, q.Alive())
}

// secretsNewAccount creates an account without api_key and returns the
// generated key.
func secretsNewAccount(t *testing.T, p *proctest.Proc) string {
	t.Helper()
	resp, err := http.Post(p.Base+"/_sim/accounts", "application/json", strings.NewReader(`{"plan":"pro"}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	var a struct {
		APIKey string `json:"api_key"`
	}
	require.NoError(t, json.Unmarshal(body, &a))
	return a.APIKey
}

type secretsUpload struct {
	S3Path             string `json:"s3Path"`
	PresignedUploadURL string `json:"presignedUploadUrl"`
	ExpiresAt          string `json:"expiresAt"`
}

// secretsPresign asks for a presigned upload URL as key.
func secretsPresign(t *testing.T, p *proctest.Proc, key, fileName string) secretsUpload {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, p.Base+"/api/v1/artifacts/create?fileName="+url.QueryEscape(fileName), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var u secretsUpload
	require.NoError(t, json.Unmarshal(body, &u))
	return u
}

// secretsPut PUTs body to a presigned URL and returns the status.
func secretsPut(t *testing.T, rawURL, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, rawURL, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// secretsUploadID is the upload id of an s3Path s3://bucket/temp/<id>/<file>.
func secretsUploadID(t *testing.T, s3Path string) string {
	t.Helper()
	parts := strings.Split(s3Path, "/")
	require.Len(t, parts, 6, s3Path)
	return parts[4]
}

func secretsSignature(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	return u.Query().Get("X-Amz-Signature")
}

func secretsWithSignature(t *testing.T, rawURL, sig string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	q := u.Query()
	q.Set("X-Amz-Signature", sig)
	u.RawQuery = q.Encode()
	return u.String()
}

// secretsSeedUUID is the version-4 UUID the engine made from the seed's
// token of parts (what an attacker who knows the seed computes).
func secretsSeedUUID(ids *sim.IDs, parts ...string) string {
	h := []byte(ids.Token(16, parts...))
	h[12] = '4'
	h[16] = "89ab"[h[16]%4]
	return string(h[0:8]) + "-" + string(h[8:12]) + "-" + string(h[12:16]) + "-" + string(h[16:20]) + "-" + string(h[20:32])
}
