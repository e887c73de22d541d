package platform

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/script"
	"github.com/go-playground/validator/v10"
)

// createProjectBody is the Create Project body; pointers tell absent fields.
type createProjectBody struct {
	Name                 *string              `json:"name"`
	SourceLang           *string              `json:"source_lang" validate:"required,srclang"`
	TargetLang           *string              `json:"target_lang" validate:"required,tgtlang"`
	SourceVideoURL       *string              `json:"source_video_url" validate:"required,httpurl"`
	MixingMode           *string              `json:"mixing_mode" validate:"omitnil,oneof=voiceover_only voiceover_with_original_track voiceover_without_original_voice"`
	UseEmotionalTransfer *bool                `json:"use_emotional_transfer"`
	UseSoundalikeVoices  *bool                `json:"use_soundalike_voices"`
	SourceScriptContent  *string              `json:"source_script_content" validate:"omitnil,nonblank"`
	SourceScript         *[]sourceSegmentBody `json:"source_script" validate:"omitnil,min=1,dive"`
	UseFixedTimings      *bool                `json:"use_fixed_timings"`
	GlossaryContent      *string              `json:"glossary_content" validate:"omitnil,nonblank"`
	TTSVolume            *string              `json:"tts_volume" validate:"omitnil,oneof=very_quiet quieter normal louder very_loud"`
}

type sourceSegmentBody struct {
	StartMS   *int64  `json:"start_ms" validate:"required,min=0"`
	EndMS     *int64  `json:"end_ms" validate:"required"`
	Text      *string `json:"text" validate:"required,nonblank"`
	SpeakerID *int    `json:"speaker_id" validate:"omitnil,min=1"`
}

// newValidator returns a validator whose language rules read the catalogue
// in use at each call.
func newValidator(catalog func() *sim.Catalog) *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		return name
	})
	must := func(tag string, fn validator.Func) {
		if err := v.RegisterValidation(tag, fn); err != nil {
			panic(err)
		}
	}
	must("srclang", func(fl validator.FieldLevel) bool { return catalog().IsSourceLang(fl.Field().String()) })
	must("tgtlang", func(fl validator.FieldLevel) bool { return catalog().IsTargetLang(fl.Field().String()) })
	must("nonblank", func(fl validator.FieldLevel) bool { return strings.TrimSpace(fl.Field().String()) != "" })
	must("httpurl", func(fl validator.FieldLevel) bool {
		u, err := url.Parse(fl.Field().String())
		return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
	})
	return v
}

// fieldPath drops the struct name from a validator namespace.
func fieldPath(fe validator.FieldError) string {
	ns := fe.Namespace()
	if _, rest, ok := strings.Cut(ns, "."); ok {
		return rest
	}
	return ns
}

// checkLengths refuses a name or source URL longer than its limit, before
// any other rule reads them (docs/fidelity.md HB3).
func checkLengths(b createProjectBody) error {
	if b.Name != nil {
		if n := utf8.RuneCountInString(*b.Name); n > sim.MaxNameLength {
			return sim.Errorf(sim.CodeValidation, msgFieldCharacters, "name", sim.MaxNameLength, n)
		}
	}
	if b.SourceVideoURL != nil && len(*b.SourceVideoURL) > sim.MaxURLBytes {
		return sim.Errorf(sim.CodeValidation, msgFieldBytes, "source_video_url", sim.MaxURLBytes, len(*b.SourceVideoURL))
	}
	return nil
}

// maxEchoed is the longest client value a message quotes whole, so that a
// refusal is never the size of the request.
const maxEchoed = 200

// echoed cuts v to maxEchoed bytes on a character boundary, marked "...".
func echoed(v string) string {
	if len(v) <= maxEchoed {
		return v
	}
	cut := maxEchoed - 3
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut] + "..."
}

// validationMessage words one validator failure for the client.
func validationMessage(fe validator.FieldError, catalog *sim.Catalog) string {
	field := fieldPath(fe)
	value := fmt.Sprint(fe.Value())
	if p, ok := fe.Value().(*string); ok && p != nil {
		value = *p
	}
	value = echoed(value)
	switch fe.Tag() {
	case "required":
		return fmt.Sprintf(sim.MsgRequired, field)
	case "srclang":
		hint := ""
		if lang, _, ok := strings.Cut(value, "-"); ok && catalog.IsSourceLang(lang) {
			hint = fmt.Sprintf(" (source languages have no locale: did you mean %q?)", lang)
		}
		return fmt.Sprintf("source_lang %q is not supported%s; use a code from GET /api/v1/options", value, hint)
	case "tgtlang":
		hint := ""
		i := slices.IndexFunc(catalog.TargetLangs, func(t string) bool { return strings.HasPrefix(t, value+"-") })
		if !strings.Contains(value, "-") && i >= 0 {
			hint = fmt.Sprintf(" (target languages need a locale, such as %q)", catalog.TargetLangs[i])
		}
		return fmt.Sprintf("target_lang %q is not supported%s; use a code from GET /api/v1/options", value, hint)
	case "httpurl":
		return fmt.Sprintf("source_video_url must be an absolute http or https URL; got %q", value)
	case "oneof":
		return fmt.Sprintf("%s must be one of %s; got %q", field, strings.ReplaceAll(fe.Param(), " ", ", "), value)
	case "nonblank":
		return fmt.Sprintf("%s must not be empty", field)
	case "min":
		if fe.Kind().String() == "slice" {
			return fmt.Sprintf("%s must contain at least %s item", field, fe.Param())
		}
		return fmt.Sprintf("%s must be at least %s; got %s", field, fe.Param(), value)
	}
	return fmt.Sprintf("%s is invalid (%s)", field, fe.Tag())
}

