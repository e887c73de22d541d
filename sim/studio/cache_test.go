package studio_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Reads are served from the engine's caches while nothing is written: a
// video that falls due as time passes (no write) still shows its new status,
// a write shows at once, and another company is refused whoever read first.
func TestStudioReadsFollowTimeAndWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	src := e.readyArtifact(keyAcme, "video")
	v := e.ok(call{method: "POST", path: "/api/v1/projects/" + prAcmeSummer + "/videos/create", key: keyAcme,
		body: `{"name":"Clip","workflowType":"dubbing","sourceArtifactId":"` + src + `","sourceLanguage":"en","targetLanguages":["es-ES"]}`})
	id := v["id"].(string)
	status := func() string {
		t.Helper()
		for _, item := range e.ok2list(t, call{method: "GET", path: videosPath(prAcmeSummer), key: keyAcme}) {
			if item["id"] == id {
				return item["status"].(string)
			}
		}
		t.Fatalf("video %s not listed", id)
		return ""
	}
	assert.Equal(t, "new", status())
	assert.Equal(t, "new", status(), "twice: the second from the cache")
	// Only the simulated clock moves: no write tells the cache.
	for _, step := range []struct {
		d    time.Duration
		want string
	}{{time.Minute, "in_progress"}, {10 * time.Minute, "in_progress"}, {12 * time.Second, "completed"}} {
		e.advanceClockOnly(step.d)
		assert.Equal(t, step.want, status(), "after %s more", step.d)
		assert.Equal(t, step.want, status())
	}

	project := call{method: "GET", path: "/api/v1/projects/" + prAcmeSummer, key: keyAcme}
	before := e.ok(project)
	assert.Equal(t, before, e.ok(project))
	r := e.do(call{method: "GET", path: "/api/v1/projects/" + prAcmeSummer, key: keyInitech})
	assert.Equal(t, http.StatusBadRequest, r.status, "another company, after the owner's read: %s", r)
	assert.JSONEq(t, `{"error":"Access denied to this project"}`, string(r.body))
	r = e.do(call{method: "GET", path: videosPath(prAcmeSummer), key: keyInitech})
	assert.Equal(t, http.StatusBadRequest, r.status, "another company's video list: %s", r)
	assert.JSONEq(t, `{"error":"Access denied to this project"}`, string(r.body))

	r = e.do(call{method: "PATCH", path: "/api/v1/projects/" + prAcmeSummer, key: keyAcme, body: `{"name":"Renamed"}`})
	require.Equal(t, http.StatusOK, r.status, "%s", r)
	assert.Equal(t, "Renamed", e.ok(project)["name"], "a write shows at once")
	assert.Equal(t, "Renamed", e.ok(call{method: "GET", path: "/api/v1/projects/" + prAcmeSummer, key: keyAcme2})["name"], "to the company's other users too")
}

// Studio ids are built like ObjectIds: ids made in the same second follow
// each other (the store appends them), and none repeats.
func TestStudioIDsFollowEachOther(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	var prev string
	for i := range 50 {
		id := e.artifact(keyAcme, `{"name":"a","type":"video","url":"https://media.dubsim.test/short.mp4"}`)
		require.Regexp(t, `^[0-9a-f]{24}$`, id)
		if i > 0 {
			require.Equal(t, prev[:16], id[:16], "same second, same process part")
			require.Greater(t, id, prev, "creation %d", i)
		}
		prev = id
	}
}

// Behind a TLS proxy (X-Forwarded-Proto) the studio's links are https, as
// the platform's download URLs are.
func TestStudioLinksFollowForwardedProto(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	link := func(proto string) string {
		return e.ok(call{method: "GET", path: "/api/v1/projects/" + prAcmeSummer, key: keyAcme,
			header: map[string]string{"X-Forwarded-Proto": proto}})["projectUrl"].(string)
	}
	assert.Regexp(t, `^https://[^/]+/projects/`+prAcmeSummer+`$`, link("https"))
	assert.Regexp(t, `^http://[^/]+/projects/`+prAcmeSummer+`$`, link("gopher"), "only http or https is taken")
}
