// Package sandbox serves many simulators from one process: each sandbox is
// a complete instance (built by Config.New) with its own store and clock,
// reached through keys that name it (sbx_<id>_...) or through a path prefix
// (/sbx/<id>); the Manager's Handler passes every other request to the
// default simulator. Design and measurements: docs/design/sandboxes.md.
package sandbox

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/dubsim/dubsim/sim/store"
)

// Defaults of Config.
const (
	DefaultMax       = 200
	DefaultIdle      = 30 * time.Minute
	DefaultDrainWait = 30 * time.Second
)

// Config is what every sandbox is made of.
type Config struct {
	// New builds the simulator of a sandbox (sim/app); required.
	New func(ctx context.Context, in Instance) (*server.Server, error)
	// Dir holds <id>.db and <id>.blobs/ of each sandbox; Open restores
	// every sandbox found there.
	Dir string
	// Max is the cap on sandboxes (zero: DefaultMax; negative: none).
	Max int
	// Idle is how long (real time) a sandbox lives without a request (zero:
	// forever).
	Idle time.Duration
	// DefaultNow is the default simulator's time, where a sandbox's clock
	// starts by default.
	DefaultNow func() time.Time
	// Now is real time (time.Now), of last use, expiry and sandbox clocks.
	Now func() time.Time
	// DrainWait bounds how long a deletion waits for the sandbox's requests
	// before it ends them (zero: DefaultDrainWait).
	DrainWait    time.Duration
	StoreOptions []store.Option
	Log          *slog.Logger
}

// Instance is what a sandbox's simulator is built over (Config.New); Seed
// nil is the process's.
type Instance struct {
	KeyPrefix string
	Store     *store.Store
	Clock     *sim.SimClock
	BlobDir   string
	Seed      *uint64
	Log       *slog.Logger
}

// Options are what a creation may choose.
type Options struct {
	// Start is where the clock starts (zero: the default simulator's now).
	Start time.Time `json:"start"`
	// TimeScale is the clock's speed; 0 (the default) freezes it.
	TimeScale float64 `json:"time_scale"`
	// Seed seeds the sandbox's content and keys its ids (nil: the process's
	// seed, and ids keyed by a random value; fidelity SB8).
	Seed *uint64 `json:"seed,omitempty"`
}

// Manager holds the sandboxes of a process.
type Manager struct {
	cfg Config
	log *slog.Logger

	mu      sync.RWMutex
	boxes   map[string]*Sandbox // a sandbox being removed stays until it is gone
	pending map[string]bool     // ids being created or restored
	making  makingGate
}

// Sandbox is one simulator of the Manager.
type Sandbox struct {
	ID      string
	Created time.Time
	Options Options
	Server  *server.Server

	st       *store.Store
	dir      string
	lastUsed atomic.Int64 // unix nanoseconds, real time
	saved    atomic.Int64 // lastUsed as last written to the store
	lastSave time.Time    // of the running clock (Tick's goroutine only)

	mu       sync.Mutex
	n        int                        // requests in flight and other holds
	requests map[*fencedWriter]struct{} // the requests in flight
	closeErr error                      // set before gone is closed
	idle     chan struct{}
	// fence ends the requests still in flight after the drain (fence.go);
	// gone is closed once the sandbox is closed (and its files removed).
	fence    context.Context
	endFence context.CancelFunc
	gone     chan struct{}
	// closing is set when the sandbox stops admitting requests
	// (beginClose, under mu).
	closing atomic.Bool
}

// New returns a Manager; Open restores the sandboxes of cfg.Dir.
func New(cfg Config) (*Manager, error) {
	if cfg.New == nil {
		return nil, errors.New("sandbox: Config.New is required")
	}
	if cfg.Dir == "" {
		return nil, errors.New("sandbox: Config.Dir is required")
	}
	cfg.Max = cmp.Or(cfg.Max, DefaultMax)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.DefaultNow == nil {
		cfg.DefaultNow = cfg.Now
	}
	if cfg.DrainWait <= 0 {
		cfg.DrainWait = DefaultDrainWait
	}
	log := cmp.Or(cfg.Log, slog.New(slog.DiscardHandler))
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return &Manager{cfg: cfg, log: log, boxes: map[string]*Sandbox{}, pending: map[string]bool{}, making: newMakingGate()}, nil
}

