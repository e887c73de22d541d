package dubsimtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/dubsim/dubsim/dubsimtest"
)

// getJSON is what a client under test would do: one call of the platform
// API with a bearer key.
func getJSON(method, url, key, body string) (map[string]any, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var m map[string]any
	return m, json.NewDecoder(resp.Body).Decode(&m)
}

// A project submitted through the platform API completes when the test
// moves simulated time; the control API then tells what the client did.
// In a test, dubsimtest.Start(t) replaces New and Close.
func Example() {
	s, err := dubsimtest.New(dubsimtest.WithStart(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()

	created, err := getJSON("POST", s.PlatformURL+"/api/v1/projects", dubsimtest.KeyPro,
		`{"source_lang":"en","target_lang":"de-DE","source_video_url":"https://media.dubsim.test/short.mp4"}`)
	if err != nil {
		log.Fatal(err)
	}
	project := s.PlatformURL + "/api/v1/projects/" + created["project_id"].(string)
	p, _ := getJSON("GET", project, dubsimtest.KeyPro, "")
	fmt.Println("status:", p["status"])

	now, err := s.Clock.Advance(ctx, time.Hour)
	if err != nil {
		log.Fatal(err)
	}
	p, _ = getJSON("GET", project, dubsimtest.KeyPro, "")
	fmt.Println("at", now.Format(time.Kitchen), "status:", p["status"])

	report, err := s.Journal.Report(ctx, dubsimtest.KeyPro)
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range report.Findings {
		fmt.Println("finding:", f.Rule)
	}
	// Output:
	// status: in_progress
	// at 10:00AM status: ready
	// finding: post-without-idempotency-key
}
