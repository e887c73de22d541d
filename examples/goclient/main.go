// Command go walks through the dubbing API as a client would, with the
// standard library only: the platform interface (balance, a dubbing project,
// its dubbed audio) and the studio interface (a presigned upload, an
// artifact, a project and a video). Run it against dubsim started with
// --time-scale 0 (a frozen clock):
//
//	DUBSIM_URL=http://localhost:8080 DUBSIM_API_KEY=dubsim-pro go run ./examples/goclient
//
// Calls under /_sim/ are dubsim's control API, which the real service does
// not have: there, instead of advancing the clock, you simply wait.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"
)

type client struct{ base, key string }

func main() {
	c := client{env("DUBSIM_URL", "http://localhost:8080"), env("DUBSIM_API_KEY", "dubsim-pro")}
	// A studio project's manager must be a user of the key's company; this
	// is dubsim-pro's own user (fixtures/studio.json).
	manager := env("DUBSIM_MANAGER_EMAIL", "priya.raman@initech-learning.example")

	// Platform: the balance, then a dubbing project (its minutes are charged now).
	var bal struct {
		Balance float64 `json:"balance_minutes"`
	}
	c.api("GET", "/api/v1/balance", nil, &bal)
	fmt.Printf("balance: %g minutes\n", bal.Balance)
	var created struct {
		ID      string  `json:"project_id"`
		Cost    float64 `json:"cost_minutes"`
		Balance float64 `json:"balance_minutes"`
	}
	c.api("POST", "/api/v1/projects", map[string]any{"name": "Example", "source_lang": "en", "target_lang": "de-DE",
		"source_video_url": "https://media.dubsim.test/short.mp4"}, &created)
	fmt.Printf("created project %s (cost %g min, balance %g)\n", created.ID, created.Cost, created.Balance)

	// Poll until the project leaves in_progress (there are no webhooks).
	type project struct {
		Status       string `json:"status"`
		ErrorMessage string `json:"error_message"`
		AudioURL     string `json:"output_tts_audio_url"` // present once ready
	}
	var p project
	for i := 0; ; i++ {
		p = project{}
		c.api("GET", "/api/v1/projects/"+created.ID, nil, &p)
		fmt.Printf("project %s: %s\n", created.ID, p.Status)
		if p.Status != "in_progress" || i == 20 {
			break
		}
		c.advance(30) // real service: time.Sleep(15 * time.Second)
	}
	if p.Status != "ready" {
		fail("project %s: status %s %s", created.ID, p.Status, p.ErrorMessage)
	}
	audio := send("GET", p.AudioURL, nil, nil) // output URLs need no key
	if len(audio) < 12 || string(audio[:4]) != "RIFF" || string(audio[8:12]) != "WAVE" {
		fail("the dubbed audio is not a RIFF/WAVE file (%d bytes)", len(audio))
	}
	fmt.Printf("downloaded dubbed audio: %d bytes, RIFF/WAVE\n", len(audio))

	// Studio: upload a local file to a presigned URL, then make an artifact
	// of its s3Path.
	var pre struct{ S3Path, PresignedUploadURL string }
	c.api("GET", "/api/v1/artifacts/create?fileName=clip.wav", nil, &pre)
	fmt.Printf("presigned upload: %s\n", pre.S3Path)
	wav := silentWAV(8000) // one second
	// No Authorization header here: the URL's signature is the credential.
	send("PUT", pre.PresignedUploadURL, wav, map[string]string{"Content-Type": "audio/wav"})
	fmt.Printf("uploaded clip.wav (%d bytes)\n", len(wav))
	var art struct {
		ID, Status, ErrorMessage string
		Size                     *int64
		Duration                 *float64
	}
	c.api("POST", "/api/v1/artifacts/create", map[string]any{"name": "Example clip", "type": "audio", "s3Path": pre.S3Path}, &art)
	fmt.Printf("created artifact %s: %s\n", art.ID, art.Status)
	for i := 0; art.Status != "upload_completed"; i++ {
		if art.Status == "upload_failed" || i == 20 {
			fail("artifact %s: %s %s", art.ID, art.Status, art.ErrorMessage)
		}
		c.advance(5) // real service: wait
		c.api("GET", "/api/v1/artifacts/"+art.ID, nil, &art)
		fmt.Printf("artifact %s: %s\n", art.ID, art.Status)
	}
	if art.Size == nil || art.Duration == nil { // null until upload_completed
		fail("artifact %s completed without size or duration", art.ID)
	}
	fmt.Printf("artifact size %d bytes, duration %g s\n", *art.Size, *art.Duration)

	// A studio project (on dubsim's shared address, managerEmail marks the
	// body as studio) and a video made from the artifact.
	var proj, video struct{ ID, Status string }
	c.api("POST", "/api/v1/projects", map[string]any{"name": "Example launch", "managerEmail": manager}, &proj)
	fmt.Printf("created studio project %s: %s\n", proj.ID, proj.Status)
	c.api("POST", "/api/v1/projects/"+proj.ID+"/videos/create", map[string]any{"name": "Example video", "workflowType": "dubbing",
		"sourceArtifactId": art.ID, "sourceLanguage": "en", "targetLanguages": []string{"de-DE"}}, &video)
	fmt.Printf("created video %s: %s\n", video.ID, video.Status)

	// dubsim only: what the conformance report says about this client.
	var report struct {
		Summary  struct{ Requests, Findings int }
		Findings []struct{ Rule, Severity string }
	}
	decode(send("GET", c.base+"/_sim/report?api_key="+url.QueryEscape(c.key), nil, nil), &report)
	fmt.Printf("report: %d findings (%d requests)\n", report.Summary.Findings, report.Summary.Requests)
	for _, f := range report.Findings {
		fmt.Printf("  %s: %s\n", f.Severity, f.Rule)
	}
	fmt.Println("done")
}

