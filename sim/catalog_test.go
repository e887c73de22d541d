package sim_test

import (
	"testing"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func loadEmbedded(t *testing.T) *sim.Fixtures {
	t.Helper()
	fx, err := fixtures.Load(fixtures.FS)
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
	mixed := &sim.Catalog{
		SourceLangs:            []string{"en"},
		TargetLangs:            []string{"en-US", "fr-FR", "pt-BR", "pt-PT"},
		EmotionalTransferLangs: []string{"en", "pt-BR"},
		SoundalikeLangs:        []string{"fr-FR"},
	}
	require.NoError(t, mixed.Index())

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

func TestCatalogIndex(t *testing.T) {
	t.Parallel()
	voice := func(key, style string) sim.Voice { return sim.Voice{Name: "V", VoiceKey: key, Style: style} }
	cases := []struct {
		name    string
		voices  map[string][]sim.Voice
		wantErr string
	}{
		{name: "valid", voices: map[string][]sim.Voice{"en-US": {voice("a", sim.StyleFeminine)}, "fr-FR": {voice("b", sim.StyleMasculine)}}},
		{name: "no voices", voices: nil},
		{name: "voice under a language not a target", voices: map[string][]sim.Voice{"de-DE": {voice("a", sim.StyleFeminine)}}, wantErr: "voices: de-DE is not a target language of options"},
		{name: "voice without a key", voices: map[string][]sim.Voice{"en-US": {voice("", sim.StyleFeminine)}}, wantErr: "voices: en-US: bad entry {Name:V VoiceKey: Style:feminine}"},
		{name: "voice with an unknown style", voices: map[string][]sim.Voice{"en-US": {voice("a", "robotic")}}, wantErr: "voices: en-US: bad entry {Name:V VoiceKey:a Style:robotic}"},
		{name: "duplicate key", voices: map[string][]sim.Voice{"en-US": {voice("a", sim.StyleFeminine), voice("a", sim.StyleMasculine)}}, wantErr: "voices: duplicate key a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cat := &sim.Catalog{SourceLangs: []string{"en"}, TargetLangs: []string{"en-US", "fr-FR"}, Voices: tc.voices}
			err := cat.Index()
			if tc.wantErr != "" {
				assert.EqualError(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.True(t, cat.IsSourceLang("en"))
			assert.False(t, cat.IsSourceLang("fr"))
			assert.True(t, cat.IsTargetLang("fr-FR"))
			assert.False(t, cat.IsTargetLang("en"))
			for lang, vs := range tc.voices {
				for _, v := range vs {
					got, gotLang, ok := cat.Voice(v.VoiceKey)
					require.True(t, ok, v.VoiceKey)
					assert.Equal(t, v, got)
					assert.Equal(t, lang, gotLang)
				}
			}
		})
	}
}
