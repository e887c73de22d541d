package proctest

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for one writer and readers at once: a
// process's output, which exec's copying goroutine (or a logger) writes
// while the test reads it. A reader can wait for the next write.
type Buffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // closed (and replaced) by each write
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.written != nil {
		close(l.written)
		l.written = nil
	}
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// next is the text so far and a channel closed at the next write.
func (l *Buffer) next() (string, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.written == nil {
		l.written = make(chan struct{})
	}
	return l.b.String(), l.written
}
