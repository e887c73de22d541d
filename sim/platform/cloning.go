package platform

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/audio"
	"github.com/dubsim/dubsim/sim/idempotency"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/dubsim/dubsim/sim/probe"
	"github.com/dubsim/dubsim/sim/script"
)

// Limits of the voice cloning request.
const (
	maxCloneTextChars   = 5000
	maxReferenceBytes   = 50_000_000 // per file: 50 MB, decimal, as the docs write it
	maxReferenceFiles   = 10         // not documented; see docs/fidelity.md
	referenceHeadBytes  = 4 << 20    // kept of each file for analysis
	maxCloneBody        = maxReferenceFiles*maxReferenceBytes + 8_000_000
	cloneSampleRate     = 44100
	recipeCloning       = "cloning"
	cloneFileName       = "synthesized_audio.wav"
	defaultRefPitchLow  = 90.0
	defaultRefPitchSpan = 150.0
)

// cloneRecipe is everything the output depends on: an idempotent replay
// regenerates the same bytes from it.
type cloneRecipe struct {
	Text     string  `json:"text"`
	Language string  `json:"language"`
	PitchHz  float64 `json:"pitch_hz"`
	Seed     uint64  `json:"seed"`
}

// handleSynthesize serves POST /api/v1/cloning/synthesize: multipart text,
// language and reference_audio_files in, a 16-bit 44.1 kHz mono WAV out.
func (a *API) handleSynthesize(w http.ResponseWriter, r *http.Request) error {
	acct := account(r)
	if !acct.Plan.AtLeast(sim.PlanPro) {
		return sim.Errorf(sim.CodeAccessDenied, sim.MsgCloningPlan)
	}
	if !acct.CloningEnabled {
		return sim.Errorf(sim.CodeAccessDenied, sim.MsgCloningDisabled)
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxCloneBody)
	rc, err := a.readCloneRequest(r)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return sim.Errorf(sim.CodeTooLarge, sim.MsgBodyTooLarge, int64(maxCloneBody))
	}
	if err != nil {
		return err
	}
	b, err := json.Marshal(rc)
	if err != nil {
		return err
	}
	idempotency.SetReplayRecipe(w, recipeCloning, b)
	return writeSpeech(w, rc)
}

// replayCloning regenerates a cloning response from its recipe.
func replayCloning(w http.ResponseWriter, _ *http.Request, recipe []byte) error {
	var rc cloneRecipe
	if err := json.Unmarshal(recipe, &rc); err != nil {
		return fmt.Errorf("cloning recipe: %w", err)
	}
	return writeSpeech(w, rc)
}

func cloneTrack(rc cloneRecipe) audio.Track {
	return audio.SpeechTrack(rc.Text, script.CharsPerSecondFor(rc.Language), audio.Voice{PitchHz: rc.PitchHz, Seed: rc.Seed}, cloneSampleRate)
}

func writeSpeech(w http.ResponseWriter, rc cloneRecipe) error {
	t := cloneTrack(rc)
	w.Header().Set("Content-Type", "audio/wav")
	w.Header().Set("Content-Length", strconv.FormatInt(audio.WAVSize(t), 10))
	w.Header().Set("Content-Disposition", `attachment; filename="`+cloneFileName+`"`)
	w.WriteHeader(http.StatusOK)
	// Once the status is sent, a failed copy can only leave a short body.
	_, _ = io.Copy(w, audio.NewWAVReader(t))
	return nil
}

// reference is what is kept of one uploaded voice sample.
type reference struct {
	info probe.ReferenceInfo
	hash uint64
}

// readCloneRequest streams the multipart body: of each reference file only
// the first bytes are kept (format, pitch) and the rest counted, so a 50 MB
// part costs no more memory than a small one.
func (a *API) readCloneRequest(r *http.Request) (cloneRecipe, error) {
	var rc cloneRecipe
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "multipart/form-data" {
		return rc, sim.Errorf(sim.CodeValidation, sim.MsgCloningMultipart, ct)
	}
	if params["boundary"] == "" {
		return rc, sim.Errorf(sim.CodeValidation, msgNoBoundary)
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return rc, sim.Errorf(sim.CodeValidation, sim.MsgCloningMultipart, ct)
	}
	var text, language *string
	var refs []reference
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return rc, multipartError(err, "")
		}
		switch part.FormName() {
		case "text":
			v, err := readTextField(part)
			if err != nil {
				return rc, err
			}
			text = &v
		case "language":
			v, err := readField(part, "language", 256)
			if err != nil {
				return rc, err
			}
			v = strings.TrimSpace(v)
			language = &v
		case "reference_audio_files":
			if len(refs) == maxReferenceFiles {
				return rc, sim.Errorf(sim.CodeValidation, msgTooManyReferences, maxReferenceFiles)
			}
			ref, err := readReference(part, len(refs))
			if err != nil {
				return rc, err
			}
			refs = append(refs, ref)
		default:
			if _, err := io.Copy(io.Discard, part); err != nil {
				return rc, multipartError(err, "")
			}
		}
		part.Close()
	}

	switch {
	case text == nil:
		return rc, sim.Errorf(sim.CodeValidation, sim.MsgRequired, "text")
	case strings.TrimSpace(*text) == "":
		return rc, sim.Errorf(sim.CodeValidation, msgTextEmpty)
	case !hasSpeakable(*text):
		return rc, sim.Errorf(sim.CodeValidation, msgTextNothingToSay, truncate(*text, 40))
	case language == nil || *language == "":
		return rc, sim.Errorf(sim.CodeValidation, sim.MsgRequired, "language")
	case !a.svc.Catalog().IsTargetLang(*language):
		return rc, sim.Errorf(sim.CodeValidation, msgCloneLanguage, *language)
	case len(refs) == 0:
		return rc, sim.Errorf(sim.CodeValidation, msgNoReferences)
	}
	rc.Text = strings.TrimSpace(*text)
	rc.Language = *language
	h := fnv.New64a()
	var sum float64
	var measured int
	for _, ref := range refs {
		_ = binary.Write(h, binary.BigEndian, ref.hash)
		if ref.info.PitchHz > 0 {
			sum += ref.info.PitchHz
			measured++
		}
	}
	refHash := h.Sum64()
	if measured > 0 {
		rc.PitchHz = sum / float64(measured)
	} else {
		// None measured (compressed formats): a pitch drawn from the
		// files, so different samples still give different voices.
		rc.PitchHz = defaultRefPitchLow + float64(refHash%uint64(defaultRefPitchSpan))
	}
	h.Write([]byte(rc.Text))
	h.Write([]byte(rc.Language))
	rc.Seed = h.Sum64()
	return rc, nil
}

