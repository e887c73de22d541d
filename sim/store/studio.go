package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// The studio resources live in one bucket each, keyed by id, plus secondary
// indexes whose keys carry everything and whose values are empty (except
// users_by_email, whose value is the user id):
//
//	studio_projects_by_company  parentKey(company id, project id)
//	videos_by_project           parentKey(project id, video id)
//	users_by_email              lowercased email -> user id
//	videos_due, artifacts_due   timeKey(DueAt, id), only when DueAt is set
var (
	bCompanies        = []byte("companies")
	bUsers            = []byte("users")
	bUsersByEmail     = []byte("users_by_email")
	bGlossaries       = []byte("glossaries")
	bFolders          = []byte("folders")
	bStudioProjects   = []byte("studio_projects")
	bStudioProjectsCo = []byte("studio_projects_by_company")
	bVideos           = []byte("videos")
	bVideosByProject  = []byte("videos_by_project")
	bVideosDue        = []byte("videos_due")
	bArtifacts        = []byte("artifacts")
	bArtifactsDue     = []byte("artifacts_due")
	bUploads          = []byte("uploads")
	studioData        = [][]byte{bCompanies, bUsers, bUsersByEmail, bGlossaries, bFolders, bStudioProjects, bStudioProjectsCo, bVideos, bVideosByProject, bVideosDue, bArtifacts, bArtifactsDue, bUploads}
)

// companyTx holds the companies, their users, glossaries and folders;
// workTx the studio projects, their videos, the artifacts and uploads.
type (
	companyTx struct{ *txn }
	workTx    struct{ *txn }
)

// errIndexedNotFound reports an index entry whose record is missing: a
// corrupt file, never a client error.
var errIndexedNotFound = errors.New("store: index names a missing record")

// index is a secondary index over the records of one bucket.
type index[T any] struct {
	bucket []byte
	// key is the index entry of a record; nil when the record has none.
	key func(T) []byte
	// unique stores the record id as the entry's value and refuses a
	// second record with the same key.
	unique bool
}

// putIndexed stores v under id in bucket and moves its index entries from
// where the stored version had them. Unique indexes are checked before
// anything is written.
func putIndexed[T any](t *txn, bucket []byte, kind, id string, v T, idx ...index[T]) error {
	if id == "" {
		return fmt.Errorf("store: %s without id", kind)
	}
	old, err := getAs[T](t, bucket, id)
	exists := err == nil
	if err != nil && !errors.Is(err, sim.ErrNotFound) {
		return err
	}
	for _, x := range idx {
		if !x.unique {
			continue
		}
		if k := x.key(v); k != nil {
			if owner := t.kv.get(x.bucket, k); owner != nil && string(owner) != id {
				return fmt.Errorf("store: %s %s: %s key %q already belongs to %s", kind, id, x.bucket, k, owner)
			}
		}
	}
	for _, x := range idx {
		var oldKey, val []byte
		if exists {
			oldKey = x.key(old)
		}
		if x.unique {
			val = []byte(id)
		}
		if err := t.reindex(x.bucket, oldKey, x.key(v), val); err != nil {
			return err
		}
	}
	return t.put(bucket, []byte(id), &v)
}

// parentKey is the entry of a child record in a by-parent index: the length
// of the parent id (so that no parent's prefix is another's), the parent id,
// then the child id. parentKey(parent, "") is the prefix of all the
// parent's children.
func parentKey(parent, id string) []byte {
	k := make([]byte, 0, binary.MaxVarintLen64+len(parent)+len(id))
	k = binary.AppendUvarint(k, uint64(len(parent)))
	k = append(k, parent...)
	return append(k, id...)
}

// forEachChild visits, in id order, the records of bucket that the by-parent
// index idx lists under parent; every record when parent is "". The ids are
// collected first, so fn may write to the store.
func forEachChild[T any](t *txn, idx, bucket []byte, parent string, fn func(T) error) error {
	if parent == "" {
		return forEach(t, bucket, fn)
	}
	prefix := parentKey(parent, "")
	var ids []string
	if err := t.kv.scan(idx, prefix, func(k, _ []byte) (bool, error) {
		if !bytes.HasPrefix(k, prefix) {
			return false, nil
		}
		ids = append(ids, string(k[len(prefix):]))
		return true, nil
	}); err != nil {
		return err
	}
	for _, id := range ids {
		v, err := getAs[T](t, bucket, id)
		if err != nil {
			if errors.Is(err, sim.ErrNotFound) {
				return fmt.Errorf("%w: %s %s in %s", errIndexedNotFound, bucket, id, idx)
			}
			return err
		}
		if err := fn(v); err != nil {
			return err
		}
	}
	return nil
}

// dueAtKey is the entry of a record in a due index: nil when nothing is due.
func dueAtKey(due time.Time, id string) []byte {
	if due.IsZero() {
		return nil
	}
	return timeKey(due, id)
}

func (t companyTx) Company(id string) (sim.Company, error) {
	return getAs[sim.Company](t.txn, bCompanies, id)
}

func (t companyTx) PutCompany(c sim.Company) error {
	return putIndexed(t.txn, bCompanies, "company", c.ID, c)
}

func (t companyTx) ForEachCompany(fn func(sim.Company) error) error {
	return forEach(t.txn, bCompanies, fn)
}