// idAlphabet is lower-case Crockford base32: no i, l, o, u.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// IDLength is the length of a sandbox id: 16 characters, 80 bits.
const IDLength = 16

// NewID returns an id from crypto/rand.
func NewID() string {
	var b [IDLength]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = idAlphabet[b[i]&31]
	}
	return string(b[:])
}

// ValidID reports whether id has the shape of a sandbox id: IDLength
// characters of idAlphabet.
func ValidID(id string) bool {
	return len(id) == IDLength && strings.Trim(id, idAlphabet) == ""
}

// KeyPrefix is the start of every API key of sandbox id.
func KeyPrefix(id string) string { return sim.SandboxKeyPrefix + id + "_" }

// IDOfKey returns the sandbox an API key names, if any.
func IDOfKey(key string) (string, bool) {
	n := len(sim.SandboxKeyPrefix)
	if len(key) <= n+IDLength || !strings.HasPrefix(key, sim.SandboxKeyPrefix) || key[n+IDLength] != '_' {
		return "", false
	}
	id := key[n : n+IDLength]
	return id, ValidID(id)
}

func (m *Manager) paths(id string) (db, blobs string) {
	return filepath.Join(m.cfg.Dir, id+".db"), filepath.Join(m.cfg.Dir, id+".blobs")
}

// Create makes a sandbox; id "" picks one. It fails with sim.CodeConflict
// when the id exists, sim.CodeValidation when it is malformed and
// sim.CodeLimit at the cap.
func (m *Manager) Create(ctx context.Context, id string, opts Options) (*Sandbox, error) {
	if id == "" {
		id = NewID()
	} else if !ValidID(id) {
		return nil, sim.Errorf(sim.CodeValidation, msgBadID, clip(id))
	}
	// A copy: the id is cut from the request's path, a substring of the
	// request line, which the sandbox would keep alive as long as it lives.
	id = strings.Clone(id)
	if opts.TimeScale < 0 || opts.TimeScale > 1e6 {
		return nil, sim.Errorf(sim.CodeValidation, "time_scale must be between 0 (frozen) and 1000000; got %v", opts.TimeScale)
	}
	if !opts.Start.IsZero() {
		if err := CheckStart(opts.Start); err != nil {
			return nil, err
		}
	}
	if err := m.reserve(id); err != nil {
		return nil, err
	}
	defer m.unreserve(id)
	now := m.cfg.Now()
	if opts.Start.IsZero() {
		opts.Start = m.cfg.DefaultNow()
	}
	opts.Start = opts.Start.UTC()
	sb, err := m.openNew(ctx, id, record{ID: id, Created: now, LastUsed: now, Options: opts})
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.boxes[id] = sb
	m.mu.Unlock()
	m.log.Info("sandbox created", "sandbox", id, "start", opts.Start, "time_scale", opts.TimeScale)
	return sb, nil
}

// The range of a sandbox's start: the clock keeps its offset from real
// time in a time.Duration (about 292 years either way), and a start must
// be reachable from real time within it for the next decades.
var (
	StartMin = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	StartMax = time.Date(2199, 12, 31, 23, 59, 59, 0, time.UTC)
)

// MsgStartRange is the refusal of a start outside [StartMin, StartMax].
const MsgStartRange = "start must lie between %s and %s (the range of a sandbox's clock); got %s"

