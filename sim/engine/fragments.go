package engine

import (
	"cmp"
	"fmt"
	"strconv"

	"github.com/dubsim/dubsim/sim"
)

// mediaFact is one compared property of a MediaFormat: its name in the
// message and its value as shown ("" when unknown).
type mediaFact struct {
	name  string
	value func(sim.MediaFormat) string
}

var (
	videoFacts = []mediaFact{
		{"video codec", func(f sim.MediaFormat) string { return f.VideoCodec }},
		{"resolution", func(f sim.MediaFormat) string {
			if f.Width <= 0 || f.Height <= 0 {
				return ""
			}
			return fmt.Sprintf("%dx%d", f.Width, f.Height)
		}},
		{"frame rate", func(f sim.MediaFormat) string {
			if f.FrameRate <= 0 {
				return ""
			}
			return strconv.FormatFloat(float64(f.FrameRate)/1000, 'f', -1, 64) + " fps"
		}},
	}
	audioFacts = []mediaFact{
		{"audio codec", func(f sim.MediaFormat) string { return f.AudioCodec }},
		{"sample rate", func(f sim.MediaFormat) string { return positive(f.SampleRate, " Hz") }},
		{"channel count", func(f sim.MediaFormat) string { return positive(f.Channels, "") }},
	}
)

func positive(v int, unit string) string {
	if v <= 0 {
		return ""
	}
	return strconv.Itoa(v) + unit
}

// fragmentMismatch returns the errorMessage of the first fragment whose
// format differs from an earlier one's, or "". media[i] is what is known of
// frags[i] (a zero MediaFormat: nothing). Each fact is compared with the
// first fragment that has it; the first fragment with a known format
// decides whether the fragments are video or audio-only.
func fragmentMismatch(frags []sim.Fragment, media []sim.MediaFormat) string {
	first := -1
	refs := map[string]int{} // fact name -> index of the first fragment that has it
	for i, m := range media {
		if i >= len(frags) {
			break
		}
		if !m.Known() {
			continue
		}
		if first < 0 {
			first = i
		} else if m.HasVideo() != media[first].HasVideo() {
			tmpl := sim.MsgFragmentNoVideo
			if m.HasVideo() {
				tmpl = sim.MsgFragmentVideo
			}
			return fmt.Sprintf(tmpl, i+1, fragmentSource(frags[i]), first+1)
		}
		facts := audioFacts
		if m.HasVideo() {
			facts = videoFacts
		}
		for _, f := range facts {
			v := f.value(m)
			if v == "" {
				continue
			}
			r, ok := refs[f.name]
			if !ok {
				refs[f.name] = i
				continue
			}
			if want := f.value(media[r]); v != want {
				return fmt.Sprintf(sim.MsgFragmentMismatch, i+1, fragmentSource(frags[i]), f.name, v, r+1, want)
			}
		}
	}
	return ""
}

func fragmentSource(f sim.Fragment) string {
	return cmp.Or(f.URL, f.S3Path)
}

// recordPartMedia completes the result of a fragments artifact's downloads
// (media[i]: the format part i's download read): when presigned fragments
// remain to be resolved the formats are kept for resolveUploads, else a
// mismatch fails the artifact.
func recordPartMedia(frags []sim.Fragment, res *sim.ArtifactResult, media []sim.MediaFormat) {
	if frags == nil || res.Fail != "" {
		return
	}
	if !res.Known {
		for _, m := range media {
			if m.Known() {
				res.Media = media
				break
			}
		}
		return
	}
	res.Fail = fragmentMismatch(frags, media)
}
