package script_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/script"
	"github.com/stretchr/testify/assert"
)

func TestParseGlossary(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		in      string
		want    []sim.GlossaryTerm
		wantBad int
	}{
		{"terms", "world\tplanète\ncar\tvoiture\n", []sim.GlossaryTerm{{Source: "world", Target: "planète"}, {Source: "car", Target: "voiture"}}, 0},
		{"column header", "Source\tTarget\nworld\tplanète", []sim.GlossaryTerm{{Source: "world", Target: "planète"}}, 0},
		{"language header", "\nen\tfr\r\nworld\tplanète\r\n", []sim.GlossaryTerm{{Source: "world", Target: "planète"}}, 0},
		{"a header only first", "world\tplanète\nsource\ttarget", []sim.GlossaryTerm{{Source: "world", Target: "planète"}, {Source: "source", Target: "target"}}, 0},
		{"cells trimmed, extra cells ignored", " red car \t voiture rouge \tnote\n", []sim.GlossaryTerm{{Source: "red car", Target: "voiture rouge"}}, 0},
		{"no tab", "world\tplanète\n\ncar voiture", nil, 3},
		{"empty target", "world\t \n", nil, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, bad := script.ParseGlossary(tc.in, "en", "fr-FR")
			assert.Equal(t, tc.wantBad, bad)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestTargetScriptGlossary(t *testing.T) {
	t.Parallel()
	ids := sim.NewIDs(1)
	terms := []sim.GlossaryTerm{{Source: "world", Target: "planète"}, {Source: "car", Target: "voiture"},
		{Source: "red car", Target: "voiture rouge"}, {Source: "New York", Target: "Nouvelle-York"}}
	cases := []struct {
		name, text, target string
		want               []string // substrings of the translation
		not                []string
	}{
		{"case and punctuation", "Hello WORLD!", "fr-FR", []string{" planète!"}, nil},
		{"longest first", "The red car, a car.", "fr-FR", []string{" voiture rouge, ", " voiture."}, []string{"rouge rouge"}},
		{"whole words", "A cart, a carpet, car-park.", "fr-FR", nil, []string{"voiture"}},
		{"phrase across punctuation", "red, car", "fr-FR", []string{"voiture"}, []string{"rouge"}},
		{"quotes kept", `"New York" is big.`, "fr-FR", []string{`"Nouvelle-York"`}, nil},
		{"no spaces", "world car", "ja-JP", []string{"planètevoiture"}, nil},
		{"same language", "Hello world, my red car.", "en-US", []string{"Hello planète, my voiture rouge."}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := script.TargetScript(ids, []sim.Segment{{StartMS: 1, EndMS: 2, Text: tc.text, SpeakerID: 3}}, "en", tc.target, terms)[0]
			assert.Equal(t, sim.Segment{StartMS: 1, EndMS: 2, Text: got.Text, SpeakerID: 3}, got, "timings and speaker kept")
			for _, w := range tc.want {
				assert.Contains(t, got.Text, w)
			}
			for _, w := range tc.not {
				assert.NotContains(t, got.Text, w)
			}
			plain := script.TargetScript(ids, []sim.Segment{{Text: tc.text}}, "en", tc.target, nil)[0].Text
			if tc.target != "en-US" {
				assert.Equal(t, translate(ids, tc.text, tc.target), plain, "without a glossary: the pseudo translation")
			}
		})
	}
}

func TestParseCuesTimingsAndSpeakers(t *testing.T) {
	t.Parallel()
	srt := "1\n00:00:00,700 --> 00:00:02,250\nALICE: Hello there.\n\n2\n00:00:03,000 --> 00:00:05,500\n[Bob] General Kenobi!\n\n" +
		"3\n00:00:05,000 --> 00:00:07,000\nYou are a bold one.\n\n4\n01:00:08,5 --> 01:00:09,500\nAlice: Indeed.\n"
	format, cues, err := script.ParseCues(srt)
	assert.NoError(t, err)
	assert.Equal(t, script.FormatSRT, format)
	assert.Equal(t, []script.Cue{{700, 2250, "Hello there.", "ALICE"}, {3000, 5500, "General Kenobi!", "Bob"},
		{5000, 7000, "You are a bold one.", ""}, {3608500, 3609500, "Indeed.", "Alice"}}, cues)
	assert.Equal(t, []sim.Segment{{StartMS: 700, EndMS: 2250, Text: "Hello there.", SpeakerID: 1}, {StartMS: 3000, EndMS: 5500, Text: "General Kenobi!", SpeakerID: 2},
		{StartMS: 5500, EndMS: 7000, Text: "You are a bold one.", SpeakerID: 2}, {StartMS: 3608500, EndMS: 3609500, Text: "Indeed.", SpeakerID: 1}}, script.TimedSegments(cues))

	_, cues, err = script.ParseCues("WEBVTT\n\n00:01.000 --> 00:02.000\n<v Ann>Hi</v>\n\n00:02.000 --> 00:03.000\nYo\n")
	assert.NoError(t, err)
	assert.Equal(t, []sim.Segment{{StartMS: 1000, EndMS: 2000, Text: "Hi", SpeakerID: 1}, {StartMS: 2000, EndMS: 3000, Text: "Yo", SpeakerID: 1}}, script.TimedSegments(cues))

	_, cues, err = script.ParseCues("1\n00:00:01,000 --> 00:00:02,000\nNo tags.\n")
	assert.NoError(t, err)
	assert.Equal(t, []sim.Segment{{StartMS: 1000, EndMS: 2000, Text: "No tags.", SpeakerID: 0}}, script.TimedSegments(cues), "no names: speakers not given")
}

func FuzzParseGlossary(f *testing.F) {
	for _, s := range []string{"", "a\tb", "source\ttarget\nworld\tplanète\n", "x\n\ty", "\t\t\n", "en\tfr-FR\r\nred car\tvoiture rouge", "caf\xc3\tb"} {
		f.Add(s, "Hello red car, world!")
	}
	f.Fuzz(func(t *testing.T, content, text string) {
		terms, bad := script.ParseGlossary(content, "en", "fr-FR")
		if bad > 0 {
			if terms != nil || bad > strings.Count(content, "\n")+1 {
				t.Fatalf("bad line %d of %d with terms %q", bad, strings.Count(content, "\n")+1, terms)
			}
			return
		}
		for _, g := range terms {
			if strings.TrimSpace(g.Source) != g.Source || g.Source == "" || g.Target == "" || strings.Contains(g.Source+g.Target, "\t") {
				t.Fatalf("term %q", g)
			}
		}
		got := script.TargetScript(sim.NewIDs(1), []sim.Segment{{Text: text}}, "en", "fr-FR", terms)
		if utf8.ValidString(text) && utf8.ValidString(content) && !utf8.ValidString(got[0].Text) {
			t.Fatalf("invalid UTF-8 from %q: %q", text, got[0].Text)
		}
	})
}
