package store

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// The records every request reads (accounts, project heads and bodies) are
// stored in a compact binary form, after binTag: encoding/json spent a third
// of a Get Project's time decoding the head.
//
// The layout is the fields in declaration order: integers as varints,
// strings with a uvarint length, booleans as one byte, times as a length
// byte and time.Time's binary form (0 for the zero time), slices as a
// uvarint count and their elements, pointers as a presence byte and the
// value. One function per type names each field once, for both directions
// (codec.reading). TestCodecCoversEveryField fails when a field is added to
// one of these types and not here.
const binTag = 0xB1

// errCorrupt is wrapped by every decoding error of a record.
// It is sim.ErrDamaged to the engine, which then skips the record.
var errCorrupt error = corruptError{}

// errNotBinary is a binary record type's answer to a value without binTag.
var errNotBinary = fmt.Errorf("%w: not a binary record", errCorrupt)

type corruptError struct{}

func (corruptError) Error() string        { return "store: corrupt value" }
func (corruptError) Is(target error) bool { return target == sim.ErrDamaged }

// record codes v, a pointer to a record of a binary type; false for the
// other types.
func (c *codec) record(v any) bool {
	switch x := v.(type) {
	case *sim.Project:
		c.project(x)
	case *projectBody:
		c.body(x)
	case *sim.Account:
		c.account(x)
	default:
		return false
	}
	return true
}

// codec writes values to b, or, reading, decodes them from b into the
// values. After the first error every read fails and err keeps that error.
// Writing never modifies the values (the caller may share them).
type codec struct {
	b       []byte
	reading bool
	err     error
}

func (c *codec) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: %s", errCorrupt, fmt.Sprintf(format, args...))
	}
	c.b = nil
}

func (c *codec) int(v *int64) {
	if !c.reading {
		c.b = binary.AppendVarint(c.b, *v)
		return
	}
	x, n := binary.Varint(c.b)
	if n <= 0 {
		c.fail("bad varint")
		return
	}
	c.b, *v = c.b[n:], x
}

func (c *codec) uint(v *uint64) {
	if !c.reading {
		c.b = binary.AppendUvarint(c.b, *v)
		return
	}
	x, n := binary.Uvarint(c.b)
	if n <= 0 {
		c.fail("bad uvarint")
		return
	}
	c.b, *v = c.b[n:], x
}

// small codes an int that must fit an int32.
func (c *codec) small(v *int) {
	x := int64(*v)
	c.int(&x)
	switch {
	case !c.reading || c.err != nil:
	case x < math.MinInt32 || x > math.MaxInt32:
		c.fail("integer %d out of range", x)
	default:
		*v = int(x)
	}
}

// take returns the next n bytes of a record being read.
func (c *codec) take(n uint64) []byte {
	if n > uint64(len(c.b)) {
		c.fail("length %d beyond the record", n)
		return nil
	}
	s := c.b[:n]
	c.b = c.b[n:]
	return s
}

func (c *codec) str(s *string) {
	n := uint64(len(*s))
	c.uint(&n)
	switch {
	case !c.reading:
		c.b = append(c.b, *s...)
	case c.err == nil:
		if b := c.take(n); b != nil {
			*s = string(b)
		}
	}
}

func (c *codec) bool(v *bool) {
	if !c.reading {
		b := byte(0)
		if *v {
			b = 1
		}
		c.b = append(c.b, b)
		return
	}
	switch b := c.take(1); {
	case b == nil:
	case b[0] > 1:
		c.fail("bad boolean %d", b[0])
	default:
		*v = b[0] == 1
	}
}

func (c *codec) time(t *time.Time) {
	if !c.reading {
		if t.IsZero() {
			c.b = append(c.b, 0)
			return
		}
		n := len(c.b)
		c.b = append(c.b, 0)
		var err error
		if c.b, err = t.AppendBinary(c.b); err != nil {
			// Only an offset that is not whole minutes fails; keep the instant.
			c.b, _ = t.UTC().AppendBinary(c.b[:n+1])
		}
		c.b[n] = byte(len(c.b) - n - 1)
		return
	}
	n := c.take(1)
	if n == nil || n[0] == 0 {
		*t = time.Time{}
		return
	}
	if err := t.UnmarshalBinary(c.take(uint64(n[0]))); err != nil {
		c.fail("bad time: %v", err)
	}
}

// slice codes a count, 0 for nil and else the length + 1 (JSON tells null
// from []), then the elements. Each element takes at least min bytes, so a
// count the record cannot hold is refused before anything is allocated.
func slice[T any](c *codec, s *[]T, min int, elem func(*codec, *T)) {
	var n uint64
	if *s != nil {
		n = uint64(len(*s)) + 1
	}
	c.uint(&n)
	if c.reading {
		switch {
		case c.err != nil || n == 0:
			*s = nil
			return
		case n-1 > uint64(len(c.b)/min):
			c.fail("count %d beyond the record", n-1)
			return
		}
		*s = make([]T, n-1)
	}
	for i := range *s {
		elem(c, &(*s)[i])
	}
}

