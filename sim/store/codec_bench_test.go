package store

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/script"
)

// BenchmarkCodec encodes and decodes the records every request reads (an
// account, a project head, the body of a ten-minute project) with the
// store's binary codec and with encoding/json (the versioned envelope every
// other record is stored in), reporting the record's size: what the codec
// saves.
//
//	go test -run XXX -bench Codec -benchmem ./sim/store
func BenchmarkCodec(b *testing.B) {
	t0 := time.Date(2026, 2, 4, 12, 0, 0, 0, time.UTC)
	ids := sim.NewIDs(7)
	r := sim.NewRand(42)
	source := script.AssignSpeakers(r, script.Synthesize(r, 10*time.Minute), 3)
	p := sim.Project{
		ID: ids.PlatformProjectID(1), APIKey: "dubsim-enterprise", Name: "Ten minutes", SourceLang: "en", TargetLang: "fr-FR",
		SourceVideoURL: "https://example.com/video.mp4", MixingMode: sim.DefaultMixingMode, TTSVolume: sim.DefaultTTSVolume,
		DurationMS: 600_000, DurationSource: sim.OriginRule, CostMinutes: 10, Status: sim.StatusReady,
		CreatedAt: t0, CompletedAt: t0.Add(6 * time.Minute), OutputGen: 1,
		SourceScript: source, TargetScript: script.TargetScript(ids, source, "en", "fr-FR", nil),
		Speakers: []sim.Speaker{{SpeakerID: 1, Style: sim.StyleFeminine, VoiceKey: "f4fb50:fr-FR-DeniseNeural"},
			{SpeakerID: 2, Style: sim.StyleMasculine, VoiceKey: "f4fb50:fr-FR-AlainNeural"}, {SpeakerID: 3, Style: sim.StyleMasculine, VoiceKey: "f4fb50:fr-FR-HenriNeural"}},
		History: []sim.Event{{At: t0, Kind: sim.EventCreated}, {At: t0.Add(6 * time.Minute), Kind: sim.EventCompleted}},
	}
	head, body := split(p)
	acct := sim.Account{APIKey: "dsk_" + strconv.Itoa(12), Name: "Account", Plan: sim.PlanPro,
		BalanceMinutes: 100, InitialBalance: 100, CloningEnabled: true, CreatedAt: t0}
	bench(b, "account", acct)
	bench(b, "head", head)
	bench(b, "body10min", body)
}

func bench[T any](b *testing.B, name string, v T) {
	codecs := []struct {
		name   string
		encode func(any) ([]byte, error)
		decode func([]byte, any) error
	}{
		{"binary", encode, decode},
		{"json", func(v any) ([]byte, error) { return json.Marshal(envelope{V: valueVersion, D: v}) },
			func(raw []byte, v any) error { return json.Unmarshal(raw, &envelope{D: v}) }},
	}
	for _, c := range codecs {
		raw, err := c.encode(&v)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/"+c.name+"/encode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.encode(&v); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(raw)), "bytes")
		})
		b.Run(name+"/"+c.name+"/decode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var w T
				if err := c.decode(raw, &w); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
