package app

import (
	"net"
	"testing"
	"time"

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
			c := refusalConn{Conn: server, sleep: func(d time.Duration) { slept += d }}
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
