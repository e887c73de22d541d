package sim_test

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"testing"
	"testing/fstest"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func loadEmbedded(t *testing.T) *sim.Fixtures {
	t.Helper()
	fx, err := sim.LoadFixtures(fixtures.FS)
	require.NoError(t, err)
	return fx
}

func TestEmbeddedFixtures(t *testing.T) {
	t.Parallel()
	fx := loadEmbedded(t)
	cat := fx.Catalog

	t.Run("languages", func(t *testing.T) {
		t.Parallel()
		assert.Len(t, cat.SourceLangs, 16)
		assert.Len(t, cat.TargetLangs, 121)
		assert.True(t, cat.IsSourceLang("en"))
		assert.False(t, cat.IsSourceLang("en-US"), "source languages are bare codes")
		assert.True(t, cat.IsTargetLang("en-US"))
		assert.True(t, cat.IsTargetLang("ja-JP"))
		assert.False(t, cat.IsTargetLang("en"), "target languages carry a region")
		assert.False(t, cat.IsTargetLang("xx-XX"))
	})

	t.Run("every target has voices of both styles", func(t *testing.T) {
		t.Parallel()
		for _, lang := range cat.TargetLangs {
			require.NotEmpty(t, cat.Voices[lang], lang)
			for _, style := range sim.Styles {
				vs := cat.VoicesFor(lang, style)
				require.NotEmpty(t, vs, "%s %s", lang, style)
				for _, v := range vs {
					assert.Equal(t, style, v.Style, "%s: %s", lang, v.VoiceKey)
				}
			}
		}
	})

	t.Run("Voice finds every catalogue voice with its language", func(t *testing.T) {
		t.Parallel()
		n := 0
		for lang, vs := range cat.Voices {
			for _, v := range vs {
				got, gotLang, ok := cat.Voice(v.VoiceKey)
				require.True(t, ok, v.VoiceKey)
				assert.Equal(t, v, got)
				assert.Equal(t, lang, gotLang)
				n++
			}
		}
		assert.Greater(t, n, 2*121)
		v, lang, ok := cat.Voice("c5b9b5:en-US-AndrewNeural")
		require.True(t, ok)
		assert.Equal(t, sim.Voice{Name: "Andrew", VoiceKey: "c5b9b5:en-US-AndrewNeural", Style: sim.StyleMasculine}, v)
		assert.Equal(t, "en-US", lang)
	})

	t.Run("unknown voices", func(t *testing.T) {
		t.Parallel()
		for _, key := range []string{"", "nope", "en-US-AndrewNeural", sim.VoiceSoundalike, sim.VoiceEmotionalTransfer} {
			_, lang, ok := cat.Voice(key)
			assert.False(t, ok, key)
			assert.Empty(t, lang, key)
		}
	})

	t.Run("VoicesFor falls back to every voice", func(t *testing.T) {
		t.Parallel()
		all := cat.Voices["en-US"]
		assert.Equal(t, all, cat.VoicesFor("en-US", "robotic"), "unknown style")
		assert.Equal(t, all, cat.VoicesFor("en-US", ""), "no style")
		fem := cat.VoicesFor("en-US", sim.StyleFeminine)
		assert.Less(t, len(fem), len(all))
		assert.Empty(t, cat.VoicesFor("xx-XX", sim.StyleFeminine), "unknown language")
	})

	t.Run("accounts and media rules", func(t *testing.T) {
		t.Parallel()
		keys := map[string]sim.Plan{}
		for _, a := range fx.Accounts {
			keys[a.APIKey] = a.Plan
		}
		assert.Equal(t, map[string]sim.Plan{
			"dubsim-free": sim.PlanNone, "dubsim-subscription": sim.PlanSubscription, "dubsim-pro": sim.PlanPro,
			"dubsim-enterprise": sim.PlanEnterprise, "dubsim-broke": sim.PlanEnterprise,
		}, keys)
		require.NotEmpty(t, fx.MediaRules)
		assert.True(t, fx.MediaRules[0].Matches("https://example.com/video.mp4"))
		assert.InDelta(t, 600, fx.MediaRules[0].DurationSeconds, 0)
	})
}

