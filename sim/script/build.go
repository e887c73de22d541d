package script

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dubsim/dubsim/sim"
)

// Speech-rate model that times text: characters per second of speech and
// the pause between utterances.
const (
	CharsPerSecond = 14.0
	minSegmentMS   = 600
	gapMS          = 350
)

// SpeechMS is how long text takes to say at the model's rate.
func SpeechMS(text string) int64 {
	n := utf8.RuneCountInString(text)
	return max(int64(float64(n)/CharsPerSecond*1000), minSegmentMS)
}

var words = strings.Fields(`the a we you they this that it is was will can have make know think see
come look want give use find tell ask work seem feel try leave call good new first last long great
little own other old right big high different small large next early young important few public
time year people way day man woman child world life hand part place case week company system program
question government number night point home water room mother area money story fact month lot study
book eye job word business issue side kind head house service friend father power hour game line end
member law car city community name president team minute idea kid body information back parent face
others level office door health person art war history party result change morning reason research
girl guy moment air teacher force education really just now then here there very also well still
today together already always never sometimes again maybe almost about after before because while`)

// Synthesize builds a deterministic speech-like source script covering
// duration: utterances of 1.5 to 6 seconds with pauses of 0.2 to 1.5 s,
// starting shortly after the beginning, with English-like text.
func Synthesize(r *sim.Rand, duration time.Duration) []sim.Segment {
	total := duration.Milliseconds()
	var segs []sim.Segment
	t := r.Range(100, 900)
	for t+minSegmentMS <= total {
		length := min(r.Range(1500, 6000), total-t)
		segs = append(segs, sim.Segment{StartMS: t, EndMS: t + length, Text: sentence(r, length)})
		t += length + r.Range(200, 1500)
	}
	if len(segs) == 0 && total > 0 { // very short media: one utterance
		start := total / 10
		segs = append(segs, sim.Segment{StartMS: start, EndMS: total - start/2, Text: sentence(r, 800)})
		if segs[0].EndMS <= segs[0].StartMS {
			segs[0] = sim.Segment{StartMS: 0, EndMS: max(total, 1), Text: segs[0].Text}
		}
	}
	return segs
}

// sentence makes text that takes about ms to say.
func sentence(r *sim.Rand, ms int64) string {
	target := int(float64(ms) / 1000 * CharsPerSecond)
	var b strings.Builder
	for b.Len() < target || b.Len() == 0 {
		w := words[r.Intn(len(words))]
		if b.Len() == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		if b.Len() < target && r.Intn(9) == 0 {
			b.WriteByte(',')
		}
	}
	b.WriteString([]string{".", ".", ".", "?", "!"}[r.Intn(5)])
	return b.String()
}

// Align times utterances over duration: each lasts as long as its text takes
// to say, separated by pauses, the whole scaled to fit when it is too long.
func Align(utterances []string, duration time.Duration) []sim.Segment {
	total := duration.Milliseconds()
	if total <= 0 || len(utterances) == 0 {
		return nil
	}
	lengths := make([]int64, len(utterances))
	var need int64 = gapMS // lead-in
	for i, u := range utterances {
		lengths[i] = SpeechMS(u)
		need += lengths[i] + gapMS
	}
	scale := 1.0
	if need > total {
		scale = float64(total) / float64(need)
	}
	segs := make([]sim.Segment, 0, len(utterances))
	t := float64(gapMS) * scale
	var prevEnd int64
	for i, u := range utterances {
		start := max(int64(t), prevEnd) // scaled below 1 ms, rounding would overlap
		end := max(int64(t+float64(lengths[i])*scale), start+1)
		end = min(end, total)
		if start >= end { // out of room: nothing sensible is left
			break
		}
		segs = append(segs, sim.Segment{StartMS: start, EndMS: end, Text: u})
		prevEnd = end
		t += float64(lengths[i]+gapMS) * scale
	}
	return segs
}

// Realign recomputes the timings of a structured script from speech
// boundaries: each segment keeps its start (snapped to 10 ms) and ends when
// its text has been said, without running into the next segment or past the
// end of the media.
func Realign(segs []sim.Segment, duration time.Duration) []sim.Segment {
	out := make([]sim.Segment, len(segs))
	total := duration.Milliseconds()
	var prevEnd int64
	for i, s := range segs {
		// Segments shorter than 10 ms can snap to the same start: the
		// previous end wins then, so segments never overlap.
		start := max(s.StartMS/10*10, prevEnd)
		end := start + SpeechMS(s.Text)
		limit := total
		if i+1 < len(segs) {
			limit = segs[i+1].StartMS / 10 * 10
		}
		// Never shorter than the client's own segment, never into the next, never empty.
		end = max(end, s.EndMS)
		end = min(end, limit)
		end = max(end, start+1)
		s.StartMS, s.EndMS = start, end
		out[i] = s
		prevEnd = end
	}
	return out
}

// AssignSpeakers gives each segment a speaker id in 1..n: turns alternate
// between speakers, a speaker often keeping the floor for a few segments.
func AssignSpeakers(r *sim.Rand, segs []sim.Segment, n int) []sim.Segment {
	out := make([]sim.Segment, len(segs))
	speaker := 1
	for i, s := range segs {
		if i > 0 && n > 1 && r.Intn(3) != 0 {
			speaker = speaker%n + 1
		}
		s.SpeakerID = speaker
		out[i] = s
	}
	return out
}

// Speakers returns the distinct speaker ids of segs in order of appearance.
func Speakers(segs []sim.Segment) []int {
	var ids []int
	for _, s := range segs {
		if !slices.Contains(ids, s.SpeakerID) {
			ids = append(ids, s.SpeakerID)
		}
	}
	return ids
}

// SourceStyle is the style of the voice of a source's speaker, a function of
// the source and the speaker id alone, so that the original speech of the
// dubbed video and the target speakers chosen for it agree.
func SourceStyle(sourceURL string, speakerID int) string {
	return sim.Styles[sim.NewIDs(0).Hash("source style", sourceURL, strconv.Itoa(speakerID))%uint64(len(sim.Styles))]
}

// HasSpeakers reports whether a client's script gives speaker ids: then
// every segment has one (a segment without keeps the speaker before it).
func HasSpeakers(segs []sim.Segment) bool {
	return slices.ContainsFunc(segs, func(s sim.Segment) bool { return s.SpeakerID > 0 })
}
