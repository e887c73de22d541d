package store

import (
	"errors"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Group commit. Batch calls queue for one writer goroutine, which runs
// everything queued in one transaction as soon as the previous one is
// committed: a lone write commits at once, and under load the batch is
// whatever arrived during the last commit (its fsync, mostly), topped up for
// at most gatherWait to the size of the last batch. bbolt's own
// DB.Batch waits a fixed delay or for a fixed count instead; no fixed pair
// suits both 16 and 256 concurrent clients (measured: with a 2 ms delay,
// a batch size of 32 was best at 64 clients and worst at 256).

// maxBatch bounds the calls one transaction runs.
const maxBatch = 1000

// errClosed answers a Batch call made after Close.
var errClosed = errors.New("store: closed")

// errTrySolo tells a caller whose fn failed inside a shared transaction
// to run it alone: the failure may have been caused by a call before it.
var errTrySolo = errors.New("store: batch call must be retried alone")

type call struct {
	fn   func(*bolt.Tx) error
	done chan error
}

type committer struct {
	db     *bolt.DB
	mu     sync.RWMutex // held to send, so close never closes calls under a sender
	closed bool
	calls  chan *call
	wg     sync.WaitGroup
}

func newCommitter(db *bolt.DB) *committer {
	c := &committer{db: db, calls: make(chan *call, maxBatch)}
	c.wg.Add(1)
	go c.loop()
	return c
}

// do runs fn in a transaction it may share with other do calls; fn may run
// more than once.
func (c *committer) do(fn func(*bolt.Tx) error) error {
	cl := &call{fn: fn, done: make(chan error, 1)}
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return errClosed
	}
	c.calls <- cl
	c.mu.RUnlock()
	if err := <-cl.done; !errors.Is(err, errTrySolo) {
		return err
	}
	return c.db.Update(fn)
}

// close lets the loop commit what is queued, then stops it.
func (c *committer) close() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.calls)
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// gatherWait bounds how long a batch smaller than the previous one waits
// for company. The two syncs of a commit take about 1.2 ms, so while
// creations keep coming a fuller batch is worth a short wait (POST on a
// 100,000-project file, A/B: 16 connections 8,800 -> 10,000 req/s, 64
// 17,700 -> 18,800, 256 18,000 -> 19,100).
const gatherWait = 500 * time.Microsecond

func (c *committer) loop() {
	defer c.wg.Done()
	batch := make([]*call, 0, maxBatch)
	prev := 0 // the last batch's size: what arrives during a commit under this load
	timer := time.NewTimer(gatherWait)
	timer.Stop()
	for first := range c.calls {
		batch = c.queued(append(batch[:0], first))
		// A lone write (prev 0 or 1) never waits; under load, wait a little
		// for as many calls as the last batch had.
		if len(batch) < prev {
			timer.Reset(gatherWait)
			batch = c.gather(batch, prev, timer.C)
			timer.Stop()
		}
		prev = len(batch)
		c.run(batch)
	}
}

// queued adds the calls already queued to batch, up to maxBatch.
func (c *committer) queued(batch []*call) []*call {
	for len(batch) < maxBatch {
		select {
		case cl, ok := <-c.calls:
			if !ok {
				return batch
			}
			batch = append(batch, cl)
		default:
			return batch
		}
	}
	return batch
}

// gather adds calls to batch as they come until it holds want or the
// deadline passes.
func (c *committer) gather(batch []*call, want int, deadline <-chan time.Time) []*call {
	for len(batch) < min(want, maxBatch) {
		select {
		case cl, ok := <-c.calls:
			if !ok {
				return batch
			}
			batch = append(batch, cl)
		case <-deadline:
			return batch
		}
	}
	return batch
}

// run commits batch in one transaction. A call whose fn fails is taken out
// and told to retry alone (errTrySolo); the others run again without it.
// A panic (or a memory fault reading a damaged page) in the writer
// goroutine would end the process, so it is recovered (file.go); the
// caller, told to retry alone, runs fn again in its own goroutine, where
// the panic happens again and its own recovery (the HTTP server's) applies.
func (c *committer) run(batch []*call) {
	for len(batch) > 0 {
		failed := -1
		err := recovered(func() error {
			return c.db.Update(func(tx *bolt.Tx) error {
				for i, cl := range batch {
					if err := recovered(func() error { return cl.fn(tx) }); err != nil {
						failed = i
						return err
					}
				}
				return nil
			})
		})
		if failed >= 0 {
			batch[failed].done <- errTrySolo
			batch = append(batch[:failed], batch[failed+1:]...)
			continue
		}
		if errors.As(err, new(panicError)) {
			// The commit itself panicked (a damaged page of the freelist
			// or of a bucket it rewrote): every call runs again alone, in
			// its own goroutine.
			err = errTrySolo
		}
		for _, cl := range batch {
			cl.done <- err
		}
		return
	}
}
