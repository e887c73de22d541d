package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
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

// benchCreateBody is the documentation's example request.
const benchCreateBody = `{"name":"My Project","source_lang":"en","target_lang":"fr-FR","source_video_url":"https://example.com/video.mp4","use_soundalike_voices":true}`

// BenchmarkGetProjectThroughServer measures Get Project of one project
// through the whole middleware chain, from parallel clients.
func BenchmarkGetProjectThroughServer(b *testing.B) {
	in := start(b, nil)
	code, m := in.call("POST", "/api/v1/projects", "dubsim-enterprise", benchCreateBody)
	if code != http.StatusOK {
		b.Fatal(code, m)
	}
	path := "/api/v1/projects/" + m["project_id"].(string)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("GET", path, nil)
			req.Header.Set("Authorization", "Bearer dubsim-enterprise")
			rec := httptest.NewRecorder()
			in.srv.Handler.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatal(rec.Code)
			}
		}
	})
}

// BenchmarkCreateProjectThroughServer measures Create Project through the
// whole middleware chain from parallel clients (fsync off: the store's own
// cost, not the disk's).
func BenchmarkCreateProjectThroughServer(b *testing.B) {
	in := start(b, nil)
	code, acct := in.call("POST", "/_sim/accounts", "", `{"plan":"enterprise","balance_minutes":100000000}`)
	if code != http.StatusOK && code != http.StatusCreated {
		b.Fatal(code, acct)
	}
	auth := "Bearer " + acct["api_key"].(string)
	b.SetParallelism(32) // 64 clients on 2 cores, as in bench/run
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("POST", "/api/v1/projects", strings.NewReader(benchCreateBody))
			req.Header.Set("Authorization", auth)
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			in.srv.Handler.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatal(rec.Code, rec.Body.String())
			}
		}
	})
}
