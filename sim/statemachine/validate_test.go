package statemachine

import (
	"fmt"
	"testing"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

func loadCatalog(t *testing.T) *sim.Catalog {
	t.Helper()
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	return fx.Catalog
}

const (
	frVoice = "f4fb50:fr-FR-AlainNeural"
	deVoice = "d0187f:de-DE-AmalaNeural"
)

func seg(start, end int64, text string, speaker int) sim.SegmentInput {
	return sim.SegmentInput{StartMS: ptr(start), EndMS: ptr(end), Text: ptr(text), SpeakerID: ptr(speaker)}
}

func spk(id int, style, voice string) sim.SpeakerInput {
	return sim.SpeakerInput{SpeakerID: ptr(id), Style: ptr(style), VoiceKey: ptr(voice)}
}

func TestValidateRetranslation(t *testing.T) {
	t.Parallel()
	cat := loadCatalog(t)
	pro := sim.Account{APIKey: "k", Plan: sim.PlanPro}
	free := sim.Account{APIKey: "k", Plan: sim.PlanNone}
	fr := sim.Project{TargetLang: "fr-FR"}
	ja := sim.Project{TargetLang: "ja-JP"}
	good := func() sim.RetranslationInput {
		return sim.RetranslationInput{
			TargetScript:   []sim.SegmentInput{seg(100, 1544, "Au revoir le monde!", 1), seg(2000, 3000, "Salut", 2)},
			TargetSpeakers: []sim.SpeakerInput{spk(1, "feminine", frVoice), spk(2, "masculine", sim.VoiceSoundalike)},
		}
	}
	mod := func(f func(in *sim.RetranslationInput)) sim.RetranslationInput {
		in := good()
		f(&in)
		return in
	}
	tests := []struct {
		name    string
		acct    sim.Account
		project sim.Project
		in      sim.RetranslationInput
		code    sim.Code
		msg     string
	}{
		{"valid", pro, fr, good(), "", ""},
		{"target_script missing", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetScript = nil }), sim.CodeValidation, "target_script is required"},
		{"target_speakers missing", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetSpeakers = nil }), sim.CodeValidation, "target_speakers is required"},
		{"target_script empty", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetScript = []sim.SegmentInput{} }), sim.CodeValidation, sim.MsgNoSegments},
		{"target_speakers empty", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetSpeakers = []sim.SpeakerInput{} }), sim.CodeValidation, sim.MsgNoSpeakers},
		{"bad mixing mode", pro, fr, mod(func(in *sim.RetranslationInput) { in.MixingMode = ptr("loud") }), sim.CodeValidation,
			`mixing_mode must be one of voiceover_only, voiceover_with_original_track, voiceover_without_original_voice; got "loud"`},
		{"bad tts volume", pro, fr, mod(func(in *sim.RetranslationInput) { in.TTSVolume = ptr("max") }), sim.CodeValidation,
			`tts_volume must be one of very_quiet, quieter, normal, louder, very_loud; got "max"`},
		{"unknown voice (docs example)", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetSpeakers[0].VoiceKey = ptr("unknown-voice") }), sim.CodeValidation, "Unknown voice unknown-voice"},
		{"voice of another language", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetSpeakers[0].VoiceKey = ptr(deVoice) }), sim.CodeValidation,
			"Voice " + deVoice + " does not support the project's target language fr-FR"},
		{"voice_key missing", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetSpeakers[0].VoiceKey = nil }), sim.CodeValidation, "target_speakers[0].voice_key is required"},
		{"voice_key blank", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetSpeakers[1].VoiceKey = ptr(" ") }), sim.CodeValidation, "target_speakers[1].voice_key is required"},
		{"speaker_id missing in speakers", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetSpeakers[1].SpeakerID = nil }), sim.CodeValidation, "target_speakers[1].speaker_id is required"},
		{"style missing", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetSpeakers[0].Style = nil }), sim.CodeValidation, "target_speakers[0].style is required"},
		{"style invalid", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetSpeakers[0].Style = ptr("neutral") }), sim.CodeValidation,
			fmt.Sprintf(sim.MsgSpeakerStyle, "target_speakers[0]", "neutral")},
		{"duplicate speaker", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetSpeakers[1].SpeakerID = ptr(1) }), sim.CodeValidation, "Duplicate speaker ID 1 in target_speakers"},
		{"script speaker not in speakers (docs example)", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetSpeakers = in.TargetSpeakers[:1] }), sim.CodeValidation,
			"Speaker ID 2 referenced in script but not found in target_speakers"},
		{"start not before end (docs example)", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetScript[1] = seg(3000, 3000, "x", 1) }), sim.CodeValidation,
			"Invalid timing: start_ms must be less than end_ms [detail: target_script[1]: start_ms 3000, end_ms 3000]"},
		{"start after end", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetScript[0] = seg(500, 100, "x", 1) }), sim.CodeValidation,
			"Invalid timing: start_ms must be less than end_ms [detail: target_script[0]: start_ms 500, end_ms 100]"},
		{"negative start", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetScript[0] = seg(-5, 100, "x", 1) }), sim.CodeValidation, fmt.Sprintf(sim.MsgNegativeStart, "target_script[0]", -5)},
		{"empty text", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetScript[1].Text = ptr("  ") }), sim.CodeValidation, "target_script[1].text must not be empty"},
		{"missing text", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetScript[1].Text = nil }), sim.CodeValidation, "target_script[1].text is required"},
		{"missing start", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetScript[0].StartMS = nil }), sim.CodeValidation, "target_script[0].start_ms is required"},
		{"missing end", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetScript[0].EndMS = nil }), sim.CodeValidation, "target_script[0].end_ms is required"},
		{"missing speaker_id in script", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetScript[0].SpeakerID = nil }), sim.CodeValidation, "target_script[0].speaker_id is required"},
		{"overlap", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetScript[1] = seg(1500, 3000, "x", 2) }), sim.CodeValidation,
			"Overlapping segments: target_script[0] (100-1544 ms) overlaps target_script[1] (1500-3000 ms)"},
		{"overlap out of order", pro, fr, mod(func(in *sim.RetranslationInput) {
			in.TargetScript = append(in.TargetScript, seg(50, 200, "y", 1))
		}), sim.CodeValidation, "Overlapping segments: target_script[0] (100-1544 ms) overlaps target_script[2] (50-200 ms)"},
		{"touching segments are fine", pro, fr, mod(func(in *sim.RetranslationInput) { in.TargetScript[1] = seg(1544, 3000, "x", 2) }), "", ""},
		{"emotional_transfer unsupported language", pro, ja, sim.RetranslationInput{
			TargetScript:   []sim.SegmentInput{seg(0, 100, "x", 1)},
			TargetSpeakers: []sim.SpeakerInput{spk(1, "feminine", sim.VoiceEmotionalTransfer)},
		}, sim.CodeValidation, "Voice emotional_transfer is not supported for target language ja-JP"},
		{"soundalike without subscription", free, fr, good(), sim.CodePaymentRequired, "Soundalike voices require an active subscription"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rt, err := ValidateRetranslation(cat, tc.acct, tc.project, tc.in)
			if tc.code == "" {
				require.NoError(t, err)
				assert.Equal(t, sim.DefaultMixingMode, rt.MixingMode)
				assert.Equal(t, sim.DefaultTTSVolume, rt.TTSVolume)
				assert.Len(t, rt.TargetScript, len(tc.in.TargetScript))
				return
			}
			require.Error(t, err)
			assert.Equal(t, tc.code, sim.ErrorCode(err))
			got := err.Error()
			if d := sim.ErrorDetail(err); d != "" {
				got += " [detail: " + d + "]"
			}
			assert.Equal(t, tc.msg, got)
		})
	}
}

