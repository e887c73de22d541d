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
	var old T
	err := t.get(bucket, id, &old)
	exists := err == nil
	if err != nil && !errors.Is(err, sim.ErrNotFound) {
		return err
	}
	for _, x := range idx {
		if !x.unique {
			continue
		}
		if k := x.key(v); k != nil {
			if owner := t.tx.Bucket(x.bucket).Get(k); owner != nil && string(owner) != id {
				return fmt.Errorf("store: %s %s: %s key %q already belongs to %s", kind, id, x.bucket, k, owner)
			}
		}
	}
	for _, x := range idx {
		var oldKey []byte
		if exists {
			oldKey = x.key(old)
		}
		newKey := x.key(v)
		if bytes.Equal(oldKey, newKey) {
			continue
		}
		b := t.tx.Bucket(x.bucket)
		if oldKey != nil {
			if err := b.Delete(oldKey); err != nil {
				return err
			}
		}
		if newKey != nil {
			var val []byte
			if x.unique {
				val = []byte(id)
			}
			if err := b.Put(newKey, val); err != nil {
				return err
			}
		}
	}
	return t.put(bucket, id, v)
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
	c := t.tx.Bucket(idx).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		ids = append(ids, string(k[len(prefix):]))
	}
	for _, id := range ids {
		var v T
		if err := t.get(bucket, id, &v); err != nil {
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

func (t *txn) Company(id string) (sim.Company, error) {
	var c sim.Company
	return c, t.get(bCompanies, id, &c)
}

func (t *txn) PutCompany(c sim.Company) error {
	return putIndexed(t, bCompanies, "company", c.ID, c)
}

func (t *txn) ForEachCompany(fn func(sim.Company) error) error {
	return forEach(t, bCompanies, fn)
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

func (t *txn) User(id string) (sim.User, error) {
	var u sim.User
	return u, t.get(bUsers, id, &u)
}

// PutUser stores u; it fails, writing nothing, when another user has the
// same email (compared case-insensitively).
func (t *txn) PutUser(u sim.User) error {
	return putIndexed(t, bUsers, "user", u.ID, u, userEmailIndex)
}

func (t *txn) UserByEmail(email string) (sim.User, error) {
	if email == "" {
		return sim.User{}, sim.ErrNotFound
	}
	id := t.tx.Bucket(bUsersByEmail).Get([]byte(strings.ToLower(email)))
	if id == nil {
		return sim.User{}, sim.ErrNotFound
	}
	u, err := t.User(string(id))
	if errors.Is(err, sim.ErrNotFound) {
		return u, fmt.Errorf("%w: %s %s in %s", errIndexedNotFound, bUsers, id, bUsersByEmail)
	}
	return u, err
}

func (t *txn) ForEachUser(fn func(sim.User) error) error {
	return forEach(t, bUsers, fn)
}

func (t *txn) Glossary(id string) (sim.Glossary, error) {
	var g sim.Glossary
	return g, t.get(bGlossaries, id, &g)
}

func (t *txn) PutGlossary(g sim.Glossary) error {
	return putIndexed(t, bGlossaries, "glossary", g.ID, g)
}

func (t *txn) ForEachGlossary(fn func(sim.Glossary) error) error {
	return forEach(t, bGlossaries, fn)
}

func (t *txn) Folder(id string) (sim.Folder, error) {
	var f sim.Folder
	return f, t.get(bFolders, id, &f)
}

func (t *txn) PutFolder(f sim.Folder) error {
	return putIndexed(t, bFolders, "folder", f.ID, f)
}

func (t *txn) ForEachFolder(fn func(sim.Folder) error) error {
	return forEach(t, bFolders, fn)
}

var studioProjectCompanyIndex = index[sim.StudioProject]{
	bucket: bStudioProjectsCo,
	key:    func(p sim.StudioProject) []byte { return parentKey(p.CompanyID, p.ID) },
}

func (t *txn) StudioProject(id string) (sim.StudioProject, error) {
	var p sim.StudioProject
	return p, t.get(bStudioProjects, id, &p)
}

func (t *txn) PutStudioProject(p sim.StudioProject) error {
	return putIndexed(t, bStudioProjects, "studio project", p.ID, p, studioProjectCompanyIndex)
}

func (t *txn) ForEachStudioProject(companyID string, fn func(sim.StudioProject) error) error {
	return forEachChild(t, bStudioProjectsCo, bStudioProjects, companyID, fn)
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

func (t *txn) Video(id string) (sim.Video, error) {
	var v sim.Video
	return v, t.get(bVideos, id, &v)
}

func (t *txn) PutVideo(v sim.Video) error {
	return putIndexed(t, bVideos, "video", v.ID, v, videoProjectIndex, videoDueIndex)
}

func (t *txn) ForEachVideo(projectID string, fn func(sim.Video) error) error {
	return forEachChild(t, bVideosByProject, bVideos, projectID, fn)
}

func (t *txn) DueVideos(now time.Time, limit int) ([]string, error) {
	return t.dueIDs(bVideosDue, now, limit, plainID)
}

var artifactDueIndex = index[sim.Artifact]{
	bucket: bArtifactsDue,
	key:    func(a sim.Artifact) []byte { return dueAtKey(a.DueAt, a.ID) },
}

func (t *txn) Artifact(id string) (sim.Artifact, error) {
	var a sim.Artifact
	return a, t.get(bArtifacts, id, &a)
}

func (t *txn) PutArtifact(a sim.Artifact) error {
	return putIndexed(t, bArtifacts, "artifact", a.ID, a, artifactDueIndex)
}

func (t *txn) ForEachArtifact(fn func(sim.Artifact) error) error {
	return forEach(t, bArtifacts, fn)
}

func (t *txn) DueArtifacts(now time.Time, limit int) ([]string, error) {
	return t.dueIDs(bArtifactsDue, now, limit, plainID)
}

func (t *txn) Upload(id string) (sim.Upload, error) {
	var u sim.Upload
	return u, t.get(bUploads, id, &u)
}

func (t *txn) PutUpload(u sim.Upload) error {
	return putIndexed(t, bUploads, "upload", u.ID, u)
}

func (t *txn) ForEachUpload(fn func(sim.Upload) error) error {
	return forEach(t, bUploads, fn)
}

// DeleteUpload deletes an upload; ErrNotFound when there is none.
func (t *txn) DeleteUpload(id string) error {
	b := t.tx.Bucket(bUploads)
	if b.Get([]byte(id)) == nil {
		return sim.ErrNotFound
	}
	return b.Delete([]byte(id))
}
