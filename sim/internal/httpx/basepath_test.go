package httpx_test

import (
	"context"
	"crypto/tls"
	"net/http/httptest"
	"testing"

	"github.com/dubsim/dubsim/sim/internal/httpx"
	"github.com/stretchr/testify/assert"
)

func TestBaseURLComposesPrefixes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		prefixes []string
		public   string
		tls      bool
		proto    string
		want     string
		wantPath string
	}{
		{name: "none", want: "http://dub.test", wantPath: ""},
		{name: "studio", prefixes: []string{"/studio"}, want: "http://dub.test/studio", wantPath: "/studio"},
		{name: "sandbox", prefixes: []string{"/sbx/k7q2m9x4w3p8r5t6"}, want: "http://dub.test/sbx/k7q2m9x4w3p8r5t6", wantPath: "/sbx/k7q2m9x4w3p8r5t6"},
		{name: "sandbox then studio", prefixes: []string{"/sbx/k7q2m9x4w3p8r5t6", "/studio"},
			want: "http://dub.test/sbx/k7q2m9x4w3p8r5t6/studio", wantPath: "/sbx/k7q2m9x4w3p8r5t6/studio"},
		{name: "public URL keeps the prefixes", prefixes: []string{"/sbx/k7q2m9x4w3p8r5t6", "/studio"}, public: "https://dub.example.com",
			want: "https://dub.example.com/sbx/k7q2m9x4w3p8r5t6/studio", wantPath: "/sbx/k7q2m9x4w3p8r5t6/studio"},
		{name: "tls", prefixes: []string{"/sbx/k7q2m9x4w3p8r5t6"}, tls: true, want: "https://dub.test/sbx/k7q2m9x4w3p8r5t6", wantPath: "/sbx/k7q2m9x4w3p8r5t6"},
		{name: "forwarded proto", prefixes: []string{"/studio"}, proto: "https", want: "https://dub.test/studio", wantPath: "/studio"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest("GET", "http://dub.test/v1/projects", nil)
			if tc.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if tc.proto != "" {
				r.Header.Set("X-Forwarded-Proto", tc.proto)
			}
			ctx := context.Background()
			for _, p := range tc.prefixes {
				ctx = httpx.WithBasePath(ctx, p)
			}
			r = r.WithContext(ctx)
			assert.Equal(t, tc.want, httpx.BaseURL(r, tc.public))
			assert.Equal(t, tc.wantPath, httpx.BasePath(r.Context()))
		})
	}
}
