package store

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// The records every request reads (accounts, project heads and bodies) are
// stored in a compact binary form: encoding/json spent a third of a Get
// Project's time decoding the head. Every other record stays versioned
// JSON, and records of these three kinds written as JSON by an earlier
// dubsim are still read (a JSON value starts with '{', a binary one with
// binTag).
//
// The layout is the fields in declaration order: integers as varints,
// strings and byte slices with a uvarint length, booleans as one byte,
// times as a length byte and time.Time's binary form (0 for the zero
// time), slices as a uvarint count and their elements, pointers as a
// presence byte and the value. TestCodecCoversEveryField fails when a field
// is added to one of these types and not here.
const binTag = 0xB1

// errCorrupt is wrapped by every decoding error of a binary record.
// It is sim.ErrDamaged to the engine, which then skips the record.
var errCorrupt error = corruptError{}

type corruptError struct{}

func (corruptError) Error() string        { return "store: corrupt value" }
func (corruptError) Is(target error) bool { return target == sim.ErrDamaged }

// binEncode returns the binary form of v and true, or false when v's type
// is stored as JSON.
func binEncode(v any) ([]byte, bool) {
	w := binWriter{b: make([]byte, 0, 256)}
	w.b = append(w.b, binTag)
	switch x := v.(type) {
	case sim.Project:
		w.project(&x)
	case *sim.Project:
		w.project(x)
	case projectBody:
		w.body(&x)
	case *projectBody:
		w.body(x)
	case sim.Account:
		w.account(&x)
	case *sim.Account:
		w.account(x)
	default:
		return nil, false
	}
	return w.b, true
}

// binDecode decodes a binary record into v (a pointer to one of the binary
// types).
func binDecode(b []byte, v any) error {
	r := binReader{b: b[1:]}
	switch x := v.(type) {
	case *sim.Project:
		r.project(x)
	case *projectBody:
		r.body(x)
	case *sim.Account:
		r.account(x)
	default:
		return fmt.Errorf("%w: binary record read as %T", errCorrupt, v)
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d trailing bytes", len(r.b))
	}
	return r.err
}

type binWriter struct{ b []byte }

func (w *binWriter) int(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *binWriter) uint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *binWriter) str(s string)  { w.uint(uint64(len(s))); w.b = append(w.b, s...) }
func (w *binWriter) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

func (w *binWriter) time(t time.Time) {
	if t.IsZero() {
		w.b = append(w.b, 0)
		return
	}
	n := len(w.b)
	w.b = append(w.b, 0)
	var err error
	if w.b, err = t.AppendBinary(w.b); err != nil {
		// Only an offset that is not whole minutes fails; keep the instant.
		w.b, _ = t.UTC().AppendBinary(w.b[:n+1])
	}
	w.b[n] = byte(len(w.b) - n - 1)
}

func (w *binWriter) project(p *sim.Project) {
	w.str(p.ID)
	w.str(p.APIKey)
	w.str(p.Name)
	w.str(p.SourceLang)
	w.str(p.TargetLang)
	w.str(p.SourceVideoURL)
	w.str(p.MixingMode)
	w.str(p.TTSVolume)
	w.bool(p.UseSoundalike)
	w.bool(p.UseEmotionalTransfer)
	w.bool(p.UseFixedTimings)
	w.bool(p.HasGlossary)
	w.int(p.DurationMS)
	w.str(p.DurationSource)
	w.int(p.CostMinutes)
	w.bool(p.Refunded)
	w.str(string(p.Status))
	w.time(p.CreatedAt)
	w.time(p.DueAt)
	w.time(p.CompletedAt)
	w.str(p.ErrorMessage)
	w.bool(p.Outcome.Error)
	w.str(p.Outcome.Message)
	w.int(int64(p.TranslationsCount))
	w.int(int64(p.OutputGen))
	w.bool(p.ScriptsPending)
	w.scriptInput(p.ScriptInput)
	w.segments(p.SourceScript)
	w.segments(p.TargetScript)
	w.speakers(p.Speakers)
	w.retranslation(p.Pending)
	w.events(p.History)
}

func (w *binWriter) body(b *projectBody) {
	w.scriptInput(b.ScriptInput)
	w.segments(b.SourceScript)
	w.segments(b.TargetScript)
	w.speakers(b.Speakers)
	w.retranslation(b.Pending)
	w.events(b.History)
}

// A nil slice and an empty one differ in JSON (null and []); count+1 keeps
// the difference (0 is nil).
func (w *binWriter) count(n int, isNil bool) {
	if isNil {
		w.uint(0)
		return
	}
	w.uint(uint64(n) + 1)
}

