package script

import "strings"

// Speaking rates in characters (letters and digits) per second, by language.
// Alphabetic languages are said at about 13-15 characters per second (about
// 150 words per minute); syllabic and logographic scripts carry more per
// character and are said at fewer characters per second.
var charsPerSecond = map[string]float64{
	"es": 15.5, "it": 15, "pt": 14.5, "fr": 14.5, "en": 14, "de": 13, "nl": 13.5, "ru": 13, "uk": 13, "pl": 13,
	"ja": 8, "zh": 5, "ko": 7, "th": 11, "hi": 12, "ar": 12, "he": 12, "fa": 12, "ur": 12, "vi": 11,
	"fi": 12.5, "hu": 12.5, "tr": 13, "el": 13, "ka": 12, "am": 10, "km": 9, "lo": 9, "my": 9, "si": 10,
}

// CharsPerSecondFor returns the speaking rate of a language code ("fr-FR" or
// "fr"); unknown languages speak at CharsPerSecond.
func CharsPerSecondFor(lang string) float64 {
	prefix, _, _ := strings.Cut(lang, "-")
	if r, ok := charsPerSecond[strings.ToLower(prefix)]; ok {
		return r
	}
	return CharsPerSecond
}
