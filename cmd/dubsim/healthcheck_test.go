package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHealthcheck(t *testing.T) {
	t.Parallel()
	in := start(t, "--data", filepath.Join(t.TempDir(), "d.db"))
	t.Cleanup(func() { _ = in.stop() })
	_, port, err := net.SplitHostPort(in.base[len("http://"):])
	require.NoError(t, err)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"down"}`, http.StatusServiceUnavailable)
	}))
	t.Cleanup(failing.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	cases := []struct {
		name string
		args []string
		env  map[string]string
		ok   bool
	}{
		{"--url", []string{"--url", in.base}, nil, true},
		{"--url with a trailing slash", []string{"--url", in.base + "/", "--quiet"}, nil, true},
		{"DUBSIM_URL", nil, map[string]string{"DUBSIM_URL": in.base}, true},
		{"port of DUBSIM_ADDR", nil, map[string]string{"DUBSIM_ADDR": ":" + port}, true},
		{"unhealthy answer", []string{"--url", failing.URL}, nil, false},
		{"nothing listening", []string{"--url", closed.URL}, nil, false},
		{"stray argument", []string{"now"}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(context.Background(), append([]string{"healthcheck"}, c.args...), func(k string) string { return c.env[k] }, &out, &errOut)
			if !c.ok {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err, errOut.String())
			if len(c.args) > 2 {
				assert.Empty(t, out.String(), "--quiet")
			} else {
				assert.Contains(t, out.String(), `"status":"ok"`)
			}
		})
	}
}
