package app

import (
	"bytes"
	"io"
	"net"
	"time"
)

// RefusalDelay is how long net/http's refusal of a request whose line and
// headers pass MaxHeaderBytes (its own 431, written on the connection
// before any handler runs) waits before it is written. A client that sends
// such requests without pause is a closed loop: answered at once, it
// sends the next one at once, and every one costs the process a
// connection, a goroutine and the kernel's copy of the line (thousands a
// second from four connections, a noisy neighbour's every one). Answered
// after a second, it costs a connection held a second. A client that
// sent one by mistake waits a second for its error.
const RefusalDelay = time.Second

// tooLarge starts what net/http writes to refuse a request head past
// MaxHeaderBytes; no handler of dubsim answers 431.
var tooLarge = []byte("HTTP/1.1 431 ")

// slowRefusals delays net/http's 431 by RefusalDelay on every connection
// of ln. Over TLS the connection carries ciphertext and nothing is
// delayed.
type slowRefusals struct {
	net.Listener
	sleep func(time.Duration)
}

func (l slowRefusals) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return refusalConn{Conn: c, sleep: l.sleep}, nil
}

type refusalConn struct {
	net.Conn
	sleep func(time.Duration)
}

func (c refusalConn) Write(p []byte) (int, error) {
	if bytes.HasPrefix(p, tooLarge) {
		c.sleep(RefusalDelay)
	}
	return c.Conn.Write(p)
}

// ReadFrom keeps the connection's own (sendfile for a file).
func (c refusalConn) ReadFrom(r io.Reader) (int64, error) { return io.Copy(c.Conn, r) }

// CloseWrite keeps the connection's own: net/http half-closes a connection
// before it lingers on it.
func (c refusalConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