// CheckStart refuses a start outside [StartMin, StartMax].
func CheckStart(t time.Time) error {
	if t.Before(StartMin) || t.After(StartMax) {
		return sim.Errorf(sim.CodeValidation, MsgStartRange, StartMin.Format(time.RFC3339), StartMax.Format(time.RFC3339), t.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

const msgBadID = "sandbox id %q must be 16 characters of 0-9 and a-z without i, l, o and u (lower-case Crockford base32)"

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// reserve takes id for a creation, within the cap.
func (m *Manager) reserve(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if sb := m.boxes[id]; sb != nil && sb.removing() {
		return sim.Errorf(sim.CodeConflict, MsgBeingRemoved, id)
	}
	if m.boxes[id] != nil || m.pending[id] {
		return sim.Errorf(sim.CodeConflict, "sandbox %s already exists", id)
	}
	if m.cfg.Max > 0 && len(m.boxes)+len(m.pending) >= m.cfg.Max {
		msg := fmt.Sprintf("dubsim holds %d sandboxes, its limit (--sandbox-max); delete some (DELETE /_sim/sandboxes/{id}) or raise the limit", m.cfg.Max)
		if m.cfg.Idle > 0 {
			msg += fmt.Sprintf("; idle ones expire after %s", m.cfg.Idle)
		}
		return sim.Errorf(sim.CodeLimit, "%s", msg)
	}
	m.pending[id] = true
	return nil
}

func (m *Manager) unreserve(id string) {
	m.mu.Lock()
	delete(m.pending, id)
	m.mu.Unlock()
}

// open builds the sandbox of rec over its files: new ones when fresh, else
// restored.
func (m *Manager) open(ctx context.Context, id string, rec record, fresh bool) (sb *Sandbox, err error) {
	dbPath, blobDir := m.paths(id)
	if fresh {
		// Left by a crash between the files' creation and the record's.
		_ = os.Remove(dbPath)
		_ = os.RemoveAll(blobDir)
	}
	opts := m.cfg.StoreOptions
	if rec.Options.Seed != nil {
		opts = append(slices.Clip(opts), store.KeySeed(*rec.Options.Seed))
	}
	st, err := store.Open(dbPath, opts...)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = st.Close()
			if fresh {
				_ = os.Remove(dbPath)
				_ = os.RemoveAll(blobDir)
			}
		}
	}()
	clock := sim.NewSimClock(m.cfg.Now, rec.Options.TimeScale)
	if fresh {
		// Start exactly there (an offset from one reading of real time came
		// out late by the time until Restore's own reading: +1 ms under load).
		clock.Restore(sim.StandingAt(rec.Options.Start))
	}
	srv, err := m.cfg.New(ctx, Instance{KeyPrefix: KeyPrefix(id), Store: st, Clock: clock, BlobDir: blobDir, Seed: rec.Options.Seed, Log: m.log.With("sandbox", id)})
	if err != nil {
		return nil, err
	}
	sb = &Sandbox{ID: id, Created: rec.Created, Options: rec.Options, Server: srv, st: st, dir: m.cfg.Dir,
		idle: make(chan struct{}), gone: make(chan struct{}), requests: map[*fencedWriter]struct{}{}}
	sb.fence, sb.endFence = context.WithCancel(context.Background())
	sb.lastUsed.Store(rec.LastUsed.UnixNano())
	sb.saved.Store(rec.LastUsed.UnixNano())
	if fresh {
		if err := srv.Engine.Clock.SaveClock(ctx); err != nil {
			_ = srv.Close()
			return nil, err
		}
		if err := sb.writeRecord(ctx); err != nil {
			_ = srv.Close()
			return nil, err
		}
	}
	return sb, nil
}

// LastUsed is when the sandbox last served a request.
func (sb *Sandbox) LastUsed() time.Time { return time.Unix(0, sb.lastUsed.Load()).UTC() }

// Get returns the sandbox id, or nil.
func (m *Manager) Get(id string) *Sandbox {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.boxes[id]
}

// List returns the sandboxes, oldest first.
func (m *Manager) List() []*Sandbox {
	m.mu.RLock()
	out := slices.Collect(maps.Values(m.boxes))
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Sandbox) int { return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.ID, b.ID)) })
	return out
}

