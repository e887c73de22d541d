package server_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkOptionsThroughServer measures GET /api/v1/options through the
// whole middleware chain (journal, faults, router, auth).
func BenchmarkOptionsThroughServer(b *testing.B) {
	in := start(b, nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("GET", "/api/v1/options", nil)
			req.Header.Set("Authorization", "Bearer dubsim-pro")
			rec := httptest.NewRecorder()
			in.srv.Handler.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatal(rec.Code)
			}
		}
	})
}
