// Command ceiling is the benchmark's reference: the least a Go net/http
// server can do for each measured endpoint. It answers every request with a
// fixed body, chosen by method and path, and the headers dubsim sends with
// it (Content-Type application/json; charset=utf-8, Content-Length, Date),
// without routing, authentication, storage or encoding.
//
//	ceiling -addr 127.0.0.1:PORT [-options FILE] [-project FILE] [-create FILE]
//	        [-studio-project FILE] [-studio-videos FILE] [-studio-artifact FILE]
//
// The files hold the bodies dubsim answered (bench/run captures them), so
// the bytes on the wire are the same size; without a file a body of the
// size of dubsim's options answer is used. GET /api/v1/options gets the
// options body, a GET of a path ending in /videos the studio videos body, a
// GET of /api/v1/projects/ and 24 more characters (a studio project id) the
// studio project body, any other GET the project body; POST
// /api/v1/artifacts/create gets the studio artifact body, any other POST the
// create body. The tests are a length and a suffix comparison, no routing.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "listen address")
	options := flag.String("options", "", "body of GET /api/v1/options")
	project := flag.String("project", "", "body of any other GET")
	create := flag.String("create", "", "body of any other POST")
	studioProject := flag.String("studio-project", "", "body of GET /api/v1/projects/{24-character id}")
	studioVideos := flag.String("studio-videos", "", "body of a GET of a path ending in /videos")
	studioArtifact := flag.String("studio-artifact", "", "body of POST /api/v1/artifacts/create")
	flag.Parse()

	optionsBody := load(*options)
	projectBody := load(*project)
	createBody := load(*create)
	optionsLen := strconv.Itoa(len(optionsBody))
	projectLen := strconv.Itoa(len(projectBody))
	createLen := strconv.Itoa(len(createBody))
	sProjectBody, sVideosBody, sArtifactBody := load(*studioProject), load(*studioVideos), load(*studioArtifact)
	sProjectLen, sVideosLen, sArtifactLen := strconv.Itoa(len(sProjectBody)), strconv.Itoa(len(sVideosBody)), strconv.Itoa(len(sArtifactBody))
	const studioProjectPathLen = len("/api/v1/projects/") + 24
	contentType := []string{"application/json; charset=utf-8"}

	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, n := projectBody, projectLen
		p := r.URL.Path
		switch {
		case r.Method == http.MethodPost && p == "/api/v1/artifacts/create":
			body, n = sArtifactBody, sArtifactLen
		case r.Method == http.MethodPost:
			body, n = createBody, createLen
		case p == "/api/v1/options":
			body, n = optionsBody, optionsLen
		case strings.HasSuffix(p, "/videos"):
			body, n = sVideosBody, sVideosLen
		case len(p) == studioProjectPathLen:
			body, n = sProjectBody, sProjectLen
		}
		hdr := w.Header()
		hdr["Content-Type"] = contentType
		hdr["Content-Length"] = []string{n}
		_, _ = w.Write(body)
	})
	srv := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(1)
	}
}

// load reads a body file, or makes a JSON body of 1,084 bytes (the size of
// dubsim's options answer, newline included) when path is empty.
func load(path string) []byte {
	if path == "" {
		const size = 1084
		prefix, suffix := []byte(`{"padding":"`), []byte("\"}\n")
		pad := bytes.Repeat([]byte("x"), size-len(prefix)-len(suffix))
		return append(append(prefix, pad...), suffix...)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(1)
	}
	return b
}
