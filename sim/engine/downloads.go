package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/dubsim/dubsim/sim"
)

// hasDownload reports whether one of parts is fetched for real.
func hasDownload(parts []part) bool {
	for _, p := range parts {
		if p.download != "" {
			return true
		}
	}
	return false
}

// reserveDownload counts a pending download of company's, refusing it when
// the company has quota.DownloadsPerCompany pending already (unless force:
// a download a previous process left, resumed). At most maxDownloads run at
// once, and MaxProcessDownloads in every engine of the QuotaPool; the
// others wait for a slot (fidelity HX1).
func (e *core) reserveDownload(company string, force bool) error {
	e.dlMu.Lock()
	defer e.dlMu.Unlock()
	if limit := e.quota.DownloadsPerCompany; !force && limit > 0 && e.dlPending[company] >= limit {
		return sim.Errorf(sim.CodeForbidden, sim.MsgDownloadsPending, limit)
	}
	e.dlPending[company]++
	return nil
}

// releaseDownload ends a reservation of reserveDownload.
func (e *core) releaseDownload(company string) {
	e.dlMu.Lock()
	defer e.dlMu.Unlock()
	if e.dlPending[company]--; e.dlPending[company] <= 0 {
		delete(e.dlPending, company)
	}
}

// startDownload fetches the URL parts of an artifact in the background;
// when done it records the result and schedules the completion at the
// simulated time processing ends (start + processing time of the size),
// however long the download took in real time. The work is registered
// before startDownload returns, so a clock advance or a read that needs its
// result waits for it (see work.go). The caller has reserved the download
// (reserveDownload); it is released when the download ends.
//
// The downloaded bytes count toward the storage quotas as they arrive
// (fidelity HX2); a download that would pass one fails the artifact and
// keeps nothing.
func (e *core) startDownload(a sim.Artifact, parts []part) {
	id, typ, company := a.ID, a.Type, a.CompanyID
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
		defer e.releaseDownload(company)
		defer e.work.remove(w)
		defer e.reportPanic("artifact download", "artifact", id)
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		release, ok := e.downloadSlots(w)
		if !ok {
			return
		}
		defer release()
		res := sim.ArtifactResult{Known: true, Origin: "media"}
		var blobs []string // the files written, removed if the download fails
		qc, err := e.newQuotaCount(e.bg, company, "")
		if err != nil && e.bg.Err() != nil {
			return // shutting down: the download restarts with the next Start
		}
		// quotaFail is the failure of every download when the quotas are
		// used up already (or the usage could not be read).
		quotaFail := func(string) string { return "" }
		if qe := (*sim.QuotaError)(nil); errors.As(err, &qe) {
			quotaFail = func(u string) string { return fmt.Sprintf(sim.MsgDownloadQuota, u, qe.Reason) }
		} else if err != nil {
			e.log.Error("artifact download: reading the storage usage", "artifact", id, "err", err)
			quotaFail = func(string) string { return errDownloadPanic.Error() }
		}
		if qc == nil {
			qc = &quotaCount{e: e, released: true}
		}
		defer qc.release() // once the record counts the files
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
			if fail := quotaFail(p.download); fail != "" {
				res.Fail = fail
				break
			}
			size, dur, blob, mf, fail := e.download(w, qc, typ, i, p.download)
			media[i] = mf
			if fail != "" {
				res.Fail = fail
				break
			}
			blobs = append(blobs, blob)
			res.Stored += size
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
		if res.Fail != "" {
			// A failed artifact keeps no file: nothing counts toward the
			// quotas.
			for _, b := range blobs {
				_ = e.blobs.Remove(b)
			}
			res.Blob, res.Stored = "", 0
		}
		w.set(waitRecord)
		err = e.update(context.Background(), func(tx sim.Tx) error {
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

func (e *core) download(w *work, qc *quotaCount, typ string, i int, rawURL string) (int64, *float64, string, sim.MediaFormat, string) {
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
			n, err = e.media.Download(e.bg, rawURL, countingWriter{w: w, wr: quotaWriter{quotaCount: qc, w: pw}}, sim.MaxArtifactBytes)
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
	var qe *sim.QuotaError
	switch {
	case errors.As(dlErr, &qe):
		return 0, nil, "", none, fmt.Sprintf(sim.MsgDownloadQuota, rawURL, qe.Reason)
	case dlErr != nil:
		return 0, nil, "", none, dlErr.Error()
	case werr != nil:
		e.log.Error("artifact download: storing the file", "artifact", w.id, "err", werr)
		return 0, nil, "", none, "storing the download failed"
	}
	_, dur, mf := e.inspectBlob(name)
	if dur == nil && typ != sim.ArtifactScript && e.inspect != nil {
		_ = e.blobs.Remove(name)
		if !e.fetchDetail {
			// What the URL serves, when it is not media, is as telling as
			// an HTTP status (fidelity HX3).
			e.log.Warn("artifact download failed", "url", rawURL, "err", "not a supported media file")
			return 0, nil, "", none, fmt.Sprintf(sim.MsgDownloadUnreadable, rawURL)
		}
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
		_ = e.reserveDownload(a.CompanyID, true) // resumed, never refused
		e.startDownload(a, e.resolveParts(c, a.Type, a.SourceURL, a.SourcePath, a.Fragments))
	}
	return nil
}

// downloadSlots waits for one of the simulator's download slots, then for
// one of the process's (saying so in w); ok is false when the engine stops
// first. release gives both back.
func (e *core) downloadSlots(w *work) (release func(), ok bool) {
	select {
	case e.dlSem <- struct{}{}:
	case <-e.bg.Done():
		return nil, false
	}
	w.set(fmt.Sprintf(waitShared, cap(e.pool.downloads)))
	select {
	case e.pool.downloads <- struct{}{}:
	case <-e.bg.Done():
		<-e.dlSem
		return nil, false
	}
	return func() { <-e.pool.downloads; <-e.dlSem }, true
}
