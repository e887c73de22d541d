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
	// share one transaction (and one disk sync). fn may run more than once,
	// so its effects outside the transaction must be idempotent.
	Batch(ctx context.Context, fn func(Tx) error) error
}

// Tx is one transaction. Getters return ErrNotFound for a missing record.
type Tx interface {
	Account(apiKey string) (Account, error)
	PutAccount(a Account) error
	ForEachAccount(fn func(Account) error) error

	Project(id string) (Project, error)
	// ProjectHead is Project without its scripts, speakers, pending
	// re-translation and history: cheap whatever the video's length.
	ProjectHead(id string) (Project, error)
	// PutProject stores p and keeps the due-time index in step with
	// p.Status and p.DueAt.
	PutProject(p Project) error
	DeleteProject(id string) error
	ForEachProject(fn func(Project) error) error
	// ForEachProjectHead is ForEachProject without the bodies (see ProjectHead).
	ForEachProjectHead(fn func(Project) error) error
	// DueProjects returns up to limit ids of in-progress projects whose
	// DueAt is at or before now, earliest first.
	DueProjects(now time.Time, limit int) ([]string, error)

	// NextSequence returns the next value (starting at 1) of a named counter.
	NextSequence(name string) (uint64, error)

	Idempotency(scope, key string) (IdemRecord, error)
	PutIdempotency(scope, key string, rec IdemRecord) error
	// DeleteIdempotencyScope deletes every record of a scope (an API key).
	DeleteIdempotencyScope(scope string) (int, error)
	// CountIdempotency returns how many records are stored.
	CountIdempotency() int
	// PurgeIdempotency deletes records created before cutoff; it returns how many.
	PurgeIdempotency(cutoff time.Time) (int, error)

	Meta(key string) ([]byte, error)
	PutMeta(key string, value []byte) error

	// ResetData deletes every account, project and idempotency record (not
	// the metadata: clock and sequences survive).
	ResetData() error
}
