package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/dubsim/dubsim/sim"
)

// startDownload fetches the URL parts of an artifact in the background;
// when done it records the result and schedules the completion at the
// simulated time processing ends (start + processing time of the size),
// however long the download took in real time. The work is registered
// before startDownload returns, so a clock advance or a read that needs its
// result waits for it (see work.go).
func (e *core) startDownload(a sim.Artifact, parts []part) {
	id, typ := a.ID, a.Type
	w := &work{kind: WorkDownload, resource: "artifact", id: id, started: e.clock.Now(),
		needed: a.StartAt.Add(e.studio.ArtifactProcessing(0))}
	for _, p := range parts {
		if p.download != "" {
			w.setURL(p.download)
			break
		}
	}
	w.set(fmt.Sprintf(waitSlot, maxDownloads))
	e.work.add(w)
	e.dlWG.Add(1)
	go func() {
		defer e.dlWG.Done()
		defer e.work.remove(w)
		defer e.reportPanic("artifact download", "artifact", id)
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		select {
		case e.dlSem <- struct{}{}:
		case <-e.bg.Done():
			return
		}
		defer func() { <-e.dlSem }()
		res := sim.ArtifactResult{Known: true, Origin: "media"}
		var total float64
		media := make([]sim.MediaFormat, len(parts))
		for i, p := range parts {
			if p.upload != "" {
				res.Known = false // presigned fragments are resolved when processing ends
			}
			if p.fail != "" && res.Fail == "" {
				res.Fail = p.fail
			}
			if p.download == "" {
				res.Size += p.size
				if p.duration != nil {
					total += *p.duration
				}
				continue
			}
			w.setURL(p.download)
			size, dur, blob, mf, fail := e.download(w, typ, i, p.download)
			media[i] = mf
			if fail != "" {
				res.Fail = fail
				break
			}
			res.Size += size
			if dur != nil {
				total += *dur
			}
			if res.Blob == "" {
				res.Blob = blob
			}
		}
		res.Duration = &total
		if e.bg.Err() != nil {
			return // shutting down: the download restarts with the next Start
		}
		w.set(waitRecord)
		err := e.update(context.Background(), func(tx sim.Tx) error {
			a, err := tx.Artifact(id)
			if errors.Is(err, sim.ErrNotFound) {
				return nil // reset meanwhile
			}
			if err != nil || !a.Pending {
				return err
			}
			if !a.Result.Known || a.Result.Origin != "forced" {
				if a.Type == sim.ArtifactScript {
					res.Duration = nil
				}
				recordPartMedia(a.Fragments, &res, media)
				a.Result = res
			}
			a.Pending = false
			// The simulated time processing ends, whatever the real time
			// the download took (fidelity A15).
			a.DoneAt = a.StartAt.Add(e.studio.ArtifactProcessing(a.Result.Size))
			if a.Status == sim.ArtifactCreated {
				a.DueAt = a.StartAt
			} else {
				a.DueAt = a.DoneAt
			}
			return tx.PutArtifact(a)
		})
		if err != nil {
			e.log.Error("artifact download: recording the result", "artifact", id, "err", err)
		}
	}()
}

func (e *core) download(w *work, typ string, i int, rawURL string) (int64, *float64, string, sim.MediaFormat, string) {
	var none sim.MediaFormat
	if e.blobs == nil || e.media == nil {
		return 0, nil, "", none, "downloads are not available in this dubsim (no blob directory)"
	}
	name := fmt.Sprintf("artifact-%s-%d", w.id, i)
	w.set(waitHost)
	pr, pw := io.Pipe()
	var n int64
	var dlErr error
	go func() {
		err := Recovered(func() error {
			var err error
			n, err = e.media.Download(e.bg, rawURL, countingWriter{w: w, wr: pw}, sim.MaxArtifactBytes)
			return err
		})
		var pe *PanicError
		if errors.As(err, &pe) {
			e.log.Error("artifact download: panic", "artifact", w.id, "panic", pe.Value, "stack", string(pe.Stack))
			err = errDownloadPanic
		}
		dlErr = err
		pw.CloseWithError(err)
	}()
	_, werr := e.blobs.Write(name, pr, sim.MaxArtifactBytes+1)
	pr.CloseWithError(werr)
	if dlErr != nil {
		return 0, nil, "", none, dlErr.Error()
	}
	if werr != nil {
		return 0, nil, "", none, "storing the download failed: " + werr.Error()
	}
	_, dur, mf := e.inspectBlob(name)
	if dur == nil && typ != sim.ArtifactScript && e.inspect != nil {
		_ = e.blobs.Remove(name)
		return 0, nil, "", none, fmt.Sprintf(sim.MsgUnsupportedMedia, "at "+rawURL)
	}
	return n, dur, name, mf, ""
}

// errDownloadPanic is the failure of an artifact whose download panicked
// (the log has the panic and its stack).
var errDownloadPanic = errors.New("the download failed: internal error")

// reportPanic, deferred first in a background goroutine, recovers a panic
// and logs it at ERROR with its stack, so a bug or a damaged data file
// does not end the process.
func (e *core) reportPanic(what string, attrs ...any) {
	if r := recover(); r != nil {
		e.log.Error(what+": panic", append(attrs, "panic", r, "stack", string(debug.Stack()))...)
	}
}

// WaitDownloads blocks until every running artifact download has recorded
// its result (tests call it instead of sleeping).
func (e *Artifacts) WaitDownloads() { e.dlWG.Wait() }

// restartDownloads resumes the downloads a previous process left unfinished.
func (e *core) restartDownloads(ctx context.Context) error {
	var pending []sim.Artifact
	if err := e.store.View(ctx, func(tx sim.Tx) error {
		return tx.ForEachArtifact(func(a sim.Artifact) error {
			if a.Pending {
				pending = append(pending, a)
			}
			return nil
		})
	}); err != nil {
		return err
	}
	for _, a := range pending {
		// Parts are resolved again as at creation, with the creator's
		// credentials as they are now.
		c := sim.Caller{}
		if err := e.store.View(ctx, func(tx sim.Tx) error {
			acct, err := tx.Account(a.APIKey)
			if err == nil {
				c.Account = acct
			}
			if errors.Is(err, sim.ErrNotFound) {
				return nil
			}
			return err
		}); err != nil {
			return err
		}
		e.startDownload(a, e.resolveParts(c, a.Type, a.SourceURL, a.SourcePath, a.Fragments))
	}
	return nil
}
