package sim

import (
	"context"
	"time"
)

// Store is the persistence seam: every multi-step operation runs in one
// Update closure (one transaction), so check-then-act never spans two.
type Store interface {
	View(ctx context.Context, fn func(Tx) error) error
	Update(ctx context.Context, fn func(Tx) error) error
	// Batch is Update for hot, independent writes: concurrent calls may
	// share one transaction. fn may run more than once, so its effects
	// outside the transaction must be idempotent.
	Batch(ctx context.Context, fn func(Tx) error) error
	// Secret is the store's own random key, kept with its data. Everything
	// that grants access is keyed by it rather than by the public id seed.
	Secret() []byte
	// IDKey keys the identifiers the engine makes, kept with the data: the
	// simulator's explicit seed, else a random value made with the store,
	// so that by default no two stores make the same ids.
	IDKey() uint64
}

// Tx is one transaction. Getters return ErrNotFound for a missing record;
// ForEach* visit records in id order and stop at the first error fn returns.
type Tx interface {
	Accounts() Records[Account] // keyed by API key
	ProjectTx
	IdempotencyTx
	MetaTx
	StudioTx
}

// Records holds the records of one kind, keyed by id.
type Records[T any] interface {
	Get(id string) (T, error)
	Put(v T) error // keeps the kind's indexes in step
	ForEach(fn func(T) error) error
}

// ProjectTx holds the platform projects and their due-time index.
type ProjectTx interface {
	Project(id string) (Project, error)
	// ProjectHead is Project without its scripts, speakers, pending
	// re-translation and history: cheap whatever the video's length.
	ProjectHead(id string) (Project, error)
	PutProject(p Project) error // keeps the due index in step
	DeleteProject(id string) error
	// ForEachProjectHead visits the projects without their bodies (see ProjectHead).
	ForEachProjectHead(fn func(Project) error) error
	// DueProjects returns up to limit ids of in-progress projects whose
	// DueAt is at or before now, earliest first.
	DueProjects(now time.Time, limit int) ([]string, error)
}

// IdempotencyTx holds the Idempotency-Key records, per scope (an API key).
type IdempotencyTx interface {
	Idempotency(scope, key string) (IdemRecord, error)
	PutIdempotency(scope, key string, rec IdemRecord) error
	// DeleteIdempotencyScope deletes every record of a scope (an API key).
	DeleteIdempotencyScope(scope string) (int, error)
	CountIdempotency() int
	// PurgeIdempotency deletes records created before cutoff; it returns how many.
	PurgeIdempotency(cutoff time.Time) (int, error)
}

// MetaTx holds what is not a record: named counters and metadata.
type MetaTx interface {
	// NextSequence returns the next value (starting at 1) of a named counter.
	NextSequence(name string) (uint64, error)
	Meta(key string) ([]byte, error)
	PutMeta(key string, value []byte) error
	// ResetData deletes every account, project, idempotency record and
	// studio record (not the metadata: clock and sequences survive).
	ResetData() error
}

// StudioTx is the part of Tx that holds the studio resources.
type StudioTx interface {
	Companies() Records[Company]
	// Users refuses a user whose email another user has, and UserByEmail
	// finds one; emails are compared case-insensitively.
	Users() Records[User]
	UserByEmail(email string) (User, error)
	Glossaries() Records[Glossary]
	Folders() Records[Folder]

	StudioProjects() Records[StudioProject]
	// ForEachStudioProject visits the projects of a company (every company
	// when companyID is "").
	ForEachStudioProject(companyID string, fn func(StudioProject) error) error

	Videos() Records[Video]
	// ForEachVideo visits the videos of a project (every video when
	// projectID is "").
	ForEachVideo(projectID string, fn func(Video) error) error
	// DueVideos and DueArtifacts return up to limit ids of records whose
	// DueAt is set and at or before now, earliest first.
	DueVideos(now time.Time, limit int) ([]string, error)
	Artifacts() Records[Artifact]
	DueArtifacts(now time.Time, limit int) ([]string, error)
	Uploads() Records[Upload]
}
