package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/dubsim/dubsim/sim"
)

// maxDownloads is how many artifact downloads of one engine run at once.
const maxDownloads = 4

// reserveDownload counts a pending download of company's, refusing it when
// the company has quota.DownloadsPerCompany pending already (unless force:
// a download resumed at Start). Fidelity HX1.
func (e *Artifacts) reserveDownload(company string, force bool) error {
	e.pendingMu.Lock()
	defer e.pendingMu.Unlock()
	if limit := e.quota.limits.DownloadsPerCompany; !force && limit > 0 && e.pending[company] >= limit {
		return sim.Errorf(sim.CodeForbidden, sim.MsgDownloadsPending, limit)
	}
	e.pending[company]++
	return nil
}

func (e *Artifacts) releaseDownload(company string) {
	e.pendingMu.Lock()
	defer e.pendingMu.Unlock()
	if e.pending[company]--; e.pending[company] <= 0 {
		delete(e.pending, company)
	}
}

// startDownload fetches the URL parts of a reserved artifact download in the
// background. The work is registered before it returns, so a clock advance
// or a read that needs its result waits for it (work.go).
func (e *Artifacts) startDownload(a sim.Artifact, parts []part) {
	w := &work{kind: WorkDownload, resource: "artifact", id: a.ID, started: e.clock.Now(),
		needed: a.StartAt.Add(e.timing.ArtifactProcessing(0))}
	for _, p := range parts {
		if p.download != "" {
			w.setURL(p.download)
			break
		}
	}
	w.set(fmt.Sprintf(waitSlot, maxDownloads))
	e.work.add(w)
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer e.releaseDownload(a.CompanyID)
		defer e.work.remove(w)
		err := Recovered(func() error { e.runDownload(w, a, parts); return nil })
		if pe, ok := errors.AsType[*PanicError](err); ok {
			e.log.Error("artifact download: panic", "artifact", a.ID, "panic", pe.Value, "stack", string(pe.Stack))
		}
	}()
}

// runDownload waits for a download slot, fetches the parts and records the
// result. A download that would pass a storage quota fails the artifact and
// keeps nothing (fidelity HX2).
func (e *Artifacts) runDownload(w *work, a sim.Artifact, parts []part) {
	release, ok := e.downloadSlots(w)
	if !ok {
		return
	}
	defer release()
	qc, err := e.quota.start(e.bg, a.CompanyID, "")
	if err != nil && e.bg.Err() != nil {
		return // shutting down: the download restarts with the next Start
	}
	// quotaFail fails every download when the quotas are used up already
	// or the usage could not be read.
	quotaFail := func(string) string { return "" }
	if qe, ok := errors.AsType[*sim.QuotaError](err); ok {
		quotaFail = func(u string) string { return fmt.Sprintf(sim.MsgDownloadQuota, u, qe.Reason) }
	} else if err != nil {
		e.log.Error("artifact download: reading the storage usage", "artifact", a.ID, "err", err)
		quotaFail = func(string) string { return errDownloadPanic.Error() }
	}
	if qc == nil {
		qc = &quotaCount{q: e.quota, released: true}
	}
	defer qc.release() // once the record counts the files
	res, media, blobs := e.fetchParts(w, qc, a.Type, parts, quotaFail)
	if e.bg.Err() != nil {
		return // shutting down: the download restarts with the next Start
	}
	if res.Fail != "" { // a failed artifact keeps no file
		for _, b := range blobs {
			_ = e.files.blobs.Remove(b)
		}
		res.Blob, res.Stored = "", 0
	}
	w.set(waitRecord)
	if err := e.recordDownload(a.ID, res, media); err != nil {
		e.log.Error("artifact download: recording the result", "artifact", a.ID, "err", err)
	}
}