// acquire takes sandbox id for one request (nil: it does not exist or is
// being removed); m.release gives it back.
func (m *Manager) acquire(id string, fw *fencedWriter) *Sandbox {
	m.mu.RLock()
	sb := m.boxes[id]
	m.mu.RUnlock()
	if sb == nil || !sb.hold(fw) {
		return nil
	}
	sb.lastUsed.Store(m.cfg.Now().UnixNano())
	return sb
}

// release ends a request of sb, a use from its end: a long request does
// not leave the sandbox about to expire.
func (m *Manager) release(sb *Sandbox, fw *fencedWriter) {
	sb.lastUsed.Store(m.cfg.Now().UnixNano())
	sb.release(fw)
}

// hold keeps sb open until release, for a request (fw) or for nil.
func (sb *Sandbox) hold(fw *fencedWriter) bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.removing() {
		return false
	}
	sb.n++
	if fw != nil {
		sb.requests[fw] = struct{}{}
	}
	return true
}

func (sb *Sandbox) release(fw *fencedWriter) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.n--
	delete(sb.requests, fw)
	if sb.removing() && sb.n == 0 {
		close(sb.idle)
	}
}

// removing reports whether the sandbox admits no more requests.
func (sb *Sandbox) removing() bool { return sb.closing.Load() }

// MsgBeingRemoved says that a sandbox is being deleted (or expired): its
// id is taken until it is gone.
const MsgBeingRemoved = "sandbox %s is being deleted; its id can be used again once it is gone"

// Delete removes sandbox id and its files once its requests in flight have
// ended, ending those left after Config.DrainWait (fence.go). The removal
// goes on when ctx ends; the id stays taken until the files are gone.
// sim.CodeNotFound when it does not exist.
func (m *Manager) Delete(ctx context.Context, id string) error {
	sb, first := m.remove(id, nil)
	if sb == nil {
		return notFound(id)
	}
	if first {
		m.log.Info("sandbox deleted", "sandbox", id)
	}
	select {
	case <-sb.gone:
		return sb.closeErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// remove starts closing sandbox id (only if it is want, when want is set)
// in a goroutine of its own that removes its files, and returns it; first
// is false when it was being removed already (or is not want).
func (m *Manager) remove(id string, want *Sandbox) (sb *Sandbox, first bool) {
	m.mu.Lock()
	sb = m.boxes[id]
	if sb == nil || (want != nil && sb != want) {
		m.mu.Unlock()
		return nil, false
	}
	first = sb.beginClose()
	m.mu.Unlock()
	if first {
		go func() {
			err := sb.close(m.cfg.DrainWait, true)
			if err != nil {
				m.log.Error("removing a sandbox", "sandbox", id, "err", err)
			}
			m.mu.Lock()
			delete(m.boxes, id)
			m.mu.Unlock()
			sb.closeErr = err
			close(sb.gone)
		}()
	}
	return sb, first
}

func notFound(id string) error {
	return sim.Errorf(sim.CodeNotFound, "sandbox %s does not exist (deleted, or expired when idle)", clip(id))
}

// beginClose admits no more requests; false when it was closing already.
func (sb *Sandbox) beginClose() bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.removing() {
		return false
	}
	sb.closing.Store(true)
	for fw := range sb.requests {
		if fw.stream {
			fw.cancel()
		}
	}
	if sb.n == 0 {
		close(sb.idle)
	}
	return true
}

// raiseFence ends the requests in flight (fence.go).
func (sb *Sandbox) raiseFence() {
	sb.endFence()
	sb.mu.Lock()
	defer sb.mu.Unlock()
	for fw := range sb.requests {
		fw.end()
	}
}

// fenceWait bounds how long the requests the fence ended have to return
// before the sandbox is closed under them.
const fenceWait = 5 * time.Second

// close waits for the requests in flight (at most wait), ends those left,
// then closes the sandbox and removes its files when remove. Call
// beginClose first.
func (sb *Sandbox) close(wait time.Duration, remove bool) error {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-sb.idle:
	case <-t.C:
		sb.raiseFence()
		t.Reset(fenceWait)
		select {
		case <-sb.idle:
		case <-t.C:
		}
	}
	defer sb.endFence()
	var err error
	if !remove && sb.lastUsed.Load() != sb.saved.Load() {
		err = sb.writeRecord(context.Background())
	}
	err = errors.Join(err, sb.Server.Close(), sb.st.Close())
	if remove {
		db := filepath.Join(sb.dir, sb.ID+".db")
		err = errors.Join(err, os.Remove(db), os.RemoveAll(filepath.Join(sb.dir, sb.ID+".blobs")))
	}
	return err
}

