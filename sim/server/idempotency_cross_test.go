package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One Idempotency-Key in flight on one interface is in flight on the other:
// both keep their records in one store under the API key, so a platform
// creation still running and a studio creation with the same key cannot
// both run (they did: two records for one key, the later overwriting the
// earlier's record).
func TestIdempotencyKeyInFlightAcrossInterfaces(t *testing.T) {
	t.Parallel()
	in, _, _ := guarded(t, nil)
	key := newAccount(t, in, `{"plan":"pro","balance_minutes":1000}`)
	media, requests, release := blockingMedia(t, refWAVBytes(t, 150, 2*time.Second))
	c1, c2 := newPClient(t, in.url), newPClient(t, in.url)
	idem := map[string]string{"Idempotency-Key": "cross"}
	platformBody := `{"source_lang":"en","target_lang":"fr-FR","source_video_url":"` + media.URL + `/clip.wav"}`
	done := make(chan answer, 1)
	go func() { done <- c1.json("POST", "/api/v1/projects", key, platformBody, idem) }()
	nextRequest(t, requests) // the platform creation is in flight, probing its source

	studio := c2.json("POST", "/api/v1/projects", key, `{"name":"S"}`, map[string]string{"Idempotency-Key": "cross", server.HeaderInterface: "studio"})
	assert.Equal(t, http.StatusConflict, studio.status, "%s", studio.body)
	assert.Contains(t, string(studio.body), `A request with Idempotency-Key \"cross\" is still being processed`)

	release()
	p := <-done
	require.Equal(t, http.StatusOK, p.status, "%s", p.body)
	again := c1.json("POST", "/api/v1/projects", key, platformBody, idem)
	assert.Equal(t, http.StatusOK, again.status)
	assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	assert.Equal(t, string(p.body), string(again.body))

	// The studio request, retried, is another request under a used key.
	studio = c2.json("POST", "/api/v1/projects", key, `{"name":"S"}`, map[string]string{"Idempotency-Key": "cross", server.HeaderInterface: "studio"})
	assert.Equal(t, http.StatusUnprocessableEntity, studio.status, "%s", studio.body)
	list := c2.json("GET", "/api/v1/projects", key, "", nil)
	require.Equal(t, http.StatusOK, list.status, "%s", list.body)
	assert.NotContains(t, string(list.body), `"name":"S"`, "no studio project was made under the key")
}
