package script

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dubsim/dubsim/sim"
)

// Content formats recognised by ParseContent.
const (
	FormatSRT   = "srt"
	FormatVTT   = "vtt"
	FormatPlain = "plain"
)

// ErrNoText means the content holds no text once timings and tags are removed.
var ErrNoText = errors.New("contains no text")

var (
	timingLine = regexp.MustCompile(`^\s*(?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3}\s*-->\s*(?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3}`)
	markupTag  = regexp.MustCompile(`<[^<>]{0,200}>|\{\\[^{}]{0,100}\}`)
	// Speaker tags are removed from the text: "- ", ">> ", "[Name] ",
	// "(Name) ", "NAME: ".
	speakerTag = regexp.MustCompile(`^\s*(?:-\s+|>>\s*)?(?:\[([^\]]{1,40})\]\s*|\(([^)]{1,40})\)\s*|([\p{Lu}\p{N}][\p{L}\p{N} ._'-]{0,29}):\s+)?`)
	// voiceTag is WebVTT's voice span, <v Name> or <v.class Name>.
	voiceTag = regexp.MustCompile(`<v(?:\.[^\s>]*)?\s+([^<>]{1,40})>`)
	// cueTime is one time of a timing line: [h:]mm:ss(,|.)fff.
	cueTime = regexp.MustCompile(`(?:(\d+):)?(\d{1,2}):(\d{2})[.,](\d{1,3})`)
)

// Cue is an utterance of a transcript with its timing (SRT and WebVTT) and
// the name its speaker tag gives, "" when it has none.
type Cue struct {
	StartMS, EndMS int64
	Text           string
	Speaker        string
}

// detectFormat tells SRT, WebVTT and plain text apart in s, whose line ends
// are "\n".
func detectFormat(s string) string {
	t := strings.TrimLeft(s, "\ufeff \t\n")
	if strings.HasPrefix(t, "WEBVTT") {
		return FormatVTT
	}
	for _, line := range strings.Split(t, "\n") {
		if timingLine.MatchString(line) {
			return FormatSRT
		}
	}
	return FormatPlain
}

// ParseContent returns the utterances of a transcript, in order, with
// timings, cue numbers, markup and speaker tags removed. Timings are ignored
// (the service recomputes them from speech boundaries).
func ParseContent(s string) (format string, utterances []string, err error) {
	format, cues, err := ParseCues(s)
	for _, c := range cues {
		utterances = append(utterances, c.Text)
	}
	return format, utterances, err
}