func TestSpecialVoiceSupports(t *testing.T) {
	t.Parallel()
	embedded := loadEmbedded(t).Catalog
	// A catalogue whose lists mix language prefixes and full target codes.
	base := validFixtures()
	base[sim.FixtureOptions] = &fstest.MapFile{Data: []byte(`{
		"source_langs": ["en"],
		"target_langs": ["en-US", "fr-FR", "pt-BR", "pt-PT"],
		"emotional_transfer_langs": ["en", "pt-BR"],
		"soundalike_langs": ["fr-FR"]
	}`)}
	mixedFx, err := sim.LoadFixtures(base)
	require.NoError(t, err)
	mixed := mixedFx.Catalog

	cases := []struct {
		name   string
		cat    *sim.Catalog
		key    string
		target string
		want   bool
	}{
		{"emotional en-US", embedded, sim.VoiceEmotionalTransfer, "en-US", true},
		{"emotional en-GB", embedded, sim.VoiceEmotionalTransfer, "en-GB", true},
		{"emotional es-MX", embedded, sim.VoiceEmotionalTransfer, "es-MX", true},
		{"emotional pt-BR", embedded, sim.VoiceEmotionalTransfer, "pt-BR", true},
		{"emotional ja-JP", embedded, sim.VoiceEmotionalTransfer, "ja-JP", false},
		{"emotional ru-RU", embedded, sim.VoiceEmotionalTransfer, "ru-RU", false},
		{"soundalike ja-JP", embedded, sim.VoiceSoundalike, "ja-JP", true},
		{"soundalike sw-KE", embedded, sim.VoiceSoundalike, "sw-KE", false},
		{"prefix is the part before the dash, not a string prefix", embedded, sim.VoiceEmotionalTransfer, "eng-US", false},
		{"bare code matching a prefix", embedded, sim.VoiceEmotionalTransfer, "en", true},
		{"unknown special key", embedded, "robot", "en-US", false},
		{"catalogue voice key is not special", embedded, "c5b9b5:en-US-AndrewNeural", "en-US", false},
		{"empty target", embedded, sim.VoiceSoundalike, "", false},
		{"full code entry matches", mixed, sim.VoiceEmotionalTransfer, "pt-BR", true},
		{"full code entry does not cover a sibling", mixed, sim.VoiceEmotionalTransfer, "pt-PT", false},
		{"prefix entry in a mixed list", mixed, sim.VoiceEmotionalTransfer, "en-US", true},
		{"lists are per key", mixed, sim.VoiceSoundalike, "en-US", false},
		{"full code soundalike", mixed, sim.VoiceSoundalike, "fr-FR", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, tc.cat.SpecialVoiceSupports(tc.key, tc.target))
		})
	}
}

// validFixtures is a small, valid fixture set; tests break one file at a time.
func validFixtures() fstest.MapFS {
	return fstest.MapFS{
		sim.FixtureAccounts: {Data: []byte(`{"accounts": [
			{"api_key": "k1", "name": "One", "plan": "none", "balance_minutes": 0},
			{"api_key": "k2", "name": "Two", "plan": "enterprise", "balance_minutes": 50, "retranslation_enabled": true}
		]}`)},
		sim.FixtureOptions: {Data: []byte(`{
			"source_langs": ["en", "fr"],
			"target_langs": ["en-US", "fr-FR"],
			"emotional_transfer_langs": ["en"],
			"soundalike_langs": ["en", "fr"]
		}`)},
		sim.FixtureVoices: {Data: []byte(`{"voices": {
			"en-US": [{"name": "A", "voice_key": "a:en-US-A", "style": "feminine"}, {"name": "B", "voice_key": "b:en-US-B", "style": "masculine"}],
			"fr-FR": [{"name": "C", "voice_key": "c:fr-FR-C", "style": "feminine"}]
		}}`)},
		sim.FixtureMedia:  {Data: []byte(`{"rules": [{"pattern": "*://x.test/*", "duration_seconds": 10}]}`)},
		sim.FixtureStudio: {Data: []byte(`{}`)},
	}
}

