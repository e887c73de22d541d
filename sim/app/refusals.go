package app

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/dubsim/dubsim/sim/sandbox"
	"github.com/dubsim/dubsim/sim/server"
)

// RefusalDelay is how long net/http's refusal of a request whose line and
// headers pass MaxHeaderBytes (written on the connection before any
// handler runs) waits before it is written. A client that sends such
// requests without pause is a closed loop: answered at once, it sends the
// next one at once, and every one costs the process a connection, a
// goroutine and the kernel's copy of the line (thousands a second from
// four connections, a noisy neighbour's every one). Answered after a
// second, it costs a connection held a second. A client that sent one by
// mistake waits a second for its error.
const RefusalDelay = time.Second

// tooLarge starts what net/http writes to refuse a request head past
// MaxHeaderBytes; no handler of dubsim answers 431.
var tooLarge = []byte("HTTP/1.1 431 ")

// startMax is how much of a request's line a connection keeps: enough to
// know the interface of its path.
const startMax = 2 << 10

// slowRefusals delays net/http's 431 by RefusalDelay on every connection
// of ln, and answers it as the 414 of a long target in the envelope of the
// path's interface (iface) when the request line had not ended: a target
// past the head's limit would get limitURI's 414 (fidelity TJ2) had
// net/http read it. Over TLS the connection carries ciphertext and
// nothing is changed.
type slowRefusals struct {
	net.Listener
	sleep func(time.Duration)
	iface func(method, path string) string
}

func (l slowRefusals) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &refusalConn{Conn: c, sleep: l.sleep, iface: l.iface}, nil
}

// sharedInterface is the interface whose envelope answers path on the
// main address.
func sharedInterface(method, path string) string {
	return sandbox.InterfaceOf(&http.Request{Method: method, URL: &url.URL{Path: path}, Header: http.Header{}})
}

type refusalConn struct {
	net.Conn
	sleep func(time.Duration)
	iface func(method, path string) string

	mu        sync.Mutex // Read and Write run on different goroutines
	answered  bool       // a write since the last read: the next read starts a request
	start     []byte     // the start of the request's line, up to startMax
	lineLen   int        // bytes of the line read so far
	lineEnded bool
}

func (c *refusalConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	if c.answered {
		c.answered, c.start, c.lineLen, c.lineEnded = false, c.start[:0], 0, false
	}
	if chunk := p[:n]; !c.lineEnded {
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			c.lineEnded, chunk = true, chunk[:i]
		}
		c.lineLen += len(chunk)
		c.start = append(c.start, chunk[:min(len(chunk), startMax-len(c.start))]...)
	}
	c.mu.Unlock()
	return n, err
}

func (c *refusalConn) Write(p []byte) (int, error) {
	if bytes.HasPrefix(p, tooLarge) {
		c.sleep(RefusalDelay)
		if answer := c.longTarget(); answer != nil {
			if _, err := c.Conn.Write(answer); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	c.mark()
	return c.Conn.Write(p)
}

func (c *refusalConn) mark() {
	c.mu.Lock()
	c.answered = true
	c.mu.Unlock()
}

// longTarget is the 414 to write in place of net/http's 431, or nil when
// the request's line had ended within the limit (its headers were too
// long: net/http's 431 stays).
func (c *refusalConn) longTarget() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	method, target, _ := strings.Cut(string(c.start), " ")
	target, _, _ = strings.Cut(target, " ")
	if c.iface == nil || (c.lineEnded && len(target) <= server.MaxRequestURI) {
		return nil
	}
	path, _, _ := strings.Cut(target, "?")
	ct, body := server.URITooLongEnvelope(c.iface(method, path), c.lineLen-len(method)-1)
	return fmt.Appendf(nil, "HTTP/1.1 414 Request URI Too Long\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", ct, len(body), body)
}

// ReadFrom keeps the connection's own (sendfile for a file).
func (c *refusalConn) ReadFrom(r io.Reader) (int64, error) {
	c.mark()
	return io.Copy(c.Conn, r)
}

// CloseWrite keeps the connection's own: net/http half-closes a connection
// before it lingers on it.
func (c *refusalConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
