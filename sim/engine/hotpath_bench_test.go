package engine_test

// Benchmarks of the engine's hot paths: the transition sweep over 100,000
// due projects, and Get Project whatever the number of projects stored.
//
//	go test -run XXX -bench . -benchmem ./sim/statemachine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/engine"
	"github.com/dubsim/dubsim/sim/script"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/require"
)

var bt0 = time.Date(2026, 2, 4, 12, 0, 0, 0, time.UTC)

const (
	fillBatch = 10_000 // projects per transaction while filling
	benchKey  = "dubsim-enterprise"
)

var benchIDs = sim.NewIDs(11)

// benchProject is a project of a short video with a small script, in
// progress and due at due (or ready when due is zero).
func benchProject(i int, due time.Time) sim.Project {
	id := benchIDs.PlatformProjectID(uint64(i))
	segs := []sim.Segment{{StartMS: 100, EndMS: 2400, Text: "Hello there, how are you today?", SpeakerID: 1},
		{StartMS: 2900, EndMS: 5100, Text: "Fine, thank you, and you?", SpeakerID: 1}}
	p := sim.Project{
		ID: id, APIKey: benchKey, Name: "Project " + id, SourceLang: "en", TargetLang: "fr-FR",
		SourceVideoURL: "https://cdn.test/" + id + ".mp4", MixingMode: sim.DefaultMixingMode, TTSVolume: sim.DefaultTTSVolume,
		DurationMS: 6000, DurationSource: sim.OriginDerived, CostMinutes: 1, Status: sim.StatusInProgress,
		CreatedAt: bt0.Add(-time.Hour), DueAt: due, SourceScript: segs, TargetScript: segs,
		Speakers: []sim.Speaker{{SpeakerID: 1, Style: sim.StyleFeminine, VoiceKey: "f4fb50:fr-FR-DeniseNeural"}},
		History:  []sim.Event{{At: bt0.Add(-time.Hour), Kind: sim.EventCreated}},
	}
	if i%10 == 0 { // one in ten fails: a refund to apply too
		p.Outcome = sim.Outcome{Error: true, Message: "No speech was detected in the source video"}
	}
	if due.IsZero() {
		p.Status, p.CompletedAt, p.OutputGen = sim.StatusReady, bt0.Add(-time.Minute), 1
	}
	return p
}

// benchEngine opens a store at path and starts an engine over it, with a
// clock frozen at bt0.
func benchEngine(b *testing.B, path string) (*engine.Engine, *store.Store) {
	b.Helper()
	st, err := store.Open(path, store.NoSync())
	require.NoError(b, err)
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(b, err)
	e := engine.New(engine.Config{Store: st, Clock: sim.NewSimClock(func() time.Time { return bt0 }, 0),
		IDs: benchIDs, Timing: sim.DefaultTiming, Fixtures: fx})
	require.NoError(b, e.Start(context.Background()))
	return e, st
}

// fill stores n projects straight into the store, in large transactions.
func fill(b *testing.B, st *store.Store, n int, mk func(i int) sim.Project) {
	b.Helper()
	for lo := 0; lo < n; lo += fillBatch {
		require.NoError(b, st.Update(context.Background(), func(tx sim.Tx) error {
			for i := lo; i < min(n, lo+fillBatch); i++ {
				if err := tx.PutProject(mk(i)); err != nil {
					return err
				}
			}
			return nil
		}))
	}
}

// BenchmarkSweep100k measures one Tick that applies 100,000 due
// transitions (one in ten a failure with its refund), in due order.
func BenchmarkSweep100k(b *testing.B) {
	const n = 100_000
	dir := b.TempDir()
	b.ReportAllocs()
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		path := filepath.Join(dir, fmt.Sprintf("sweep-%d.db", i))
		e, st := benchEngine(b, path)
		// Due times spread over the last day, all at or before now.
		fill(b, st, n, func(i int) sim.Project { return benchProject(i, bt0.Add(-time.Duration(i%86400)*time.Second)) })
		began := time.Now()
		b.StartTimer()
		applied, err := e.Clock.Tick(context.Background())
		b.StopTimer()
		elapsed += time.Since(began)
		require.NoError(b, err)
		require.Equal(b, n, applied)
		require.NoError(b, st.Close())
		require.NoError(b, os.Remove(path))
		b.StartTimer()
	}
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(n*b.N), "ns/transition")
}

// BenchmarkGetProjectFlat measures Engine.Projects.Project with 1,000 and with
// 100,000 projects stored: the latency must not depend on the number of
// projects. in_progress reads the head only; ready also reads the scripts
// of a ten-minute project.
func BenchmarkGetProjectFlat(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("projects=%d", n), func(b *testing.B) {
			e, st := benchEngine(b, filepath.Join(b.TempDir(), "flat.db"))
			b.Cleanup(func() { _ = st.Close() })
			fill(b, st, n, func(i int) sim.Project { return benchProject(i, time.Time{}) })

			r := sim.NewRand(1)
			source := script.AssignSpeakers(r, script.Synthesize(r, 10*time.Minute), 2)
			ready := benchProject(n+1, time.Time{})
			ready.DurationMS, ready.SourceScript, ready.TargetScript = 600_000, source, script.TargetScript(benchIDs, source, "en", "fr-FR", nil)
			running := benchProject(n+2, bt0.Add(time.Hour))
			running.Outcome = sim.Outcome{}
			require.NoError(b, st.Update(context.Background(), func(tx sim.Tx) error {
				if err := tx.PutProject(ready); err != nil {
					return err
				}
				return tx.PutProject(running)
			}))

			for _, c := range []struct {
				name string
				p    sim.Project
			}{{"in_progress", running}, {"ready", ready}} {
				b.Run(c.name, func(b *testing.B) {
					ctx := context.Background()
					b.ReportAllocs()
					for b.Loop() {
						p, err := e.Projects.Project(ctx, benchKey, c.p.ID)
						if err != nil || p.Status != c.p.Status {
							b.Fatal(err, p.Status)
						}
					}
				})
			}
		})
	}
}
