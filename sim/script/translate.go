package script

import (
	"strings"
	"unicode"

	"github.com/dubsim/dubsim/sim"
)

// Syllable inventories by writing system, so pseudo translations look like
// the target language's script (and exercise a client's UTF-8 handling).
var syllables = map[string][]string{
	"latin":      strings.Fields("la re mi so ta ne ko du ri va le sen tor mar bel no ci pa do lu ven ra ge is"),
	"fr":         strings.Fields("le la de ré mon tou vé quan ble ri deu çon ais eau pré sou lé mè"),
	"de":         strings.Fields("der die ein sch ung ber ken lich zu gen ach mal vor stein wel über"),
	"es":         strings.Fields("el la de ción ra mo que ño to ca si pe ro lle ma dí ve"),
	"pt":         strings.Fields("o a de ção ra mo que nho to ca são pe lhe ma vê dá"),
	"it":         strings.Fields("il la di zio ra mo che gno to ca si pe ro lle ma bel"),
	"cyrillic":   strings.Fields("при ве ло ка на то ст ра мо ду ше жи зо ли вы ня"),
	"greek":      strings.Fields("κα λη με ρα το να στη πο λυ θε ει σου"),
	"arabic":     strings.Fields("ال سلا م كم شك را من في هذا لى نا تو"),
	"hebrew":     strings.Fields("של ום תו דה אנ חנו מה זה לא כן בו קר"),
	"devanagari": strings.Fields("न म स ते क र आ प धन्य वा द हम"),
	"thai":       strings.Fields("สวั ส ดี ครับ ขอ บ คุณ มาก ไป นี้"),
	"han":        strings.Fields("你 好 我 们 的 是 在 有 这 个 人 中 大 来 上"),
	"kana":       strings.Fields("こ ん に ち は あ り が と う で す ま し た"),
	"hangul":     strings.Fields("안 녕 하 세 요 감 사 합 니 다 우 리 는"),
	"georgian":   strings.Fields("გა მარ ჯო ბა მად ლო ბა დი დი"),
	"armenianet": strings.Fields("ሰ ላ ም አ መ ሰ ግ ና ለ ሁ"),
}

var scriptOf = map[string]string{
	"fr": "fr", "de": "de", "es": "es", "pt": "pt", "it": "it",
	"ru": "cyrillic", "uk": "cyrillic", "bg": "cyrillic", "mk": "cyrillic", "sr": "cyrillic", "kk": "cyrillic", "mn": "cyrillic",
	"el": "greek", "ar": "arabic", "fa": "arabic", "ur": "arabic", "ps": "arabic", "he": "hebrew",
	"hi": "devanagari", "mr": "devanagari", "ne": "devanagari", "th": "thai", "zh": "han", "ja": "kana", "ko": "hangul",
	"ka": "georgian", "am": "armenianet",
}

// noSpaces lists writing systems written without spaces between words.
var noSpaces = map[string]bool{"han": true, "kana": true, "thai": true}

// translate returns a deterministic pseudo translation of text into target
// (a BCP 47 code): every word maps to a pseudo-word built from syllables of
// the target's writing system, punctuation is kept. It is not a translation;
// it only has the shape of one.
func translate(ids *sim.IDs, text, target string, g *glossary) string {
	lang, _, _ := strings.Cut(target, "-")
	sys, ok := scriptOf[lang]
	if !ok {
		sys = "latin"
	}
	inv := syllables[sys]
	return rewrite(text, g, noSpaces[sys], func(core string) string {
		h := ids.Hash("translate", target, strings.ToLower(core))
		r := sim.NewRand(h)
		n := 1 + (len(core)+2)/4
		var pw strings.Builder
		for j := 0; j < n; j++ {
			pw.WriteString(inv[r.Intn(len(inv))])
		}
		s := pw.String()
		if unicode.IsUpper([]rune(core)[0]) && sys != "cyrillic" {
			rs := []rune(s)
			rs[0] = unicode.ToUpper(rs[0])
			s = string(rs)
		}
		return s
	})
}

// TargetScript is the target script of a project: the source script
// pseudo-translated into targetLang, or kept as it is when the target
// is in the source language, with the glossary's terms in place of the
// words they match (case-insensitive, whole words and phrases, the longest
// term first; the target term is written as the glossary spells it).
// Timings and speakers are kept.
func TargetScript(ids *sim.IDs, segs []sim.Segment, sourceLang, targetLang string, terms []sim.GlossaryTerm) []sim.Segment {
	g := newGlossary(terms)
	lang, _, _ := strings.Cut(targetLang, "-")
	same := lang == sourceLang // pre-translated: the words stay
	out := make([]sim.Segment, len(segs))
	for i, s := range segs {
		if same {
			if g != nil {
				s.Text = rewrite(s.Text, g, false, func(core string) string { return core })
			}
		} else {
			s.Text = translate(ids, s.Text, targetLang, g)
		}
		out[i] = s
	}
	return out
}
