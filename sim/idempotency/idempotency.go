// Package idempotency implements the Idempotency-Key header of the platform
// and studio interfaces: a middleware that fingerprints a POST request,
// replays the first answer to a retry, and refuses a key reused for another
// request or still in flight.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// Idempotency headers.
const (
	HeaderKey      = "Idempotency-Key"
	HeaderReplayed = "Idempotent-Replayed"
	maxKey         = 255
)

// Defaults of the middleware.
const (
	DefaultMemBody   = 1 << 20 // kept in memory; the rest is spooled to a temp file
	DefaultMaxStored = 1 << 20 // largest response body stored for replay
)

// SpoolPattern names the temporary files request bodies are spooled to
// (os.CreateTemp's pattern, in os.TempDir()).
const SpoolPattern = "dubsim-idem-*"

const msgKeyLength = "Idempotency-Key must be at most %d characters"

// Store keeps idempotency records; expired records are not returned.
type Store interface {
	IdempotencyLookup(ctx context.Context, scope, key string) (sim.IdemRecord, bool, error)
	IdempotencySave(ctx context.Context, scope, key string, rec sim.IdemRecord) error
}

// request is what the middleware tells the handler of a request with an
// Idempotency-Key (Write), and what the handler tells back.
type request struct {
	scope, key, fp string
	saved          atomic.Bool // the write stored the record in its own transaction
}

type requestKey struct{}

// Write runs write, a creation, with the request's idempotency record as
// its argument (nil without an Idempotency-Key), so that the record is
// stored in the write's own transaction: render gives the status and view
// the handler will send. The middleware then stores nothing more.
func Write[T any](r *http.Request, render func(T) (int, any), write func(*sim.IdemWrite[T]) (T, error)) (T, error) {
	st, _ := r.Context().Value(requestKey{}).(*request)
	if st == nil {
		return write(nil)
	}
	v, err := write(&sim.IdemWrite[T]{Scope: st.scope, Key: st.key, Fingerprint: st.fp,
		Render: func(v T) (int, string, []byte, error) {
			status, view := render(v)
			b, err := httpx.Marshal(view)
			return status, httpx.ContentTypeJSON, append(b, '\n'), err
		}})
	if err == nil {
		st.saved.Store(true)
	}
	return v, err
}

// Replayer writes a response again from the recipe a handler registered
// with SetReplayRecipe.
type Replayer func(w http.ResponseWriter, r *http.Request, recipe []byte) error

// Middleware implements the Idempotency-Key header on POST requests, scoped
// to the caller's API key (fidelity I1 to I4, B3): the same request again
// replays the first answer with Idempotent-Replayed: true; another request
// under the key is refused (CodeIdempotency), and so is one while the first
// is in flight (CodeConflict). 5xx answers are not stored, so a retry after
// a server error runs again. Answers larger than MaxStored are replayed
// from a recipe (SetReplayRecipe), or not stored.
//
// The body is read ahead before the handler runs, no further than the
// route's own limit plus one byte (the route refuses a larger one as it
// would without a key): up to MemBody bytes in memory, the rest spooled to
// a temporary file, so large uploads never sit in memory.
type Middleware struct {
	Store Store
	API   httpx.API
	// Limit is the body limit of the route a request goes to; nil:
	// httpx.DefaultMaxBody.
	Limit     func(*http.Request) int64
	MemBody   int64
	MaxStored int
	Replayers map[string]Replayer
	// Slots is the set of keys in flight; APIs whose records share a store
	// must share it (nil: a set of this middleware's own).
	Slots *Slots
}

// Slots is the set of Idempotency-Key slots (scope and key) whose first
// request is being processed. The platform and studio interfaces share
// one, as they share the records' store and scope: two creations cannot
// both run under one key.
type Slots struct {
	mu       sync.Mutex
	inflight map[string]bool
}