func readField(part io.Reader, name string, limit int64) (string, error) {
	b, err := io.ReadAll(io.LimitReader(part, limit+1))
	if err != nil {
		return "", multipartError(err, name)
	}
	if int64(len(b)) > limit {
		return "", sim.Errorf(sim.CodeValidation, msgFieldTooLong, name)
	}
	if !utf8.Valid(b) {
		return "", sim.Errorf(sim.CodeValidation, msgFieldNotUTF8, name)
	}
	return string(b), nil
}

// readTextField reads text and enforces the limit in characters, not bytes.
func readTextField(part io.Reader) (string, error) {
	const maxBytes = maxCloneTextChars * utf8.UTFMax
	b, err := io.ReadAll(io.LimitReader(part, maxBytes+1))
	if err != nil {
		return "", multipartError(err, "text")
	}
	if !utf8.Valid(b) && len(b) <= maxBytes {
		return "", sim.Errorf(sim.CodeValidation, msgTextNotUTF8)
	}
	n := utf8.RuneCount(b)
	if len(b) > maxBytes {
		return "", sim.Errorf(sim.CodeValidation, msgTextTooLongRead, maxCloneTextChars, maxCloneTextChars)
	}
	if n > maxCloneTextChars {
		return "", sim.Errorf(sim.CodeValidation, msgTextTooLong, maxCloneTextChars, n)
	}
	return string(b), nil
}

// headBuffers recycles the buffers of the first bytes of reference files.
var headBuffers = sync.Pool{New: func() any { b := make([]byte, referenceHeadBytes); return &b }}

var acceptedReferenceFormats = []string{probe.FormatWAV, probe.FormatMP3, probe.FormatMP4, probe.FormatFLAC}

func readReference(part interface {
	io.Reader
	FileName() string
}, index int) (reference, error) {
	label := fmt.Sprintf("reference_audio_files[%d]", index)
	if name := part.FileName(); name != "" {
		label += fmt.Sprintf(" (%q)", name)
	}
	buf := headBuffers.Get().(*[]byte)
	defer headBuffers.Put(buf)
	read, err := io.ReadFull(part, *buf)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return reference{}, multipartError(err, label)
	}
	head := (*buf)[:read]
	n := int64(read)
	if n == 0 {
		return reference{}, sim.Errorf(sim.CodeValidation, msgReferenceEmpty, label)
	}
	format := probe.DetectFormat(head[:min(n, 64)])
	if !slices.Contains(acceptedReferenceFormats, format) {
		what := "an unrecognised format"
		if format != "" {
			what = format
		}
		return reference{}, sim.Errorf(sim.CodeValidation, msgReferenceFormat, label, what)
	}
	rest, err := io.Copy(io.Discard, io.LimitReader(part, maxReferenceBytes-n+1))
	if err != nil {
		return reference{}, multipartError(err, label)
	}
	if n+rest > maxReferenceBytes {
		return reference{}, sim.Errorf(sim.CodeTooLarge, msgReferenceTooLarge, label)
	}
	h := fnv.New64a()
	h.Write(head)
	return reference{info: probe.AnalyzeReference(head), hash: h.Sum64()}, nil
}

// multipartError words a failure to read the body; an over-limit body is
// passed through for the handler's 413.
func multipartError(err error, field string) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return err
	}
	if ferr := httpx.BodyFailure(err); ferr != nil {
		return ferr // the body did not arrive (no network address)
	}
	if field != "" {
		return sim.Errorf(sim.CodeValidation, msgMultipartField, field, err)
	}
	return sim.Errorf(sim.CodeValidation, msgMultipart, err)
}

func hasSpeakable(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
