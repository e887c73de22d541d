package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/dubsim/dubsim/sim/store"
)

// dataFile is the store a run serves from: the --data file, or a temporary
// one removed at exit (fidelity EL5).
type dataFile struct {
	store   *store.Store
	path    string
	tempDir string // "": a --data file
	// restored counts what an existing data file held (nil: a new file or
	// a temporary store); countErr says why it could not (a damaged page:
	// dubsim serves on, fidelity HD5).
	restored []store.BucketCount
	countErr error
}

// openData opens the store cfg names, or a temporary one when it names
// none (cfg.Data and cfg.BlobDir then name it).
func openData(cfg *config) (*dataFile, error) {
	d := &dataFile{path: cfg.Data}
	existed := false
	if d.path == "" {
		dir, err := server.MakeTempDataDir()
		if err != nil {
			return nil, fmt.Errorf("data: %w", err)
		}
		d.tempDir, d.path = dir, filepath.Join(dir, "dubsim.db")
		cfg.Data, cfg.BlobDir = d.path, filepath.Join(dir, "blobs")
	} else {
		if err := os.MkdirAll(filepath.Dir(d.path), 0o755); err != nil {
			return nil, fmt.Errorf("data: %w", err)
		}
		fi, err := os.Stat(d.path)
		existed = err == nil && fi.Size() > 0
	}
	var opts []store.Option
	if cfg.SeedSet {
		opts = append(opts, store.KeySeed(cfg.Seed))
	}
	st, err := store.Open(d.path, opts...)
	if err != nil {
		if d.tempDir != "" {
			_ = os.RemoveAll(d.tempDir)
		}
		return nil, err
	}
	d.store = st
	if existed {
		if d.restored, d.countErr = st.Counts(); d.countErr != nil {
			d.restored = []store.BucketCount{}
		}
	}
	return d, nil
}

// close closes the store and removes a temporary one.
func (d *dataFile) close(log *slog.Logger) {
	if err := d.store.Close(); err != nil {
		log.Error("closing the data file", "path", d.path, "err", err)
	}
	if d.tempDir != "" {
		if err := os.RemoveAll(d.tempDir); err != nil {
			log.Warn("removing the temporary store", "dir", d.tempDir, "err", err)
		}
	}
}

var bucketNames = map[string][2]string{
	"accounts": {"account", "accounts"}, "projects": {"platform project", "platform projects"},
	"companies": {"company", "companies"}, "studio_projects": {"studio project", "studio projects"},
	"videos": {"video", "videos"}, "artifacts": {"artifact", "artifacts"}, "uploads": {"upload", "uploads"},
}

func dataBanner(w io.Writer, d *dataFile) {
	if d.tempDir != "" {
		fmt.Fprintf(w, "  data:        temporary (%s), removed at exit; --data FILE or DUBSIM_DATA keeps the state across runs\n", d.path)
		return
	}
	if d.restored == nil {
		fmt.Fprintf(w, "  data file:   %s (new)\n", d.path)
		return
	}
	if d.countErr != nil {
		fmt.Fprintf(w, "  data file:   %s (restored from an earlier run; its records could not be counted: %v)\n", d.path, d.countErr)
		return
	}
	var parts []string
	for _, c := range d.restored {
		if n, ok := bucketNames[c.Bucket]; ok && (c.N > 0 || c.Bucket == "accounts" || c.Bucket == "projects") {
			word := n[1] // zero takes the plural too
			if c.N == 1 {
				word = n[0]
			}
			parts = append(parts, fmt.Sprintf("%d %s", c.N, word))
		}
	}
	fmt.Fprintf(w, "  data file:   %s (restored from an earlier run: %s)\n", d.path, strings.Join(parts, ", "))
}

func backgroundDownloads(work []sim.Work) int {
	n := 0
	for _, w := range work {
		if w.Kind == "download" {
			n++
		}
	}
	return n
}

// shutdown stops the listeners (app.Listeners.Shutdown), logging what was
// still running when the stop began and what the grace cut off.
func shutdown(log *slog.Logger, grace time.Duration, ls *app.Listeners, downloads int, temporary bool) error {
	started := time.Now()
	attrs := []any{"open_requests", ls.Open(), "background_downloads", downloads, "grace", grace.String()}
	switch {
	case downloads > 0 && temporary:
		attrs = append(attrs, "downloads", "stopped; the temporary store goes with them")
	case downloads > 0:
		attrs = append(attrs, "downloads", "stopped; they resume at the next start on the same data file")
	}
	log.Info("shutting down", attrs...)
	cut, err := ls.Shutdown(grace)
	if cut > 0 {
		log.Warn("shutdown grace passed: closing the connections of the requests still open",
			"open_requests", cut, "grace", grace.String())
	}
	log.Info("stopped", "took", time.Since(started).Round(time.Millisecond).String())
	return err
}