func orDefault[T int | int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Wrap wraps the routes of an API. scope returns the key space of a
// request (the API key); requests without one pass through.
func (m *Middleware) Wrap(scope func(*http.Request) string) func(http.Handler) http.Handler {
	if m.Slots == nil {
		m.Slots = &Slots{}
	}
	slots := m.Slots
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key := r.Header.Get(HeaderKey)
			sc := scope(r)
			if r.Method != http.MethodPost || key == "" || sc == "" {
				next.ServeHTTP(w, r)
				return
			}
			if len(key) > maxKey {
				m.API.WriteError(w, r, sim.Errorf(sim.CodeValidation, msgKeyLength, maxKey))
				return
			}
			body, fp, err := m.spool(r)
			if err != nil {
				m.API.WriteError(w, r, err)
				return
			}
			defer body.Close()
			r.Body = body
			slot := sc + "\x00" + key

			slots.mu.Lock()
			if slots.inflight[slot] {
				slots.mu.Unlock()
				m.API.WriteError(w, r, sim.Errorf(sim.CodeConflict, sim.MsgIdempotencyInFlight, key))
				return
			}
			rec, found, err := m.Store.IdempotencyLookup(r.Context(), sc, key)
			if err != nil {
				slots.mu.Unlock()
				m.API.WriteError(w, r, err)
				return
			}
			if found {
				slots.mu.Unlock()
				m.replay(w, r, key, fp, rec)
				return
			}
			if slots.inflight == nil {
				slots.inflight = map[string]bool{}
			}
			slots.inflight[slot] = true
			slots.mu.Unlock()
			// The slot is released, and the record saved, before the client
			// can see a byte of the answer: a client that retries the moment
			// it has the answer must get the replay, not a 409.
			release := sync.OnceFunc(func() {
				slots.mu.Lock()
				delete(slots.inflight, slot)
				slots.mu.Unlock()
			})
			defer release()

			intent := &request{scope: sc, key: key, fp: fp}
			r = r.WithContext(context.WithValue(r.Context(), requestKey{}, intent))
			cw := &captureWriter{ResponseWriter: w, status: http.StatusOK, limit: orDefault(m.MaxStored, DefaultMaxStored)}
			cw.commit = sync.OnceFunc(func() {
				defer release()
				if cw.status >= 500 || intent.saved.Load() {
					return // a write that stored its record in its own transaction is done
				}
				rec := sim.IdemRecord{Fingerprint: fp, Status: cw.status, ContentType: cw.Header().Get("Content-Type")}
				switch {
				case cw.recipeKind != "":
					rec.RecipeKind, rec.Recipe = cw.recipeKind, cw.recipe
				case cw.overflow:
					if m.API.Log != nil {
						m.API.Log.Warn("idempotency: response too large to store and no recipe; a retry runs again", "path", r.URL.Path)
					}
					return
				default:
					rec.Body = cw.body.Bytes()
				}
				if err := m.Store.IdempotencySave(context.WithoutCancel(r.Context()), sc, key, rec); err != nil && m.API.Log != nil {
					m.API.Log.Error("idempotency: save", "err", err)
				}
			})
			next.ServeHTTP(cw, r)
			cw.finish()
		})
	}
}

func (m *Middleware) replay(w http.ResponseWriter, r *http.Request, key, fp string, rec sim.IdemRecord) {
	if rec.Fingerprint != fp {
		m.API.WriteError(w, r, sim.Errorf(sim.CodeIdempotency, sim.MsgIdempotencyMismatch, key))
		return
	}
	w.Header().Set(HeaderReplayed, "true")
	if rec.RecipeKind != "" {
		replayer, ok := m.Replayers[rec.RecipeKind]
		if !ok {
			w.Header().Del(HeaderReplayed)
			m.API.WriteError(w, r, errors.New("idempotency: no replayer for "+rec.RecipeKind))
			return
		}
		if err := replayer(w, r, rec.Recipe); err != nil {
			m.API.WriteError(w, r, err)
		}
		return
	}
	if rec.ContentType != "" {
		w.Header().Set("Content-Type", rec.ContentType)
	}
	w.WriteHeader(rec.Status)
	_, _ = w.Write(rec.Body)
}

