package studio_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim/app"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	pathArtifacts = "/api/v1/artifacts/create"
	pathProjects  = "/api/v1/projects"
)

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

// ----- create status -----

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

// ----- fixture ids -----

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
