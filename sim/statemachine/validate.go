package statemachine

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/dubsim/dubsim/sim"
)

func invalid(format string, args ...any) error {
	return sim.Errorf(sim.CodeValidation, format, args...)
}

func enum(field string, v *string, allowed []string, def string) (string, error) {
	if v == nil {
		return def, nil
	}
	if !slices.Contains(allowed, *v) {
		return "", invalid(sim.MsgOneOf, field, strings.Join(allowed, ", "), *v)
	}
	return *v, nil
}

// ValidateRetranslation checks a re-translation request for project p of
// account acct against every documented rule, and returns it normalised
// (defaults applied, timings as sent).
func ValidateRetranslation(cat *sim.Catalog, acct sim.Account, p sim.Project, in sim.RetranslationInput) (sim.Retranslation, error) {
	var rt sim.Retranslation
	if in.TargetScript == nil {
		return rt, invalid(sim.MsgRequired, "target_script")
	}
	if in.TargetSpeakers == nil {
		return rt, invalid(sim.MsgRequired, "target_speakers")
	}
	if len(in.TargetScript) == 0 {
		return rt, invalid(sim.MsgNoSegments)
	}
	if len(in.TargetSpeakers) == 0 {
		return rt, invalid(sim.MsgNoSpeakers)
	}
	var err error
	if rt.MixingMode, err = enum("mixing_mode", in.MixingMode, sim.MixingModes, sim.DefaultMixingMode); err != nil {
		return rt, err
	}
	if rt.TTSVolume, err = enum("tts_volume", in.TTSVolume, sim.TTSVolumes, sim.DefaultTTSVolume); err != nil {
		return rt, err
	}
	rt.UseFixedTimings = in.UseFixedTimings != nil && *in.UseFixedTimings

	speakers, special, err := validateSpeakers(cat, p.TargetLang, in.TargetSpeakers, &rt)
	if err != nil {
		return rt, err
	}
	if err := validateScript(in.TargetScript, speakers, &rt); err != nil {
		return rt, err
	}

	if special && !acct.Plan.AtLeast(sim.PlanSubscription) {
		return rt, sim.Errorf(sim.CodePaymentRequired, sim.MsgSoundalikeSubscription)
	}
	return rt, nil
}

// validateSpeakers checks the speakers into rt. It returns the speaker ids
// and whether a special voice is used.
func validateSpeakers(cat *sim.Catalog, targetLang string, list []sim.SpeakerInput, rt *sim.Retranslation) (map[int]bool, bool, error) {
	speakers := map[int]bool{}
	special := false
	for i, s := range list {
		item := fmt.Sprintf("target_speakers[%d]", i)
		switch {
		case s.SpeakerID == nil:
			return nil, false, invalid(sim.MsgRequired, item+".speaker_id")
		case s.VoiceKey == nil || strings.TrimSpace(*s.VoiceKey) == "":
			return nil, false, invalid(sim.MsgRequired, item+".voice_key")
		case s.Style == nil || *s.Style == "":
			return nil, false, invalid(sim.MsgRequired, item+".style")
		case !slices.Contains(sim.Styles, *s.Style):
			return nil, false, invalid(sim.MsgSpeakerStyle, item, *s.Style)
		case speakers[*s.SpeakerID]:
			return nil, false, invalid(sim.MsgDuplicateSpeaker, *s.SpeakerID)
		}
		speakers[*s.SpeakerID] = true
		key := *s.VoiceKey
		switch key {
		case sim.VoiceSoundalike, sim.VoiceEmotionalTransfer:
			if !cat.SpecialVoiceSupports(key, targetLang) {
				return nil, false, invalid(sim.MsgSpecialVoiceLanguage, key, targetLang)
			}
			special = true
		default:
			_, voiceLang, ok := cat.Voice(key)
			if !ok {
				return nil, false, invalid(sim.MsgUnknownVoice, key)
			}
			if voiceLang != targetLang {
				return nil, false, invalid(sim.MsgVoiceLanguage, key, targetLang)
			}
		}
		rt.TargetSpeakers = append(rt.TargetSpeakers, sim.Speaker{SpeakerID: *s.SpeakerID, Style: *s.Style, VoiceKey: key})
	}
	return speakers, special, nil
}

// validateScript checks the segments, each of a known speaker, into rt,
// sorted by start time; segments may not overlap.
func validateScript(list []sim.SegmentInput, speakers map[int]bool, rt *sim.Retranslation) error {
	for i, s := range list {
		item := fmt.Sprintf("target_script[%d]", i)
		switch {
		case s.StartMS == nil:
			return invalid(sim.MsgRequired, item+".start_ms")
		case s.EndMS == nil:
			return invalid(sim.MsgRequired, item+".end_ms")
		case s.Text == nil:
			return invalid(sim.MsgRequired, item+".text")
		case strings.TrimSpace(*s.Text) == "":
			return invalid(sim.MsgEmptyText, item)
		case s.SpeakerID == nil:
			return invalid(sim.MsgRequired, item+".speaker_id")
		case *s.StartMS < 0:
			return invalid(sim.MsgNegativeStart, item, *s.StartMS)
		case *s.StartMS >= *s.EndMS:
			return sim.Errorf(sim.CodeValidation, sim.MsgInvalidTiming).WithDetail(sim.DetailInvalidTiming, item, *s.StartMS, *s.EndMS)
		case !speakers[*s.SpeakerID]:
			return invalid(sim.MsgSpeakerNotInSpeakers, *s.SpeakerID)
		}
		rt.TargetScript = append(rt.TargetScript, sim.Segment{StartMS: *s.StartMS, EndMS: *s.EndMS, Text: *s.Text, SpeakerID: *s.SpeakerID})
	}
	order := make([]int, len(rt.TargetScript))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rt.TargetScript[order[a]].StartMS < rt.TargetScript[order[b]].StartMS })
	for k := 1; k < len(order); k++ {
		prev, cur := rt.TargetScript[order[k-1]], rt.TargetScript[order[k]]
		if cur.StartMS < prev.EndMS {
			i, j := min(order[k], order[k-1]), max(order[k], order[k-1])
			a, b := rt.TargetScript[i], rt.TargetScript[j]
			return invalid(sim.MsgOverlap, i, a.StartMS, a.EndMS, j, b.StartMS, b.EndMS)
		}
	}
	sort.SliceStable(rt.TargetScript, func(a, b int) bool { return rt.TargetScript[a].StartMS < rt.TargetScript[b].StartMS })
	return nil
}

// CheckCreateAccess applies the access tiers to a Create Project request.
func CheckCreateAccess(acct sim.Account, np sim.NewProject) error {
	if np.UseSoundalike && !acct.Plan.AtLeast(sim.PlanSubscription) {
		return sim.Errorf(sim.CodePaymentRequired, sim.MsgSoundalikeSubscription)
	}
	if np.UseEmotionalTransfer && !acct.Plan.AtLeast(sim.PlanSubscription) {
		return sim.Errorf(sim.CodePaymentRequired, sim.MsgEmotionalSubscription)
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"source_script", np.SourceScript != nil},
		{"source_script_content", np.SourceScriptContent != nil},
		{"glossary_content", np.GlossaryContent != nil},
	} {
		if f.set && !acct.Plan.AtLeast(sim.PlanPro) {
			return sim.Errorf(sim.CodePaymentRequired, sim.MsgHigherTier, f.name)
		}
	}
	return nil
}
