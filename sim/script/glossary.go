package script

import (
	"cmp"
	"slices"
	"strings"
	"unicode"

	"github.com/dubsim/dubsim/sim"
)

// glossaryHeaders are the cells of a glossary's header line, by column.
var glossaryHeaders = [2]map[string]bool{
	{"source": true, "source term": true, "source_term": true, "src": true, "term": true, "original": true, "from": true},
	{"target": true, "target term": true, "target_term": true, "tgt": true, "translation": true, "to": true},
}

// ParseGlossary reads a TSV glossary: one "<source term><TAB><target term>"
// per non-blank line (cells trimmed, further cells ignored). A first line of
// column names (glossaryHeaders) or of the project's languages (sourceLang,
// then targetLang with or without its region) is a header, and skipped. bad
// is the 1-based number of the first line not "<text><TAB><text>", or 0.
func ParseGlossary(content, sourceLang, targetLang string) (terms []sim.GlossaryTerm, bad int) {
	first := true
	for i, line := range strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		src, rest, ok := strings.Cut(line, "\t")
		dst, _, _ := strings.Cut(rest, "\t")
		src, dst = strings.TrimSpace(src), strings.TrimSpace(dst)
		if !ok || src == "" || dst == "" {
			return nil, i + 1
		}
		if first && isGlossaryHeader(src, dst, sourceLang, targetLang) {
			first = false
			continue
		}
		first = false
		terms = append(terms, sim.GlossaryTerm{Source: src, Target: dst})
	}
	return terms, 0
}

func isGlossaryHeader(src, dst, sourceLang, targetLang string) bool {
	s, d := strings.ToLower(src), strings.ToLower(dst)
	if glossaryHeaders[0][s] && glossaryHeaders[1][d] {
		return true
	}
	lang, _, _ := strings.Cut(strings.ToLower(targetLang), "-")
	return sourceLang != "" && s == strings.ToLower(sourceLang) && (d == strings.ToLower(targetLang) || d == lang)
}

// glossary finds the terms of a glossary in a text's words.
type glossary struct {
	// byFirst holds the terms by their first word (lower case), longest
	// (in words, then in bytes) first.
	byFirst map[string][]glossaryEntry
}

type glossaryEntry struct {
	words  []string // lower case; the last without its trailing punctuation
	target string
}

func newGlossary(terms []sim.GlossaryTerm) *glossary {
	if len(terms) == 0 {
		return nil
	}
	g := &glossary{byFirst: map[string][]glossaryEntry{}}
	for _, t := range terms {
		words := strings.Fields(strings.ToLower(t.Source))
		if len(words) == 0 {
			continue
		}
		words[0] = strings.TrimLeftFunc(words[0], unicode.IsPunct)
		words[len(words)-1] = strings.TrimRightFunc(words[len(words)-1], unicode.IsPunct)
		if words[0] == "" || words[len(words)-1] == "" {
			continue
		}
		g.byFirst[words[0]] = append(g.byFirst[words[0]], glossaryEntry{words: words, target: t.Target})
	}
	for _, es := range g.byFirst {
		slices.SortStableFunc(es, func(a, b glossaryEntry) int {
			return cmp.Or(cmp.Compare(len(b.words), len(a.words)),
				cmp.Compare(len(strings.Join(b.words, " ")), len(strings.Join(a.words, " "))))
		})
	}
	return g
}

// match returns the target of the longest term starting at word i of words,
// and how many words it covers (0 for none). Matching ignores case; the
// first word's leading and the last word's trailing punctuation are not
// part of the match, so "world!" is the term "world", but "red, car" is not
// "red car".
func (g *glossary) match(words []string, i int) (target string, n int) {
	if g == nil {
		return "", 0
	}
	first := strings.TrimLeftFunc(strings.ToLower(words[i]), unicode.IsPunct)
terms:
	for _, e := range g.byFirst[strings.TrimRightFunc(first, unicode.IsPunct)] {
		if i+len(e.words) > len(words) {
			continue
		}
		for j, w := range e.words {
			got := strings.ToLower(words[i+j])
			if j == 0 {
				got = first
			}
			if j == len(e.words)-1 {
				got = strings.TrimRightFunc(got, unicode.IsPunct)
			}
			if got != w {
				continue terms
			}
		}
		return e.target, len(e.words)
	}
	return "", 0
}

// rewrite renders text word by word: a run of words that is a glossary
// term becomes the term's target (keeping the run's leading and trailing
// punctuation), every other word becomes word(core) followed by its
// trailing punctuation. Words are joined by a space unless noSpace.
func rewrite(text string, g *glossary, noSpace bool, word func(core string) string) string {
	words := strings.Fields(text)
	var b strings.Builder
	for i := 0; i < len(words); {
		if i > 0 && !noSpace {
			b.WriteByte(' ')
		}
		if target, n := g.match(words, i); n > 0 {
			w := words[i]
			b.WriteString(w[:len(w)-len(strings.TrimLeftFunc(w, unicode.IsPunct))])
			last := words[i+n-1]
			b.WriteString(target)
			b.WriteString(last[len(strings.TrimRightFunc(last, unicode.IsPunct)):])
			i += n
			continue
		}
		w := words[i]
		core := strings.TrimRightFunc(w, unicode.IsPunct)
		if core != "" {
			b.WriteString(word(core))
		}
		b.WriteString(w[len(core):])
		i++
	}
	return b.String()
}
