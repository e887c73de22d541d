package main

import (
	"net"
	"sync"
)

// defaultMaxConnections is --max-connections' default: far above what a
// test suite opens (Go's client keeps 2 idle connections per host, a
// browser 6), far below what exhausts memory or descriptors (fidelity HW3).
const defaultMaxConnections = 1024

// limitListener holds at most max connections of l open at once (max <= 0:
// l itself). Past the cap, Accept waits until one closes: new connections
// wait in the kernel's accept queue (then their SYNs are dropped and the
// client retries), which costs the process nothing.
func limitListener(l net.Listener, max int) net.Listener {
	if max <= 0 {
		return l
	}
	return &capListener{Listener: l, slots: make(chan struct{}, max), done: make(chan struct{})}
}

type capListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *capListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &capConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
}

func (l *capListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// capConn gives its slot back once closed.
type capConn struct {
	net.Conn
	release func()
}

func (c *capConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
