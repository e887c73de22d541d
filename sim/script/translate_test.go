package script_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/script"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sampleText = "Hello, world! How are you today? I'm fine: thanks... (really)"

// translate is the pseudo translation of one text into target, as
// TargetScript makes it when the source is in another language.
func translate(ids *sim.IDs, text, target string) string {
	return script.TargetScript(ids, []sim.Segment{{Text: text}}, "", target, nil)[0].Text
}

// trailingPunct is the run of punctuation a word ends with.
func trailingPunct(w string) string {
	return w[len(strings.TrimRightFunc(w, unicode.IsPunct)):]
}

func TestTranslateDeterministicAndSeeded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		target string
	}{
		{"latin", "en-US"},
		{"french", "fr-FR"},
		{"cyrillic", "ru-RU"},
		{"kana", "ja-JP"},
		{"han", "zh-CN"},
		{"arabic", "ar-EG"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := translate(sim.NewIDs(1), sampleText, tc.target)
			assert.NotEmpty(t, a)
			assert.NotEqual(t, sampleText, a, "the text is transformed")
			assert.Equal(t, a, translate(sim.NewIDs(1), sampleText, tc.target), "same seed, same text")
			assert.NotEqual(t, a, translate(sim.NewIDs(2), sampleText, tc.target), "another seed, another text")
		})
	}
	// The same language in another region is another "translation".
	assert.NotEqual(t, translate(sim.NewIDs(1), sampleText, "en-US"), translate(sim.NewIDs(1), sampleText, "en-GB"))
}

func TestTranslateKeepsShape(t *testing.T) {
	t.Parallel()
	ids := sim.NewIDs(7)
	cases := []struct {
		name, text, target string
	}{
		{"english", sampleText, "en-US"},
		{"german", sampleText, "de-DE"},
		{"russian", sampleText, "ru-RU"},
		{"greek", "Good morning, everyone. Let's begin!", "el-GR"},
		{"arabic", "Good morning, everyone. Let's begin!", "ar-SA"},
		{"unknown language", "Good morning, everyone.", "xx-XX"},
		{"punctuation-only words", "Wait - what ?! ...", "es-ES"},
		{"extra spaces are normalised", "  spaced   out\ttext \n", "it-IT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := translate(ids, tc.text, tc.target)
			in, out := strings.Fields(tc.text), strings.Fields(got)
			require.Len(t, out, len(in), "word count kept: %q", got)
			assert.Equal(t, strings.Join(out, " "), got, "single spaces between words")
			for i := range in {
				assert.Equal(t, trailingPunct(in[i]), trailingPunct(out[i]), "word %d of %q", i, got)
			}
		})
	}
}

func TestTranslateSameWordSameTranslation(t *testing.T) {
	t.Parallel()
	got := strings.Fields(translate(sim.NewIDs(3), "Dog dog DOG cat dog.", "en-US"))
	require.Len(t, got, 5)
	assert.Equal(t, got[1], got[4][:len(got[4])-1], "a word always maps to the same pseudo-word")
	assert.Equal(t, strings.ToLower(got[0]), got[1], "case does not change the pseudo-word")
	assert.True(t, unicode.IsUpper([]rune(got[0])[0]), "a capital is kept: %q", got[0])
	assert.NotEqual(t, got[1], got[3], "different words map to different pseudo-words")
}

func TestTranslateWritingSystems(t *testing.T) {
	t.Parallel()
	ids := sim.NewIDs(1)
	const text = "The quick brown fox jumps over the lazy dog. Does it?"
	cases := []struct {
		name     string
		target   string
		script   *unicode.RangeTable
		noSpaces bool
	}{
		{"english is latin", "en-US", unicode.Latin, false},
		{"spanish is latin", "es-MX", unicode.Latin, false},
		{"unknown falls back to latin", "xx-XX", unicode.Latin, false},
		{"russian is cyrillic", "ru-RU", unicode.Cyrillic, false},
		{"ukrainian is cyrillic", "uk-UA", unicode.Cyrillic, false},
		{"greek", "el-GR", unicode.Greek, false},
		{"hebrew", "he-IL", unicode.Hebrew, false},
		{"arabic", "ar-AE", unicode.Arabic, false},
		{"hindi is devanagari", "hi-IN", unicode.Devanagari, false},
		{"georgian", "ka-GE", unicode.Georgian, false},
		{"korean is hangul", "ko-KR", unicode.Hangul, false},
		{"japanese is kana", "ja-JP", unicode.Hiragana, true},
		{"chinese is han", "zh-CN", unicode.Han, true},
		{"thai", "th-TH", unicode.Thai, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := translate(ids, text, tc.target)
			require.True(t, utf8.ValidString(got))
			letters := 0
			for _, r := range got {
				if unicode.IsPunct(r) || unicode.IsSpace(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) {
					continue
				}
				letters++
				assert.True(t, unicode.Is(tc.script, r), "%q in %q is not in the expected script", r, got)
			}
			assert.Positive(t, letters)
			assert.Equal(t, tc.noSpaces, !strings.Contains(got, " "), "spaces between words: %q", got)
		})
	}
}

func TestTranslateValidUTF8(t *testing.T) {
	t.Parallel()
	inputs := []string{
		"",
		"   ",
		"Ça va? Très bien!",
		"Привет, мир!",
		"こんにちは、世界。",
		"emoji 👍🏽 and ZWJ 👩‍👩‍👧",
		"broken \xff\xfe bytes",
		"\xc3",
		"x\u0301\u0302 combining",
		"«Quoted» — dash „low“",
	}
	for _, target := range []string{"en-US", "ru-RU", "ja-JP", "zh-TW", "th-TH", "ar-EG", "am-ET", "fr-FR"} {
		for _, in := range inputs {
			got := translate(sim.NewIDs(5), in, target)
			assert.True(t, utf8.ValidString(got), "%s %q -> %q", target, in, got)
			if strings.TrimSpace(in) == "" {
				assert.Empty(t, got, "%s %q", target, in)
			}
		}
	}
}

func TestTargetScriptKeepsTimingsAndSpeakers(t *testing.T) {
	t.Parallel()
	ids := sim.NewIDs(4)
	src := []sim.Segment{
		{StartMS: 100, EndMS: 900, Text: "Hello there.", SpeakerID: 1},
		{StartMS: 1200, EndMS: 3000, Text: "General Kenobi!", SpeakerID: 2},
	}
	got := script.TargetScript(ids, src, "en", "ru-RU", nil)
	require.Len(t, got, len(src))
	for i := range src {
		assert.Equal(t, src[i].StartMS, got[i].StartMS)
		assert.Equal(t, src[i].EndMS, got[i].EndMS)
		assert.Equal(t, src[i].SpeakerID, got[i].SpeakerID)
		assert.Equal(t, translate(ids, src[i].Text, "ru-RU"), got[i].Text)
	}
	assert.Equal(t, "Hello there.", src[0].Text, "the input is not modified")
	assert.Empty(t, script.TargetScript(ids, nil, "en", "ru-RU", nil))
}