func (w *binWriter) segments(s []sim.Segment) {
	w.count(len(s), s == nil)
	for i := range s {
		w.int(s[i].StartMS)
		w.int(s[i].EndMS)
		w.str(s[i].Text)
		w.int(int64(s[i].SpeakerID))
	}
}

// scriptInput starts with 0 for nil, 1 for an input without a glossary (the
// form earlier dubsims wrote), 2 for one with a glossary after the rest.
func (w *binWriter) scriptInput(in *sim.ScriptInput) {
	switch {
	case in == nil:
		w.b = append(w.b, 0)
		return
	case in.Glossary == nil:
		w.b = append(w.b, 1)
	default:
		w.b = append(w.b, 2)
	}
	w.segments(in.SourceScript)
	w.count(len(in.Utterances), in.Utterances == nil)
	for _, u := range in.Utterances {
		w.str(u)
	}
	if in.Glossary != nil {
		w.count(len(in.Glossary), false)
		for _, g := range in.Glossary {
			w.str(g.Source)
			w.str(g.Target)
		}
	}
}

func (w *binWriter) speakers(s []sim.Speaker) {
	w.count(len(s), s == nil)
	for i := range s {
		w.int(int64(s[i].SpeakerID))
		w.str(s[i].Style)
		w.str(s[i].VoiceKey)
	}
}

func (w *binWriter) retranslation(rt *sim.Retranslation) {
	w.bool(rt != nil)
	if rt == nil {
		return
	}
	w.segments(rt.TargetScript)
	w.speakers(rt.TargetSpeakers)
	w.str(rt.MixingMode)
	w.str(rt.TTSVolume)
	w.bool(rt.UseFixedTimings)
}

func (w *binWriter) events(e []sim.Event) {
	w.count(len(e), e == nil)
	for i := range e {
		w.time(e[i].At)
		w.str(e[i].Kind)
		w.str(e[i].Message)
		w.time(e[i].EstimatedCompletion)
	}
}

func (w *binWriter) account(a *sim.Account) {
	w.str(a.APIKey)
	w.str(a.Name)
	w.str(string(a.Plan))
	w.int(a.BalanceMinutes)
	w.int(a.InitialBalance)
	w.bool(a.RetranslationEnabled)
	w.bool(a.CloningEnabled)
	w.bool(a.Fixture)
	w.time(a.CreatedAt)
	w.str(a.UserID)
	w.bool(a.Storage != nil)
	if s := a.Storage; s != nil {
		w.str(s.AccessKeyID)
		w.str(s.SecretAccessKey)
		w.str(s.Region)
		w.count(len(s.Buckets), s.Buckets == nil)
		for _, b := range s.Buckets {
			w.str(b)
		}
	}
	w.bool(a.RateLimit != nil)
	if rl := a.RateLimit; rl != nil {
		w.int(int64(rl.PerMinute))
		w.int(int64(rl.PerDay))
	}
}

// binReader decodes; after the first error every read returns a zero value
// and err keeps that error.
type binReader struct {
	b   []byte
	err error
}

func (r *binReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", errCorrupt, fmt.Sprintf(format, args...))
	}
	r.b = nil
}

func (r *binReader) int() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *binReader) uint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("bad uvarint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// small reads an int that must fit an int.
func (r *binReader) small() int {
	v := r.int()
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.fail("integer %d out of range", v)
		return 0
	}
	return int(v)
}

