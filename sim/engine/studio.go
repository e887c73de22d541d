package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/statemachine"
)

// StudioMedia is what artifact processing needs to learn of a URL: fixture
// rules, whether dubsim may contact its host, the download itself and the
// deterministic duration of URLs it may not contact.
type StudioMedia interface {
	Rule(rawURL string) (sim.MediaRule, bool)
	MayFetchURL(rawURL string) bool
	Download(ctx context.Context, rawURL string, w io.Writer, limit int64) (int64, error)
	Derived(rawURL string) time.Duration
}

// Inspector reads the format, duration and encoding of a media file.
type Inspector func(ra io.ReaderAt, size int64) (format string, d time.Duration, mf sim.MediaFormat, err error)

// Blobs keeps file bytes (presigned uploads, downloaded artifacts).
type Blobs interface {
	Write(name string, r io.Reader, limit int64) (int64, error)
	Open(name string) (*os.File, int64, error)
	Remove(name string) error
	Clear() error
}

const (
	seqStudio       = "studio"
	studioSweep     = 512
	maxDownloads    = 4
	derivedBitrate  = 2_500_000 / 8 // bytes per second of a derived video's size
	derivedAudioBPS = 128_000 / 8
	scriptBytes     = 48 * 1024
)

func studioDenied() error  { return sim.Errorf(sim.CodeAccessDenied, sim.MsgStudioDenied) }
func studioMissing() error { return sim.Errorf(sim.CodeNotFound, sim.MsgStudioNotFound) }

// studioID returns a new 24-hex identifier built like a MongoDB ObjectId:
// the creation second, a seeded "process" token, then a counter (the store
// sequence from a seeded start). Ids made in the same second follow each
// other, so the B+tree takes a creation at its end rather than at a random
// place (the reason platform project keys follow their sequence too).
func (e *Engine) studioID(tx sim.Tx, now time.Time) (string, error) {
	seq, err := tx.NextSequence(seqStudio)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%08x%s%08x", uint32(now.Unix()), e.ids.Token(4, "studio process"), uint32(seq+e.ids.Hash("studio counter"))), nil
}

// uuid formats a seeded token as a version-4 UUID.
func (e *Engine) uuid(parts ...string) string {
	h := []byte(e.ids.Token(16, parts...))
	h[12] = '4'
	h[16] = "89ab"[h[16]%4]
	return string(h[0:8]) + "-" + string(h[8:12]) + "-" + string(h[12:16]) + "-" + string(h[16:20]) + "-" + string(h[20:32])
}

// ----- callers, companies, users -----

// Caller resolves an API key to its studio identity.
func (e *Engine) Caller(ctx context.Context, apiKey string) (sim.Caller, error) {
	var c sim.Caller
	gen := e.writes.Load()
	if c, ok := e.callers.Get(apiKey, gen); ok {
		return c, nil
	}
	acct, err := e.Account(ctx, apiKey)
	if err != nil {
		return c, err
	}
	c.Account = acct
	err = e.store.View(ctx, func(tx sim.Tx) error {
		u, err := tx.User(acct.UserID)
		if err != nil {
			return fmt.Errorf("caller %s: user %q: %w", acct.Name, acct.UserID, err)
		}
		co, err := tx.Company(u.CompanyID)
		if err != nil {
			return fmt.Errorf("caller %s: company %q: %w", acct.Name, u.CompanyID, err)
		}
		c.User, c.Company = u, co
		return nil
	})
	if err == nil {
		e.callers.Put(apiKey, c, gen)
	}
	return c, err
}

// placeAccount gives a to a user: the fixture user it names, or a new user
// in companyID (a new company when empty). It runs inside the account's
// creation transaction.
func (e *Engine) placeAccount(tx sim.Tx, a *sim.Account, companyID, email string, now time.Time) error {
	if a.UserID != "" {
		if _, err := tx.User(a.UserID); err == nil {
			return nil
		} else if !errors.Is(err, sim.ErrNotFound) {
			return err
		}
		return sim.Errorf(sim.CodeValidation, "user_id %q does not name a user", a.UserID)
	}
	var co sim.Company
	if companyID != "" {
		var err error
		if co, err = tx.Company(companyID); errors.Is(err, sim.ErrNotFound) {
			return sim.Errorf(sim.CodeValidation, "company_id %q does not name a company", companyID)
		} else if err != nil {
			return err
		}
	} else {
		id, err := e.studioID(tx, now)
		if err != nil {
			return err
		}
		co = sim.Company{ID: id, Name: a.Name + " company", CreatedAt: now}
		if err := tx.PutCompany(co); err != nil {
			return err
		}
	}
	id, err := e.studioID(tx, now)
	if err != nil {
		return err
	}
	if email == "" {
		email = "user-" + id[16:] + "@company-" + co.ID[16:] + ".dubsim.test"
	}
	if _, err := tx.UserByEmail(email); err == nil {
		return sim.Errorf(sim.CodeValidation, "user_email %q is already taken", email)
	} else if !errors.Is(err, sim.ErrNotFound) {
		return err
	}
	u := sim.User{ID: id, CompanyID: co.ID, Name: a.Name, Email: email, CreatedAt: now}
	if err := tx.PutUser(u); err != nil {
		return err
	}
	a.UserID = u.ID
	return nil
}

