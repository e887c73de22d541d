package idempotency

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type memIdem struct {
	mu   sync.Mutex
	recs map[string]sim.IdemRecord
}

func (m *memIdem) IdempotencyLookup(_ context.Context, scope, key string) (sim.IdemRecord, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[scope+"/"+key]
	return r, ok, nil
}

func (m *memIdem) IdempotencySave(_ context.Context, scope, key string, rec sim.IdemRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs[scope+"/"+key] = rec
	return nil
}

// retryOnFirstByte is a client that sends the same request again the
// moment the first answer starts to reach it.
type retryOnFirstByte struct {
	*httptest.ResponseRecorder
	retry func() *httptest.ResponseRecorder
	got   *httptest.ResponseRecorder
}

func (w *retryOnFirstByte) WriteHeader(status int) {
	if w.got == nil {
		w.got = w.retry()
	}
	w.ResponseRecorder.WriteHeader(status)
}

func (w *retryOnFirstByte) Write(b []byte) (int, error) {
	if w.got == nil {
		w.got = w.retry()
	}
	return w.ResponseRecorder.Write(b)
}

// A retry sent as soon as the first answer arrives is a replay (or, for an
// answer that is not stored, a second run), never a 409 "in flight".
func TestIdempotencyRetryTheMomentTheAnswerArrives(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		handler    func(store *memIdem) http.HandlerFunc
		limit      int
		wantStatus int
		replayed   bool
		runs       int32
	}{
		{"stored body", func(*memIdem) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"id":"1"}`))
			}
		}, 0, 200, true, 1},
		{"streamed answer with a recipe", func(*memIdem) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				SetReplayRecipe(w, "tone", []byte("440"))
				w.Header().Set("Content-Type", "audio/wav")
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write([]byte("RIFF...."))
			}
		}, 0, 200, true, 1},
		{"record saved by the handler's own transaction", func(st *memIdem) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				render := func(id string) (int, any) { return http.StatusCreated, map[string]string{"id": id} }
				id, _ := Write(r, render, func(idem *sim.IdemWrite[string]) (string, error) {
					rec, err := idem.Record("2", time.Time{})
					if err == nil {
						err = st.IdempotencySave(r.Context(), idem.Scope, idem.Key, rec)
					}
					return "2", err
				})
				status, view := render(id)
				httpx.WriteJSON(w, status, view)
			}
		}, 0, 201, true, 1},
		{"server error runs again", func(*memIdem) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		}, 0, 503, false, 2},
		{"too large to store, no recipe: runs again", func(*memIdem) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(strings.Repeat("x", 64)))
			}
		}, 16, 200, false, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			store := &memIdem{recs: map[string]sim.IdemRecord{}}
			var runs atomic.Int32
			inner := c.handler(store)
			render := func(err error) (int, any) { return http.StatusConflict, map[string]string{"error": err.Error()} }
			m := &Middleware{Store: store, API: httpx.API{Render: render}, MaxStored: c.limit, Replayers: map[string]Replayer{
				"tone": func(w http.ResponseWriter, r *http.Request, recipe []byte) error {
					w.Header().Set("Content-Type", "audio/wav")
					_, err := w.Write([]byte("RIFF...."))
					return err
				}}}
			h := m.Wrap(func(*http.Request) string { return "key-1" })(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				runs.Add(1)
				inner(w, r)
			}))
			newReq := func() *http.Request {
				r := httptest.NewRequest("POST", "/things", strings.NewReader(`{"a":1}`))
				r.Header.Set(HeaderKey, "k")
				return r
			}
			first := &retryOnFirstByte{ResponseRecorder: httptest.NewRecorder()}
			depth := 0
			first.retry = func() *httptest.ResponseRecorder {
				depth++
				rec := httptest.NewRecorder()
				if depth == 1 {
					h.ServeHTTP(rec, newReq())
				}
				return rec
			}
			h.ServeHTTP(first, newReq())
			require.NotNil(t, first.got, "the first answer reached the client")
			assert.Equal(t, c.wantStatus, first.Code)
			assert.Equal(t, c.wantStatus, first.got.Code, "the retry: %s", first.got.Body)
			assert.Equal(t, c.replayed, first.got.Header().Get(HeaderReplayed) == "true")
			assert.Equal(t, first.Body.String(), first.got.Body.String())
			assert.Equal(t, c.runs, runs.Load())
		})
	}
}