// api calls the dubbing API with the key and decodes the JSON answer into
// out. A body is sent as JSON; every POST carries a fresh Idempotency-Key
// (when you retry a POST, send the same key again).
func (c client) api(method, path string, body, out any) {
	h := map[string]string{"Authorization": "Bearer " + c.key}
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
		h["Content-Type"] = "application/json"
	}
	if method == "POST" {
		h["Idempotency-Key"] = rand.Text()
	}
	decode(send(method, c.base+path, b, h), out)
}

// advance moves dubsim's simulated clock (control API, no key).
func (c client) advance(seconds int) {
	send("POST", c.base+"/_sim/clock/advance", fmt.Appendf(nil, `{"seconds":%d}`, seconds),
		map[string]string{"Content-Type": "application/json"})
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

// send makes one request and returns the body of a 2xx answer; any other
// answer ends the program with the status and body.
func send(method, u string, body []byte, headers map[string]string) []byte {
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		fail("%v", err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		fail("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		fail("%s %s: %v", method, u, err)
	}
	if resp.StatusCode/100 != 2 {
		fail("%s %s: %s: %.300s", method, req.URL.Path, resp.Status, b)
	}
	return b
}

func decode(b []byte, out any) {
	if err := json.Unmarshal(b, out); err != nil {
		fail("unexpected answer %.200q: %v", b, err)
	}
}

// silentWAV is a 16-bit mono 8 kHz PCM WAV file of n silent samples.
func silentWAV(n int) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32([]byte("RIFF"), uint32(36+2*n))
	b = le.AppendUint32(append(b, "WAVEfmt "...), 16)    // format chunk of 16 bytes:
	b = le.AppendUint16(le.AppendUint16(b, 1), 1)        // PCM, mono,
	b = le.AppendUint32(le.AppendUint32(b, 8000), 16000) // 8000 samples/s, 16000 bytes/s,
	b = le.AppendUint16(le.AppendUint16(b, 2), 16)       // 2 bytes per sample, 16 bits
	b = le.AppendUint32(append(b, "data"...), uint32(2*n))
	return append(b, make([]byte, 2*n)...)
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "walkthrough failed: "+format+"\n", args...)
	os.Exit(1)
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
