package script

import (
	"errors"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
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
	// Speaker tags are ignored: "- ", ">> ", "[Name] ", "(Name) ", "NAME: ".
	speakerTag = regexp.MustCompile(`^\s*(?:-\s+|>>\s*)?(?:\[[^\]]{1,40}\]\s*|\([^)]{1,40}\)\s*|[\p{Lu}\p{N}][\p{L}\p{N} ._'-]{0,29}:\s+)?`)
)

// DetectFormat tells SRT, WebVTT and plain text apart.
func DetectFormat(s string) string {
	t := strings.TrimLeft(s, "\ufeff \t\r\n")
	t = strings.ReplaceAll(strings.ReplaceAll(t, "\r\n", "\n"), "\r", "\n") // old Mac line ends too
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
	if !utf8.ValidString(s) {
		return "", nil, errors.New("is not valid UTF-8")
	}
	s = strings.ReplaceAll(strings.TrimPrefix(s, "\ufeff"), "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	format = DetectFormat(s)
	switch format {
	case FormatVTT, FormatSRT:
		utterances = parseCues(s, format == FormatVTT)
	default:
		utterances = parsePlain(s)
	}
	if len(utterances) == 0 {
		return format, nil, ErrNoText
	}
	return format, utterances, nil
}

func parseCues(s string, vtt bool) []string {
	// A line of spaces separates cues like an empty one.
	all := strings.Split(s, "\n")
	for i, l := range all {
		if strings.TrimSpace(l) == "" {
			all[i] = ""
		}
	}
	s = strings.Join(all, "\n")
	var out []string
	for i, block := range strings.Split(s, "\n\n") {
		lines := strings.Split(strings.Trim(block, "\n"), "\n")
		if vtt && i == 0 && strings.HasPrefix(strings.TrimSpace(lines[0]), "WEBVTT") {
			continue
		}
		if vtt && len(lines) > 0 {
			head := strings.TrimSpace(lines[0])
			if strings.HasPrefix(head, "NOTE") || head == "STYLE" || head == "REGION" {
				continue
			}
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
		last := -1 // the line the last part came from
		for j := timed + 1; j < len(lines); j++ {
			if timingLine.MatchString(lines[j]) {
				// The next cue follows without a blank line: a cue number
				// right before its timing is not text.
				if last == j-1 && isNumber(lines[j-1]) {
					parts = parts[:len(parts)-1]
				}
				if len(parts) > 0 {
					out = append(out, strings.Join(parts, " "))
				}
				parts = nil
				continue
			}
			if t := cleanLine(lines[j]); t != "" {
				parts = append(parts, t)
				last = j
			}
		}
		if len(parts) > 0 {
			out = append(out, strings.Join(parts, " "))
		}
	}
	return out
}

func isNumber(l string) bool {
	l = strings.TrimSpace(l)
	return l != "" && strings.Trim(l, "0123456789") == ""
}

func parsePlain(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		t := cleanLine(l)
		if t == "" {
			continue
		}
		out = append(out, splitSentences(t, 160)...)
	}
	return out
}

func cleanLine(l string) string {
	l = markupTag.ReplaceAllString(l, "")
	l = speakerTag.ReplaceAllString(l, "")
	return strings.Join(strings.Fields(l), " ")
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