func pointer[T any](c *codec, p **T, elem func(*codec, *T)) {
	present := *p != nil
	c.bool(&present)
	if c.reading {
		*p = nil
		if !present || c.err != nil {
			return
		}
		*p = new(T)
	}
	if present {
		elem(c, *p)
	}
}

func (c *codec) project(p *sim.Project) {
	c.str(&p.ID)
	c.str(&p.APIKey)
	c.str(&p.Name)
	c.str(&p.SourceLang)
	c.str(&p.TargetLang)
	c.str(&p.SourceVideoURL)
	c.str(&p.MixingMode)
	c.str(&p.TTSVolume)
	c.bool(&p.UseSoundalike)
	c.bool(&p.UseEmotionalTransfer)
	c.bool(&p.UseFixedTimings)
	c.bool(&p.HasGlossary)
	c.int(&p.DurationMS)
	c.str(&p.DurationSource)
	c.int(&p.CostMinutes)
	c.bool(&p.Refunded)
	c.str((*string)(&p.Status))
	c.time(&p.CreatedAt)
	c.time(&p.DueAt)
	c.time(&p.CompletedAt)
	c.str(&p.ErrorMessage)
	c.bool(&p.Outcome.Error)
	c.str(&p.Outcome.Message)
	c.small(&p.TranslationsCount)
	c.small(&p.OutputGen)
	c.bool(&p.ScriptsPending)
	pointer(c, &p.ScriptInput, (*codec).scriptInput)
	slice(c, &p.SourceScript, 4, (*codec).segment)
	slice(c, &p.TargetScript, 4, (*codec).segment)
	slice(c, &p.Speakers, 3, (*codec).speaker)
	pointer(c, &p.Pending, (*codec).retranslation)
	slice(c, &p.History, 4, (*codec).event)
}

func (c *codec) body(b *projectBody) {
	pointer(c, &b.ScriptInput, (*codec).scriptInput)
	slice(c, &b.SourceScript, 4, (*codec).segment)
	slice(c, &b.TargetScript, 4, (*codec).segment)
	slice(c, &b.Speakers, 3, (*codec).speaker)
	pointer(c, &b.Pending, (*codec).retranslation)
}

func (c *codec) segment(s *sim.Segment) {
	c.int(&s.StartMS)
	c.int(&s.EndMS)
	c.str(&s.Text)
	c.small(&s.SpeakerID)
}

func (c *codec) scriptInput(in *sim.ScriptInput) {
	slice(c, &in.SourceScript, 4, (*codec).segment)
	slice(c, &in.Utterances, 1, (*codec).str)
	slice(c, &in.Glossary, 2, func(c *codec, g *sim.GlossaryTerm) {
		c.str(&g.Source)
		c.str(&g.Target)
	})
}

func (c *codec) speaker(s *sim.Speaker) {
	c.small(&s.SpeakerID)
	c.str(&s.Style)
	c.str(&s.VoiceKey)
}

func (c *codec) retranslation(rt *sim.Retranslation) {
	slice(c, &rt.TargetScript, 4, (*codec).segment)
	slice(c, &rt.TargetSpeakers, 3, (*codec).speaker)
	c.str(&rt.MixingMode)
	c.str(&rt.TTSVolume)
	c.bool(&rt.UseFixedTimings)
}

func (c *codec) event(e *sim.Event) {
	c.time(&e.At)
	c.str(&e.Kind)
	c.str(&e.Message)
	c.time(&e.EstimatedCompletion)
}

func (c *codec) account(a *sim.Account) {
	c.str(&a.APIKey)
	c.str(&a.Name)
	c.str((*string)(&a.Plan))
	c.int(&a.BalanceMinutes)
	c.int(&a.InitialBalance)
	c.bool(&a.RetranslationEnabled)
	c.bool(&a.CloningEnabled)
	c.bool(&a.Fixture)
	c.time(&a.CreatedAt)
	c.str(&a.UserID)
	pointer(c, &a.Storage, func(c *codec, s *sim.StorageCredentials) {
		c.str(&s.AccessKeyID)
		c.str(&s.SecretAccessKey)
		c.str(&s.Region)
		slice(c, &s.Buckets, 1, (*codec).str)
	})
	pointer(c, &a.RateLimit, func(c *codec, rl *sim.RateLimit) {
		c.small(&rl.PerMinute)
		c.small(&rl.PerDay)
	})
}