// seedStudio stores the fixture studio data (companies, users, glossaries,
// folders, projects, videos); records already stored keep their state.
func (e *Engine) seedStudio(tx sim.Tx, now time.Time) error {
	st := e.Fixtures().Studio
	if st == nil {
		return nil
	}
	seed := st.Materialize(now)
	for _, c := range seed.Companies {
		if err := putIfMissing(tx.Company, tx.PutCompany, c.ID, c); err != nil {
			return err
		}
	}
	for _, u := range seed.Users {
		if err := putIfMissing(tx.User, tx.PutUser, u.ID, u); err != nil {
			return err
		}
	}
	for _, g := range seed.Glossaries {
		if err := putIfMissing(tx.Glossary, tx.PutGlossary, g.ID, g); err != nil {
			return err
		}
	}
	for _, f := range seed.Folders {
		if err := putIfMissing(tx.Folder, tx.PutFolder, f.ID, f); err != nil {
			return err
		}
	}
	for _, p := range seed.Projects {
		if err := putIfMissing(tx.StudioProject, tx.PutStudioProject, p.ID, p); err != nil {
			return err
		}
	}
	for _, v := range seed.Videos {
		if err := putIfMissing(tx.Video, tx.PutVideo, v.ID, v); err != nil {
			return err
		}
	}
	return nil
}

func putIfMissing[T any](get func(string) (T, error), put func(T) error, id string, v T) error {
	if _, err := get(id); err == nil {
		return nil
	} else if !errors.Is(err, sim.ErrNotFound) {
		return err
	}
	return put(v)
}

