package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/dubsim/dubsim/sim"
)

// Uploads are the studio's presigned upload slots and the files PUT to them.
// Their files count against the storage quotas of Artifacts.
type Uploads struct {
	*core
	ids   *idgen
	quota *quotas
	files mediaFiles
}

// PresignUpload opens an upload slot for fileName, valid for 24 hours. Its
// id is keyed by the store's secret, so another company cannot guess it. A
// company may have Quota.PresignsPerCompany slots outstanding (neither used
// nor expired).
func (e *Uploads) PresignUpload(ctx context.Context, c sim.Caller, fileName string) (sim.Upload, error) {
	var u sim.Upload
	err := e.update(ctx, func(tx sim.Tx) error {
		now := e.clock.Now()
		if limit := e.quota.limits.PresignsPerCompany; limit > 0 {
			open := 0
			err := tx.ForEachUpload(func(o sim.Upload) error {
				if o.CompanyID == c.Company.ID && !o.Uploaded && now.Before(o.ExpiresAt) {
					open++
				}
				return nil
			})
			if err != nil {
				return err
			}
			if open >= limit {
				return sim.Errorf(sim.CodeForbidden, sim.MsgPresignsOutstanding, limit)
			}
		}
		seq, err := tx.NextSequence("uploads")
		if err != nil {
			return err
		}
		id := e.ids.uuid("upload", fmt.Sprint(seq))
		u = sim.Upload{ID: id, APIKey: c.Account.APIKey, CompanyID: c.Company.ID, FileName: fileName,
			S3Path:    "s3://" + sim.UploadBucket + "/temp/" + id + "/" + fileName,
			ExpiresAt: now.Add(sim.UploadValidity), CreatedAt: now}
		return tx.PutUpload(u)
	})
	return u, err
}

// UploadSignature is the signature of an upload's presigned URL, keyed by
// the store's secret: only this store can make or check it.
func (e *Uploads) UploadSignature(u sim.Upload) string {
	return e.ids.secretToken(32, "presign", u.ID, u.FileName, fmt.Sprint(u.ExpiresAt.Unix()))
}

// Upload returns an upload slot.
func (e *Uploads) Upload(ctx context.Context, id string) (sim.Upload, error) {
	var u sim.Upload
	err := e.store.View(ctx, func(tx sim.Tx) error {
		var err error
		u, err = tx.Upload(id)
		return err
	})
	return u, err
}

// ReceiveUpload stores the body PUT to an upload slot (replacing an earlier
// one, as a storage PUT does), reads its media header and records size,
// format and duration. The caller has checked the signature and expiry.
func (e *Uploads) ReceiveUpload(ctx context.Context, id string, body io.Reader) (sim.Upload, error) {
	if e.files.blobs == nil {
		return sim.Upload{}, errors.New("uploads need a blob directory")
	}
	name := "upload-" + id
	qr, err := e.quotaReader(ctx, id, body)
	if err != nil {
		return sim.Upload{}, err
	}
	defer qr.release() // once the record counts the file
	n, err := e.files.blobs.Write(name, qr, sim.MaxArtifactBytes)
	if err != nil {
		return sim.Upload{}, err
	}
	format, dur, mf := e.files.read(name)
	var u sim.Upload
	err = e.update(ctx, func(tx sim.Tx) error {
		var err error
		if u, err = tx.Upload(id); err != nil {
			return err
		}
		u.Uploaded, u.UploadedAt, u.Size, u.Blob, u.Format, u.Duration, u.Media = true, e.clock.Now(), n, name, format, dur, mf
		return tx.PutUpload(u)
	})
	return u, err
}

// mediaFiles are the stored files and the reader of their media headers.
type mediaFiles struct {
	blobs   Blobs
	inspect Inspector
}

// read returns the format, duration and encoding of a stored file (a nil
// duration: not media, or no inspector).
func (f mediaFiles) read(name string) (string, *float64, sim.MediaFormat) {
	if f.inspect == nil {
		return "", nil, sim.MediaFormat{}
	}
	r, size, err := f.blobs.Open(name)
	if err != nil {
		return "", nil, sim.MediaFormat{}
	}
	defer r.Close()
	format, d, mf, err := f.inspect(r, size)
	if err != nil {
		return format, nil, sim.MediaFormat{}
	}
	s := d.Seconds()
	return format, &s, mf
}

// quotaCount counts the bytes of a file being received (an upload, or an
// artifact's download) against the quotas, as they arrive, together with
// the other files in flight, and fails with sim.ErrStorageQuota at the first
// byte past one. The stored usage is read when the file starts (the
// upload's own earlier file, which it replaces, not counted).
type quotaCount struct {
	q            *quotas
	company      string
	stored, mine int64 // bytes stored when the file started: in all, of the company
	read         int64
	released     bool
}

