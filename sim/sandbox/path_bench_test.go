//go:build unix

package sandbox_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/simtest"
	"github.com/dubsim/dubsim/sim/sandbox"
)

// BenchmarkRequestPath measures the request mix of bench/sandboxes (Get
// Project and Get Balance in turn) through the process's whole handler,
// every layer a request crosses but the network: on the default simulator
// with sandboxes beside it, on one sandbox addressed by its key, and spread
// over 100 sandboxes, each request to the next.
// allocs/op is what the layers add per request, cpu-ns/op the processor
// time of the whole process per request (steadier than ns/op on a busy
// machine); bench/sandboxes gives the throughput over loopback.
//
//	go test -run XXX -bench RequestPath -benchmem ./sim/sandbox/
func BenchmarkRequestPath(b *testing.B) {
	s := simtest.NewSandboxed(b, simtest.Options{Start: time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)}, nil)
	serve := func(method, path, key, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, "http://127.0.0.1"+path, strings.NewReader(body))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		s.Handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && rec.Code != http.StatusCreated {
			b.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
		return rec
	}
	field := func(rec *httptest.ResponseRecorder, name string) string {
		var m map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			b.Fatal(err)
		}
		v, _ := m[name].(string)
		return v
	}
	const key = "dubsim-enterprise"
	project := func(k string) string {
		return field(serve("POST", "/api/v1/projects", k, `{"name":"bench","source_lang":"en","target_lang":"de-DE","source_video_url":"https://media.dubsim.test/short.mp4"}`), "project_id")
	}
	var keys []string
	for range 100 {
		keys = append(keys, sandbox.KeyPrefix(field(serve("POST", "/_sim/sandboxes", "", "{}"), "id"))+key)
	}
	// spread sends each request to the next of the 100 sandboxes, as row
	// (c) of bench/sandboxes does.
	for _, c := range []struct {
		name string
		keys []string
	}{{"default", []string{key}}, {"sandbox", keys[:1]}, {"spread", keys}} {
		var paths []string
		for _, k := range c.keys {
			paths = append(paths, "/api/v1/projects/"+project(k), "/api/v1/balance")
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime(b)
			i := 0
			for b.Loop() {
				k := i % len(c.keys)
				path := paths[2*k+(i/len(c.keys))%2]
				req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+path, nil)
				req.Header.Set("Authorization", "Bearer "+c.keys[k])
				rec := httptest.NewRecorder()
				s.Handler.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
				}
				i++
			}
			b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the processor time the process has used, user and system.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
