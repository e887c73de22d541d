package script_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dubsim/dubsim/sim/script"
)

// timingLine is the parser's notion of a cue timing line.
var timingLine = regexp.MustCompile(`^\s*(?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3}\s*-->\s*(?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3}`)

func FuzzParseContent(f *testing.F) {
	for _, s := range []string{
		"",
		"Hello world.",
		"1\n00:00:01,000 --> 00:00:02,000\nJOHN: hello\n\n2\n00:00:03,000 --> 00:00:04,000\n<i>- hi</i>\n",
		"1\r\n00:00:01,000 --> 00:00:02,000\r\nhello\r\n2\r\n00:00:03,000 --> 00:00:04,000\r\nworld\r\n",
		"\ufeffWEBVTT\n\nNOTE x\n\nSTYLE\n::cue{}\n\nid\n00:01.000 --> 00:02.000 align:start\n<v Bob>Hi</v>\n",
		"1\n00:00:01,000 --> 00:00:02,000\n \n2\n00:00:03,000 --> 00:00:04,000\n",
		"[Narrator] text\n>> more\n(Bob) again\n{\\an8}top",
		strings.Repeat("A sentence. ", 30),
		"a --> b\n1:00.0-->2:00.0",
		"caf\xc3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		format, utterances, err := script.ParseContent(s)
		switch format {
		case script.FormatSRT, script.FormatVTT, script.FormatPlain:
		default:
			if err == nil {
				t.Fatalf("unknown format %q", format)
			}
		}
		if err != nil {
			if utterances != nil {
				t.Fatalf("error %v with utterances %q", err, utterances)
			}
			if utf8.ValidString(s) && !errors.Is(err, script.ErrNoText) {
				t.Fatalf("valid UTF-8 refused with %v", err)
			}
			return
		}
		if !utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8 accepted: %q", utterances)
		}
		if len(utterances) == 0 {
			t.Fatal("success without utterances")
		}
		// Utterances are made of the text lines only: when no text line
		// holds a '>', no utterance can hold a "-->" (it would come from a
		// timing line).
		norm := strings.ReplaceAll(strings.ReplaceAll(strings.TrimPrefix(s, "\ufeff"), "\r\n", "\n"), "\r", "\n")
		textArrow := false
		for _, l := range strings.Split(norm, "\n") {
			if !timingLine.MatchString(l) && strings.Contains(l, ">") {
				textArrow = true
				break
			}
		}
		for i, u := range utterances {
			switch {
			case u == "":
				t.Fatalf("utterance %d is empty", i)
			case strings.TrimSpace(u) != u:
				t.Fatalf("utterance %d %q is not trimmed", i, u)
			case !utf8.ValidString(u):
				t.Fatalf("utterance %d %q is not valid UTF-8", i, u)
			case timingLine.MatchString(u):
				if !textArrow {
					t.Fatalf("utterance %d %q is a timing line", i, u)
				}
			case !textArrow && strings.Contains(u, "-->"):
				t.Fatalf("utterance %d %q holds a timing line", i, u)
			}
		}
	})
}

func FuzzAlign(f *testing.F) {
	f.Add("Hello there.|How are you?", int64(10_000))
	f.Add("a|b|c|d|e|f|g|h|i|j|k|l|m|n|o|p", int64(3))
	f.Add(strings.Repeat("long text ", 200), int64(1000))
	f.Add("", int64(0))
	f.Add("x", int64(-5))
	f.Add("||", int64(7_200_000))
	f.Fuzz(func(t *testing.T, joined string, totalMS int64) {
		utterances := strings.Split(joined, "|")
		if len(utterances) > 5000 {
			utterances = utterances[:5000]
		}
		totalMS %= 10 * 3_600_000 // up to 10 hours either way
		segs := script.Align(utterances, time.Duration(totalMS)*time.Millisecond)
		if totalMS <= 0 {
			if len(segs) != 0 {
				t.Fatalf("segments for duration %d ms", totalMS)
			}
			return
		}
		if len(segs) == 0 || len(segs) > len(utterances) {
			t.Fatalf("%d segments for %d utterances in %d ms", len(segs), len(utterances), totalMS)
		}
		if err := checkTimeline(segs, totalMS); err != nil {
			t.Fatal(err)
		}
		var speech int64
		for i, u := range utterances {
			speech += script.SpeechMS(u)
			if i < len(segs) && segs[i].Text != u {
				t.Fatalf("segment %d text %q, want %q", i, segs[i].Text, u)
			}
		}
		// A pause is under a second: with this much room nothing is
		// scaled and every utterance lasts as long as its text takes.
		if need := speech + 1000*int64(len(utterances)+1); totalMS >= need {
			if len(segs) != len(utterances) {
				t.Fatalf("%d of %d utterances fit in %d ms (need %d)", len(segs), len(utterances), totalMS, need)
			}
			for i, s := range segs {
				if s.EndMS-s.StartMS != script.SpeechMS(s.Text) {
					t.Fatalf("segment %d lasts %d ms, its text takes %d", i, s.EndMS-s.StartMS, script.SpeechMS(s.Text))
				}
			}
		} else if totalMS*600 >= need {
			// Scaled, but every utterance still gets at least 1 ms.
			if len(segs) != len(utterances) {
				t.Fatalf("%d of %d utterances fit in %d ms (need %d)", len(segs), len(utterances), totalMS, need)
			}
		}
	})
}
