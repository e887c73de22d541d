package server_test

import (
	"encoding/json"
	"math"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dubsim/dubsim/fixtures"
)

// documentedFixturesBody is the body of the POST /_sim/fixtures example of
// docs/control-api.md, as written there (the single-quoted -d argument of
// the curl line that posts to $S/fixtures).
func documentedFixturesBody(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/control-api.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)curl -s -XPOST \$S/fixtures -H "\$J" -d '([^']*)'`).FindSubmatch(doc)
	require.NotNil(t, m, "docs/control-api.md has no curl example posting to $S/fixtures")
	require.True(t, json.Valid(m[1]), "the documented body is not JSON: %s", m[1])
	return string(m[1])
}

// magicURL is a URL that a media.json rule's pattern matches.
func magicURL(pattern string) string {
	u := strings.Replace(pattern, "*://", "https://", 1)
	return strings.ReplaceAll(u, "*", ".mp4")
}

// checkMagicURLs creates a project for every rule of the embedded
// media.json and checks the rule decides it: refused, or charged the
// rule's duration.
func checkMagicURLs(t *testing.T, in *inst, key string) {
	t.Helper()
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	require.NotEmpty(t, fx.MediaRules)
	for _, r := range fx.MediaRules {
		url := magicURL(r.Pattern)
		require.True(t, r.Matches(url), "%s does not match %s", url, r.Pattern)
		st, m := in.call("POST", "/api/v1/projects", key, `{"source_lang":"en","target_lang":"de-DE","source_video_url":"`+url+`"}`)
		if r.Refuse != "" {
			assert.Equal(t, http.StatusBadRequest, st, "%s: %v", url, m)
			assert.Equal(t, r.Refuse, m["message"], url)
			continue
		}
		if assert.Equal(t, http.StatusOK, st, "%s: %v", url, m) {
			assert.Equal(t, math.Ceil(r.DurationSeconds/60), m["cost_minutes"], url)
		}
	}
}

// TestDocumentedFixturesExampleOverlays runs the documented POST
// /_sim/fixtures example, then checks that the default magic URLs still
// work, that the posted rule and account work, and that POST /_sim/reset
// restores every default key beside the posted one.
func TestDocumentedFixturesExampleOverlays(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	st, m := in.call("POST", "/_sim/fixtures", "", documentedFixturesBody(t))
	require.Equal(t, http.StatusOK, st, "%v", m)

	checkMagicURLs(t, in, "dubsim-enterprise")
	assert.Equal(t, float64(50), in.balance("team-a"))
	_, p := in.call("POST", "/api/v1/projects", "team-a", `{"source_lang":"en","target_lang":"de-DE","source_video_url":"https://cdn.test/trailer.mp4"}`)
	assert.Equal(t, float64(3), p["cost_minutes"], "the posted rule: 150 s")

	st, m = in.call("POST", "/_sim/reset", "", "")
	require.Equal(t, http.StatusOK, st, "%v", m)
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	for _, a := range fx.Accounts {
		st, m := in.call("GET", "/api/v1/balance", a.APIKey, "")
		if assert.Equal(t, http.StatusOK, st, "default key %s after reset: %v", a.APIKey, m) {
			assert.Equal(t, float64(a.BalanceMinutes), m["balance_minutes"], a.APIKey)
		}
	}
	assert.Equal(t, float64(50), in.balance("team-a"), "the posted account is a fixture account now")
	checkMagicURLs(t, in, "dubsim-enterprise")
}

// TestFixturesOverlaySemantics: entries merge by their keys, deletes
// remove one, and from_startup goes back to the startup set.
func TestFixturesOverlaySemantics(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	post := func(body string) map[string]any {
		t.Helper()
		st, m := in.call("POST", "/_sim/fixtures", "", body)
		require.Equal(t, http.StatusOK, st, "%s: %v", body, m)
		return m["loaded"].(map[string]any)
	}
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	accounts, rules := float64(len(fx.Accounts)), float64(len(fx.MediaRules))

	// A posted rule wins over a default one that matches the same URL.
	loaded := post(`{"media_rules":[{"pattern":"*://media.dubsim.test/short*","duration_seconds":300}]}`)
	assert.Equal(t, rules, loaded["media_rules"], "same pattern: replaced, not added")
	_, p := in.call("POST", "/api/v1/projects", "dubsim-enterprise", `{"source_lang":"en","target_lang":"de-DE","source_video_url":"https://media.dubsim.test/short.mp4"}`)
	assert.Equal(t, float64(5), p["cost_minutes"])

	// A second load keeps the first one's entries; an account is replaced
	// by its key.
	loaded = post(`{"accounts":[{"api_key":"dubsim-pro","plan":"pro","balance_minutes":7,"user_id":"6750989de4e6d9a72a921bbd"}]}`)
	assert.Equal(t, accounts, loaded["accounts"])
	assert.Equal(t, rules, loaded["media_rules"])
	assert.Equal(t, float64(7), in.balance("dubsim-pro"))

	// Delete one account: the next reset no longer restores it.
	loaded = post(`{"accounts":[{"api_key":"dubsim-free","delete":true}]}`)
	assert.Equal(t, accounts-1, loaded["accounts"])
	st, m := in.call("POST", "/_sim/reset", "", "")
	require.Equal(t, http.StatusOK, st, "%v", m)
	st, _ = in.call("GET", "/api/v1/balance", "dubsim-free", "")
	assert.Equal(t, http.StatusUnauthorized, st, "deleted from the set, gone after reset")
	assert.Equal(t, float64(7), in.balance("dubsim-pro"))

	// Voices by language: an empty list removes one.
	before := len(fx.Catalog.Voices["af-ZA"])
	require.NotZero(t, before)
	loaded = post(`{"voices":{"af-ZA":[]}}`)
	total := 0
	for _, vs := range fx.Catalog.Voices {
		total += len(vs)
	}
	assert.Equal(t, float64(total-before), loaded["voices"])

	// Refused loads change nothing.
	for _, body := range []string{
		`{"accounts":[{"api_key":"nobody","delete":true}]}`,
		`{"accounts":[{"plan":"pro"}]}`,
		`{"media_rules":{"pattern":"x"}}`,
		`{"options":{"target_langs":["en-US"]}}`, // voices of other languages remain
	} {
		st, m := in.call("POST", "/_sim/fixtures", "", body)
		assert.Equal(t, http.StatusBadRequest, st, "%s: %v", body, m)
	}
	assert.Equal(t, float64(7), in.balance("dubsim-pro"))

	// from_startup alone restores the startup set.
	loaded = post(`{"from_startup":true}`)
	assert.Equal(t, accounts, loaded["accounts"])
	assert.Equal(t, float64(total), loaded["voices"])
	st, m = in.call("POST", "/_sim/reset", "", "")
	require.Equal(t, http.StatusOK, st, "%v", m)
	for _, a := range fx.Accounts {
		st, m := in.call("GET", "/api/v1/balance", a.APIKey, "")
		if assert.Equal(t, http.StatusOK, st, "%s: %v", a.APIKey, m) {
			assert.Equal(t, float64(a.BalanceMinutes), m["balance_minutes"], a.APIKey)
		}
	}
	checkMagicURLs(t, in, "dubsim-enterprise")
}
