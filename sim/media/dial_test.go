package media

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The resolver's own dialling (no Client given): loopback names go to
// 127.0.0.1 without DNS, other names are resolved once and may not resolve
// to loopback, and --fetch-loopback=false never contacts this machine.
func TestFetchDialling(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	port := u.Port()
	toLoopback := func(context.Context, string) ([]net.IPAddr, error) {
		return []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}, nil
	}
	tests := []struct {
		name    string
		r       *Resolver
		url     string
		reached bool
		err     string // in the probe's error; "" with reached false: a derived duration
	}{
		{"an IP literal of loopback", &Resolver{}, "http://127.0.0.1:" + port + "/v.mp4", true, "HTTP 404"},
		{"a name under .localhost: 127.0.0.1 without DNS", &Resolver{lookup: func(context.Context, string) ([]net.IPAddr, error) {
			t.Error("DNS asked for a .localhost name")
			return nil, nil
		}}, "http://media.localhost:" + port + "/v.mp4", true, "HTTP 404"},
		{"an allowed name that resolves to loopback: refused", &Resolver{AllowHosts: []string{"cdn.example.com"}, lookup: toLoopback},
			"http://cdn.example.com:" + port + "/v.mp4", false, errRebound.Error()},
		{"loopback fetching off: derived, not contacted", &Resolver{NoLoopback: true}, "http://127.0.0.1:" + port + "/v.mp4", false, ""},
		{"loopback fetching off, every host allowed, a trailing dot: not contacted", &Resolver{NoLoopback: true, AllowHosts: []string{"*"}},
			"http://localhost.:" + port + "/v.mp4", false, ""},
		{"generic errors: not why", &Resolver{GenericErrors: true}, "http://127.0.0.1:" + port + "/v.mp4", true, MsgCannotRead},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := hits.Load()
			info, err := tc.r.Probe(context.Background(), tc.url)
			assert.Equal(t, tc.reached, hits.Load() > before, "the host was reached")
			if tc.err == "" {
				require.NoError(t, err)
				assert.Equal(t, sim.OriginDerived, info.Origin)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			if tc.r.GenericErrors {
				assert.NotContains(t, err.Error(), "404")
			}
		})
	}
}
