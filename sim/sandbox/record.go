package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/store"
	"golang.org/x/sync/errgroup"
)

const metaSandbox = "sandbox"

// record is what a sandbox's store keeps of it (_meta "sandbox").
type record struct {
	ID       string    `json:"id"`
	Created  time.Time `json:"created_at"`
	LastUsed time.Time `json:"last_used_at"`
	Options  Options   `json:"options"`
}

func (sb *Sandbox) writeRecord(ctx context.Context) error {
	rec := record{ID: sb.ID, Created: sb.Created, LastUsed: sb.LastUsed(), Options: sb.Options}
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := sb.st.Update(ctx, func(tx sim.Tx) error { return tx.PutMeta(metaSandbox, raw) }); err != nil {
		return err
	}
	sb.saved.Store(rec.LastUsed.UnixNano())
	return nil
}

// Open restores the sandboxes of Config.Dir, removing those idle past
// Config.Idle and leaving in place (logged) those it cannot open; it
// returns how many it restored.
func (m *Manager) Open(ctx context.Context) (int, error) {
	entries, err := os.ReadDir(m.cfg.Dir)
	if err != nil {
		return 0, fmt.Errorf("sandbox: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".db"); ok && ValidID(id) && e.Type().IsRegular() {
			ids = append(ids, id)
		}
	}
	var g errgroup.Group
	g.SetLimit(4)
	var restored atomic.Int64
	for _, id := range ids {
		g.Go(func() error {
			if m.restore(ctx, id) {
				restored.Add(1)
			}
			return nil
		})
	}
	_ = g.Wait()
	return int(restored.Load()), nil
}

func (m *Manager) restore(ctx context.Context, id string) bool {
	dbPath, blobDir := m.paths(id)
	rec, err := readRecord(dbPath, m.cfg.StoreOptions)
	if err != nil {
		m.log.Warn("sandbox file not restored (left in place)", "sandbox", id, "path", dbPath, "err", err)
		return false
	}
	if m.cfg.Idle > 0 && m.cfg.Now().Sub(rec.LastUsed) > m.cfg.Idle {
		m.log.Info("sandbox expired while dubsim was stopped", "sandbox", id, "last_used_at", rec.LastUsed)
		_ = os.Remove(dbPath)
		_ = os.RemoveAll(blobDir)
		return false
	}
	if err := m.reserve(id); err != nil {
		m.log.Warn("sandbox not restored", "sandbox", id, "err", err)
		return false
	}
	defer m.unreserve(id)
	sb, err := m.open(ctx, id, rec, false)
	if err != nil {
		m.log.Warn("sandbox file not restored (left in place)", "sandbox", id, "path", dbPath, "err", err)
		return false
	}
	m.mu.Lock()
	m.boxes[id] = sb
	m.mu.Unlock()
	return true
}

func readRecord(path string, opts []store.Option) (record, error) {
	var rec record
	st, err := store.Open(path, opts...)
	if err != nil {
		return rec, err
	}
	defer st.Close()
	err = st.View(context.Background(), func(tx sim.Tx) error {
		raw, err := tx.Meta(metaSandbox)
		if err != nil {
			return fmt.Errorf("no sandbox record: %w", err)
		}
		return json.Unmarshal(raw, &rec)
	})
	if err == nil && rec.ID != strings.TrimSuffix(filepath.Base(path), ".db") {
		err = fmt.Errorf("the record names sandbox %q", rec.ID)
	}
	return rec, err
}
