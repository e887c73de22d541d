package script_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/script"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkTimeline reports the first broken invariant of a timed script over
// total ms: every segment has 0 <= start < end <= total, and segments are in
// order without overlapping.
func checkTimeline(segs []sim.Segment, total int64) error {
	for i, s := range segs {
		switch {
		case s.StartMS < 0:
			return fmt.Errorf("segment %d starts before 0: %+v", i, s)
		case s.StartMS >= s.EndMS:
			return fmt.Errorf("segment %d does not end after it starts: %+v", i, s)
		case s.EndMS > total:
			return fmt.Errorf("segment %d ends after the duration %d: %+v", i, total, s)
		case i > 0 && s.StartMS < segs[i-1].EndMS:
			return fmt.Errorf("segment %d %+v overlaps segment %d %+v", i, s, i-1, segs[i-1])
		}
	}
	return nil
}

func texts(segs []sim.Segment) []string {
	out := make([]string, len(segs))
	for i, s := range segs {
		out[i] = s.Text
	}
	return out
}

func TestSpeechMS(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text string
		want int64
	}{
		{"", 600},
		{"Hi", 600},
		{strings.Repeat("a", 14), 1000},
		{strings.Repeat("a", 140), 10_000},
		{strings.Repeat("é", 14), 1000}, // runes, not bytes
		{strings.Repeat("語", 28), 2000},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d runes", len([]rune(tc.text))), func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, script.SpeechMS(tc.text))
		})
	}
}

func TestAlign(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("This sentence takes a while to say out loud. ", 3)
	many := make([]string, 100)
	for i := range many {
		many[i] = fmt.Sprintf("Utterance number %d.", i)
	}
	cases := []struct {
		name       string
		utterances []string
		duration   time.Duration
		scaled     bool // the text needs more time than the duration
		wantAll    bool // every utterance gets a segment
	}{
		{"fits easily", []string{"Hello there.", "How are you today?", "Fine."}, 60 * time.Second, false, true},
		{"single utterance", []string{"Just one."}, 5 * time.Second, false, true},
		{"short words get the minimum length", []string{"Hi", "Yo", "Ok"}, 10 * time.Second, false, true},
		{"too long: scaled to fit", []string{long, long, long, long}, 10 * time.Second, true, true},
		{"far too long: scaled to fit", many, 10 * time.Second, true, true},
		{"one utterance longer than the media", []string{strings.Repeat(long, 10)}, 2 * time.Second, true, true},
		{"many utterances in a few milliseconds", many, 10 * time.Millisecond, true, false},
		{"many utterances in one millisecond", many, time.Millisecond, true, false},
		{"sub-millisecond duration", []string{"a"}, 500 * time.Microsecond, false, false},
		{"zero duration", []string{"a"}, 0, false, false},
		{"negative duration", []string{"a"}, -time.Second, false, false},
		{"no utterances", nil, time.Minute, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			total := tc.duration.Milliseconds()
			segs := script.Align(tc.utterances, tc.duration)
			if total <= 0 || len(tc.utterances) == 0 {
				assert.Empty(t, segs)
				return
			}
			require.NotEmpty(t, segs, "some text always fits in a positive duration")
			require.NoError(t, checkTimeline(segs, total))
			require.LessOrEqual(t, len(segs), len(tc.utterances))
			assert.Equal(t, tc.utterances[:len(segs)], texts(segs), "texts are kept, in order")
			if tc.wantAll {
				assert.Len(t, segs, len(tc.utterances))
			}
			if tc.wantAll {
				assert.Positive(t, segs[0].StartMS, "a lead-in pause before the first utterance")
			}
			if !tc.scaled {
				// Each utterance lasts as long as its text takes to say, and the
				// pauses between utterances are all the same.
				for i, s := range segs {
					assert.Equal(t, script.SpeechMS(s.Text), s.EndMS-s.StartMS, "segment %d", i)
				}
				for i := 2; i < len(segs); i++ {
					assert.Equal(t, segs[1].StartMS-segs[0].EndMS, segs[i].StartMS-segs[i-1].EndMS, "pause before %d", i)
				}
				return
			}
			if tc.wantAll {
				// Scaled: every length shrinks by the same factor (to 1 ms).
				factor := float64(segs[0].EndMS-segs[0].StartMS) / float64(script.SpeechMS(segs[0].Text))
				assert.Less(t, factor, 1.0)
				for i, s := range segs {
					want := factor * float64(script.SpeechMS(s.Text))
					assert.InDelta(t, want, float64(s.EndMS-s.StartMS), 2, "segment %d", i)
				}
				// The script uses the media: it ends in its last part.
				assert.Greater(t, segs[len(segs)-1].EndMS, total*8/10)
			}
		})
	}
}

