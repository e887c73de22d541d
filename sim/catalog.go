package sim

import (
	"fmt"
	"slices"
	"strings"
)

// Voice is a catalogue entry.
type Voice struct {
	Name     string `json:"name"`
	VoiceKey string `json:"voice_key"`
	Style    string `json:"style"`
}

// Catalog is the options and voices data, loaded from fixtures.
type Catalog struct {
	SourceLangs []string           `json:"source_langs"`
	TargetLangs []string           `json:"target_langs"`
	Voices      map[string][]Voice `json:"voices"`
	// EmotionalTransferLangs and SoundalikeLangs are language prefixes
	// ("en") or full target codes ("en-US") the special voice keys support.
	EmotionalTransferLangs []string `json:"emotional_transfer_langs"`
	SoundalikeLangs        []string `json:"soundalike_langs"`

	sources, targets map[string]bool
	voiceLang        map[string]string
	voiceByKey       map[string]Voice
}

// Index checks the voices (each under a target language, with a unique key
// and a known style) and builds the lookup tables. Call it once the lists
// are set, before any lookup.
func (c *Catalog) Index() error {
	c.sources, c.targets = map[string]bool{}, map[string]bool{}
	for _, l := range c.SourceLangs {
		c.sources[l] = true
	}
	for _, l := range c.TargetLangs {
		c.targets[l] = true
	}
	c.voiceLang, c.voiceByKey = map[string]string{}, map[string]Voice{}
	for lang, vs := range c.Voices {
		if !c.targets[lang] {
			return fmt.Errorf("voices: %s is not a target language of options", lang)
		}
		for _, v := range vs {
			if v.VoiceKey == "" || !slices.Contains(Styles, v.Style) {
				return fmt.Errorf("voices: %s: bad entry %+v", lang, v)
			}
			if _, dup := c.voiceLang[v.VoiceKey]; dup {
				return fmt.Errorf("voices: duplicate key %s", v.VoiceKey)
			}
			c.voiceLang[v.VoiceKey] = lang
			c.voiceByKey[v.VoiceKey] = v
		}
	}
	return nil
}

// IsSourceLang reports whether code is a source language of options.
func (c *Catalog) IsSourceLang(code string) bool { return c.sources[code] }

// IsTargetLang reports whether code is a target language of options.
func (c *Catalog) IsTargetLang(code string) bool { return c.targets[code] }

// Voice returns a catalogue voice and the target language it belongs to.
func (c *Catalog) Voice(key string) (Voice, string, bool) {
	v, ok := c.voiceByKey[key]
	return v, c.voiceLang[key], ok
}

// VoicesFor returns the voices of a target language with the given style,
// or every voice of the language when none has that style.
func (c *Catalog) VoicesFor(lang, style string) []Voice {
	var out []Voice
	for _, v := range c.Voices[lang] {
		if v.Style == style {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		out = c.Voices[lang]
	}
	return out
}

// SpecialVoiceSupports reports whether the special voice key supports the
// target language.
func (c *Catalog) SpecialVoiceSupports(key, target string) bool {
	var list []string
	switch key {
	case VoiceSoundalike:
		list = c.SoundalikeLangs
	case VoiceEmotionalTransfer:
		list = c.EmotionalTransferLangs
	default:
		return false
	}
	prefix, _, _ := strings.Cut(target, "-")
	return slices.Contains(list, target) || slices.Contains(list, prefix)
}

// MediaRule maps source video URLs to a duration and, optionally, a forced
// outcome: refusal at creation or a later error status.
type MediaRule struct {
	Pattern         string  `json:"pattern"` // GlobMatch'd against the whole URL
	DurationSeconds float64 `json:"duration_seconds,omitempty"`
	Refuse          string  `json:"refuse,omitempty"`
	Fail            string  `json:"fail,omitempty"`
	Note            string  `json:"note,omitempty"`
}

// Matches reports whether url matches the rule's pattern.
func (m MediaRule) Matches(url string) bool { return GlobMatch(m.Pattern, url) }

// GlobMatch matches s against a pattern where '*' matches any run of
// characters (also '/'). It runs in O(len(p)*len(s)) at worst.
func GlobMatch(p, s string) bool {
	px, sx := 0, 0
	starP, starS := -1, 0
	for sx < len(s) {
		switch {
		case px < len(p) && p[px] == '*':
			starP, starS = px, sx
			px++
		case px < len(p) && p[px] == s[sx]:
			px++
			sx++
		case starP >= 0:
			px = starP + 1
			starS++
			sx = starS
		default:
			return false
		}
	}
	for px < len(p) && p[px] == '*' {
		px++
	}
	return px == len(p)
}
