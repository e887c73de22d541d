package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// platformTx holds the platform projects, the idempotency records and the
// metadata.
type platformTx struct{ *txn }

// projectKey is the key of project id in the projects and project_bodies
// buckets: the eight big-endian bytes of the sequence number the id was made
// from (below 2^30, so the first byte is 0), which keeps creations at the end
// of the B+tree; any other string after a 0xFF byte.
func (s *Store) projectKey(id string) []byte {
	if seq, ok := s.keys.PlatformProjectSeq(id); ok {
		return be64(seq)
	}
	return append([]byte{0xFF}, id...)
}

// projectID is the inverse of projectKey.
func (s *Store) projectID(key []byte) string {
	if len(key) == 8 && key[0] == 0 {
		return s.keys.PlatformProjectID(binary.BigEndian.Uint64(key))
	}
	if len(key) > 0 && key[0] == 0xFF {
		return string(key[1:])
	}
	return string(key) // not a key projectKey makes
}

// A project is stored in up to two records under projectKey: the head
// (every scalar field and the history) in "projects" and the body (scripts,
// speakers, the client's script input, pending re-translation) in
// "project_bodies", so reads that need no script stay cheap however long
// the video. A project without any of those (one just created from a URL)
// has no body record, one record fewer for a creation to write.
type projectBody struct {
	ScriptInput  *sim.ScriptInput   `json:"script_input,omitempty"`
	SourceScript []sim.Segment      `json:"source_script"`
	TargetScript []sim.Segment      `json:"target_script"`
	Speakers     []sim.Speaker      `json:"speakers"`
	Pending      *sim.Retranslation `json:"pending,omitempty"`
}

func (b projectBody) empty() bool {
	return b.ScriptInput == nil && b.SourceScript == nil && b.TargetScript == nil && b.Speakers == nil && b.Pending == nil
}

func split(p sim.Project) (sim.Project, projectBody) {
	b := projectBody{ScriptInput: p.ScriptInput, SourceScript: p.SourceScript, TargetScript: p.TargetScript, Speakers: p.Speakers, Pending: p.Pending}
	p.ScriptInput, p.SourceScript, p.TargetScript, p.Speakers, p.Pending = nil, nil, nil, nil, nil
	return p, b
}

func (t platformTx) ProjectHead(id string) (sim.Project, error) {
	var p sim.Project
	return p, t.getKey(bProjects, t.s.projectKey(id), &p)
}

func (t platformTx) Project(id string) (sim.Project, error) {
	p, err := t.ProjectHead(id)
	if err != nil {
		return p, err
	}
	var b projectBody
	if err := t.getKey(bBodies, t.s.projectKey(id), &b); err != nil && !errors.Is(err, sim.ErrNotFound) {
		return p, err
	}
	p.ScriptInput, p.SourceScript, p.TargetScript, p.Speakers, p.Pending = b.ScriptInput, b.SourceScript, b.TargetScript, b.Speakers, b.Pending
	return p, nil
}

// dueKey is a project's key in the due index: the due time, then the
// project key, so projects due at the same time (all of them, while the
// clock stands still) follow in creation order.
func (s *Store) dueKey(p sim.Project) []byte {
	if p.Status != sim.StatusInProgress || p.DueAt.IsZero() {
		return nil
	}
	return append(timeKey(p.DueAt, ""), s.projectKey(p.ID)...)
}

func (t platformTx) PutProject(p sim.Project) error {
	if p.ID == "" {
		return errors.New("store: project without id")
	}
	old, err := t.ProjectHead(p.ID)
	existed := err == nil
	if !existed && !errors.Is(err, sim.ErrNotFound) {
		return err
	}
	// A project not found is the zero project, which has no due key.
	if err := t.reindex(bDue, t.s.dueKey(old), t.s.dueKey(p), nil); err != nil {
		return err
	}
	key := t.s.projectKey(p.ID)
	head, body := split(p)
	switch {
	case body.empty() && existed:
		if err := t.kv.del(bBodies, key); err != nil {
			return err
		}
	case body.empty():
	default:
		if err := t.put(bBodies, key, &body); err != nil {
			return err
		}
	}
	return t.put(bProjects, key, &head)
}