// spooledBody is a request body read ahead for fingerprinting: its first
// bytes in memory, the rest in a temporary file.
type spooledBody struct {
	io.Reader
	mem  []byte
	file *os.File
	over bool // past the route's limit: Reader goes on with the unread rest
}

func (s *spooledBody) rewind() error {
	if s.file == nil {
		s.Reader = bytes.NewReader(s.mem)
		return nil
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	s.Reader = io.MultiReader(bytes.NewReader(s.mem), s.file)
	return nil
}

func (s *spooledBody) Close() error {
	if s.file == nil {
		return nil
	}
	name := s.file.Name()
	err := s.file.Close()
	_ = os.Remove(name)
	return err
}

// fpCanonicalJSON prefixes the fingerprint of a JSON body taken over its
// canonical form, so that it never equals one taken over bytes: a record
// of a JSON body fingerprinted by its bytes is a mismatch, never a replay.
const fpCanonicalJSON = "json1:"

// spool reads the body, fingerprints the request, and returns a reader over
// the same bytes. A multipart body is fingerprinted by its parts, so a
// retry with a new random boundary is the same request; a JSON body by its
// canonical form, so a retry that spells the same value differently (key
// order, whitespace, 100.0 for 100) is too.
func (m *Middleware) spool(r *http.Request) (sb *spooledBody, fp string, err error) {
	limit := int64(httpx.DefaultMaxBody)
	if m.Limit != nil {
		if l := m.Limit(r); l > 0 {
			limit = l
		}
	}
	limit = min(limit, math.MaxInt64-1) // limit+1 must not overflow
	memBody := min(orDefault(m.MemBody, DefaultMemBody), limit+1)
	// Reserve the bytes kept here and the route's own copy at once (fidelity HY1).
	size := httpx.ReserveSize(r, limit)
	if err := httpx.ReserveBody(r, min(size, memBody)+size); err != nil {
		return nil, "", sim.Errorf(sim.CodeValidation, sim.MsgMalformedJSON, "the body could not be read")
	}
	ct := r.Header.Get("Content-Type")
	head := []byte(r.Method + "\x00" + r.URL.EscapedPath() + "\x00" + r.URL.RawQuery + "\x00")
	h := sha256.New()
	h.Write(head)
	mt, params, _ := mime.ParseMediaType(ct)
	boundary, typ := "", ct // a multipart body is hashed by its parts, without its boundary
	if strings.HasPrefix(mt, "multipart/") && params["boundary"] != "" {
		boundary, typ = params["boundary"], mt
	}
	h.Write([]byte(typ + "\x00"))
	raw := sha256.New()
	var mem bytes.Buffer
	n, err := io.Copy(&mem, io.TeeReader(io.LimitReader(r.Body, memBody), raw))
	if err != nil {
		return nil, "", spoolError(err)
	}
	sb = &spooledBody{mem: mem.Bytes()}
	if n == memBody && n <= limit {
		f, err := os.CreateTemp("", SpoolPattern)
		if err != nil {
			return nil, "", spoolError(err)
		}
		sb.file = f
		rest, err := io.Copy(f, io.TeeReader(io.LimitReader(r.Body, limit+1-n), raw))
		if err != nil {
			sb.Close()
			return nil, "", spoolError(err)
		}
		n += rest
	}
	sb.over = n > limit
	if boundary == "" || !hashParts(h, sb, boundary) {
		h.Write(raw.Sum(nil))
	}
	fp = fingerprint(h)
	if boundary == "" && httpx.IsJSONContentType(ct) {
		if cfp, ok := canonicalFingerprint(head, mt, sb); ok {
			fp = cfp
		}
	}
	if err := sb.rewind(); err != nil {
		sb.Close()
		return nil, "", err
	}
	if sb.over {
		sb.Reader = io.MultiReader(sb.Reader, r.Body)
	}
	return sb, fp, nil
}

// spoolError words a failure to spool a body: the client's (the body did
// not arrive: 400) or the simulator's (a full disk: 500 saying so; any
// other: a masked internal error, logged with its cause). No file path
// reaches the client; the log keeps it.
func spoolError(err error) error {
	ferr := httpx.BodyFailure(err)
	switch {
	case ferr == nil:
		return fmt.Errorf("spooling the request body: %w", err)
	case sim.ErrorCode(ferr) == sim.CodeInternal:
		return fmt.Errorf("spooling the request body: %w (%w)", err, ferr)
	}
	return ferr
}

// canonicalFingerprint hashes the request head, the media type (without
// parameters: every JSON type decodes alike) and the canonical JSON body;
// false when the body is not one JSON value.
func canonicalFingerprint(head []byte, mt string, sb *spooledBody) (string, bool) {
	if sb.rewind() != nil {
		return "", false
	}
	h := sha256.New()
	h.Write(head)
	h.Write([]byte(mt + "\x00"))
	if httpx.CanonicalJSON(h, sb) != nil {
		return "", false
	}
	return fpCanonicalJSON + fingerprint(h), true
}

// hashParts hashes the names, file names and contents of a multipart body's
// parts; false when it is not valid multipart.
func hashParts(h hash.Hash, sb *spooledBody, boundary string) bool {
	if sb.rewind() != nil {
		return false
	}
	ph := sha256.New()
	mr := multipart.NewReader(sb, boundary)
	for {
		p, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return false
		}
		ph.Write([]byte(p.FormName() + "\x00" + p.FileName() + "\x00"))
		if _, err := io.Copy(ph, p); err != nil {
			return false
		}
		ph.Write([]byte{0, 0})
	}
	h.Write(ph.Sum(nil))
	return true
}

