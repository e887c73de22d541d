// Command seed fills a dubsim data file with many platform projects, fast,
// for the benchmark of bench/run.
//
//	go run ./bench/seed -data FILE -n 100000 -key dubsim-enterprise [-ids IDS_FILE]
//
// Creating projects through the API or Engine.Projects.CreateProject costs one
// committed (fsynced) transaction per project. Instead seed writes through
// the store directly, with fsync off, in a few large transactions; each
// project is built the way the engine builds one (synthetic source script,
// pseudo translation, catalogue voices, a charge of whole minutes, the
// id from the "platform_projects" sequence), and most are then completed
// with statemachine.Next at their due time, so the records are those dubsim
// itself would hold:
//
//   - 88% ready (created up to 30 days ago; scripts and speakers),
//   - 10% in progress (created in the last minute; due at least an hour
//     after the seed, so that a benchmark reading them never settles one),
//   - 2% error (refunded).
//
// Sources are short (15 to 90 seconds), so scripts hold a few segments. The
// account is stored with its fixture settings (or as an enterprise account
// when the key is not a fixture), its balance that of the fixture and its
// initial balance that plus every minute charged, so balance = initial -
// charges. The clock is not written: dubsim starts it at real time.
//
// -ids writes a sample of the project ids (one per line, spread over the
// whole sequence) for the load generator.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/engine"
	"github.com/dubsim/dubsim/sim/statemachine"
	"github.com/dubsim/dubsim/sim/store"
)

const seqProjects = "platform_projects" // the engine's sequence of project ids

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
}

