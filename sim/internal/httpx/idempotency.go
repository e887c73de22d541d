package httpx

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"sync"

	"github.com/dubsim/dubsim/sim"
)

// Idempotency headers.
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	HeaderReplayed       = "Idempotent-Replayed"
	maxIdempotencyKey    = 255
)

// IdemStore keeps idempotency records; expired records are not returned.
type IdemStore interface {
	IdempotencyLookup(ctx context.Context, scope, key string) (sim.IdemRecord, bool, error)
	IdempotencySave(ctx context.Context, scope, key string, rec sim.IdemRecord) error
}

// Idempotency implements the Idempotency-Key header on POST requests, scoped
// to the caller's API key: the same key with the same method, path and body
// replays the first response (status and body) with Idempotent-Replayed:
// true and no second effect; the same key with another request is refused
// (CodeIdempotency); a request while the first with the key is still in
// flight is refused (CodeConflict). Responses with status 5xx are not stored,
// so a retry after a server error runs again.
type Idempotency struct {
	Store   IdemStore
	API     API
	MaxBody int64

	mu       sync.Mutex
	inflight map[string]bool
}

// Middleware wraps the routes of an API. scope returns the key space of a
// request (the API key); requests without a scope pass through.
func (m *Idempotency) Middleware(scope func(*http.Request) string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key := r.Header.Get(HeaderIdempotencyKey)
			sc := scope(r)
			if r.Method != http.MethodPost || key == "" || sc == "" {
				next.ServeHTTP(w, r)
				return
			}
			if len(key) > maxIdempotencyKey {
				m.API.WriteError(w, r, sim.Errorf(sim.CodeValidation, "Idempotency-Key must be at most %d characters", maxIdempotencyKey))
				return
			}
			limit := m.MaxBody
			if limit <= 0 {
				limit = DefaultMaxBody
			}
			body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
			if err != nil {
				m.API.WriteError(w, r, sim.Errorf(sim.CodeValidation, sim.MsgMalformedJSON, "the body could not be read"))
				return
			}
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
			if int64(len(body)) > limit {
				next.ServeHTTP(w, r) // the handler refuses the oversized body
				return
			}
			h := sha256.New()
			for _, part := range []string{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Get("Content-Type")} {
				h.Write([]byte(part))
				h.Write([]byte{0})
			}
			h.Write(body)
			fp := hex.EncodeToString(h.Sum(nil))
			slot := sc + "\x00" + key

			m.mu.Lock()
			if m.inflight[slot] {
				m.mu.Unlock()
				m.API.WriteError(w, r, sim.Errorf(sim.CodeConflict, sim.MsgIdempotencyInFlight, key))
				return
			}
			rec, found, err := m.Store.IdempotencyLookup(r.Context(), sc, key)
			if err != nil {
				m.mu.Unlock()
				m.API.WriteError(w, r, err)
				return
			}
			if found {
				m.mu.Unlock()
				if rec.Fingerprint != fp {
					m.API.WriteError(w, r, sim.Errorf(sim.CodeIdempotency, sim.MsgIdempotencyMismatch, key))
					return
				}
				if rec.ContentType != "" {
					w.Header().Set("Content-Type", rec.ContentType)
				}
				w.Header().Set(HeaderReplayed, "true")
				w.WriteHeader(rec.Status)
				_, _ = w.Write(rec.Body)
				return
			}
			if m.inflight == nil {
				m.inflight = map[string]bool{}
			}
			m.inflight[slot] = true
			m.mu.Unlock()
			defer func() {
				m.mu.Lock()
				delete(m.inflight, slot)
				m.mu.Unlock()
			}()

			cw := &captureWriter{ResponseWriter: w, status: http.StatusOK}
			next.ServeHTTP(cw, r)
			if cw.status >= 500 {
				return
			}
			err = m.Store.IdempotencySave(context.WithoutCancel(r.Context()), sc, key, sim.IdemRecord{
				Fingerprint: fp, Status: cw.status, ContentType: cw.Header().Get("Content-Type"), Body: cw.body.Bytes(),
			})
			if err != nil && m.API.Log != nil {
				m.API.Log.Error("idempotency: save", "err", err)
			}
		})
	}
}

// captureWriter passes a response through and keeps a copy of it.
type captureWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func (c *captureWriter) WriteHeader(status int) {
	if !c.wroteHeader {
		c.status, c.wroteHeader = status, true
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	c.wroteHeader = true
	c.body.Write(b)
	return c.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