// Close closes every sandbox, keeping its files, and waits for the removals
// under way; ctx bounds the wait for requests in flight.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	boxes := m.boxes
	m.boxes = map[string]*Sandbox{}
	m.mu.Unlock()
	wait := m.cfg.DrainWait
	if d, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(d))
	}
	var err error
	for _, sb := range boxes {
		if sb.beginClose() {
			err = errors.Join(err, sb.close(wait, false))
			close(sb.gone)
		} else {
			<-sb.gone
		}
	}
	return err
}

// Tick removes the sandboxes idle past Config.Idle, sweeps those whose
// clock runs (an advance sweeps a frozen one), saves running clocks about
// every second (at most maxClockSaves a Tick, oldest first) and last use
// at most once a minute (fidelity SB6, SB7, SB11). It returns the first
// error of a sandbox.
func (m *Manager) Tick(ctx context.Context) error {
	now := m.cfg.Now()
	var (
		first error
		save  []*Sandbox
	)
	fail := func(sb *Sandbox, err error) {
		if err != nil && first == nil {
			first = fmt.Errorf("sandbox %s: %w", sb.ID, err)
		}
	}
	for _, sb := range m.List() {
		if sb.removing() {
			continue
		}
		if m.cfg.Idle > 0 && now.Sub(sb.LastUsed()) > m.cfg.Idle && sb.inFlight() == 0 {
			fail(sb, m.expire(sb))
			continue
		}
		// Held, so that a DELETE meanwhile waits for the sweep.
		if !sb.hold(nil) {
			continue
		}
		due, err := sb.tick(ctx, now)
		sb.release(nil)
		fail(sb, err)
		if due {
			save = append(save, sb)
		}
	}
	// Each save is a write of its own (fsynced): 200 running sandboxes
	// saved on one tick held the ticker for 170-290 ms.
	slices.SortFunc(save, func(a, b *Sandbox) int { return a.lastSave.Compare(b.lastSave) })
	for _, sb := range save[:min(len(save), maxClockSaves)] {
		if !sb.hold(nil) {
			continue
		}
		sb.lastSave = now
		fail(sb, sb.Server.Engine.Clock.SaveClock(ctx))
		sb.release(nil)
	}
	return first
}

// maxClockSaves bounds the clock saves of one Tick: with the default
// 200 ms tick, 100 a second.
const maxClockSaves = 20

func (sb *Sandbox) inFlight() int {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.n
}

// expire removes sb, idle past Config.Idle, as Delete does.
func (m *Manager) expire(sb *Sandbox) error {
	if _, first := m.remove(sb.ID, sb); !first {
		return nil
	}
	m.log.Info("sandbox expired", "sandbox", sb.ID, "idle", m.cfg.Idle, "last_used_at", sb.LastUsed())
	<-sb.gone
	return sb.closeErr
}

// tick sweeps a running clock and writes last use when due; saveDue: the
// clock is due to be saved.
func (sb *Sandbox) tick(ctx context.Context, now time.Time) (saveDue bool, err error) {
	clock := sb.Server.Engine.Clock
	if !clock.Frozen() {
		_, err = clock.Tick(ctx)
		saveDue = now.Sub(sb.lastSave) >= time.Second
	}
	if used := sb.lastUsed.Load(); used != sb.saved.Load() && now.Sub(time.Unix(0, sb.saved.Load())) >= time.Minute {
		err = errors.Join(err, sb.writeRecord(ctx))
	}
	return saveDue, err
}