func TestLoadFixturesValidSmallSet(t *testing.T) {
	t.Parallel()
	fx, err := sim.LoadFixtures(validFixtures())
	require.NoError(t, err)
	assert.Len(t, fx.Accounts, 2)
	assert.Equal(t, []string{"en-US", "fr-FR"}, fx.Catalog.TargetLangs)
	_, lang, ok := fx.Catalog.Voice("c:fr-FR-C")
	assert.True(t, ok)
	assert.Equal(t, "fr-FR", lang)
	// fr-FR has no masculine voice: the fallback gives every fr-FR voice.
	assert.Equal(t, fx.Catalog.Voices["fr-FR"], fx.Catalog.VoicesFor("fr-FR", sim.StyleMasculine))
	require.Len(t, fx.MediaRules, 1)
	assert.True(t, fx.MediaRules[0].Matches("https://x.test/a/b.mp4"))
}

func TestLoadFixturesRejectsBadSets(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		file    string
		data    string // replaces file; "" with missing=true deletes it
		missing bool
		wantErr string
	}{
		{
			name: "voice under a language not in options", file: sim.FixtureVoices,
			data:    `{"voices": {"de-DE": [{"name": "D", "voice_key": "d:de-DE-D", "style": "feminine"}]}}`,
			wantErr: "de-DE is not a target language",
		},
		{
			name: "duplicate voice key within a language", file: sim.FixtureVoices,
			data:    `{"voices": {"en-US": [{"name": "A", "voice_key": "a", "style": "feminine"}, {"name": "A2", "voice_key": "a", "style": "masculine"}]}}`,
			wantErr: "duplicate key a",
		},
		{
			name: "duplicate voice key across languages", file: sim.FixtureVoices,
			data:    `{"voices": {"en-US": [{"name": "A", "voice_key": "a", "style": "feminine"}], "fr-FR": [{"name": "A", "voice_key": "a", "style": "feminine"}]}}`,
			wantErr: "duplicate key a",
		},
		{
			name: "voice with an unknown style", file: sim.FixtureVoices,
			data:    `{"voices": {"en-US": [{"name": "A", "voice_key": "a", "style": "robotic"}]}}`,
			wantErr: "bad entry",
		},
		{
			name: "voice without a key", file: sim.FixtureVoices,
			data:    `{"voices": {"en-US": [{"name": "A", "voice_key": "", "style": "feminine"}]}}`,
			wantErr: "bad entry",
		},
		{
			name: "duplicate account key", file: sim.FixtureAccounts,
			data:    `{"accounts": [{"api_key": "k", "plan": "none"}, {"api_key": "k", "plan": "pro"}]}`,
			wantErr: `duplicate account "k"`,
		},
		{
			name: "invalid plan", file: sim.FixtureAccounts,
			data:    `{"accounts": [{"api_key": "k", "plan": "gold"}]}`,
			wantErr: `account "k"`,
		},
		{
			name: "missing plan", file: sim.FixtureAccounts,
			data:    `{"accounts": [{"api_key": "k"}]}`,
			wantErr: `account "k"`,
		},
		{
			name: "negative balance", file: sim.FixtureAccounts,
			data:    `{"accounts": [{"api_key": "k", "plan": "pro", "balance_minutes": -1}]}`,
			wantErr: `account "k"`,
		},
		{
			name: "account without a key", file: sim.FixtureAccounts,
			data:    `{"accounts": [{"api_key": "", "plan": "pro"}]}`,
			wantErr: `account ""`,
		},
		{
			name: "balance of the wrong type", file: sim.FixtureAccounts,
			data:    `{"accounts": [{"api_key": "k", "plan": "pro", "balance_minutes": "ten"}]}`,
			wantErr: sim.FixtureAccounts,
		},
		{name: "malformed accounts", file: sim.FixtureAccounts, data: `{"accounts": [`, wantErr: sim.FixtureAccounts},
		{name: "malformed options", file: sim.FixtureOptions, data: `{"source_langs": ["en",]}`, wantErr: sim.FixtureOptions},
		{name: "malformed voices", file: sim.FixtureVoices, data: `not json`, wantErr: sim.FixtureVoices},
		{name: "malformed media", file: sim.FixtureMedia, data: `{"rules": {}}`, wantErr: sim.FixtureMedia},
		{name: "empty file", file: sim.FixtureOptions, data: ``, wantErr: sim.FixtureOptions},
		{name: "media rule without a pattern", file: sim.FixtureMedia, data: `{"rules": [{"duration_seconds": 1}]}`, wantErr: "bad rule"},
		{name: "media rule with a negative duration", file: sim.FixtureMedia, data: `{"rules": [{"pattern": "*", "duration_seconds": -1}]}`, wantErr: "bad rule"},
		{name: "missing accounts", file: sim.FixtureAccounts, missing: true, wantErr: sim.FixtureAccounts},
		{name: "missing options", file: sim.FixtureOptions, missing: true, wantErr: sim.FixtureOptions},
		{name: "missing voices", file: sim.FixtureVoices, missing: true, wantErr: sim.FixtureVoices},
		{name: "missing media", file: sim.FixtureMedia, missing: true, wantErr: sim.FixtureMedia},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fsys := validFixtures()
			if tc.missing {
				delete(fsys, tc.file)
			} else {
				fsys[tc.file] = &fstest.MapFile{Data: []byte(tc.data)}
			}
			fx, err := sim.LoadFixtures(fsys)
			require.Error(t, err)
			assert.Nil(t, fx)
			assert.Contains(t, err.Error(), tc.wantErr)
			if tc.missing {
				assert.ErrorIs(t, err, fs.ErrNotExist)
			}
		})
	}
}

