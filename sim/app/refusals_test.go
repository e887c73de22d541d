package app

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim/sandbox"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRefusalsWait: net/http's 431 is written after RefusalDelay; every
// other write at once.
func TestRefusalsWait(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		write string
		slept time.Duration
	}{
		{"431", "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large", RefusalDelay},
		{"an answer", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0},
		{"a body that mentions 431", `{"status":431} HTTP/1.1 431 `, 0},
		{"a 414", "HTTP/1.1 414 Request URI Too Long\r\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			server, client := net.Pipe()
			defer client.Close()
			var slept time.Duration
			c := &refusalConn{Conn: server, sleep: func(d time.Duration) { slept += d }}
			got := make(chan string, 1)
			go func() {
				b := make([]byte, len(tt.write))
				n, _ := client.Read(b)
				got <- string(b[:n])
			}()
			n, err := c.Write([]byte(tt.write))
			require.NoError(t, err)
			assert.Equal(t, len(tt.write), n)
			assert.Equal(t, tt.write, <-got)
			assert.Equal(t, tt.slept, slept)
			assert.NoError(t, c.CloseWrite(), "a pipe cannot half-close: nothing to do")
			server.Close()
		})
	}
}

// TestRefusalOfALongLine: net/http's 431 to a request whose line had not
// ended is written as the 414 of a long target, in the envelope of its
// path's interface; a 431 to long headers after a short line stays.
func TestRefusalOfALongLine(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 12<<10)
	tests := []struct {
		name, read string
		iface      func(method, path string) string
		want       string // status line and body; "" for net/http's 431 unchanged
	}{
		{"platform path", "GET /api/v1/projects/" + long, sharedInterface,
			"HTTP/1.1 414 Request URI Too Long\r\n" + `{"error":"URITooLongError","message":"The request target (path and query) is over 12305 bytes long; dubsim accepts at most 8192 bytes"}`},
		{"studio path in a sandbox", "GET /sbx/" + sandbox.NewID() + "/api/v1/artifacts/" + long, sharedInterface,
			"HTTP/1.1 414 Request URI Too Long\r\n" + `{"error":"The request target (path and query) is over 12327 bytes long; dubsim accepts at most 8192 bytes"}`},
		{"control address", "GET /_sim/" + long + "?x=1", func(string, string) string { return server.Control },
			"HTTP/1.1 414 Request URI Too Long\r\n" + `{"error":"URITooLongError","message":"The request target (path and query) is over 12298 bytes long; dubsim accepts at most 8192 bytes"}`},
		{"long headers after a short line", "GET /api/v1/voices HTTP/1.1\r\nX-Big: " + long, sharedInterface, ""},
	}
	refusal := "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, client := net.Pipe()
			defer client.Close()
			c := &refusalConn{Conn: srv, sleep: func(time.Duration) {}, iface: tt.iface}
			go func() { _, _ = io.WriteString(client, tt.read) }()
			buf := make([]byte, 4<<10)
			for n := 0; n < len(tt.read); {
				m, err := c.Read(buf)
				require.NoError(t, err)
				n += m
			}
			got := make(chan string, 1)
			go func() { b, _ := io.ReadAll(client); got <- string(b) }()
			n, err := c.Write([]byte(refusal))
			require.NoError(t, err)
			assert.Equal(t, len(refusal), n, "net/http sees its whole answer written")
			srv.Close()
			answer := <-got
			if tt.want == "" {
				assert.Equal(t, refusal, answer)
				return
			}
			status, _, _ := strings.Cut(tt.want, "\r\n")
			assert.True(t, strings.HasPrefix(answer, status+"\r\n"), answer)
			assert.Contains(t, answer, "\r\nConnection: close\r\n")
			_, body, _ := strings.Cut(answer, "\r\n\r\n")
			assert.JSONEq(t, tt.want[len(status)+2:], body)
		})
	}
}
