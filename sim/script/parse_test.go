package script_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dubsim/dubsim/sim/script"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseContent(t *testing.T) {
	t.Parallel()
	longParagraph := "This is the first sentence of a long paragraph, and it goes on for a while. " +
		"Here comes the second sentence, which also has quite a few words in it! " +
		"Is this the third one? Yes, and this is the last sentence of the paragraph"
	require.Greater(t, utf8.RuneCountInString(longParagraph), 160, "the paragraph must be long enough to split")
	cjk := strings.Repeat("これは長い文です。", 20) // 180 runes, no spaces

	cases := []struct {
		name    string
		in      string
		format  string
		want    []string
		wantErr error // nil: success
	}{
		{
			name:   "SRT with cue numbers",
			in:     "1\n00:00:01,000 --> 00:00:02,500\nHello there.\n\n2\n00:00:03,000 --> 00:00:04,000\nGeneral Kenobi!\n",
			format: script.FormatSRT,
			want:   []string{"Hello there.", "General Kenobi!"},
		},
		{
			name:   "SRT with CRLF line endings",
			in:     "1\r\n00:00:01,000 --> 00:00:02,500\r\nFirst line\r\n\r\n2\r\n00:00:03,000 --> 00:00:04,000\r\nSecond line\r\n",
			format: script.FormatSRT,
			want:   []string{"First line", "Second line"},
		},
		{
			name:   "SRT with old Mac CR line endings",
			in:     "1\r00:00:01,000 --> 00:00:02,000\rOne\r\r2\r00:00:03,000 --> 00:00:04,000\rTwo\r",
			format: script.FormatSRT,
			want:   []string{"One", "Two"},
		},
		{
			name:   "SRT with a BOM",
			in:     "\ufeff1\n00:00:01,000 --> 00:00:02,000\nWith BOM\n",
			format: script.FormatSRT,
			want:   []string{"With BOM"},
		},
		{
			name:   "SRT markup is removed",
			in:     "1\n00:00:01,000 --> 00:00:02,000\n{\\an8}<i>Upstairs</i> <b>now</b>\n\n2\n00:00:03,000 --> 00:00:04,000\n<font color=\"#ff0000\">Red</font> alert\n",
			format: script.FormatSRT,
			want:   []string{"Upstairs now", "Red alert"},
		},
		{
			name: "SRT speaker prefixes are removed",
			in: "1\n00:00:01,000 --> 00:00:02,000\nJOHN: hello\n\n" +
				"2\n00:00:03,000 --> 00:00:04,000\n- hi\n- Hi yourself.\n\n" +
				"3\n00:00:05,000 --> 00:00:06,000\n[Narrator] Once upon a time\n\n" +
				"4\n00:00:07,000 --> 00:00:08,000\n>> The news tonight\n\n" +
				"5\n00:00:09,000 --> 00:00:10,000\n(Mary) Over here\n",
			format: script.FormatSRT,
			want:   []string{"hello", "hi Hi yourself.", "Once upon a time", "The news tonight", "Over here"},
		},
		{
			name:   "SRT multi-line cue is joined with single spaces",
			in:     "1\n00:00:01,000 --> 00:00:04,000\n  I never said\n\tthat   she stole\nmy money  \n",
			format: script.FormatSRT,
			want:   []string{"I never said that she stole my money"},
		},
		{
			name:   "SRT with dot milliseconds and no hours",
			in:     "1\n01:02.5 --> 01:03.75\nShort stamps\n",
			format: script.FormatSRT,
			want:   []string{"Short stamps"},
		},
		{
			name:   "SRT cue with only markup is dropped",
			in:     "1\n00:00:01,000 --> 00:00:02,000\n<i></i>\n\n2\n00:00:03,000 --> 00:00:04,000\nkept\n",
			format: script.FormatSRT,
			want:   []string{"kept"},
		},
		{
			name:   "SRT separated by lines of spaces",
			in:     "1\n00:00:01,000 --> 00:00:02,000\nhello\n   \n2\n00:00:03,000 --> 00:00:04,000\nworld\n",
			format: script.FormatSRT,
			want:   []string{"hello", "world"},
		},
		{
			name:   "SRT cues without blank lines between them",
			in:     "1\n00:00:01,000 --> 00:00:02,000\nhello\n2\n00:00:03,000 --> 00:00:04,000\nworld\n3\n00:00:05,000 --> 00:00:06,000\nagain\n",
			format: script.FormatSRT,
			want:   []string{"hello", "world", "again"},
		},
		{
			name:   "SRT extra blank lines",
			in:     "\n\n1\n00:00:01,000 --> 00:00:02,000\nA\n\n\n\n2\n00:00:03,000 --> 00:00:04,000\nB\n\n\n",
			format: script.FormatSRT,
			want:   []string{"A", "B"},
		},
		{
			name: "WebVTT with header, NOTE, STYLE and cue identifiers",
			in: "WEBVTT - Some title\nKind: captions\n\n" +
				"NOTE This is a comment\nspanning 00:00:01.000 --> 00:00:02.000 lines\n\n" +
				"STYLE\n::cue { color: yellow }\n\n" +
				"intro\n00:00:01.000 --> 00:00:02.000 align:start position:10%\nWelcome back.\n\n" +
				"2\n00:00:03.000 --> 00:00:04.000\n<v Bob>Thanks, Alice.</v>\n\n" +
				"00:05.000 --> 00:06.500\n<v.loud Alice>No hours here</v>\n",
			format: script.FormatVTT,
			want:   []string{"Welcome back.", "Thanks, Alice.", "No hours here"},
		},
		{
			name:   "WebVTT with BOM and CRLF",
			in:     "\ufeffWEBVTT\r\n\r\n00:01.000 --> 00:02.000\r\n<c.yellow>Hi</c> <00:01.500>there\r\n",
			format: script.FormatVTT,
			want:   []string{"Hi there"},
		},
		{
			name:   "WebVTT multi-line cue",
			in:     "WEBVTT\n\n00:00:01.000 --> 00:00:03.000\n<v Bob>first line\nsecond line\n",
			format: script.FormatVTT,
			want:   []string{"first line second line"},
		},
		{
			name:   "plain text lines",
			in:     "Hello world.\n\n  How are you?  \nJANE: Fine, thanks.\n",
			format: script.FormatPlain,
			want:   []string{"Hello world.", "How are you?", "Fine, thanks."},
		},
		{
			name:   "plain text with CRLF and tabs",
			in:     "one\ttwo\r\nthree\r\n",
			format: script.FormatPlain,
			want:   []string{"one two", "three"},
		},
		{
			name:   "plain long paragraph is split at sentence ends",
			in:     longParagraph,
			format: script.FormatPlain,
			want: []string{
				"This is the first sentence of a long paragraph, and it goes on for a while.",
				"Here comes the second sentence, which also has quite a few words in it!",
				"Is this the third one?",
				"Yes, and this is the last sentence of the paragraph",
			},
		},
		{
			name:   "plain short paragraph is not split",
			in:     "One. Two! Three?",
			format: script.FormatPlain,
			want:   []string{"One. Two! Three?"},
		},
		{
			name:   "plain long CJK paragraph is split after ideographic full stops",
			in:     cjk,
			format: script.FormatPlain,
			want:   strings.SplitAfter(strings.Repeat("これは長い文です。", 20), "。")[:20],
		},
		{name: "empty", in: "", format: script.FormatPlain, wantErr: script.ErrNoText},
		{name: "whitespace only", in: " \n\t\r\n  \n", format: script.FormatPlain, wantErr: script.ErrNoText},
		{name: "BOM only", in: "\ufeff", format: script.FormatPlain, wantErr: script.ErrNoText},
		{name: "markup only", in: "<i></i>\n{\\an8}", format: script.FormatPlain, wantErr: script.ErrNoText},
		{
			name: "SRT timings only", format: script.FormatSRT, wantErr: script.ErrNoText,
			in: "1\n00:00:01,000 --> 00:00:02,000\n\n2\n00:00:03,000 --> 00:00:04,000\n",
		},
		{name: "WebVTT header only", in: "WEBVTT\n\nNOTE nothing to see\n", format: script.FormatVTT, wantErr: script.ErrNoText},
		{
			name: "WebVTT timings only", format: script.FormatVTT, wantErr: script.ErrNoText,
			in: "WEBVTT\n\n00:01.000 --> 00:02.000\n\n00:03.000 --> 00:04.000\n<v Bob></v>\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			format, got, err := script.ParseContent(tc.in)
			assert.Equal(t, tc.format, format)
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseContentInvalidUTF8(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in string }{
		{"lone continuation byte", "hello \x80 world"},
		{"truncated sequence", "caf\xc3"},
		{"invalid inside SRT", "1\n00:00:01,000 --> 00:00:02,000\n\xff\xfe\n"},
		{"surrogate encoded", "\xed\xa0\x80"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, got, err := script.ParseContent(tc.in)
			require.Error(t, err)
			assert.NotErrorIs(t, err, script.ErrNoText)
			assert.Contains(t, err.Error(), "UTF-8")
			assert.Nil(t, got)
		})
	}
}

func TestDetectFormat(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"vtt", "WEBVTT\n", script.FormatVTT},
		{"vtt after blank lines", "\n\n  WEBVTT\n", script.FormatVTT},
		{"srt", "1\n00:00:01,000 --> 00:00:02,000\nx", script.FormatSRT},
		{"timing further down", "title\n\n1\n00:00:01.000 --> 00:00:02.000\nx", script.FormatSRT},
		{"arrow without timing is plain", "a --> b", script.FormatPlain},
		{"plain", "just words", script.FormatPlain},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			format, _, _ := script.ParseContent(tc.in)
			assert.Equal(t, tc.want, format)
		})
	}
}

func TestDetectFormatWithCarriageReturnLineEnds(t *testing.T) {
	t.Parallel()
	srt := "1\r00:00:01,000 --> 00:00:02,000\rHello\r\r2\r00:00:03,000 --> 00:00:04,000\rWorld\r"
	format, utterances, err := script.ParseContent(srt)
	require.NoError(t, err)
	assert.Equal(t, script.FormatSRT, format)
	assert.Equal(t, []string{"Hello", "World"}, utterances)
}