func run() error {
	data := flag.String("data", "", "bbolt data file to create (must not exist unless -replace)")
	n := flag.Int("n", 100_000, "number of projects")
	key := flag.String("key", "dubsim-enterprise", "API key owning the projects")
	seed := flag.Uint64("seed", 0, "id seed: the --seed dubsim will run with")
	idsFile := flag.String("ids", "", "write a sample of project ids to this file")
	sample := flag.Int("sample", 1000, "number of ids in the -ids sample")
	batch := flag.Int("batch", 10_000, "projects per transaction")
	replace := flag.Bool("replace", false, "remove an existing data file first")
	flag.Parse()
	if *data == "" || *n < 0 || *batch < 1 {
		flag.Usage()
		return errors.New("-data is required; -n >= 0, -batch >= 1")
	}
	if _, err := os.Stat(*data); err == nil {
		if !*replace {
			return fmt.Errorf("%s exists (use -replace)", *data)
		}
		if err := os.Remove(*data); err != nil {
			return err
		}
	}

	fx, err := fixtures.Load(fixtures.FS)
	if err != nil {
		return err
	}
	start := time.Now()
	st, err := store.Open(*data, store.NoSync(), store.KeySeed(*seed))
	if err != nil {
		return err
	}
	defer st.Close()

	b := &builder{ids: sim.NewIDs(*seed), cat: fx.Catalog, timing: sim.DefaultTiming, key: *key, now: time.Now().UTC()}
	ctx := context.Background()
	var charged int64
	var sampleIDs []string
	step := max(1, *n/max(1, *sample))

	// The next batch is built while the previous one is written. The file is
	// new, so the sequence starts at 1; each transaction still takes its
	// numbers from the store's sequence and checks they are the ones built.
	type batchOf struct {
		first    int // index of the batch's first project in the whole run
		projects []sim.Project
	}
	batches := make(chan batchOf, 1)
	go func() {
		defer close(batches)
		for done := 0; done < *n; done += *batch {
			m := min(*batch, *n-done)
			seqs := make([]uint64, m)
			for i := range seqs {
				seqs[i] = uint64(done + i + 1)
			}
			batches <- batchOf{first: done, projects: b.buildAll(seqs)}
		}
	}()
	for bt := range batches {
		projects := bt.projects
		// Keys in order: bbolt appends instead of inserting in the middle.
		order := make([]int, len(projects))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(x, y int) int { return strings.Compare(projects[x].ID, projects[y].ID) })
		err := st.Update(ctx, func(tx sim.Tx) error {
			for i := range projects {
				s, err := tx.NextSequence(seqProjects)
				if err != nil {
					return err
				}
				if want := uint64(bt.first + i + 1); s != want {
					return fmt.Errorf("sequence %q at %d, want %d: the store was not new", seqProjects, s, want)
				}
			}
			for _, i := range order {
				if err := tx.PutProject(projects[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			for range batches { // let the builder finish
			}
			return err
		}
		for i, p := range projects {
			if !p.Refunded {
				charged += p.CostMinutes
			}
			if (bt.first+i)%step == 0 && len(sampleIDs) < *sample {
				sampleIDs = append(sampleIDs, p.ID)
			}
		}
	}

	acct := sim.Account{APIKey: *key, Name: "Benchmark account", Plan: sim.PlanEnterprise, BalanceMinutes: 6000,
		RetranslationEnabled: true, CloningEnabled: true, CreatedAt: b.now.Add(-31 * 24 * time.Hour)}
	for _, spec := range fx.Accounts {
		if spec.APIKey == *key {
			acct.Name, acct.Plan, acct.BalanceMinutes = spec.Name, spec.Plan, spec.BalanceMinutes
			acct.RetranslationEnabled, acct.CloningEnabled, acct.Fixture = spec.RetranslationEnabled, spec.CloningEnabled, true
		}
	}
	acct.InitialBalance = acct.BalanceMinutes + charged
	if err := st.Update(ctx, func(tx sim.Tx) error { return tx.Accounts().Put(acct) }); err != nil {
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	if *idsFile != "" {
		if err := writeLines(*idsFile, sampleIDs); err != nil {
			return err
		}
	}
	size := int64(0)
	if fi, err := os.Stat(*data); err == nil {
		size = fi.Size()
	}
	fmt.Printf("seeded %d projects for %s in %s: %s (%.1f MB), %d minutes charged\n",
		*n, *key, time.Since(start).Round(time.Millisecond), *data, float64(size)/1e6, charged)
	return nil
}

func writeLines(path string, lines []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

type builder struct {
	ids    *sim.IDs
	cat    *sim.Catalog
	timing sim.Timing
	key    string
	now    time.Time
}

// buildAll builds the projects of the given sequence numbers on every core.
func (b *builder) buildAll(seqs []uint64) []sim.Project {
	out := make([]sim.Project, len(seqs))
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(seqs); i += workers {
				out[i] = b.build(seqs[i])
			}
		})
	}
	wg.Wait()
	return out
}

func ceilSecond(t time.Time) time.Time {
	if u := t.Truncate(time.Second); !u.Equal(t) {
		return u.Add(time.Second)
	}
	return t
}

// build makes the project of sequence number seq as the engine would have
// created it, then moves it to its final status.
func (b *builder) build(seq uint64) sim.Project {
	id := b.ids.PlatformProjectID(seq - 1)
	url := fmt.Sprintf("https://cdn.example.com/bench/clip-%d.mp4", seq)
	r := sim.NewRand(b.ids.Hash("project", id, url))
	duration := time.Duration(r.Range(15, 90)) * time.Second
	target := b.cat.TargetLangs[r.Intn(len(b.cat.TargetLangs))]
	sourceLang := "en"
	kind := r.Intn(100) // < 88 ready, < 98 in progress, else error

	var created time.Time
	switch {
	case kind < 88 || kind >= 98:
		created = b.now.Add(-time.Duration(r.Range(int64(time.Hour), int64(30*24*time.Hour))))
	default:
		created = b.now.Add(-time.Duration(r.Range(0, int64(time.Minute))))
	}

	p := sim.Project{
		ID: id, APIKey: b.key, Name: fmt.Sprintf("Benchmark project %d", seq),
		SourceLang: sourceLang, TargetLang: target, SourceVideoURL: url,
		MixingMode: sim.DefaultMixingMode, TTSVolume: sim.DefaultTTSVolume,
		DurationMS: duration.Milliseconds(), DurationSource: sim.OriginDerived,
		CostMinutes: sim.CostMinutes(duration),
		Status:      sim.StatusInProgress, CreatedAt: created,
		DueAt:          ceilSecond(created.Add(b.timing.Processing(duration))),
		ScriptsPending: true,
		History:        []sim.Event{{At: created, Kind: sim.EventCreated}},
	}
	switch {
	case kind < 88:
		p, _ = statemachine.Next(p, p.DueAt)
		engine.Materialize(b.cat, b.ids, &p) // as the engine does when a run completes
	case kind >= 98:
		p.Outcome = sim.Outcome{Error: true, Message: "Processing failed: the audio track could not be decoded"}
		p, _ = statemachine.Next(p, p.DueAt) // refunds: the charge is not counted
	default:
		// A backlog: due at least an hour after the seed, so it stays in
		// progress while a benchmark runs (time frozen at dubsim's start).
		p.DueAt = ceilSecond(b.now.Add(time.Hour + b.timing.Processing(duration)))
	}
	return p
}