// ParseCues returns the cues of a transcript, in order: for SRT and WebVTT
// with the timings of their timing lines, for plain text with none (0).
// Text has markup and speaker tags removed; Speaker is the name of the
// cue's first speaker tag (<v Name>, [Name], (Name), NAME:).
func ParseCues(s string) (format string, cues []Cue, err error) {
	if !utf8.ValidString(s) {
		return "", nil, errors.New("is not valid UTF-8")
	}
	s = strings.ReplaceAll(strings.TrimPrefix(s, "\ufeff"), "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	format = detectFormat(s)
	switch format {
	case FormatVTT, FormatSRT:
		cues = parseCues(s, format == FormatVTT)
	default:
		cues = parsePlain(s)
	}
	if len(cues) == 0 {
		return format, nil, ErrNoText
	}
	return format, cues, nil
}

func parseCues(s string, vtt bool) []Cue {
	// A line of spaces separates cues like an empty one.
	all := strings.Split(s, "\n")
	for i, l := range all {
		if strings.TrimSpace(l) == "" {
			all[i] = ""
		}
	}
	s = strings.Join(all, "\n")
	var out []Cue
	for i, block := range strings.Split(s, "\n\n") {
		lines := strings.Split(strings.Trim(block, "\n"), "\n")
		// WebVTT's header, comments, styles and regions are not cues.
		head := strings.TrimSpace(lines[0])
		if vtt && (i == 0 && strings.HasPrefix(head, "WEBVTT") || strings.HasPrefix(head, "NOTE") || head == "STYLE" || head == "REGION") {
			continue
		}
		timed := -1
		for j, l := range lines {
			if timingLine.MatchString(l) {
				timed = j
				break
			}
		}
		if timed < 0 {
			continue // a block without timing is a header, a comment or noise
		}
		var parts []string
		cur := cueOf(lines[timed])
		last := -1 // the line the last part came from
		for j := timed + 1; j < len(lines); j++ {
			if timingLine.MatchString(lines[j]) {
				// The next cue follows without a blank line: a cue number
				// right before its timing is not text.
				if last == j-1 && isNumber(lines[j-1]) {
					parts = parts[:len(parts)-1]
				}
				if len(parts) > 0 {
					cur.Text = strings.Join(parts, " ")
					out = append(out, cur)
				}
				parts = nil
				cur = cueOf(lines[j])
				continue
			}
			if t, who := cleanLine(lines[j]); t != "" {
				parts = append(parts, t)
				if cur.Speaker == "" {
					cur.Speaker = who
				}
				last = j
			}
		}
		if len(parts) > 0 {
			cur.Text = strings.Join(parts, " ")
			out = append(out, cur)
		}
	}
	return out
}

// cueOf returns a cue with the times of a timing line.
func cueOf(timing string) Cue {
	ts := cueTime.FindAllStringSubmatch(timing, 2)
	if len(ts) < 2 {
		return Cue{}
	}
	return Cue{StartMS: cueMS(ts[0]), EndMS: cueMS(ts[1])}
}

// cueMS converts the groups of a cueTime match to milliseconds.
func cueMS(m []string) int64 {
	num := func(s string) int64 {
		n, _ := strconv.ParseInt(s, 10, 64)
		return n
	}
	frac := (m[4] + "00")[:3] // ",5" is half a second
	return ((num(m[1])*60+num(m[2]))*60+num(m[3]))*1000 + num(frac)
}

func isNumber(l string) bool {
	l = strings.TrimSpace(l)
	return l != "" && strings.Trim(l, "0123456789") == ""
}

func parsePlain(s string) []Cue {
	var out []Cue
	for _, l := range strings.Split(s, "\n") {
		t, who := cleanLine(l)
		if t == "" {
			continue
		}
		for _, u := range splitSentences(t, 160) {
			out = append(out, Cue{Text: u, Speaker: who})
		}
	}
	return out
}

// cleanLine returns the text of a line without markup and speaker tags,
// and the speaker its tag names ("" for none).
func cleanLine(l string) (text, speaker string) {
	if m := voiceTag.FindStringSubmatch(l); m != nil {
		speaker = strings.TrimSpace(m[1])
	}
	l = markupTag.ReplaceAllString(l, "")
	if m := speakerTag.FindStringSubmatch(l); m != nil && speaker == "" {
		speaker = strings.TrimSpace(m[1] + m[2] + m[3])
	}
	l = speakerTag.ReplaceAllString(l, "")
	return strings.Join(strings.Fields(l), " "), speaker
}

// splitSentences splits text longer than max runes at sentence ends.
func splitSentences(t string, max int) []string {
	if utf8.RuneCountInString(t) <= max {
		return []string{t}
	}
	var out []string
	start := 0
	runes := []rune(t)
	for i, r := range runes {
		if (r == '.' || r == '!' || r == '?' || r == '。' || r == '！' || r == '？') && i+1 < len(runes) && (unicode.IsSpace(runes[i+1]) || r >= 0x3000) {
			if s := strings.TrimSpace(string(runes[start : i+1])); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(string(runes[start:])); s != "" {
		out = append(out, s)
	}
	return out
}

// TimedSegments returns the timed cues of an SRT or WebVTT transcript as
// script segments: their timings as written (a cue that starts before the
// previous one ends starts where it ends; a cue left without time is
// dropped), and speaker ids numbering the speaker names in order of first
// appearance, a cue without a name keeping the speaker before it (1 at the
// start). When no cue names a speaker, every id is 0 (not given).
func TimedSegments(cues []Cue) []sim.Segment {
	ids := map[string]int{}
	speaker := 0
	named := slices.ContainsFunc(cues, func(c Cue) bool { return c.Speaker != "" })
	var out []sim.Segment
	var prevEnd int64
	for _, c := range cues {
		if named {
			if c.Speaker != "" {
				key := strings.ToLower(c.Speaker)
				if ids[key] == 0 {
					ids[key] = len(ids) + 1
				}
				speaker = ids[key]
			}
			speaker = max(speaker, 1)
		}
		start := max(c.StartMS, prevEnd)
		if c.EndMS <= start {
			continue
		}
		out = append(out, sim.Segment{StartMS: start, EndMS: c.EndMS, Text: c.Text, SpeakerID: speaker})
		prevEnd = c.EndMS
	}
	return out
}