// toNewProject validates a body against every rule that does not depend on
// the account, and returns the request with defaults.
func (a *API) toNewProject(b createProjectBody) (sim.NewProject, error) {
	cat := a.svc.Catalog()
	if err := checkLengths(b); err != nil {
		return sim.NewProject{}, err
	}
	if err := a.validate.Struct(b); err != nil {
		var ves validator.ValidationErrors
		if errors.As(err, &ves) && len(ves) > 0 {
			return sim.NewProject{}, sim.Errorf(sim.CodeValidation, "%s", validationMessage(ves[0], cat))
		}
		return sim.NewProject{}, err
	}
	np := sim.NewProject{
		Name: or(b.Name, ""), SourceLang: *b.SourceLang, TargetLang: *b.TargetLang, SourceVideoURL: *b.SourceVideoURL,
		MixingMode: or(b.MixingMode, sim.DefaultMixingMode), TTSVolume: or(b.TTSVolume, sim.DefaultTTSVolume),
		UseEmotionalTransfer: or(b.UseEmotionalTransfer, false), UseSoundalike: or(b.UseSoundalikeVoices, false),
		UseFixedTimings: or(b.UseFixedTimings, false), SourceScriptContent: b.SourceScriptContent, GlossaryContent: b.GlossaryContent,
	}

	if b.SourceScript != nil && b.SourceScriptContent != nil {
		return np, sim.Errorf(sim.CodeValidation, sim.MsgScriptAndContent)
	}
	if np.UseEmotionalTransfer && !cat.SpecialVoiceSupports(sim.VoiceEmotionalTransfer, np.TargetLang) {
		return np, sim.Errorf(sim.CodeValidation, sim.MsgEmotionalLanguage, np.TargetLang)
	}
	// The outputs of a soundalike project name the voice "soundalike", which
	// validate and re-translate refuse where it is not supported: refuse it
	// here too, so that Get Project's outputs are always a valid request.
	if np.UseSoundalike && !cat.SpecialVoiceSupports(sim.VoiceSoundalike, np.TargetLang) {
		return np, sim.Errorf(sim.CodeValidation, sim.MsgSoundalikeLanguage, np.TargetLang)
	}
	if b.SourceScript != nil {
		var prevEnd int64 = -1
		for i, s := range *b.SourceScript {
			item := fmt.Sprintf("source_script[%d]", i)
			if *s.StartMS >= *s.EndMS {
				return np, sim.Errorf(sim.CodeValidation, sim.MsgInvalidTiming).WithDetail(sim.DetailInvalidTiming, item, *s.StartMS, *s.EndMS)
			}
			if *s.StartMS < prevEnd {
				return np, sim.Errorf(sim.CodeValidation, msgScriptOrder, item, *s.StartMS, prevEnd)
			}
			prevEnd = *s.EndMS
			seg := sim.Segment{StartMS: *s.StartMS, EndMS: *s.EndMS, Text: strings.TrimSpace(*s.Text)}
			if s.SpeakerID != nil {
				seg.SpeakerID = *s.SpeakerID
			}
			np.SourceScript = append(np.SourceScript, seg)
		}
		if script.HasSpeakers(np.SourceScript) {
			// A segment without a speaker id is the speaker before it's.
			speaker := 1
			for i, s := range np.SourceScript {
				if s.SpeakerID > 0 {
					speaker = s.SpeakerID
				}
				np.SourceScript[i].SpeakerID = speaker
			}
		}
	}
	if c := b.SourceScriptContent; c != nil {
		if _, _, err := script.ParseContent(*c); err != nil {
			return np, sim.Errorf(sim.CodeValidation, sim.MsgScriptContent, err)
		}
	}
	if g := b.GlossaryContent; g != nil {
		if _, bad := script.ParseGlossary(*g, np.SourceLang, np.TargetLang); bad > 0 {
			return np, sim.Errorf(sim.CodeValidation, msgGlossaryTSV, bad)
		}
	}
	return np, nil
}

// or is *p, or def when p is nil (an absent field).
func or[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