// quotas are the storage quotas of one engine (Config.Quota) and the bytes
// being received by each company, counted against them until they are
// stored (under pool.mu, which counts them in all).
type quotas struct {
	store    sim.Store
	limits   sim.BlobQuota
	pool     *QuotaPool
	reserved map[string]int64
}

// start starts counting a file of company's; exceptUpload is the upload it
// replaces ("": none).
func (q *quotas) start(ctx context.Context, company, exceptUpload string) (*quotaCount, error) {
	qc := &quotaCount{q: q, company: company}
	if q.limits.Total <= 0 && q.limits.PerCompany <= 0 {
		qc.released = true // nothing to count
		return qc, nil
	}
	err := q.store.View(ctx, func(tx sim.Tx) error {
		var err error
		qc.stored, qc.mine, err = storedBytes(tx, company, exceptUpload)
		return err
	})
	if err != nil {
		return nil, err
	}
	// The files of the other engines of a shared pool count in all. One
	// that cannot be read is closing (its files are about to go): it
	// counts nothing.
	for _, o := range q.pool.others(q) {
		_ = o.store.View(ctx, func(tx sim.Tx) error {
			all, _, err := storedBytes(tx, "", "")
			if err == nil {
				qc.stored += all
			}
			return err
		})
	}
	// A file of 0 bytes is refused too when the quota is used up.
	if err := qc.count(0); err != nil {
		qc.release()
		return nil, err
	}
	return qc, nil
}

// storedBytes is the bytes of the files stored, in all and of company's:
// the uploaded files but exceptUpload's, and the downloaded artifacts.
func storedBytes(tx sim.Tx, company, exceptUpload string) (all, mine int64, err error) {
	err = tx.ForEachUpload(func(o sim.Upload) error {
		if !o.Uploaded || o.ID == exceptUpload {
			return nil
		}
		all += o.Size
		if o.CompanyID == company {
			mine += o.Size
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	err = tx.ForEachArtifact(func(a sim.Artifact) error {
		all += a.Result.Stored
		if a.CompanyID == company {
			mine += a.Result.Stored
		}
		return nil
	})
	return all, mine, err
}

// count adds n bytes read to the bytes in flight and checks the quotas.
func (qc *quotaCount) count(n int64) error {
	if qc.released {
		return nil
	}
	q, lim := qc.q, qc.q.limits
	q.pool.mu.Lock()
	defer q.pool.mu.Unlock()
	qc.read += n
	q.reserved[qc.company] += n
	q.pool.reservedTotal += n
	mine, total := qc.mine+q.reserved[qc.company], qc.stored+q.pool.reservedTotal
	switch {
	case lim.PerCompany > 0 && (mine > lim.PerCompany || n == 0 && mine >= lim.PerCompany):
		return &sim.QuotaError{Reason: fmt.Sprintf(sim.MsgCompanyQuota, gb(lim.PerCompany))}
	case lim.Total > 0 && (total > lim.Total || n == 0 && total >= lim.Total):
		return &sim.QuotaError{Reason: fmt.Sprintf(sim.MsgTotalQuota, gb(lim.Total))}
	}
	return nil
}

// release stops counting the file's bytes as in flight: it is stored (and
// its record counts it) or failed.
func (qc *quotaCount) release() {
	q := qc.q
	q.pool.mu.Lock()
	defer q.pool.mu.Unlock()
	if qc.released {
		return
	}
	qc.released = true
	q.reserved[qc.company] -= qc.read
	if q.reserved[qc.company] == 0 {
		delete(q.reserved, qc.company)
	}
	q.pool.reservedTotal -= qc.read
}

// quotaReader counts an upload's body (quotaCount).
type quotaReader struct {
	*quotaCount
	r io.Reader
}

func (e *Uploads) quotaReader(ctx context.Context, id string, body io.Reader) (*quotaReader, error) {
	var company string
	if q := e.quota.limits; q.Total > 0 || q.PerCompany > 0 {
		err := e.store.View(ctx, func(tx sim.Tx) error {
			u, err := tx.Upload(id)
			company = u.CompanyID
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	qc, err := e.quota.start(ctx, company, id)
	if err != nil {
		return nil, err
	}
	return &quotaReader{quotaCount: qc, r: body}, nil
}

func (qr *quotaReader) Read(p []byte) (int, error) {
	n, err := qr.r.Read(p)
	if n > 0 {
		if qerr := qr.count(int64(n)); qerr != nil {
			return n, qerr
		}
	}
	return n, err
}

// quotaWriter counts a download's bytes (quotaCount) before they are written.
type quotaWriter struct {
	*quotaCount
	w io.Writer
}

func (qw quotaWriter) Write(p []byte) (int, error) {
	if err := qw.count(int64(len(p))); err != nil {
		return 0, err
	}
	return qw.w.Write(p)
}

// gb words a byte count in decimal gigabytes, as storage quotas are.
func gb(n int64) string { return strconv.FormatFloat(float64(n)/1e9, 'f', -1, 64) + " GB" }
