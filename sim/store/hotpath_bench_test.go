package store_test

// Benchmarks of the store's hot paths: reading and writing a ten-minute
// project among 100,000, and reading an account.
//
//	go test -run XXX -bench . -benchmem ./sim/store

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/script"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/require"
)

var bt0 = time.Date(2026, 2, 4, 12, 0, 0, 0, time.UTC)

const (
	benchProjects = 100_000
	fillBatch     = 10_000 // projects per transaction while filling
)

// benchIDs gives project ids as the engine does (9 digits, scattered), so
// the keys land all over the B+tree like real ones.
var benchIDs = sim.NewIDs(7)

func openBench(b *testing.B) *store.Store {
	b.Helper()
	s, err := store.Open(filepath.Join(b.TempDir(), "bench.db"), store.NoSync())
	require.NoError(b, err)
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// smallProject is a background project: ready, a short script.
func smallProject(i int) sim.Project {
	id := benchIDs.PlatformProjectID(uint64(i))
	segs := []sim.Segment{{StartMS: 100, EndMS: 2400, Text: "Hello there, how are you today?", SpeakerID: 1},
		{StartMS: 2900, EndMS: 5100, Text: "Fine, thank you, and you?", SpeakerID: 2}}
	return sim.Project{
		ID: id, APIKey: "key-" + strconv.Itoa(i%50), Name: "Project " + id, SourceLang: "en", TargetLang: "fr-FR",
		SourceVideoURL: "https://cdn.test/" + id + ".mp4", MixingMode: sim.DefaultMixingMode, TTSVolume: sim.DefaultTTSVolume,
		DurationMS: 6000, DurationSource: sim.OriginDerived, CostMinutes: 1, Status: sim.StatusReady,
		CreatedAt: bt0, CompletedAt: bt0.Add(time.Minute), OutputGen: 1,
		SourceScript: segs, TargetScript: segs,
		Speakers: []sim.Speaker{{SpeakerID: 1, Style: sim.StyleFeminine, VoiceKey: "f4fb50:fr-FR-DeniseNeural"}, {SpeakerID: 2, Style: sim.StyleMasculine, VoiceKey: "f4fb50:fr-FR-AlainNeural"}},
		History:  []sim.Event{{At: bt0, Kind: sim.EventCreated}, {At: bt0.Add(time.Minute), Kind: sim.EventCompleted}},
	}
}

// tenMinuteProject is a ready project of a ten-minute video, with its
// scripts as the engine builds them (about 130 segments each).
func tenMinuteProject(id string) sim.Project {
	r := sim.NewRand(42)
	source := script.AssignSpeakers(r, script.Synthesize(r, 10*time.Minute), 3)
	return sim.Project{
		ID: id, APIKey: "dubsim-enterprise", Name: "Ten minutes", SourceLang: "en", TargetLang: "fr-FR",
		SourceVideoURL: "https://example.com/video.mp4", MixingMode: sim.DefaultMixingMode, TTSVolume: sim.DefaultTTSVolume,
		DurationMS: 600_000, DurationSource: sim.OriginRule, CostMinutes: 10, Status: sim.StatusReady,
		CreatedAt: bt0, CompletedAt: bt0.Add(6 * time.Minute), OutputGen: 1,
		SourceScript: source, TargetScript: script.TargetScript(benchIDs, source, "en", "fr-FR", nil),
		Speakers: []sim.Speaker{{SpeakerID: 1, Style: sim.StyleFeminine, VoiceKey: "f4fb50:fr-FR-DeniseNeural"},
			{SpeakerID: 2, Style: sim.StyleMasculine, VoiceKey: "f4fb50:fr-FR-AlainNeural"}, {SpeakerID: 3, Style: sim.StyleMasculine, VoiceKey: "f4fb50:fr-FR-HenriNeural"}},
		History: []sim.Event{{At: bt0, Kind: sim.EventCreated}, {At: bt0.Add(6 * time.Minute), Kind: sim.EventCompleted}},
	}
}

// fillProjects stores n background projects in large transactions.
func fillProjects(b *testing.B, s *store.Store, n int) {
	b.Helper()
	for lo := 0; lo < n; lo += fillBatch {
		require.NoError(b, s.Update(context.Background(), func(tx sim.Tx) error {
			for i := lo; i < min(n, lo+fillBatch); i++ {
				if err := tx.PutProject(smallProject(i)); err != nil {
					return err
				}
			}
			return nil
		}))
	}
}

// storeWithTenMinuteProject is a store of 100,000 projects, one of them a
// ten-minute project, whose id it returns.
func storeWithTenMinuteProject(b *testing.B) (*store.Store, sim.Project) {
	b.Helper()
	s := openBench(b)
	fillProjects(b, s, benchProjects)
	p := tenMinuteProject(benchIDs.PlatformProjectID(benchProjects + 1))
	require.NoError(b, s.Update(context.Background(), func(tx sim.Tx) error { return tx.PutProject(p) }))
	return s, p
}

// BenchmarkProjectRead reads the head (what Get Project needs while in
// progress) and the whole project (ready: with its scripts) of a ten-minute
// project in a store of 100,000 projects.
func BenchmarkProjectRead(b *testing.B) {
	s, p := storeWithTenMinuteProject(b)
	ctx := context.Background()
	b.Run("ProjectHead", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.View(ctx, func(tx sim.Tx) error {
				h, err := tx.ProjectHead(p.ID)
				if err == nil && h.CostMinutes != 10 {
					b.Fatal("wrong project")
				}
				return err
			}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Project", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.View(ctx, func(tx sim.Tx) error {
				q, err := tx.Project(p.ID)
				if err == nil && len(q.TargetScript) != len(p.TargetScript) {
					b.Fatal("wrong project")
				}
				return err
			}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkProjectWrite stores a project again (one write transaction with
// PutProject: head, body and due index) in a store of 100,000 projects: the
// ten-minute project, and a small one.
func BenchmarkProjectWrite(b *testing.B) {
	s, big := storeWithTenMinuteProject(b)
	small := smallProject(benchProjects / 2)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		p    sim.Project
	}{{"10min", big}, {"small", small}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			p := c.p
			for b.Loop() {
				p.TranslationsCount++
				if err := s.Update(ctx, func(tx sim.Tx) error { return tx.PutProject(p) }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAccountRead reads an account (what authentication does on every
// request, without a cache) among 1,000.
func BenchmarkAccountRead(b *testing.B) {
	s := openBench(b)
	const accounts = 1000
	require.NoError(b, s.Update(context.Background(), func(tx sim.Tx) error {
		for i := 0; i < accounts; i++ {
			if err := tx.Accounts().Put(sim.Account{APIKey: "dsk_" + strconv.Itoa(i), Name: "Account", Plan: sim.PlanPro,
				BalanceMinutes: 100, InitialBalance: 100, CloningEnabled: true, CreatedAt: bt0}); err != nil {
				return err
			}
		}
		return nil
	}))
	keys := make([]string, accounts)
	for i := range keys {
		keys[i] = "dsk_" + strconv.Itoa(i)
	}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		key := keys[i%accounts]
		if err := s.View(ctx, func(tx sim.Tx) error {
			a, err := tx.Accounts().Get(key)
			if err == nil && a.APIKey != key {
				b.Fatal("wrong account")
			}
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}
