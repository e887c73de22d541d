package engine

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/dubsim/dubsim/sim"
)

// Uploads are the studio's presigned upload slots and the files PUT to them.
type Uploads struct{ *core }

// PresignUpload opens an upload slot for fileName, valid for 24 hours. Its
// id is keyed by the store's secret, so another company cannot guess it.
func (e *Uploads) PresignUpload(ctx context.Context, c sim.Caller, fileName string) (sim.Upload, error) {
	var u sim.Upload
	err := e.update(ctx, func(tx sim.Tx) error {
		now := e.clock.Now()
		seq, err := tx.NextSequence("uploads")
		if err != nil {
			return err
		}
		id := e.uuid("upload", fmt.Sprint(seq))
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
	return e.secretToken(32, "presign", u.ID, u.FileName, fmt.Sprint(u.ExpiresAt.Unix()))
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
	if e.blobs == nil {
		return sim.Upload{}, errors.New("uploads need a blob directory")
	}
	name := "upload-" + id
	n, err := e.blobs.Write(name, body, sim.MaxArtifactBytes)
	if err != nil {
		return sim.Upload{}, err
	}
	format, dur, mf := e.inspectBlob(name)
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

func (e *core) inspectBlob(name string) (string, *float64, sim.MediaFormat) {
	if e.inspect == nil {
		return "", nil, sim.MediaFormat{}
	}
	f, size, err := e.blobs.Open(name)
	if err != nil {
		return "", nil, sim.MediaFormat{}
	}
	defer f.Close()
	format, d, mf, err := e.inspect(f, size)
	if err != nil {
		return format, nil, sim.MediaFormat{}
	}
	s := d.Seconds()
	return format, &s, mf
}