// errFS fails every Open with err.
type errFS struct{ err error }

func (e errFS) Open(string) (fs.File, error) { return nil, e.err }

func TestOverlay(t *testing.T) {
	t.Parallel()
	top := fstest.MapFS{
		sim.FixtureAccounts: {Data: []byte(`{"accounts": [{"api_key": "only-me", "plan": "pro", "balance_minutes": 7}]}`)},
		"extra.txt":         {Data: []byte("top")},
	}
	base := fstest.MapFS{
		sim.FixtureAccounts: {Data: []byte(`base accounts`)},
		"extra.txt":         {Data: []byte("base")},
		"base-only.txt":     {Data: []byte("from base")},
	}
	read := func(t *testing.T, fsys fs.FS, name string) (string, error) {
		t.Helper()
		f, err := fsys.Open(name)
		if err != nil {
			return "", err
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		require.NoError(t, err)
		return string(b), nil
	}
	cases := []struct {
		name    string
		fsys    sim.Overlay
		file    string
		want    string
		wantErr error
	}{
		{"file in Top wins", sim.Overlay{Top: top, Base: base}, "extra.txt", "top", nil},
		{"missing in Top falls back to Base", sim.Overlay{Top: top, Base: base}, "base-only.txt", "from base", nil},
		{"missing in both", sim.Overlay{Top: top, Base: base}, "nowhere.txt", "", fs.ErrNotExist},
		{"nil Top reads Base", sim.Overlay{Base: base}, "extra.txt", "base", nil},
		{"a Top failure other than not-exist is not hidden", sim.Overlay{Top: errFS{fs.ErrPermission}, Base: base}, "extra.txt", "", fs.ErrPermission},
		{"a not-exist failure in Top falls back", sim.Overlay{Top: errFS{fs.ErrNotExist}, Base: base}, "extra.txt", "base", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := read(t, tc.fsys, tc.file)
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}

	t.Run("LoadFixtures through an overlay on the embedded set", func(t *testing.T) {
		t.Parallel()
		fx, err := sim.LoadFixtures(sim.Overlay{Top: maps.Clone(top), Base: fixtures.FS})
		require.NoError(t, err)
		require.Len(t, fx.Accounts, 1, "accounts.json comes from Top")
		assert.Equal(t, "only-me", fx.Accounts[0].APIKey)
		assert.Equal(t, int64(7), fx.Accounts[0].BalanceMinutes)
		assert.Len(t, fx.Catalog.TargetLangs, 121, "options.json comes from Base")
		assert.NotEmpty(t, fx.MediaRules, "media.json comes from Base")
	})

	t.Run("a broken file in Top is not masked by Base", func(t *testing.T) {
		t.Parallel()
		broken := fstest.MapFS{sim.FixtureVoices: {Data: []byte(`{`)}}
		_, err := sim.LoadFixtures(sim.Overlay{Top: broken, Base: fixtures.FS})
		require.Error(t, err)
		assert.Contains(t, err.Error(), sim.FixtureVoices)
		assert.False(t, errors.Is(err, fs.ErrNotExist))
	})
}