func (r *binReader) take(n uint64) []byte {
	if n > uint64(len(r.b)) {
		r.fail("length %d beyond the record", n)
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

func (r *binReader) str() string { return string(r.take(r.uint())) }

func (r *binReader) bool() bool {
	switch b := r.take(1); {
	case b == nil:
		return false
	case b[0] > 1:
		r.fail("bad boolean %d", b[0])
		return false
	default:
		return b[0] == 1
	}
}

func (r *binReader) time() time.Time {
	n := r.take(1)
	if n == nil || n[0] == 0 {
		return time.Time{}
	}
	var t time.Time
	if err := t.UnmarshalBinary(r.take(uint64(n[0]))); err != nil && r.err == nil {
		r.fail("bad time: %v", err)
	}
	return t
}

// count reads a slice count written by binWriter.count; each element takes
// at least min bytes, so a count the record cannot hold is refused before
// anything is allocated.
func (r *binReader) count(min int) (n int, isNil bool) {
	c := r.uint()
	if c == 0 {
		return 0, true
	}
	if c-1 > uint64(len(r.b)/min) {
		r.fail("count %d beyond the record", c-1)
		return 0, false
	}
	return int(c - 1), false
}

func (r *binReader) project(p *sim.Project) {
	p.ID = r.str()
	p.APIKey = r.str()
	p.Name = r.str()
	p.SourceLang = r.str()
	p.TargetLang = r.str()
	p.SourceVideoURL = r.str()
	p.MixingMode = r.str()
	p.TTSVolume = r.str()
	p.UseSoundalike = r.bool()
	p.UseEmotionalTransfer = r.bool()
	p.UseFixedTimings = r.bool()
	p.HasGlossary = r.bool()
	p.DurationMS = r.int()
	p.DurationSource = r.str()
	p.CostMinutes = r.int()
	p.Refunded = r.bool()
	p.Status = sim.ProjectStatus(r.str())
	p.CreatedAt = r.time()
	p.DueAt = r.time()
	p.CompletedAt = r.time()
	p.ErrorMessage = r.str()
	p.Outcome.Error = r.bool()
	p.Outcome.Message = r.str()
	p.TranslationsCount = r.small()
	p.OutputGen = r.small()
	p.ScriptsPending = r.bool()
	p.ScriptInput = r.scriptInput()
	p.SourceScript = r.segments()
	p.TargetScript = r.segments()
	p.Speakers = r.speakers()
	p.Pending = r.retranslation()
	p.History = r.events()
}

func (r *binReader) body(b *projectBody) {
	b.ScriptInput = r.scriptInput()
	b.SourceScript = r.segments()
	b.TargetScript = r.segments()
	b.Speakers = r.speakers()
	b.Pending = r.retranslation()
	b.History = r.events()
}

func (r *binReader) segments() []sim.Segment {
	n, isNil := r.count(4)
	if isNil || r.err != nil {
		return nil
	}
	s := make([]sim.Segment, n)
	for i := range s {
		s[i] = sim.Segment{StartMS: r.int(), EndMS: r.int(), Text: r.str(), SpeakerID: r.small()}
	}
	return s
}

func (r *binReader) scriptInput() *sim.ScriptInput {
	tag := r.take(1)
	switch {
	case tag == nil || tag[0] == 0:
		return nil
	case tag[0] > 2:
		r.fail("bad script input tag %d", tag[0])
		return nil
	}
	in := &sim.ScriptInput{SourceScript: r.segments()}
	if n, isNil := r.count(1); !isNil && r.err == nil {
		in.Utterances = make([]string, n)
		for i := range in.Utterances {
			in.Utterances[i] = r.str()
		}
	}
	if tag[0] == 2 {
		if n, isNil := r.count(2); !isNil && r.err == nil {
			in.Glossary = make([]sim.GlossaryTerm, n)
			for i := range in.Glossary {
				in.Glossary[i] = sim.GlossaryTerm{Source: r.str(), Target: r.str()}
			}
		}
	}
	return in
}

func (r *binReader) speakers() []sim.Speaker {
	n, isNil := r.count(3)
	if isNil || r.err != nil {
		return nil
	}
	s := make([]sim.Speaker, n)
	for i := range s {
		s[i] = sim.Speaker{SpeakerID: r.small(), Style: r.str(), VoiceKey: r.str()}
	}
	return s
}

func (r *binReader) retranslation() *sim.Retranslation {
	if !r.bool() {
		return nil
	}
	return &sim.Retranslation{
		TargetScript: r.segments(), TargetSpeakers: r.speakers(),
		MixingMode: r.str(), TTSVolume: r.str(), UseFixedTimings: r.bool(),
	}
}

func (r *binReader) events() []sim.Event {
	n, isNil := r.count(4)
	if isNil || r.err != nil {
		return nil
	}
	e := make([]sim.Event, n)
	for i := range e {
		e[i] = sim.Event{At: r.time(), Kind: r.str(), Message: r.str(), EstimatedCompletion: r.time()}
	}
	return e
}

func (r *binReader) account(a *sim.Account) {
	a.APIKey = r.str()
	a.Name = r.str()
	a.Plan = sim.Plan(r.str())
	a.BalanceMinutes = r.int()
	a.InitialBalance = r.int()
	a.RetranslationEnabled = r.bool()
	a.CloningEnabled = r.bool()
	a.Fixture = r.bool()
	a.CreatedAt = r.time()
	a.UserID = r.str()
	if r.bool() {
		s := &sim.StorageCredentials{AccessKeyID: r.str(), SecretAccessKey: r.str(), Region: r.str()}
		if n, isNil := r.count(1); !isNil && r.err == nil {
			s.Buckets = make([]string, n)
			for i := range s.Buckets {
				s.Buckets[i] = r.str()
			}
		}
		a.Storage = s
	}
	if r.bool() {
		a.RateLimit = &sim.RateLimit{PerMinute: r.small(), PerDay: r.small()}
	}
}