func (t platformTx) DeleteProject(id string) error {
	p, err := t.ProjectHead(id)
	if err != nil {
		return err
	}
	if err := t.reindex(bDue, t.s.dueKey(p), nil, nil); err != nil {
		return err
	}
	key := t.s.projectKey(id)
	if err := t.kv.del(bBodies, key); err != nil {
		return err
	}
	return t.kv.del(bProjects, key)
}

func (t platformTx) ForEachProjectHead(fn func(sim.Project) error) error {
	return forEach(t.txn, bProjects, fn)
}

func (t platformTx) DueProjects(now time.Time, limit int) ([]string, error) {
	return t.dueIDs(bDue, now, limit, t.s.projectID)
}

func (t platformTx) NextSequence(name string) (uint64, error) {
	var n uint64
	if v := t.kv.get(bSeq, []byte(name)); len(v) == 8 {
		n = binary.BigEndian.Uint64(v)
	}
	n++
	return n, t.kv.put(bSeq, []byte(name), be64(n))
}

// plainID is the id of a due index whose keys end with the id itself.
func plainID(k []byte) string { return string(k) }

func idemKey(scope, key string) string { return scope + "\x00" + key }

func (t platformTx) Idempotency(scope, key string) (sim.IdemRecord, error) {
	return getAs[sim.IdemRecord](t.txn, bIdem, idemKey(scope, key))
}

func (t platformTx) PutIdempotency(scope, key string, rec sim.IdemRecord) error {
	k := idemKey(scope, key)
	var oldExp []byte
	if old, err := getAs[sim.IdemRecord](t.txn, bIdem, k); err == nil {
		oldExp = timeKey(old.CreatedAt, k)
	}
	if err := t.reindex(bIdemExp, oldExp, timeKey(rec.CreatedAt, k), nil); err != nil {
		return err
	}
	return t.put(bIdem, []byte(k), rec)
}

func (t platformTx) DeleteIdempotencyScope(scope string) (int, error) {
	prefix := []byte(scope + "\x00")
	var deadExp [][]byte
	dead, err := t.collect(bIdem, prefix, func(k, v []byte) (bool, error) {
		if !bytes.HasPrefix(k, prefix) {
			return false, nil
		}
		var rec sim.IdemRecord
		if err := decode(v, &rec); err != nil {
			return false, err
		}
		deadExp = append(deadExp, timeKey(rec.CreatedAt, string(k)))
		return true, nil
	})
	if err != nil {
		return 0, err
	}
	for i, k := range dead {
		if err := t.kv.del(bIdem, k); err != nil {
			return 0, err
		}
		if err := t.kv.del(bIdemExp, deadExp[i]); err != nil {
			return 0, err
		}
	}
	return len(dead), nil
}

func (t platformTx) CountIdempotency() int { return t.kv.count(bIdem) }

func (t platformTx) PurgeIdempotency(cutoff time.Time) (int, error) {
	limitKey := timeKey(cutoff, "")
	dead, err := t.collect(bIdemExp, nil, func(k, _ []byte) (bool, error) {
		return bytes.Compare(k, limitKey) < 0, nil
	})
	if err != nil {
		return 0, err
	}
	for _, k := range dead {
		if err := t.kv.del(bIdemExp, k); err != nil {
			return 0, err
		}
		if err := t.kv.del(bIdem, k[timeKeyLen:]); err != nil {
			return 0, err
		}
	}
	return len(dead), nil
}

func (t platformTx) Meta(key string) ([]byte, error) {
	v := t.kv.get(bMeta, []byte(key))
	if v == nil {
		return nil, sim.ErrNotFound
	}
	return bytes.Clone(v), nil
}

func (t platformTx) PutMeta(key string, value []byte) error {
	if key == string(keySchema) {
		return errors.New("store: schema version is read-only")
	}
	return t.kv.put(bMeta, []byte(key), value)
}

func (t platformTx) ResetData() error {
	for _, name := range allData {
		if err := t.kv.clear(name); err != nil {
			return err
		}
	}
	return nil
}