// fetchParts downloads the URL parts in order, up to the first failure, and
// adds up what is known of the others. It returns the result, the media
// format of each part and the files written.
func (e *Artifacts) fetchParts(w *work, qc *quotaCount, typ string, parts []part, quotaFail func(string) string) (sim.ArtifactResult, []sim.MediaFormat, []string) {
	res := sim.ArtifactResult{Known: true, Origin: "media"}
	var blobs []string
	var total float64
	media := make([]sim.MediaFormat, len(parts))
	for i, p := range parts {
		if p.download == "" {
			p.tally(&res, &total)
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
		res.Blob = cmp.Or(res.Blob, blob)
	}
	res.Duration = &total
	return res, media, blobs
}

// recordDownload records the result of an artifact's downloads and
// schedules its completion at the simulated time processing ends, whatever
// the real time the download took (fidelity A15).
func (e *Artifacts) recordDownload(id string, res sim.ArtifactResult, media []sim.MediaFormat) error {
	return e.update(context.Background(), func(tx sim.Tx) error {
		a, err := tx.Artifacts().Get(id)
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
		a.DoneAt = a.StartAt.Add(e.timing.ArtifactProcessing(a.Result.Size))
		schedule(&a)
		return tx.Artifacts().Put(a)
	})
}

func (e *Artifacts) download(w *work, qc *quotaCount, typ string, i int, rawURL string) (int64, *float64, string, sim.MediaFormat, string) {
	var none sim.MediaFormat
	if e.files.blobs == nil || e.media == nil {
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
			n, err = e.media.Download(e.bg, rawURL, countingWriter{w: w, wr: io.MultiWriter(qc, pw)}, sim.MaxArtifactBytes)
			return err
		})
		if pe, ok := errors.AsType[*PanicError](err); ok {
			e.log.Error("artifact download: panic", "artifact", w.id, "panic", pe.Value, "stack", string(pe.Stack))
			err = errDownloadPanic
		}
		dlErr = err
		pw.CloseWithError(err)
	}()
	_, werr := e.files.blobs.Write(name, pr, sim.MaxArtifactBytes+1)
	pr.CloseWithError(werr)
	qe, quota := errors.AsType[*sim.QuotaError](dlErr)
	switch {
	case quota:
		return 0, nil, "", none, fmt.Sprintf(sim.MsgDownloadQuota, rawURL, qe.Reason)
	case dlErr != nil:
		return 0, nil, "", none, dlErr.Error()
	case werr != nil:
		e.log.Error("artifact download: storing the file", "artifact", w.id, "err", werr)
		return 0, nil, "", none, "storing the download failed"
	}
	_, dur, mf := e.files.read(name)
	if dur == nil && typ != sim.ArtifactScript && e.files.inspect != nil {
		_ = e.files.blobs.Remove(name)
		if !e.fetchDetail { // what the URL serves is as telling as an HTTP status (fidelity HX3)
			e.log.Warn("artifact download failed", "url", rawURL, "err", "not a supported media file")
			return 0, nil, "", none, fmt.Sprintf(sim.MsgDownloadUnreadable, rawURL)
		}
		return 0, nil, "", none, fmt.Sprintf(sim.MsgUnsupportedMedia, "at "+rawURL)
	}
	return n, dur, name, mf, ""
}

// errDownloadPanic fails an artifact whose download panicked (the log says
// why).
var errDownloadPanic = errors.New("the download failed: internal error")

// WaitDownloads blocks until every running artifact download has recorded
// its result (tests call it instead of sleeping).
func (e *Artifacts) WaitDownloads() { e.wg.Wait() }

func (e *Artifacts) close() {
	e.stop()
	e.wg.Wait()
	e.quota.pool.leave(e.quota)
}

// restartDownloads resumes the downloads a previous process left unfinished.
func (e *Artifacts) restartDownloads(ctx context.Context) error {
	var pending []sim.Artifact
	if err := e.store.View(ctx, func(tx sim.Tx) error {
		return tx.Artifacts().ForEach(func(a sim.Artifact) error {
			if a.Pending {
				pending = append(pending, a)
			}
			return nil
		})
	}); err != nil {
		return err
	}
	for _, a := range pending {
		c := sim.Caller{} // the creator's credentials as they are now
		acct, err := in(ctx, e.store.View, func(tx sim.Tx) (sim.Account, error) { return tx.Accounts().Get(a.APIKey) })
		switch {
		case err == nil:
			c.Account = acct
		case !errors.Is(err, sim.ErrNotFound):
			return err
		}
		_ = e.reserveDownload(a.CompanyID, true) // resumed, never refused
		e.startDownload(a, e.resolveParts(c, a.Type, a.SourceURL, a.SourcePath, a.Fragments))
	}
	return nil
}

// downloadSlots waits for one of the simulator's download slots, then for
// one of the process's; ok is false when the engine stops first.
func (e *Artifacts) downloadSlots(w *work) (release func(), ok bool) {
	select {
	case e.slots <- struct{}{}:
	case <-e.bg.Done():
		return nil, false
	}
	process := e.quota.pool.downloads
	w.set(fmt.Sprintf(waitShared, cap(process)))
	select {
	case process <- struct{}{}:
	case <-e.bg.Done():
		<-e.slots
		return nil, false
	}
	return func() { <-process; <-e.slots }, true
}
