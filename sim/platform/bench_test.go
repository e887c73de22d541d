package platform_test

import (
	"net/http"
	"testing"
)

// BenchmarkGetProject measures Get Project of a ten-minute project (about
// 250 script segments) in progress and ready, through the whole handler.
func BenchmarkGetProject(b *testing.B) {
	e := newEnv(b)
	id := e.create("dubsim-enterprise", docsExample)
	for _, state := range []string{"in_progress", "ready"} {
		if state == "ready" {
			e.advance(3600)
		}
		b.Run(state, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := e.do(call{method: "GET", path: "/api/v1/projects/" + id, key: "dubsim-enterprise"}); r.status != http.StatusOK {
					b.Fatal(r.status)
				}
			}
		})
	}
}

// BenchmarkOptions is the floor: an authenticated request with a constant body.
func BenchmarkOptions(b *testing.B) {
	e := newEnv(b)
	b.ReportAllocs()
	for b.Loop() {
		if r := e.do(call{method: "GET", path: "/api/v1/options", key: "dubsim-enterprise"}); r.status != http.StatusOK {
			b.Fatal(r.status)
		}
	}
}