func TestRealign(t *testing.T) {
	t.Parallel()
	long := "This sentence is long enough to take about three seconds."
	longMS := script.SpeechMS(long)
	require.Greater(t, longMS, int64(3000))
	seg := func(start, end int64, text string) sim.Segment {
		return sim.Segment{StartMS: start, EndMS: end, Text: text, SpeakerID: 2}
	}
	cases := []struct {
		name     string
		in       []sim.Segment
		duration time.Duration
		want     []sim.Segment
	}{
		{
			name:     "start snapped, end when the text has been said",
			in:       []sim.Segment{seg(1003, 1500, long), seg(20_000, 21_000, "Hi")},
			duration: time.Minute,
			want:     []sim.Segment{seg(1000, 1000+longMS, long), seg(20_000, 21_000, "Hi")},
		},
		{
			name:     "never shorter than the client's segment",
			in:       []sim.Segment{seg(0, 5000, "Hi"), seg(7777, 9999, "Yo")},
			duration: time.Minute,
			want:     []sim.Segment{seg(0, 5000, "Hi"), seg(7770, 9999, "Yo")},
		},
		{
			name:     "never into the next segment",
			in:       []sim.Segment{seg(0, 900, long), seg(1005, 2000, "Next")},
			duration: time.Minute,
			want:     []sim.Segment{seg(0, 1000, long), seg(1000, 2000, "Next")},
		},
		{
			name:     "next segment forces it shorter than the client's",
			in:       []sim.Segment{seg(0, 1005, "Hi"), seg(1005, 2000, "Next")},
			duration: time.Minute,
			want:     []sim.Segment{seg(0, 1000, "Hi"), seg(1000, 2000, "Next")},
		},
		{
			name:     "never past the duration",
			in:       []sim.Segment{seg(9000, 9500, long)},
			duration: 10 * time.Second,
			want:     []sim.Segment{seg(9000, 10_000, long)},
		},
		{
			name:     "client end past the duration is clamped",
			in:       []sim.Segment{seg(9000, 12_000, "Hi")},
			duration: 10 * time.Second,
			want:     []sim.Segment{seg(9000, 10_000, "Hi")},
		},
		{
			name:     "segment ending at the duration",
			in:       []sim.Segment{seg(9995, 10_000, "Hi")},
			duration: 10 * time.Second,
			want:     []sim.Segment{seg(9990, 10_000, "Hi")},
		},
		{
			// Segments shorter than the 10 ms grid snap to the same start;
			// they must still not overlap.
			name:     "tiny segments in one 10 ms window",
			in:       []sim.Segment{seg(1001, 1003, "a"), seg(1005, 1007, "b"), seg(1008, 1009, "c")},
			duration: time.Minute,
			want:     []sim.Segment{seg(1000, 1001, "a"), seg(1001, 1002, "b"), seg(1002, 1602, "c")},
		},
		{
			name:     "empty script",
			in:       nil,
			duration: time.Minute,
			want:     []sim.Segment{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := slices.Clone(tc.in)
			got := script.Realign(tc.in, tc.duration)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, in, tc.in, "the input is not modified")
			assert.NoError(t, checkTimeline(got, tc.duration.Milliseconds()))
		})
	}
}

