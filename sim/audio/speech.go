package audio

import (
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The timings and rates SpeechTrack describes.
const (
	speechLeadIn      = 150 * time.Millisecond
	speechTail        = 200 * time.Millisecond
	speechMaxSegment  = 12 * time.Second
	speechDefaultRate = 14.0
	speechMinRate     = 0.5
	speechMaxRate     = 1000.0
)

// speechBreak classifies the runes that end a phrase.
type speechBreak uint8

const (
	speechNoBreak speechBreak = iota
	speechComma
	speechSentence
	speechLine
)

// speechPauses is the pause between two phrases, by the strongest break
// between them.
var speechPauses = [...]time.Duration{
	speechNoBreak:  0,
	speechComma:    220 * time.Millisecond, // , ; : 、 ， ، ...
	speechSentence: 450 * time.Millisecond, // . ! ? … 。 ！ ？ ؟ । ...
	speechLine:     600 * time.Millisecond, // line and paragraph breaks
}

// speechBreakOf returns the break kind of r.
func speechBreakOf(r rune) speechBreak {
	switch r {
	case '\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029':
		return speechLine
	case '.', '!', '?', '…', '‼', '‽', '⁇', '⁈', '⁉',
		'。', '｡', '！', '？', '．', // CJK and full-width
		'؟', '۔', // Arabic question mark, Urdu full stop
		'।', '॥', // Devanagari danda, double danda
		'።', '፧', '჻', '܀', '។': // Ethiopic, Georgian, Syriac, Khmer
		return speechSentence
	case ',', ';', ':',
		'、', '，', '；', '：', '､', '﹐', '﹑', '﹔', '﹕', // CJK and full-width
		'،', '؛', // Arabic comma and semicolon
		'፣', '፤': // Ethiopic
		return speechComma
	}
	return speechNoBreak
}

// speechCounted reports whether r counts as one character of speech.
func speechCounted(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// SpeechTrack lays text out as speech at charsPerSecond (clamped to
// [0.5, 1000]; 14 when not a positive finite number) and sampleRate (stored
// as given; <= 0 means the synthesiser's default). The result is a pure
// function of the arguments.
//
// The text is split into phrases at punctuation, with the pause of
// speechPauses between two phrases (the longest of a run of breaks). An
// ASCII '.', ',' or ':' between two letters or digits ("3.14", "1,000",
// "10:30") is part of a word, not a break. A phrase, trimmed, lasts one
// character (exactly 2*round(1e9/(2*charsPerSecond)) ns) per letter or digit
// and half of one per whitespace run between its first and last letter or
// digit; phrases without letters or digits are dropped, and one longer than
// 12 s is split into pieces of about equal weight (see split).
//
// Each piece is a Segment with Text the piece (without its closing
// punctuation) and Voice voice. The first starts after a 150 ms lead-in and
// the Duration ends 200 ms after the last (0 without segments).
func SpeechTrack(text string, charsPerSecond float64, voice Voice, sampleRate int) Track {
	l := speechLayout{
		voice:  voice,
		halfNs: speechHalfNs(charsPerSecond),
		t:      speechLeadIn,
	}
	l.capHalf = int64(speechMaxSegment) / l.halfNs
	phraseStart := 0
	pause := speechNoBreak
	var prev rune // previous rune, 0 at the start
	for i, r := range text {
		b := speechBreakOf(r)
		if (r == '.' || r == ',' || r == ':') && speechCounted(prev) {
			if next, _ := utf8.DecodeRuneInString(text[i+1:]); speechCounted(next) {
				b = speechNoBreak
			}
		}
		prev = r
		if b == speechNoBreak {
			continue
		}
		if l.phrase(text[phraseStart:i], pause) {
			pause = speechNoBreak
		}
		pause = max(pause, b)
		phraseStart = i + utf8.RuneLen(r) // break runes are valid UTF-8
	}
	l.phrase(text[phraseStart:], pause)
	tr := Track{SampleRate: sampleRate, Segments: l.segs}
	if len(l.segs) > 0 {
		tr.Duration = l.segs[len(l.segs)-1].End + speechTail
	}
	return tr
}

// speechHalfNs returns the duration of half a character at the given rate,
// in nanoseconds (>= 500000).
func speechHalfNs(charsPerSecond float64) int64 {
	rate := charsPerSecond
	if !(rate > 0) || math.IsInf(rate, 0) {
		rate = speechDefaultRate
	}
	rate = max(speechMinRate, min(speechMaxRate, rate))
	return int64(math.Round(1e9 / (2 * rate)))
}

// speechLayout accumulates the segments of a track.
type speechLayout struct {
	voice   Voice
	halfNs  int64 // duration of half a character
	capHalf int64 // the most half-characters a segment may hold
	t       time.Duration
	segs    []Segment
}

// speechPiece is a part of a phrase: bytes [start, end) of it, its
// position [from, to) in half-characters from the phrase start, and how
// many letters and digits it holds.
type speechPiece struct {
	start, end int
	from, to   int64
	counted    int
}

// phrase lays out one phrase after the pause of the given break (ignored
// before the first phrase). It reports whether the phrase had letters or
// digits (otherwise it is dropped and nothing changes).
func (l *speechLayout) phrase(p string, pause speechBreak) bool {
	p = strings.TrimFunc(p, unicode.IsSpace)
	// The phrase is timed from its first letter or digit to its last one:
	// symbols and whitespace outside them take no time.
	a := strings.IndexFunc(p, speechCounted)
	if a < 0 {
		return false
	}
	b := strings.LastIndexFunc(p, speechCounted)
	_, size := utf8.DecodeRuneInString(p[b:])
	b += size
	total := speechWeight(p[a:b])
	if len(l.segs) > 0 {
		l.t += speechPauses[pause]
	}
	if total <= l.capHalf {
		l.add(p, speechPiece{start: 0, end: len(p), from: 0, to: total})
	} else {
		l.split(p, a, b, total)
	}
	l.t += time.Duration(total * l.halfNs)
	return true
}

// add appends the segment of piece pc of phrase p (which starts at l.t).
func (l *speechLayout) add(p string, pc speechPiece) {
	l.segs = append(l.segs, Segment{
		Start: l.t + time.Duration(pc.from*l.halfNs),
		End:   l.t + time.Duration(pc.to*l.halfNs),
		Text:  strings.TrimFunc(p[pc.start:pc.end], unicode.IsSpace),
		Voice: l.voice,
	})
}

// speechWeight returns the weight of a trimmed phrase in half-characters,
// or 0 when it has no letters or digits.
func speechWeight(p string) int64 {
	var w, counted int64
	inSpace := false
	for _, r := range p {
		space := unicode.IsSpace(r)
		switch {
		case space && !inSpace:
			w++
		case speechCounted(r):
			counted++
		}
		inSpace = space
	}
	if counted == 0 {
		return 0
	}
	return w + 2*counted
}

// split lays out the phrase p, timed on p[a:b] (which starts and ends with
// a letter or digit) of the given weight (more than l.capHalf), as pieces
// of at most l.capHalf half-characters: a piece is closed at a whitespace
// run once it holds total/ceil(total/capHalf) or when the next word would
// not fit; a word that does not fit in a piece of its own is cut between
// characters. Pieces without letters or digits (symbols between two long
// parts) are left silent. The first piece's text starts at the start of p,
// the last one's ends at its end.
func (l *speechLayout) split(p string, a, b int, total int64) {
	n := (total + l.capHalf - 1) / l.capHalf
	target := (total + n - 1) / n
	var (
		pos     int64 // half-characters from the phrase start
		cur     speechPiece
		open    bool
		emitted int
	)
	closePiece := func() {
		if open && cur.counted > 0 {
			if emitted == 0 {
				cur.start = 0
			}
			l.add(p, cur)
			emitted++
		}
		open = false
	}
	openPiece := func(i int) {
		cur = speechPiece{start: i, end: i, from: pos, to: pos}
		open = true
	}
	for i := a; i < b; {
		r, size := utf8.DecodeRuneInString(p[i:])
		if unicode.IsSpace(r) {
			// A whitespace run: break here when the piece is full enough
			// or the next word would not fit.
			j := i + size
			for j < b {
				r2, s2 := utf8.DecodeRuneInString(p[j:])
				if !unicode.IsSpace(r2) {
					break
				}
				j += s2
			}
			if open && (cur.to-cur.from >= target || cur.to-cur.from+1+speechWeight(p[j:j+speechWordLen(p[j:b])]) > l.capHalf) {
				closePiece()
			}
			pos++
			if open {
				cur.end, cur.to = j, pos
			}
			i = j
			continue
		}
		// A word: added whole when it fits, else character by character.
		wordEnd := i + speechWordLen(p[i:b])
		if !open {
			openPiece(i)
		}
		if ww := speechWeight(p[i:wordEnd]); cur.to-cur.from+ww <= l.capHalf {
			pos += ww
			cur.end, cur.to = wordEnd, pos
			cur.counted += int(ww / 2)
			i = wordEnd
			continue
		}
		for i < wordEnd {
			r, size := utf8.DecodeRuneInString(p[i:])
			if speechCounted(r) {
				if cur.counted > 0 && (cur.to-cur.from+2 > l.capHalf || cur.to-cur.from >= target) {
					closePiece()
					openPiece(i)
				}
				pos += 2
				cur.counted++
			}
			i += size
			cur.end, cur.to = i, pos
		}
	}
	cur.end = len(p)
	closePiece()
}

// speechWordLen returns the byte length of the word at the start of s.
func speechWordLen(s string) int {
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		return i
	}
	return len(s)
}