// ensureUsers places every account that has no user (stores written before
// the studio interface existed) in a company of its own.
func (e *Engine) ensureUsers(tx sim.Tx, now time.Time) error {
	var orphans []sim.Account
	if err := tx.ForEachAccount(func(a sim.Account) error {
		if a.UserID == "" {
			orphans = append(orphans, a)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, a := range orphans {
		if err := e.placeAccount(tx, &a, "", "", now); err != nil {
			return err
		}
		if err := tx.PutAccount(a); err != nil {
			return err
		}
	}
	return nil
}

// SetAccountStudio changes an account's storage credentials and rate limit.
func (e *Engine) SetAccountStudio(ctx context.Context, apiKey string, ch sim.AccountStudioChange) (sim.Account, error) {
	var a sim.Account
	err := e.update(ctx, func(tx sim.Tx) error {
		var err error
		a, err = tx.Account(apiKey)
		if errors.Is(err, sim.ErrNotFound) {
			return sim.Errorf(sim.CodeNotFound, "No account with api_key %q", apiKey)
		}
		if err != nil {
			return err
		}
		if ch.SetStorage {
			a.Storage = ch.Storage
		}
		if ch.SetRateLimit {
			a.RateLimit = ch.RateLimit
		}
		return tx.PutAccount(a)
	})
	return a, err
}

// ----- presigned uploads -----

// PresignUpload opens an upload slot for fileName, valid for 24 hours.
func (e *Engine) PresignUpload(ctx context.Context, c sim.Caller, fileName string) (sim.Upload, error) {
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

// UploadSignature is the signature of an upload's presigned URL.
func (e *Engine) UploadSignature(u sim.Upload) string {
	return e.ids.Token(32, "presign", u.ID, u.FileName, fmt.Sprint(u.ExpiresAt.Unix()))
}

// Upload returns an upload slot.
func (e *Engine) Upload(ctx context.Context, id string) (sim.Upload, error) {
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
func (e *Engine) ReceiveUpload(ctx context.Context, id string, body io.Reader) (sim.Upload, error) {
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

func (e *Engine) inspectBlob(name string) (string, *float64, sim.MediaFormat) {
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

// ----- artifacts -----

// parseS3 splits s3://bucket/key.
func parseS3(p string) (bucket, key string, ok bool) {
	rest, found := strings.CutPrefix(p, "s3://")
	if !found {
		return "", "", false
	}
	bucket, key, _ = strings.Cut(rest, "/")
	return bucket, key, bucket != "" && key != ""
}

// uploadIDOf returns the upload id of a dubsim temp path
// (s3://<upload bucket>/temp/<id>/<file>).
func uploadIDOf(bucket, key string) (string, bool) {
	if bucket != sim.UploadBucket {
		return "", false
	}
	parts := strings.SplitN(key, "/", 3)
	if len(parts) != 3 || parts[0] != "temp" {
		return "", false
	}
	return parts[1], true
}

// part is one resolved source of an artifact (the whole source, or one
// fragment).
type part struct {
	size     int64
	duration *float64
	fail     string
	download string // a URL to fetch for real
	upload   string // an upload id, resolved when processing ends
}

func secs(d time.Duration) *float64 { s := d.Seconds(); return &s }

// resolvePart learns what it can of one source at creation time.
func (e *Engine) resolvePart(c sim.Caller, typ, rawURL, s3Path string) part {
	ref := rawURL
	if ref == "" {
		ref = s3Path
	}
	if e.media != nil {
		if rule, ok := e.media.Rule(ref); ok {
			switch {
			case rule.Refuse != "":
				return part{fail: rule.Refuse}
			case rule.Fail != "":
				return part{fail: rule.Fail}
			case rule.DurationSeconds > 0:
				d := time.Duration(rule.DurationSeconds * float64(time.Second))
				return part{size: derivedSize(typ, d), duration: secs(d)}
			}
		}
	}
	if s3Path != "" {
		bucket, key, _ := parseS3(s3Path)
		if id, ok := uploadIDOf(bucket, key); ok {
			return part{upload: id}
		}
		if c.Account.Storage == nil || c.Account.Storage.AccessKeyID == "" {
			return part{fail: fmt.Sprintf(sim.MsgNoCredentials, bucket)}
		}
		if !c.Account.Storage.Covers(bucket) {
			return part{fail: fmt.Sprintf(sim.MsgBucketNotCovered, bucket)}
		}
		d := e.derived(s3Path)
		return part{size: derivedSize(typ, d), duration: secs(d)}
	}
	if e.media != nil && e.media.MayFetchURL(rawURL) {
		return part{download: rawURL}
	}
	d := e.derived(rawURL)
	return part{size: derivedSize(typ, d), duration: secs(d)}
}

// resolveParts resolves an artifact's source: its fragments, or its url or
// s3Path.
func (e *Engine) resolveParts(c sim.Caller, typ, rawURL, s3Path string, frags []sim.Fragment) []part {
	if frags == nil {
		return []part{e.resolvePart(c, typ, rawURL, s3Path)}
	}
	parts := make([]part, 0, len(frags))
	for _, f := range frags {
		parts = append(parts, e.resolvePart(c, typ, f.URL, f.S3Path))
	}
	return parts
}

func (e *Engine) derived(ref string) time.Duration {
	if e.media != nil {
		return e.media.Derived(ref)
	}
	return time.Duration(30+e.ids.Hash("duration", ref)%870) * time.Second
}

func derivedSize(typ string, d time.Duration) int64 {
	switch typ {
	case sim.ArtifactScript:
		return scriptBytes
	case sim.ArtifactAudio:
		return int64(d.Seconds() * derivedAudioBPS)
	}
	return int64(d.Seconds() * derivedBitrate)
}

// CreateArtifact creates an artifact in status created and schedules its
// processing. The request's shape has been validated by the handler.
func (e *Engine) CreateArtifact(ctx context.Context, c sim.Caller, na sim.NewArtifact) (sim.Artifact, error) {
	frags := na.Fragments
	parts := e.resolveParts(c, na.Type, na.URL, na.S3Path, frags)
	var a sim.Artifact
	err := e.batch(ctx, func(tx sim.Tx) error {
		now := e.clock.Now()
		id, err := e.studioID(tx, now)
		if err != nil {
			return err
		}
		a = sim.Artifact{ID: id, CompanyID: c.Company.ID, CreatedBy: c.User.ID, APIKey: c.Account.APIKey,
			Name: na.Name, Type: na.Type, Status: sim.ArtifactCreated, UploadMethod: sim.UploadDirectURL,
			SourceURL: na.URL, SourcePath: na.S3Path, Fragments: frags, S3Bucket: sim.ArtifactBucket,
			CreatedAt: now, UpdatedAt: now}
		var file string
		switch {
		case frags != nil:
			a.SourceKind, a.UploadMethod = sim.SourceFragments, sim.UploadFragments
			file = "fragments"
		case na.URL != "":
			a.SourceKind = sim.SourceURL
			file = fileNameOf(na.URL)
		default:
			a.SourceKind = sim.SourceBucket
			bucket, key, _ := parseS3(na.S3Path)
			if up, ok := uploadIDOf(bucket, key); ok {
				a.SourceKind, a.UploadID = sim.SourceUpload, up
			}
			file = path.Base(key)
		}
		a.S3Path = "uploads/" + id + "/" + file
		if err := e.planArtifact(tx, &a, parts, now); err != nil {
			return err
		}
		if err := tx.PutArtifact(a); err != nil {
			return err
		}
		return saveIntent(ctx, tx, a, now)
	})
	if err != nil {
		return a, err
	}
	markIntent(ctx)
	if a.Pending {
		e.startDownload(a, parts)
	}
	return a, nil
}

func fileNameOf(rawURL string) string {
	p := rawURL
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if i := strings.Index(p, "://"); i >= 0 {
		p = p[i+3:]
	}
	_, p, _ = strings.Cut(p, "/")
	b := path.Base("/" + p)
	if b == "/" || b == "." || b == "" {
		return "source"
	}
	return b
}

// planArtifact schedules the transitions and records what is known of the
// result; uploads are resolved when processing ends, downloads when they do.
func (e *Engine) planArtifact(tx sim.Tx, a *sim.Artifact, parts []part, now time.Time) error {
	if err := applyArtifactRules(tx, a); err != nil {
		return err
	}
	a.StartAt = now.Add(e.studio.ArtifactStart)
	res := sim.ArtifactResult{Known: true, Origin: "derived"}
	var total float64
	for _, p := range parts {
		switch {
		case p.download != "":
			a.Pending = true
		case p.upload != "":
			res.Known = false // resolved from the upload when processing ends
		case p.fail != "" && res.Fail == "":
			res.Fail = p.fail
		}
		res.Size += p.size
		if p.duration != nil {
			total += *p.duration
		}
	}
	res.Duration = &total
	if forced := a.Result; forced.Known { // an outcome rule decided
		res.Known, res.Fail, res.Origin = true, forced.Fail, forced.Origin
		a.Pending = false
	}
	a.Result = res
	timed := res.Size // plus the uploads already PUT, for the processing time
	for _, p := range parts {
		if p.upload == "" {
			continue
		}
		if u, err := tx.Upload(p.upload); err == nil && u.Uploaded && u.CompanyID == a.CompanyID {
			timed += u.Size
		} else if err != nil && !errors.Is(err, sim.ErrNotFound) {
			return err
		}
	}
	a.DoneAt = a.StartAt.Add(e.studio.ArtifactProcessing(timed))
	a.DueAt = a.StartAt
	return nil
}

// resolveUploads settles what an artifact made from presigned uploads
// becomes, from the uploads as they are now.
func resolveUploads(tx sim.Tx, a *sim.Artifact, inspectFail func(sim.Upload) string) error {
	if a.Result.Known {
		return nil
	}
	refs := []string{a.SourcePath}
	if a.Fragments != nil {
		refs = refs[:0]
		for _, f := range a.Fragments {
			refs = append(refs, f.S3Path)
		}
	}
	res := sim.ArtifactResult{Known: true, Origin: "upload"}
	var total float64
	// The fragments' formats: the uploads' as read below, the downloads'
	// as kept by recordPartMedia.
	media := make([]sim.MediaFormat, len(refs))
	copy(media, a.Result.Media)
	for i, ref := range refs {
		bucket, key, _ := parseS3(ref)
		id, ok := uploadIDOf(bucket, key)
		if !ok {
			continue // a URL or bucket fragment: counted at creation
		}
		u, err := tx.Upload(id)
		if err == nil && u.S3Path != ref {
			err = sim.ErrNotFound // the same upload id with another file name or bucket
		}
		if errors.Is(err, sim.ErrNotFound) || (err == nil && (u.CompanyID != a.CompanyID || !u.Uploaded)) {
			if err == nil && !u.Uploaded && a.DoneAt.After(u.ExpiresAt) {
				res.Fail = fmt.Sprintf(sim.MsgUploadExpired, ref, sim.StudioTime(u.ExpiresAt))
			} else {
				res.Fail = fmt.Sprintf(sim.MsgUploadNotFound, ref)
			}
			break
		}
		if err != nil {
			return err
		}
		if msg := inspectFail(u); msg != "" && a.Type != sim.ArtifactScript {
			res.Fail = msg
			break
		}
		media[i] = u.Media
		res.Size += u.Size
		if u.Duration != nil {
			total += *u.Duration
		}
		if res.Blob == "" {
			res.Blob = u.Blob
		}
	}
	// Fragments that were URLs or bucket paths keep their creation-time share.
	res.Size += a.Result.Size
	if a.Result.Duration != nil {
		total += *a.Result.Duration
	}
	res.Duration = &total
	if a.Result.Fail != "" && res.Fail == "" {
		res.Fail = a.Result.Fail
	}
	if res.Fail == "" && a.Fragments != nil && a.Type != sim.ArtifactScript {
		res.Fail = fragmentMismatch(a.Fragments, media)
	}
	a.Result = res
	return nil
}

func uploadMediaFail(u sim.Upload) string {
	if u.Duration == nil {
		return fmt.Sprintf(sim.MsgUnsupportedMedia, u.FileName)
	}
	return ""
}

// settleArtifact applies the artifact's due transitions inside tx.
func (e *Engine) settleArtifact(tx sim.Tx, a sim.Artifact, now time.Time) (sim.Artifact, error) {
	if a.Status != sim.ArtifactCreated && a.Status != sim.ArtifactStarted {
		return a, nil
	}
	orig := a
	if !now.Before(a.DoneAt) && !a.Result.Known && !a.Pending {
		if err := resolveUploads(tx, &a, uploadMediaFail); err != nil {
			return a, err
		}
		// The upload may have arrived after the creation: its size sets
		// the processing time now.
		if d := a.StartAt.Add(e.studio.ArtifactProcessing(a.Result.Size)); d.After(a.DoneAt) {
			a.DoneAt = d
			if a.Status == sim.ArtifactStarted {
				a.DueAt = d
			}
		}
	}
	na := statemachine.NextArtifact(a, now)
	if na.Status == orig.Status && na.DueAt.Equal(orig.DueAt) && na.Result.Known == orig.Result.Known {
		return orig, nil
	}
	return na, tx.PutArtifact(na) // update persists the clock with it

}

// Artifact returns an artifact of the caller's company with its due
// transitions applied.
func (e *Engine) Artifact(ctx context.Context, c sim.Caller, id string) (sim.Artifact, error) {
	var a sim.Artifact
	now := e.clock.Now()
	// A download whose result is needed by now is waited for (bounded):
	// the answer depends on simulated time only. After the bound the
	// artifact answers as it is (still upload_started).
	_ = e.waitWork(ctx, now, id)
	err := e.store.View(ctx, func(tx sim.Tx) error {
		var err error
		a, err = tx.Artifact(id)
		if errors.Is(err, sim.ErrNotFound) {
			return studioMissing()
		}
		if err != nil {
			return err
		}
		if a.CompanyID != c.Company.ID {
			return sim.Errorf(sim.CodeAccessDenied, sim.MsgArtifactDenied)
		}
		return nil
	})
	if err != nil || !artifactDue(a, now) {
		return a, err
	}
	err = e.update(ctx, func(tx sim.Tx) error {
		cur, err := tx.Artifact(id)
		if err != nil {
			return err
		}
		a, err = e.settleArtifact(tx, cur, now)
		return err
	})
	return a, err
}

func artifactDue(a sim.Artifact, now time.Time) bool {
	return !a.DueAt.IsZero() && !now.Before(a.DueAt)
}

// ----- downloads -----

// startDownload fetches the URL parts of an artifact in the background;
// when done it records the result and schedules the completion at the
// simulated time processing ends (start + processing time of the size),
// however long the download took in real time. The work is registered
// before startDownload returns, so a clock advance or a read that needs its
// result waits for it (see work.go).
func (e *Engine) startDownload(a sim.Artifact, parts []part) {
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

func (e *Engine) download(w *work, typ string, i int, rawURL string) (int64, *float64, string, sim.MediaFormat, string) {
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
		n, dlErr = e.media.Download(e.bg, rawURL, countingWriter{w: w, wr: pw}, sim.MaxArtifactBytes)
		pw.CloseWithError(dlErr)
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

// WaitDownloads blocks until every running artifact download has recorded
// its result (tests call it instead of sleeping).
func (e *Engine) WaitDownloads() { e.dlWG.Wait() }

// restartDownloads resumes the downloads a previous process left unfinished.
func (e *Engine) restartDownloads(ctx context.Context) error {
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

// ----- studio projects -----

func (e *Engine) ownedStudioProject(tx sim.Tx, c sim.Caller, id string) (sim.StudioProject, error) {
	p, err := tx.StudioProject(id)
	if errors.Is(err, sim.ErrNotFound) {
		return p, studioMissing()
	}
	if err == nil && p.CompanyID != c.Company.ID {
		return p, studioDenied()
	}
	return p, err
}

// StudioProjects lists the caller's company's projects, newest first.
func (e *Engine) StudioProjects(ctx context.Context, c sim.Caller) ([]sim.StudioProject, error) {
	out := []sim.StudioProject{}
	err := e.store.View(ctx, func(tx sim.Tx) error {
		return tx.ForEachStudioProject(c.Company.ID, func(p sim.StudioProject) error {
			out = append(out, p)
			return nil
		})
	})
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.After(out[j].CreatedAt)
		}
		return out[i].ID > out[j].ID
	})
	return out, err
}

// StudioProject returns a project of the caller's company.
func (e *Engine) StudioProject(ctx context.Context, c sim.Caller, id string) (sim.StudioProject, error) {
	gen := e.writes.Load()
	if p, ok := e.studioProjects.Get(id, gen); ok && p.CompanyID == c.Company.ID {
		return p, nil
	}
	var p sim.StudioProject
	err := e.store.View(ctx, func(tx sim.Tx) error {
		var err error
		p, err = e.ownedStudioProject(tx, c, id)
		return err
	})
	if err == nil {
		e.studioProjects.Put(id, p, gen)
	}
	return p, err
}

// applyProjectInput checks and applies the fields of in to p.
func applyProjectInput(tx sim.Tx, c sim.Caller, p *sim.StudioProject, in sim.StudioProjectInput) error {
	if in.Name != nil {
		p.Name = *in.Name
	}
	if in.ManagerEmail != nil {
		u, err := tx.UserByEmail(*in.ManagerEmail)
		if errors.Is(err, sim.ErrNotFound) {
			return sim.Errorf(sim.CodeValidation, "managerEmail: no user with email %s", *in.ManagerEmail)
		}
		if err != nil {
			return err
		}
		if u.CompanyID != c.Company.ID {
			return sim.Errorf(sim.CodeValidation, "managerEmail: %s does not belong to your company; the manager must be a user of the same company as the API key's user", *in.ManagerEmail)
		}
		p.ManagerID = u.ID
	}
	for _, g := range []struct {
		field string
		in    *string
		dst   *string
		kind  sim.GlossaryKind
	}{
		{"translationsGlossaryId", in.TranslationsGlossaryID, &p.TranslationGlossary, sim.GlossaryTranslation},
		{"voicesGlossaryId", in.VoicesGlossaryID, &p.VoicesGlossary, sim.GlossaryVoices},
		{"pronunciationGlossaryId", in.PronunciationGlossaryID, &p.PronunciationGlossary, sim.GlossaryPronunciation},
	} {
		if g.in == nil {
			continue
		}
		if *g.in == "" {
			*g.dst = ""
			continue
		}
		gl, err := tx.Glossary(*g.in)
		if errors.Is(err, sim.ErrNotFound) {
			return sim.Errorf(sim.CodeValidation, "%s: glossary %s does not exist", g.field, *g.in)
		}
		if err != nil {
			return err
		}
		if gl.CompanyID != c.Company.ID {
			return sim.Errorf(sim.CodeValidation, "%s: glossary %s does not belong to your organization", g.field, *g.in)
		}
		if gl.Kind != g.kind {
			return sim.Errorf(sim.CodeValidation, "%s: glossary %s is a %s glossary; this field takes a %s glossary", g.field, *g.in, gl.Kind, g.kind)
		}
		*g.dst = gl.ID
	}
	return nil
}

// CreateStudioProject creates a project in the caller's company.
func (e *Engine) CreateStudioProject(ctx context.Context, c sim.Caller, in sim.StudioProjectInput) (sim.StudioProject, error) {
	var p sim.StudioProject
	err := e.batch(ctx, func(tx sim.Tx) error {
		now := e.clock.Now()
		p = sim.StudioProject{CompanyID: c.Company.ID, Status: sim.StudioProjectStatusNew, ManagerID: c.User.ID,
			CreatedBy: c.User.ID, CreatedAt: now, UpdatedAt: now}
		if err := applyProjectInput(tx, c, &p, in); err != nil {
			return err
		}
		id, err := e.studioID(tx, now)
		if err != nil {
			return err
		}
		p.ID = id
		if err := tx.PutStudioProject(p); err != nil {
			return err
		}
		return saveIntent(ctx, tx, p, now)
	})
	if err == nil {
		markIntent(ctx)
	}
	return p, err
}

// UpdateStudioProject changes a project of the caller's company.
func (e *Engine) UpdateStudioProject(ctx context.Context, c sim.Caller, id string, in sim.StudioProjectInput) (sim.StudioProject, error) {
	var p sim.StudioProject
	err := e.update(ctx, func(tx sim.Tx) error {
		var err error
		if p, err = e.ownedStudioProject(tx, c, id); err != nil {
			return err
		}
		if err := applyProjectInput(tx, c, &p, in); err != nil {
			return err
		}
		p.UpdatedAt = e.clock.Now()
		return tx.PutStudioProject(p)
	})
	return p, err
}

// ----- videos -----

func usableArtifact(tx sim.Tx, c sim.Caller, field, id string, types ...string) (sim.Artifact, error) {
	a, err := tx.Artifact(id)
	if errors.Is(err, sim.ErrNotFound) {
		return a, sim.Errorf(sim.CodeValidation, "%s: artifact %s does not exist", field, id)
	}
	if err != nil {
		return a, err
	}
	if a.CompanyID != c.Company.ID {
		return a, sim.Errorf(sim.CodeValidation, "%s: artifact %s does not belong to your company", field, id)
	}
	if !slices.Contains(types, a.Type) {
		return a, sim.Errorf(sim.CodeValidation, "%s: artifact %s is of type %s; this field takes an artifact of type %s", field, id, a.Type, strings.Join(types, " or "))
	}
	if !a.Usable() {
		msg := ""
		if a.Status == sim.ArtifactFailed {
			msg = ": " + a.ErrorMessage
		}
		return a, sim.Errorf(sim.CodeValidation, "%s: artifact %s has status %s%s; an artifact is usable only when its status is upload_completed", field, id, a.Status, msg)
	}
	return a, nil
}

// CreateVideo adds a video to a project of the caller's company; it starts
// in status new and moves on by itself (see NextVideo).
func (e *Engine) CreateVideo(ctx context.Context, c sim.Caller, projectID string, nv sim.NewVideo) (sim.Video, error) {
	if nv.SourceLanguage == "multi" && !c.Company.MultiLanguage {
		return sim.Video{}, sim.Errorf(sim.CodeValidation, "sourceLanguage: multi is not enabled for your organization; an administrator enables it through your account manager")
	}
	// Downloads of the artifacts named whose results are needed by now
	// are waited for, as by a read of the artifact.
	for _, id := range []string{nv.SourceArtifactID, nv.BackgroundArtifactID, nv.InternationalMixArtifactID, nv.VocalsHitlArtifactID} {
		if id != "" {
			_ = e.waitWork(ctx, e.clock.Now(), id)
		}
	}
	var v sim.Video
	err := e.batch(ctx, func(tx sim.Tx) error {
		now := e.clock.Now()
		p, err := e.ownedStudioProject(tx, c, projectID)
		if err != nil {
			return err
		}
		// Apply due artifact transitions first, so an artifact whose
		// processing has ended by now counts as usable.
		for _, ref := range []struct{ field, id string }{{"sourceArtifactId", nv.SourceArtifactID}, {"backgroundWavArtifactId", nv.BackgroundArtifactID},
			{"internationalMixWavArtifactId", nv.InternationalMixArtifactID}, {"vocalsHitlWavArtifactId", nv.VocalsHitlArtifactID}} {
			if ref.id == "" {
				continue
			}
			if a, err := tx.Artifact(ref.id); err == nil && artifactDue(a, now) {
				if _, err := e.settleArtifact(tx, a, now); err != nil {
					return err
				}
			}
		}
		src, err := usableArtifact(tx, c, "sourceArtifactId", nv.SourceArtifactID, sim.ArtifactVideo, sim.ArtifactAudio)
		if err != nil {
			return err
		}
		for _, ref := range []struct{ field, id string }{{"backgroundWavArtifactId", nv.BackgroundArtifactID},
			{"internationalMixWavArtifactId", nv.InternationalMixArtifactID}, {"vocalsHitlWavArtifactId", nv.VocalsHitlArtifactID}} {
			if ref.id == "" {
				continue
			}
			if _, err := usableArtifact(tx, c, ref.field, ref.id, sim.ArtifactAudio); err != nil {
				return err
			}
		}
		id, err := e.studioID(tx, now)
		if err != nil {
			return err
		}
		v = sim.Video{ID: id, ProjectID: p.ID, CompanyID: p.CompanyID, Name: nv.Name, Status: sim.VideoNew,
			ProcessingType: nv.WorkflowType, SrcLang: nv.SourceLanguage, DstLangs: nv.TargetLanguages,
			SourceArtifactID: nv.SourceArtifactID, BackgroundArtifactID: nv.BackgroundArtifactID,
			InternationalMixArtifactID: nv.InternationalMixArtifactID, VocalsHitlArtifactID: nv.VocalsHitlArtifactID,
			Remark: nv.Remark, StringVariables: nv.StringVariables, Pipeline: nv.Pipeline,
			DueAt: now.Add(e.studio.VideoStart), CreatedBy: c.User.ID, CreatedAt: now, UpdatedAt: now}
		if src.Duration != nil {
			d := *src.Duration
			v.DurationSeconds = &d
		}
		if err := tx.PutVideo(v); err != nil {
			return err
		}
		return saveIntent(ctx, tx, v, now)
	})
	if err == nil {
		markIntent(ctx)
	}
	return v, err
}

func (e *Engine) settleVideo(tx sim.Tx, v sim.Video, now time.Time) (sim.Video, error) {
	nv := statemachine.NextVideo(v, now, e.studio)
	if nv.Status == v.Status && nv.DueAt.Equal(v.DueAt) {
		return v, nil
	}
	return nv, tx.PutVideo(nv) // update persists the clock with it
}

// Videos lists the videos of a project of the caller's company, oldest
// first, with due transitions applied.
func (e *Engine) Videos(ctx context.Context, c sim.Caller, projectID string) ([]sim.Video, error) {
	now := e.clock.Now()
	gen := e.writes.Load()
	if l, ok := e.videoLists.Get(projectID, gen); ok && l.company == c.Company.ID && (l.until.IsZero() || now.Before(l.until)) {
		return slices.Clone(l.videos), nil
	}
	out := []sim.Video{}
	due := false
	read := func(tx sim.Tx) error {
		out, due = out[:0], false
		if _, err := e.ownedStudioProject(tx, c, projectID); err != nil {
			return err
		}
		return tx.ForEachVideo(projectID, func(v sim.Video) error {
			if !v.DueAt.IsZero() && !now.Before(v.DueAt) {
				due = true
			}
			out = append(out, v)
			return nil
		})
	}
	if err := e.store.View(ctx, read); err != nil || !due {
		sortVideos(out)
		if err == nil {
			l := videoList{videos: slices.Clone(out), company: c.Company.ID}
			for _, v := range out {
				if !v.DueAt.IsZero() && (l.until.IsZero() || v.DueAt.Before(l.until)) {
					l.until = v.DueAt
				}
			}
			e.videoLists.Put(projectID, l, gen)
		}
		return out, err
	}
	err := e.update(ctx, func(tx sim.Tx) error {
		if err := read(tx); err != nil {
			return err
		}
		for i, v := range out {
			nv, err := e.settleVideo(tx, v, now)
			if err != nil {
				return err
			}
			out[i] = nv
		}
		return nil
	})
	sortVideos(out)
	return out, err
}

func sortVideos(vs []sim.Video) {
	sort.SliceStable(vs, func(i, j int) bool {
		if !vs[i].CreatedAt.Equal(vs[j].CreatedAt) {
			return vs[i].CreatedAt.Before(vs[j].CreatedAt)
		}
		return vs[i].ID < vs[j].ID
	})
}

func (e *Engine) ownedVideo(tx sim.Tx, c sim.Caller, projectID, videoID string) (sim.Video, error) {
	if _, err := e.ownedStudioProject(tx, c, projectID); err != nil {
		return sim.Video{}, err
	}
	v, err := tx.Video(videoID)
	if errors.Is(err, sim.ErrNotFound) || (err == nil && v.ProjectID != projectID) {
		return v, studioMissing()
	}
	return v, err
}

// Video returns one video of a project of the caller's company.
func (e *Engine) Video(ctx context.Context, c sim.Caller, projectID, videoID string) (sim.Video, error) {
	var v sim.Video
	now := e.clock.Now()
	err := e.store.View(ctx, func(tx sim.Tx) error {
		var err error
		v, err = e.ownedVideo(tx, c, projectID, videoID)
		return err
	})
	if err != nil || v.DueAt.IsZero() || now.Before(v.DueAt) {
		return v, err
	}
	err = e.update(ctx, func(tx sim.Tx) error {
		cur, err := e.ownedVideo(tx, c, projectID, videoID)
		if err != nil {
			return err
		}
		v, err = e.settleVideo(tx, cur, now)
		return err
	})
	return v, err
}

// UpdateVideo applies a video update. A status written by the client stops
// the automatic lifecycle of the video.
func (e *Engine) UpdateVideo(ctx context.Context, c sim.Caller, projectID, videoID string, u sim.VideoUpdate) (sim.Video, error) {
	var v sim.Video
	err := e.update(ctx, func(tx sim.Tx) error {
		now := e.clock.Now()
		cur, err := e.ownedVideo(tx, c, projectID, videoID)
		if err != nil {
			return err
		}
		if v, err = e.settleVideo(tx, cur, now); err != nil {
			return err
		}
		langs := v.DstLangs
		if u.HasDstLangs {
			langs = u.DstLangs
		}
		if u.HasGuidance && u.Guidance != nil {
			keys := make([]string, 0, len(u.Guidance.ByLang))
			for k := range u.Guidance.ByLang {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if !slices.Contains(langs, k) {
					return sim.Errorf(sim.CodeValidation, "translationGuidance.byLang: %s is not a target language of the video (%s)", k, strings.Join(langs, ", "))
				}
			}
		}
		if u.HasDstLangs && !u.HasGuidance && v.Guidance != nil {
			var stale []string
			for k := range v.Guidance.ByLang {
				if !slices.Contains(langs, k) {
					stale = append(stale, k)
				}
			}
			if len(stale) > 0 {
				sort.Strings(stale)
				return sim.Errorf(sim.CodeValidation, "dstLangs: the video's translationGuidance.byLang has entries for %s, which would no longer be target languages; send translationGuidance in the same request (or null to remove it)", strings.Join(stale, ", "))
			}
		}
		if u.Name != nil {
			v.Name = *u.Name
		}
		if u.HasDstLangs {
			v.DstLangs = u.DstLangs
		}
		if u.ProcessingType != nil {
			v.ProcessingType = *u.ProcessingType
		}
		if u.Status != nil {
			v.Status = *u.Status
			v.DueAt = time.Time{}
		}
		if u.Remark != nil {
			r := *u.Remark
			v.Remark = &r
		}
		if u.ClearRemark {
			v.Remark = nil
		}
		if u.HasStringVariables {
			v.StringVariables = u.StringVariables
		}
		if u.HasGuidance {
			v.Guidance = u.Guidance
		}
		v.UpdatedAt = now
		return tx.PutVideo(v)
	})
	return v, err
}

// ----- sweep -----

// sweepStudio applies due artifact and video transitions; it returns how
// many records it changed.
func (e *Engine) sweepStudio(ctx context.Context, now time.Time) (int, error) {
	total := 0
	for {
		n := 0
		err := e.update(ctx, func(tx sim.Tx) error {
			ids, err := tx.DueArtifacts(now, studioSweep)
			if err != nil {
				return err
			}
			for _, id := range ids {
				a, err := tx.Artifact(id)
				if err != nil {
					return err
				}
				na, err := e.settleArtifact(tx, a, now)
				if err != nil {
					return err
				}
				if na.DueAt.Equal(a.DueAt) && !na.DueAt.IsZero() {
					// Cannot progress (should not happen); unschedule so
					// the sweep cannot spin on it.
					na.DueAt = time.Time{}
					if err := tx.PutArtifact(na); err != nil {
						return err
					}
				}
			}
			vids, err := tx.DueVideos(now, studioSweep)
			if err != nil {
				return err
			}
			for _, id := range vids {
				v, err := tx.Video(id)
				if err != nil {
					return err
				}
				if _, err := e.settleVideo(tx, v, now); err != nil {
					return err
				}
			}
			n = max(len(ids), len(vids))
			return nil
		})
		total += n
		if err != nil || n < studioSweep {
			return total, err
		}
	}
}

// ----- control -----

// ForceArtifact decides how an artifact's processing ends: "ready"
// (upload_completed, with optional size and duration) or "error"
// (upload_failed, with a message). With now, the
// processing ends at once.
func (e *Engine) ForceArtifact(ctx context.Context, id, outcome, message string, size *int64, duration *float64, now bool) (sim.Artifact, error) {
	var a sim.Artifact
	if err := checkOutcome(outcome); err != nil {
		return a, err
	}
	err := e.update(ctx, func(tx sim.Tx) error {
		var err error
		a, err = tx.Artifact(id)
		if errors.Is(err, sim.ErrNotFound) {
			return sim.Errorf(sim.CodeNotFound, "Artifact %s not found", id)
		}
		if err != nil {
			return err
		}
		if a.Status == sim.ArtifactCompleted || a.Status == sim.ArtifactFailed {
			return sim.Errorf(sim.CodeConflict, "Artifact %s has already finished processing (status %s)", id, a.Status)
		}
		at := e.clock.Now()
		res := sim.ArtifactResult{Known: true, Origin: "forced", Size: a.Result.Size, Duration: a.Result.Duration}
		if outcome == sim.ForceError {
			if message == "" {
				message = sim.DefaultForcedError
			}
			res.Fail = message
		}
		if size != nil {
			res.Size = *size
		}
		if duration != nil {
			d := *duration
			res.Duration = &d
		}
		a.Result, a.Pending = res, false
		if now {
			a.StartAt, a.DoneAt = minTime(a.StartAt, at), at
		}
		if a.Status == sim.ArtifactCreated {
			a.DueAt = a.StartAt
		} else {
			a.DueAt = a.DoneAt
		}
		if a, err = e.settleArtifact(tx, a, at); err != nil {
			return err
		}
		return tx.PutArtifact(a)
	})
	return a, err
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// SetVideoStatus moves a video to a status at once, from the control API;
// with auto, the automatic lifecycle continues from there.
func (e *Engine) SetVideoStatus(ctx context.Context, id, status string, auto bool) (sim.Video, error) {
	var v sim.Video
	if !slices.Contains(sim.VideoStatuses, status) {
		return v, sim.Errorf(sim.CodeValidation, "status must be one of %s; got %q", strings.Join(sim.VideoStatuses, ", "), status)
	}
	err := e.update(ctx, func(tx sim.Tx) error {
		var err error
		v, err = tx.Video(id)
		if errors.Is(err, sim.ErrNotFound) {
			return sim.Errorf(sim.CodeNotFound, "Video %s not found", id)
		}
		if err != nil {
			return err
		}
		now := e.clock.Now()
		v.Status, v.UpdatedAt, v.DueAt = status, now, time.Time{}
		if auto && status != sim.VideoCompleted {
			v.DueAt = now
			if status == sim.VideoInProgress {
				var d time.Duration
				if v.DurationSeconds != nil {
					d = time.Duration(*v.DurationSeconds * float64(time.Second))
				}
				v.DueAt = now.Add(e.studio.VideoProcessing(d))
			} else {
				v.DueAt = now.Add(e.studio.VideoStart)
			}
		}
		return tx.PutVideo(v)
	})
	return v, err
}

// applyArtifactRules consumes one use of the first outcome rule matching a
// new artifact (rules with resource "artifact").
func applyArtifactRules(tx sim.Tx, a *sim.Artifact) error {
	rules, err := loadOutcomeRules(tx)
	if err != nil || len(rules) == 0 {
		return err
	}
	for i, r := range rules {
		if !r.MatchesArtifact(*a) {
			continue
		}
		a.Result = sim.ArtifactResult{Known: true, Origin: "forced"}
		if r.Outcome == sim.ForceError {
			a.Result.Fail = r.ErrorMessage
		}
		rules[i].Remaining--
		if rules[i].Remaining == 0 {
			rules = slices.Delete(rules, i, i+1)
		}
		return saveOutcomeRules(tx, rules)
	}
	return nil
}