// randomClientScript makes a valid client script (in order, not overlapping,
// start < end, inside [0, total]) from r.
func randomClientScript(r *sim.Rand, total int64) []sim.Segment {
	var segs []sim.Segment
	t := r.Range(0, 50)
	for t < total {
		var length int64
		switch r.Intn(4) {
		case 0:
			length = r.Range(1, 15) // shorter than the snapping grid
		case 1:
			length = r.Range(100, 800)
		default:
			length = r.Range(800, 8000)
		}
		end := min(t+length, total)
		text := strings.Repeat("word ", int(r.Range(1, 30)))
		segs = append(segs, sim.Segment{StartMS: t, EndMS: end, Text: text, SpeakerID: int(r.Range(1, 3))})
		t = end + r.Range(0, 2000)*int64(r.Intn(2))
	}
	return segs
}

func TestRealignProperties(t *testing.T) {
	t.Parallel()
	for seed := range uint64(300) {
		r := sim.NewRand(seed)
		total := r.Range(1, 120_000)
		in := randomClientScript(r, total)
		got := script.Realign(in, time.Duration(total)*time.Millisecond)
		require.Len(t, got, len(in), "seed %d", seed)
		require.NoError(t, checkTimeline(got, total), "seed %d", seed)
		require.NoError(t, checkRealigned(in, got, total), "seed %d", seed)
	}
}

// checkRealigned checks Realign's promises for one client script (plain
// checks: the property test runs many scripts under -race).
func checkRealigned(in, got []sim.Segment, total int64) error {
	for i, s := range got {
		c := in[i]
		snapped := c.StartMS / 10 * 10
		limit := total
		if i+1 < len(in) {
			limit = in[i+1].StartMS / 10 * 10
		}
		switch {
		case s.Text != c.Text || s.SpeakerID != c.SpeakerID:
			return fmt.Errorf("segment %d: text or speaker changed", i)
		// The start is the client's snapped down to 10 ms, moved up by at
		// most a previous tiny segment sharing its 10 ms window.
		case s.StartMS > c.StartMS || s.StartMS < snapped:
			return fmt.Errorf("segment %d: start %d for client start %d", i, s.StartMS, c.StartMS)
		case (i == 0 || in[i-1].EndMS <= snapped) && s.StartMS != snapped:
			return fmt.Errorf("segment %d: start %d not snapped from %d", i, s.StartMS, c.StartMS)
		// Never shorter than the client's segment, and long enough to say
		// the text, unless the next segment or the media end forces it.
		case s.EndMS < min(c.EndMS, limit):
			return fmt.Errorf("segment %d: end %d shorter than the client's %d (limit %d)", i, s.EndMS, c.EndMS, limit)
		case s.EndMS < min(s.StartMS+script.SpeechMS(c.Text), limit):
			return fmt.Errorf("segment %d: end %d leaves too little time for the text (limit %d)", i, s.EndMS, limit)
		}
	}
	return nil
}

func TestSynthesize(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		duration time.Duration
	}{
		{"one millisecond", time.Millisecond},
		{"5 ms", 5 * time.Millisecond},
		{"300 ms", 300 * time.Millisecond},
		{"700 ms", 700 * time.Millisecond},
		{"1 s", time.Second},
		{"1.6 s", 1600 * time.Millisecond},
		{"12 s", 12 * time.Second},
		{"10 min", 10 * time.Minute},
		{"2 h", 2 * time.Hour},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			total := tc.duration.Milliseconds()
			for seed := range uint64(20) {
				segs := script.Synthesize(sim.NewRand(seed), tc.duration)
				require.NotEmpty(t, segs, "seed %d", seed)
				require.NoError(t, checkTimeline(segs, total), "seed %d", seed)
				assert.Less(t, segs[0].StartMS, int64(1000), "seed %d: speech starts within the first second", seed)
				require.NoError(t, checkSynthesized(segs), "seed %d", seed)
				if total >= 10_000 {
					// The script covers the media: silence at the end is at
					// most one pause plus one too-short utterance.
					last := segs[len(segs)-1]
					assert.Less(t, total-last.EndMS, int64(1500+600), "seed %d", seed)
				}
			}
		})
	}
	t.Run("zero duration", func(t *testing.T) {
		t.Parallel()
		assert.Empty(t, script.Synthesize(sim.NewRand(1), 0))
	})
}

