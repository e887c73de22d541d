package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/statemachine"
)

// Artifacts are the studio's media files: created from a URL, a bucket path,
// an upload or fragments, then processed. The service owns the downloads,
// the registry of background work and the storage quotas.
type Artifacts struct {
	*core
	ids    *idgen
	media  StudioMedia
	files  mediaFiles
	timing sim.StudioTiming
	quota  *quotas
	work   *workSet
	// Downloads run in the background until close, maxDownloads at once.
	bg    context.Context
	stop  context.CancelFunc
	wg    sync.WaitGroup
	slots chan struct{}
	// pending counts the downloads each company has queued or running.
	pendingMu   sync.Mutex
	pending     map[string]int
	fetchDetail bool // Config.FetchErrorDetail
}

func newArtifacts(c *core, ids *idgen, cfg Config, timing sim.StudioTiming) *Artifacts {
	pool := cfg.QuotaPool
	if pool == nil {
		pool = NewQuotaPool()
	}
	e := &Artifacts{core: c, ids: ids, media: cfg.Media, files: mediaFiles{blobs: cfg.Blobs, inspect: cfg.Inspect}, timing: timing,
		quota: &quotas{store: cfg.Store, limits: cfg.Quota, pool: pool, reserved: map[string]int64{}},
		work:  &workSet{bound: cfg.WorkWait}, slots: make(chan struct{}, maxDownloads), pending: map[string]int{},
		fetchDetail: cfg.FetchErrorDetail}
	if e.work.bound <= 0 {
		e.work.bound = DefaultWorkWait
	}
	pool.join(e.quota)
	e.bg, e.stop = context.WithCancel(context.Background())
	return e
}

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

// part is one resolved source of an artifact: the whole source, or one
// fragment.
type part struct {
	size     int64
	duration *float64
	fail     string
	download string // a URL to fetch for real
	upload   string // an upload id, resolved when processing ends
	path     string // the s3Path that names the upload
}

// tally adds what is known at creation of a part dubsim does not download
// to res: its size, duration and failure (the first one counts); an upload
// leaves res unknown until processing ends.
func (p part) tally(res *sim.ArtifactResult, total *float64) {
	switch {
	case p.upload != "":
		res.Known = false
	case p.fail != "" && res.Fail == "":
		res.Fail = p.fail
	}
	res.Size += p.size
	if p.duration != nil {
		*total += *p.duration
	}
}

func (e *Artifacts) resolvePart(c sim.Caller, typ, rawURL, s3Path string) part {
	ref := cmp.Or(rawURL, s3Path)
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
			return part{upload: id, path: s3Path}
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

func (e *Artifacts) resolveParts(c sim.Caller, typ, rawURL, s3Path string, frags []sim.Fragment) []part {
	if frags == nil {
		return []part{e.resolvePart(c, typ, rawURL, s3Path)}
	}
	parts := make([]part, 0, len(frags))
	for _, f := range frags {
		parts = append(parts, e.resolvePart(c, typ, f.URL, f.S3Path))
	}
	return parts
}

func (e *Artifacts) derived(ref string) time.Duration {
	if e.media != nil {
		return e.media.Derived(ref)
	}
	return time.Duration(30+e.ids.seed.Hash("duration", ref)%870) * time.Second
}

// The sizes of files dubsim does not fetch: bytes per second of a video and
// of an audio file, and a script's bytes.
const (
	derivedBitrate  = 2_500_000 / 8
	derivedAudioBPS = 128_000 / 8
	scriptBytes     = 48 * 1024
)

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
// processing. The handler has validated the request's shape.
func (e *Artifacts) CreateArtifact(ctx context.Context, c sim.Caller, na sim.NewArtifact, idem *sim.IdemWrite[sim.Artifact]) (sim.Artifact, error) {
	frags := na.Fragments
	parts := e.resolveParts(c, na.Type, na.URL, na.S3Path, frags)
	download := slices.ContainsFunc(parts, func(p part) bool { return p.download != "" })
	if download {
		if err := e.reserveDownload(c.Company.ID, false); err != nil {
			return sim.Artifact{}, err
		}
	}
	var a sim.Artifact
	err := e.batch(ctx, func(tx sim.Tx) error {
		now := e.clock.Now()
		id, err := e.ids.studioID(tx, now)
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
			file = baseName(key)
		}
		a.S3Path = "uploads/" + id + "/" + file
		if err := e.planArtifact(tx, &a, parts, now); err != nil {
			return err
		}
		if err := tx.Artifacts().Put(a); err != nil {
			return err
		}
		return saveIdem(tx, idem, a, now)
	})
	switch {
	case a.Pending && err == nil:
		e.startDownload(a, parts) // releases the reservation when done
	case download:
		e.releaseDownload(c.Company.ID)
	}
	return a, err
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
	return baseName(p)
}

// baseName is the last element of a slash-separated path, or "source" when
// it names no file ("", ".", "..", a trailing slash).
func baseName(p string) string {
	b := path.Base("/" + p)
	if b == "/" || b == "." || b == ".." {
		return "source"
	}
	return b
}

