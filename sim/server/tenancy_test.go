package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/simtest"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// firstRead closes its channel at the first read of any request body.
type firstRead struct {
	once sync.Once
	read chan struct{}
}

func (f *firstRead) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = readHook{r.Body, func() { f.once.Do(func() { close(f.read) }) }}
		h.ServeHTTP(w, r)
	})
}

type readHook struct {
	io.ReadCloser
	hook func()
}

func (h readHook) Read(p []byte) (int, error) {
	h.hook()
	return h.ReadCloser.Read(p)
}

// TestUnattributedBodiesHoldNoBudget: clients with a key that does not
// authenticate trickle large create bodies into the shared address; while
// their bodies are open, an authenticated create on the same instance and
// on another one are answered at once, and the tricklers hold none of the
// body budget.
func TestUnattributedBodiesHoldNoBudget(t *testing.T) {
	t.Parallel()
	sh, err := app.NewShared(app.Config{BodyMemory: 64 << 10})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sh.Close()) })
	mod := func(c *app.Config) { c.Shared = sh }
	a := simtest.New(t, t0, mod).Server
	fr := &firstRead{read: make(chan struct{})}
	hs := httptest.NewServer(fr.wrap(a.Handler))
	t.Cleanup(hs.Close)
	victim := &inst{t: t, srv: a, url: hs.URL}
	other := start(t, mod)

	const tricklers = 12
	var pipes []*io.PipeWriter
	done := make(chan struct{}, tricklers)
	for range tricklers {
		pr, pw := io.Pipe()
		pipes = append(pipes, pw)
		req, err := http.NewRequest(http.MethodPost, hs.URL+"/api/v1/projects", pr)
		require.NoError(t, err)
		req.ContentLength = 10 << 20
		req.Header.Set("Authorization", "Bearer not-a-key")
		req.Header.Set("Content-Type", "application/json")
		go func() {
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
			done <- struct{}{}
		}()
		go func() { _, _ = pw.Write([]byte(`{"name": "`)) }()
	}
	t.Cleanup(func() {
		for _, pw := range pipes {
			_ = pw.CloseWithError(io.ErrUnexpectedEOF)
		}
		for range tricklers {
			<-done
		}
	})
	// A trickler's body is being read: one that took budget first would
	// hold it now.
	<-fr.read

	for _, in := range []*inst{victim, other} {
		answered := make(chan int, 1)
		go func() {
			st, _ := in.call(http.MethodPost, "/api/v1/projects", "dubsim-pro", `{"name": "Victim"}`)
			answered <- st
		}()
		select {
		case st := <-answered:
			assert.Equal(t, http.StatusOK, st)
		case <-time.After(20 * time.Second):
			t.Fatal("an authenticated create waited behind unauthenticated bodies")
		}
	}
	assert.Zero(t, sh.BodyMemoryUsed(), "unauthenticated bodies hold no budget")
}

// TestRoutingBeforeAuthentication: the shared address routes a create
// whose key does not authenticate on the first 4 KiB of its body; an
// authenticated one on its whole body (fidelity SA1, TB2).
func TestRoutingBeforeAuthentication(t *testing.T) {
	t.Parallel()
	in := start(t, nil)
	pad := `"name": "` + strings.Repeat("x", 8<<10) + `", `
	tests := []struct {
		name, key, body, wantIface string
	}{
		{"bogus key, platform field first", "not-a-key", `{"source_lang": "en"}`, server.Platform},
		{"bogus key, platform field past the prefix", "not-a-key", `{` + pad + `"source_lang": "en"}`, server.Studio},
		{"valid key, platform field past the prefix", "dubsim-pro", `{` + pad + `"source_lang": "en"}`, server.Platform},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, in.url+"/api/v1/projects", strings.NewReader(tt.body))
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+tt.key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
			assert.Equal(t, tt.wantIface, resp.Header.Get(server.HeaderInterface))
		})
	}
}