// checkSynthesized checks the shape of a synthetic script: sentences of 1.5
// to 6 s (the last one may be shorter) separated by pauses of 0.2 to 1.5 s.
// Plain checks, not testify: long scripts are slow to check under -race.
func checkSynthesized(segs []sim.Segment) error {
	for i, s := range segs {
		if strings.TrimSpace(s.Text) == "" || !strings.ContainsAny(s.Text[len(s.Text)-1:], ".?!") {
			return fmt.Errorf("segment %d: %q is not a sentence", i, s.Text)
		}
		length := s.EndMS - s.StartMS
		if i == len(segs)-1 {
			if length > 6000 {
				return fmt.Errorf("last segment: length %d ms", length)
			}
			continue
		}
		if length < 1500 || length > 6000 {
			return fmt.Errorf("segment %d: length %d ms", i, length)
		}
		if gap := segs[i+1].StartMS - s.EndMS; gap < 200 || gap > 1500 {
			return fmt.Errorf("after segment %d: gap %d ms", i, gap)
		}
	}
	return nil
}

func TestSynthesizeDeterminism(t *testing.T) {
	t.Parallel()
	const d = 3 * time.Minute
	a := script.Synthesize(sim.NewRand(42), d)
	assert.Equal(t, a, script.Synthesize(sim.NewRand(42), d), "same seed, same script")
	assert.NotEqual(t, a, script.Synthesize(sim.NewRand(43), d), "another seed, another script")
	assert.NotEqual(t, texts(a), texts(script.Synthesize(sim.NewRand(43), d)), "another seed, other words")
}

func TestAssignSpeakers(t *testing.T) {
	t.Parallel()
	src := script.Synthesize(sim.NewRand(9), 10*time.Minute)
	require.Greater(t, len(src), 50)
	orig := slices.Clone(src)
	for _, n := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			got := script.AssignSpeakers(sim.NewRand(1), src, n)
			require.Len(t, got, len(src))
			seen := map[int]bool{}
			for i, s := range got {
				require.True(t, s.SpeakerID >= 1 && s.SpeakerID <= n, "segment %d: speaker %d of %d", i, s.SpeakerID, n)
				seen[s.SpeakerID] = true
				assert.Equal(t, src[i].StartMS, s.StartMS)
				assert.Equal(t, src[i].EndMS, s.EndMS)
				assert.Equal(t, src[i].Text, s.Text)
			}
			assert.Len(t, seen, n, "a long script uses every speaker")
			assert.Equal(t, 1, got[0].SpeakerID, "the first speaker is 1")
			assert.Equal(t, got, script.AssignSpeakers(sim.NewRand(1), src, n), "deterministic")
			if n > 1 {
				assert.NotEqual(t, got, script.AssignSpeakers(sim.NewRand(2), src, n), "seed-dependent")
			}
			assert.Equal(t, orig, src, "the input is not modified")
		})
	}
}

func TestSpeakers(t *testing.T) {
	t.Parallel()
	ids := func(v ...int) []sim.Segment {
		out := make([]sim.Segment, len(v))
		for i, id := range v {
			out[i].SpeakerID = id
		}
		return out
	}
	cases := []struct {
		name string
		segs []sim.Segment
		want []int
	}{
		{"empty", nil, nil},
		{"one speaker", ids(1, 1, 1), []int{1}},
		{"order of appearance", ids(2, 2, 1, 3, 1, 2), []int{2, 1, 3}},
		{"not sorted", ids(3, 1, 2), []int{3, 1, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, script.Speakers(tc.segs))
		})
	}
}