// planArtifact schedules the transitions and records what is known of the
// result; uploads are resolved when processing ends, downloads when they end.
func (e *Artifacts) planArtifact(tx sim.Tx, a *sim.Artifact, parts []part, now time.Time) error {
	if err := applyArtifactRules(tx, a); err != nil {
		return err
	}
	a.StartAt = now.Add(e.timing.ArtifactStart)
	res := sim.ArtifactResult{Known: true, Origin: "derived"}
	var total float64
	for _, p := range parts {
		a.Pending = a.Pending || p.download != ""
		p.tally(&res, &total)
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
		// As in resolveUploads: the path must name the file, in the
		// artifact's company.
		if u, err := tx.Uploads().Get(p.upload); err == nil && u.Uploaded && u.CompanyID == a.CompanyID && u.S3Path == p.path {
			timed += u.Size
		} else if err != nil && !errors.Is(err, sim.ErrNotFound) {
			return err
		}
	}
	a.DoneAt = a.StartAt.Add(e.timing.ArtifactProcessing(timed))
	a.DueAt = a.StartAt
	return nil
}

// resolveUploads settles what an artifact made from presigned uploads
// becomes, from the uploads as they are now.
func resolveUploads(tx sim.Tx, a *sim.Artifact) error {
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
	// from recordPartMedia.
	media := make([]sim.MediaFormat, len(refs))
	copy(media, a.Result.Media)
	for i, ref := range refs {
		bucket, key, _ := parseS3(ref)
		id, ok := uploadIDOf(bucket, key)
		if !ok {
			continue // a URL or bucket fragment: counted at creation
		}
		u, err := tx.Uploads().Get(id)
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
		if u.Duration == nil && a.Type != sim.ArtifactScript { // not media
			res.Fail = fmt.Sprintf(sim.MsgUnsupportedMedia, u.FileName)
			break
		}
		media[i] = u.Media
		res.Size += u.Size
		if u.Duration != nil {
			total += *u.Duration
		}
		res.Blob = cmp.Or(res.Blob, u.Blob)
	}
	// Fragments that were URLs or bucket paths keep their creation-time share.
	res.Size += a.Result.Size
	if a.Result.Duration != nil {
		total += *a.Result.Duration
	}
	res.Duration = &total
	res.Fail = cmp.Or(res.Fail, a.Result.Fail)
	if res.Fail == "" && a.Fragments != nil && a.Type != sim.ArtifactScript {
		res.Fail = fragmentMismatch(a.Fragments, media)
	}
	a.Result = res
	return nil
}

func schedule(a *sim.Artifact) {
	if a.Status == sim.ArtifactCreated {
		a.DueAt = a.StartAt
	} else {
		a.DueAt = a.DoneAt
	}
}

// settleArtifact applies the artifact's due transitions inside tx.
func (e *Artifacts) settleArtifact(tx sim.Tx, a sim.Artifact, now time.Time) (sim.Artifact, error) {
	if a.Status != sim.ArtifactCreated && a.Status != sim.ArtifactStarted {
		return a, nil
	}
	orig := a
	if !now.Before(a.DoneAt) && !a.Result.Known && !a.Pending {
		if err := resolveUploads(tx, &a); err != nil {
			return a, err
		}
		// An upload that arrived after the creation sets the processing
		// time now.
		if d := a.StartAt.Add(e.timing.ArtifactProcessing(a.Result.Size)); d.After(a.DoneAt) {
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
	if na.Status != orig.Status {
		noteEvent(tx, Event{Resource: "artifact", ID: na.ID, From: orig.Status, To: na.Status, At: now, Company: na.CompanyID, Reason: na.ErrorMessage})
	}
	return na, tx.Artifacts().Put(na)
}

// Artifact returns an artifact of the caller's company with its due
// transitions applied.
func (e *Artifacts) Artifact(ctx context.Context, c sim.Caller, id string) (sim.Artifact, error) {
	now := e.clock.Now()
	// The answer depends on simulated time only: a download it needs is
	// waited for (bounded; after it, the artifact answers as it is).
	_ = e.work.waitFor(ctx, now, id)
	a, err := in(ctx, e.store.View, func(tx sim.Tx) (sim.Artifact, error) {
		a, err := tx.Artifacts().Get(id)
		switch {
		case errors.Is(err, sim.ErrNotFound):
			return a, studioMissing()
		case err == nil && a.CompanyID != c.Company.ID:
			return a, sim.Errorf(sim.CodeAccessDenied, sim.MsgArtifactDenied)
		}
		return a, err
	})
	if err != nil || !statemachine.ArtifactDue(a, now) {
		return a, err
	}
	return in(ctx, e.update, func(tx sim.Tx) (sim.Artifact, error) {
		return settleIn(tx, now, tx.Artifacts().Get, id, e.settleArtifact)
	})
}