var userEmailIndex = index[sim.User]{
	bucket: bUsersByEmail,
	key: func(u sim.User) []byte {
		if u.Email == "" {
			return nil
		}
		return []byte(strings.ToLower(u.Email))
	},
	unique: true,
}

func (t companyTx) User(id string) (sim.User, error) {
	return getAs[sim.User](t.txn, bUsers, id)
}

// PutUser stores u; it fails, writing nothing, when another user has the
// same email (compared case-insensitively).
func (t companyTx) PutUser(u sim.User) error {
	return putIndexed(t.txn, bUsers, "user", u.ID, u, userEmailIndex)
}

func (t companyTx) UserByEmail(email string) (sim.User, error) {
	if email == "" {
		return sim.User{}, sim.ErrNotFound
	}
	id := t.kv.get(bUsersByEmail, []byte(strings.ToLower(email)))
	if id == nil {
		return sim.User{}, sim.ErrNotFound
	}
	u, err := t.User(string(id))
	if errors.Is(err, sim.ErrNotFound) {
		return u, fmt.Errorf("%w: %s %s in %s", errIndexedNotFound, bUsers, id, bUsersByEmail)
	}
	return u, err
}

func (t companyTx) ForEachUser(fn func(sim.User) error) error {
	return forEach(t.txn, bUsers, fn)
}

func (t companyTx) Glossary(id string) (sim.Glossary, error) {
	return getAs[sim.Glossary](t.txn, bGlossaries, id)
}

func (t companyTx) PutGlossary(g sim.Glossary) error {
	return putIndexed(t.txn, bGlossaries, "glossary", g.ID, g)
}

func (t companyTx) ForEachGlossary(fn func(sim.Glossary) error) error {
	return forEach(t.txn, bGlossaries, fn)
}

func (t companyTx) Folder(id string) (sim.Folder, error) {
	return getAs[sim.Folder](t.txn, bFolders, id)
}

func (t companyTx) PutFolder(f sim.Folder) error {
	return putIndexed(t.txn, bFolders, "folder", f.ID, f)
}

func (t companyTx) ForEachFolder(fn func(sim.Folder) error) error {
	return forEach(t.txn, bFolders, fn)
}

var studioProjectCompanyIndex = index[sim.StudioProject]{
	bucket: bStudioProjectsCo,
	key:    func(p sim.StudioProject) []byte { return parentKey(p.CompanyID, p.ID) },
}

func (t workTx) StudioProject(id string) (sim.StudioProject, error) {
	return getAs[sim.StudioProject](t.txn, bStudioProjects, id)
}

func (t workTx) PutStudioProject(p sim.StudioProject) error {
	return putIndexed(t.txn, bStudioProjects, "studio project", p.ID, p, studioProjectCompanyIndex)
}

func (t workTx) ForEachStudioProject(companyID string, fn func(sim.StudioProject) error) error {
	return forEachChild(t.txn, bStudioProjectsCo, bStudioProjects, companyID, fn)
}

var (
	videoProjectIndex = index[sim.Video]{
		bucket: bVideosByProject,
		key:    func(v sim.Video) []byte { return parentKey(v.ProjectID, v.ID) },
	}
	videoDueIndex = index[sim.Video]{
		bucket: bVideosDue,
		key:    func(v sim.Video) []byte { return dueAtKey(v.DueAt, v.ID) },
	}
)

func (t workTx) Video(id string) (sim.Video, error) {
	return getAs[sim.Video](t.txn, bVideos, id)
}

func (t workTx) PutVideo(v sim.Video) error {
	return putIndexed(t.txn, bVideos, "video", v.ID, v, videoProjectIndex, videoDueIndex)
}

func (t workTx) ForEachVideo(projectID string, fn func(sim.Video) error) error {
	return forEachChild(t.txn, bVideosByProject, bVideos, projectID, fn)
}

func (t workTx) DueVideos(now time.Time, limit int) ([]string, error) {
	return t.dueIDs(bVideosDue, now, limit, plainID)
}

var artifactDueIndex = index[sim.Artifact]{
	bucket: bArtifactsDue,
	key:    func(a sim.Artifact) []byte { return dueAtKey(a.DueAt, a.ID) },
}

func (t workTx) Artifact(id string) (sim.Artifact, error) {
	return getAs[sim.Artifact](t.txn, bArtifacts, id)
}

func (t workTx) PutArtifact(a sim.Artifact) error {
	return putIndexed(t.txn, bArtifacts, "artifact", a.ID, a, artifactDueIndex)
}

func (t workTx) ForEachArtifact(fn func(sim.Artifact) error) error {
	return forEach(t.txn, bArtifacts, fn)
}

func (t workTx) DueArtifacts(now time.Time, limit int) ([]string, error) {
	return t.dueIDs(bArtifactsDue, now, limit, plainID)
}

func (t workTx) Upload(id string) (sim.Upload, error) {
	return getAs[sim.Upload](t.txn, bUploads, id)
}

func (t workTx) PutUpload(u sim.Upload) error {
	return putIndexed(t.txn, bUploads, "upload", u.ID, u)
}

func (t workTx) ForEachUpload(fn func(sim.Upload) error) error {
	return forEach(t.txn, bUploads, fn)
}