func fingerprint(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// RemoveSpools removes the spooled request bodies (SpoolPattern) a crashed
// process left in dir and returns how many. A running process's spool stays
// readable to it on Unix, where an open file outlives its name.
func RemoveSpools(dir string) (int, error) {
	names, err := filepath.Glob(filepath.Join(dir, SpoolPattern))
	if err != nil {
		return 0, err
	}
	removed := 0
	var errs []error
	for _, name := range names {
		fi, err := os.Lstat(name)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	return removed, errors.Join(errs...)
}

// SetReplayRecipe registers how to write the response again for a replay,
// instead of storing its body; without an Idempotency-Key it does nothing.
func SetReplayRecipe(w http.ResponseWriter, kind string, recipe []byte) {
	for w != nil {
		if cw, ok := w.(*captureWriter); ok {
			cw.recipeKind, cw.recipe = kind, recipe
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// captureWriter holds a response, up to a limit, for the record.
type captureWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool // the handler has written its header
	forwarded   bool // the header went out to the client
	body        bytes.Buffer
	limit       int
	overflow    bool
	recipeKind  string
	recipe      []byte
	// commit saves the record and releases the slot, once, before anything
	// reaches the client.
	commit func()
}

func (c *captureWriter) forward() {
	if !c.forwarded {
		c.forwarded = true
		c.ResponseWriter.WriteHeader(c.status)
	}
}

func (c *captureWriter) WriteHeader(status int) {
	if c.wroteHeader {
		return
	}
	c.status, c.wroteHeader = status, true
	if c.recipeKind != "" {
		c.commit()
		c.forward()
	}
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if !c.wroteHeader {
		c.WriteHeader(http.StatusOK)
	}
	if c.forwarded {
		return c.ResponseWriter.Write(b)
	}
	if c.body.Len()+len(b) <= c.limit {
		return c.body.Write(b)
	}
	// Too large to store: no record (a retry runs again); stream from here.
	c.overflow = true
	c.commit()
	c.forward()
	held := c.body.Bytes()
	c.body = bytes.Buffer{}
	if _, err := c.ResponseWriter.Write(held); err != nil {
		return 0, err
	}
	return c.ResponseWriter.Write(b)
}

func (c *captureWriter) finish() {
	c.commit()
	if c.forwarded {
		return
	}
	c.forward()
	if c.body.Len() > 0 {
		_, _ = c.ResponseWriter.Write(c.body.Bytes())
	}
}

func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