func TestValidateRetranslationSortsScript(t *testing.T) {
	t.Parallel()
	in := sim.RetranslationInput{
		TargetScript:   []sim.SegmentInput{seg(2000, 3000, "b", 1), seg(0, 1000, "a", 1)},
		TargetSpeakers: []sim.SpeakerInput{spk(1, "masculine", frVoice)},
		MixingMode:     ptr(sim.MixVoiceoverOnly), UseFixedTimings: ptr(true),
	}
	rt, err := ValidateRetranslation(loadCatalog(t), sim.Account{Plan: sim.PlanNone}, sim.Project{TargetLang: "fr-FR"}, in)
	require.NoError(t, err)
	assert.Equal(t, "a", rt.TargetScript[0].Text)
	assert.Equal(t, sim.MixVoiceoverOnly, rt.MixingMode)
	assert.True(t, rt.UseFixedTimings)
}

func TestCheckCreateAccess(t *testing.T) {
	t.Parallel()
	content := "hello"
	tests := []struct {
		name string
		plan sim.Plan
		np   sim.NewProject
		msg  string
	}{
		{"plain project, no plan", sim.PlanNone, sim.NewProject{}, ""},
		{"soundalike needs subscription", sim.PlanNone, sim.NewProject{UseSoundalike: true}, "Soundalike voices require an active subscription"},
		{"soundalike with subscription", sim.PlanSubscription, sim.NewProject{UseSoundalike: true}, ""},
		{"emotional needs subscription", sim.PlanNone, sim.NewProject{UseEmotionalTransfer: true}, "Emotional transfer voices require an active subscription"},
		{"script content needs pro", sim.PlanSubscription, sim.NewProject{SourceScriptContent: &content}, "source_script_content requires a Pro subscription or higher"},
		{"structured script needs pro", sim.PlanSubscription, sim.NewProject{SourceScript: []sim.Segment{}}, "source_script requires a Pro subscription or higher"},
		{"glossary needs pro", sim.PlanSubscription, sim.NewProject{GlossaryContent: &content}, "glossary_content requires a Pro subscription or higher"},
		{"pro has everything", sim.PlanPro, sim.NewProject{UseSoundalike: true, SourceScriptContent: &content, GlossaryContent: &content}, ""},
		{"enterprise has everything", sim.PlanEnterprise, sim.NewProject{SourceScript: []sim.Segment{}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := CheckCreateAccess(sim.Account{Plan: tc.plan}, tc.np)
			if tc.msg == "" {
				assert.NoError(t, err)
				return
			}
			assert.Equal(t, sim.CodePaymentRequired, sim.ErrorCode(err))
			assert.EqualError(t, err, tc.msg)
		})
	}
}
