package engine

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/dubsim/dubsim/sim"
)

// Uploads are the studio's presigned upload slots and the files PUT to them.
type Uploads struct {
	*core
	ids   *idgen
	quota *quotas
	files mediaFiles
}

// PresignUpload opens an upload slot for fileName, valid for 24 hours, with
// an id another company cannot guess. A company may have
// Quota.PresignsPerCompany slots outstanding (neither used nor expired).
func (e *Uploads) PresignUpload(ctx context.Context, c sim.Caller, fileName string) (sim.Upload, error) {
	return in(ctx, e.update, func(tx sim.Tx) (sim.Upload, error) {
		now := e.clock.Now()
		if limit := e.quota.limits.PresignsPerCompany; limit > 0 {
			open := 0
			err := tx.Uploads().ForEach(func(o sim.Upload) error {
				if o.CompanyID == c.Company.ID && !o.Uploaded && now.Before(o.ExpiresAt) {
					open++
				}
				return nil
			})
			if err != nil {
				return sim.Upload{}, err
			}
			if open >= limit {
				return sim.Upload{}, sim.Errorf(sim.CodeForbidden, sim.MsgPresignsOutstanding, limit)
			}
		}
		seq, err := tx.NextSequence("uploads")
		if err != nil {
			return sim.Upload{}, err
		}
		id := e.ids.uuid("upload", fmt.Sprint(seq))
		u := sim.Upload{ID: id, APIKey: c.Account.APIKey, CompanyID: c.Company.ID, FileName: fileName,
			S3Path:    "s3://" + sim.UploadBucket + "/temp/" + id + "/" + fileName,
			ExpiresAt: now.Add(sim.UploadValidity), CreatedAt: now}
		return u, tx.Uploads().Put(u)
	})
}

// UploadSignature is the signature of an upload's presigned URL, which only
// this store can make or check.
func (e *Uploads) UploadSignature(u sim.Upload) string {
	return e.ids.secretToken(32, "presign", u.ID, u.FileName, fmt.Sprint(u.ExpiresAt.Unix()))
}

// Upload returns an upload slot.
func (e *Uploads) Upload(ctx context.Context, id string) (sim.Upload, error) {
	return in(ctx, e.store.View, func(tx sim.Tx) (sim.Upload, error) { return tx.Uploads().Get(id) })
}

// ReceiveUpload stores the body PUT to an upload slot (replacing an earlier
// one, as a storage PUT does) and records its size and media format. The
// caller has checked the signature and expiry.
func (e *Uploads) ReceiveUpload(ctx context.Context, id string, body io.Reader) (sim.Upload, error) {
	if e.files.blobs == nil {
		return sim.Upload{}, errors.New("uploads need a blob directory")
	}
	name := "upload-" + id
	qc, err := e.countUpload(ctx, id)
	if err != nil {
		return sim.Upload{}, err
	}
	defer qc.release() // once the record counts the file
	n, err := e.files.blobs.Write(name, io.TeeReader(body, qc), sim.MaxArtifactBytes)
	if err != nil {
		return sim.Upload{}, err
	}
	format, dur, mf := e.files.read(name)
	return in(ctx, e.update, func(tx sim.Tx) (sim.Upload, error) {
		u, err := tx.Uploads().Get(id)
		if err != nil {
			return u, err
		}
		u.Uploaded, u.UploadedAt, u.Size, u.Blob, u.Format, u.Duration, u.Media = true, e.clock.Now(), n, name, format, dur, mf
		return u, tx.Uploads().Put(u)
	})
}

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

// countUpload counts the body of upload id, which replaces the upload's
// earlier file.
func (e *Uploads) countUpload(ctx context.Context, id string) (*quotaCount, error) {
	var u sim.Upload
	if q := e.quota.limits; q.Total > 0 || q.PerCompany > 0 {
		var err error
		if u, err = e.Upload(ctx, id); err != nil {
			return nil, err
		}
	}
	return e.quota.start(ctx, u.CompanyID, id)
}
