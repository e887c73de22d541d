// Command ceiling is the benchmark's reference: the least a Go net/http
// server can do for each measured endpoint. It answers every request with a
// fixed body, chosen by method and path, and the headers dubsim sends with
// it (Content-Type application/json; charset=utf-8, Content-Length, Date),
// without routing, authentication, storage or encoding.
//
//	ceiling -addr 127.0.0.1:PORT [-options FILE] [-project FILE] [-create FILE]
//
// The files hold the bodies dubsim answered (bench/run captures them), so
// the bytes on the wire are the same size; without a file a body of the
// size of dubsim's options answer is used. GET /api/v1/options gets the
// options body, any other GET the project body, POST the create body.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "listen address")
	options := flag.String("options", "", "body of GET /api/v1/options")
	project := flag.String("project", "", "body of any other GET")
	create := flag.String("create", "", "body of POST")
	flag.Parse()

	optionsBody := load(*options)
	projectBody := load(*project)
	createBody := load(*create)
	optionsLen := strconv.Itoa(len(optionsBody))
	projectLen := strconv.Itoa(len(projectBody))
	createLen := strconv.Itoa(len(createBody))
	contentType := []string{"application/json; charset=utf-8"}

	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, n := projectBody, projectLen
		switch {
		case r.Method == http.MethodPost:
			body, n = createBody, createLen
		case r.URL.Path == "/api/v1/options":
			body, n = optionsBody, optionsLen
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
