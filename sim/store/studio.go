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

// table is where one kind of record lives: its bucket, keyed by id, and
// its indexes.
type table[T any] struct {
	bucket []byte
	kind   string
	id     func(T) string
	idx    []index[T]
}

// The tables of the records a transaction hands out as sim.Records.
var (
	accountTable  = table[sim.Account]{bucket: bAccounts, kind: "account", id: func(a sim.Account) string { return a.APIKey }}
	companyTable  = table[sim.Company]{bucket: bCompanies, kind: "company", id: func(c sim.Company) string { return c.ID }}
	glossaryTable = table[sim.Glossary]{bucket: bGlossaries, kind: "glossary", id: func(g sim.Glossary) string { return g.ID }}
	folderTable   = table[sim.Folder]{bucket: bFolders, kind: "folder", id: func(f sim.Folder) string { return f.ID }}
	uploadTable   = table[sim.Upload]{bucket: bUploads, kind: "upload", id: func(u sim.Upload) string { return u.ID }}

	userTable = table[sim.User]{
		bucket: bUsers, kind: "user", id: func(u sim.User) string { return u.ID },
		idx: []index[sim.User]{{
			bucket: bUsersByEmail,
			key: func(u sim.User) []byte {
				if u.Email == "" {
					return nil
				}
				return []byte(strings.ToLower(u.Email))
			},
			unique: true,
		}},
	}
	studioProjectTable = table[sim.StudioProject]{
		bucket: bStudioProjects, kind: "studio project", id: func(p sim.StudioProject) string { return p.ID },
		idx: []index[sim.StudioProject]{
			{bucket: bStudioProjectsCo, key: func(p sim.StudioProject) []byte { return parentKey(p.CompanyID, p.ID) }},
		},
	}
	videoTable = table[sim.Video]{
		bucket: bVideos, kind: "video", id: func(v sim.Video) string { return v.ID },
		idx: []index[sim.Video]{
			{bucket: bVideosByProject, key: func(v sim.Video) []byte { return parentKey(v.ProjectID, v.ID) }},
			{bucket: bVideosDue, key: func(v sim.Video) []byte { return dueAtKey(v.DueAt, v.ID) }},
		},
	}
	artifactTable = table[sim.Artifact]{
		bucket: bArtifacts, kind: "artifact", id: func(a sim.Artifact) string { return a.ID },
		idx: []index[sim.Artifact]{
			{bucket: bArtifactsDue, key: func(a sim.Artifact) []byte { return dueAtKey(a.DueAt, a.ID) }},
		},
	}
)

// records is a table in one transaction.
type records[T any] struct {
	t *txn
	*table[T]
}

func (r records[T]) Get(id string) (T, error) { return getAs[T](r.t, r.bucket, id) }

func (r records[T]) ForEach(fn func(T) error) error { return forEach(r.t, r.bucket, fn) }

// Put stores v and moves its index entries from where the stored version
// had them. Unique indexes are checked before anything is written.
func (r records[T]) Put(v T) error {
	id := r.id(v)
	if id == "" {
		return fmt.Errorf("store: %s without id", r.kind)
	}
	if len(r.idx) > 0 {
		if err := r.moveIndexes(id, v); err != nil {
			return err
		}
	}
	return r.t.put(r.bucket, []byte(id), &v)
}

func (r records[T]) moveIndexes(id string, v T) error {
	old, err := getAs[T](r.t, r.bucket, id)
	exists := err == nil
	if err != nil && !errors.Is(err, sim.ErrNotFound) {
		return err
	}
	for _, x := range r.idx {
		if !x.unique {
			continue
		}
		if k := x.key(v); k != nil {
			if owner := r.t.kv.get(x.bucket, k); owner != nil && string(owner) != id {
				return fmt.Errorf("store: %s %s: %s key %q already belongs to %s", r.kind, id, x.bucket, k, owner)
			}
		}
	}
	for _, x := range r.idx {
		var oldKey, val []byte
		if exists {
			oldKey = x.key(old)
		}
		if x.unique {
			val = []byte(id)
		}
		if err := r.t.reindex(x.bucket, oldKey, x.key(v), val); err != nil {
			return err
		}
	}
	return nil
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

func (t *storeTx) UserByEmail(email string) (sim.User, error) {
	if email == "" {
		return sim.User{}, sim.ErrNotFound
	}
	id := t.kv.get(bUsersByEmail, []byte(strings.ToLower(email)))
	if id == nil {
		return sim.User{}, sim.ErrNotFound
	}
	u, err := t.users.Get(string(id))
	if errors.Is(err, sim.ErrNotFound) {
		return u, fmt.Errorf("%w: %s %s in %s", errIndexedNotFound, bUsers, id, bUsersByEmail)
	}
	return u, err
}

func (t *storeTx) ForEachStudioProject(companyID string, fn func(sim.StudioProject) error) error {
	return forEachChild(&t.txn, bStudioProjectsCo, bStudioProjects, companyID, fn)
}

func (t *storeTx) ForEachVideo(projectID string, fn func(sim.Video) error) error {
	return forEachChild(&t.txn, bVideosByProject, bVideos, projectID, fn)
}

func (t *storeTx) DueVideos(now time.Time, limit int) ([]string, error) {
	return t.dueIDs(bVideosDue, now, limit, plainID)
}

func (t *storeTx) DueArtifacts(now time.Time, limit int) ([]string, error) {
	return t.dueIDs(bArtifactsDue, now, limit, plainID)
}
