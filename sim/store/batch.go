package store

import (
	"errors"
	"fmt"
	"sync"

	"github.com/dubsim/dubsim/sim"
	bolt "go.etcd.io/bbolt"
)

// Group commit. Batch calls queue for one writer goroutine, which runs
// everything queued in one transaction as soon as the previous one is
// committed: a lone write commits at once, and under load the batch is
// whatever arrived during the last commit (its fsync, mostly). bbolt's own
// DB.Batch waits a fixed delay or for a fixed count instead; no fixed pair
// suits both 16 and 256 concurrent clients (measured in the notes of
// issue 7: with a 2 ms delay, a batch size of 32 was best at 64 clients and
// worst at 256).

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

func (c *committer) loop() {
	defer c.wg.Done()
	batch := make([]*call, 0, maxBatch)
	for first := range c.calls {
		batch = append(batch[:0], first)
	drain:
		for len(batch) < maxBatch {
			select {
			case cl, ok := <-c.calls:
				if !ok {
					break drain
				}
				batch = append(batch, cl)
			default:
				break drain
			}
		}
		c.run(batch)
	}
}

// run commits batch in one transaction. A call whose fn fails is taken out
// and told to retry alone (errTrySolo); the others run again without it.
func (c *committer) run(batch []*call) {
	for len(batch) > 0 {
		failed := -1
		err := c.db.Update(func(tx *bolt.Tx) error {
			for i, cl := range batch {
				if err := safely(cl.fn, tx); err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		if failed < 0 {
			for _, cl := range batch {
				cl.done <- err
			}
			return
		}
		batch[failed].done <- errTrySolo
		batch = append(batch[:failed], batch[failed+1:]...)
	}
}

// safely runs fn, turning a panic into an error: a panic in the writer
// goroutine would end the process. The caller, told to retry alone, runs fn
// again in its own goroutine, where the panic happens again and its own
// recovery (the HTTP server's) applies.
func safely(fn func(*bolt.Tx) error, tx *bolt.Tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("store: panic in a batched write: %v", r)
		}
	}()
	return fn(tx)
}

// wrap adapts a sim.Tx function to a bolt read-write transaction, with the
// fill percent of the append buckets set (bbolt keeps it per bucket per
// transaction).
func (s *Store) wrap(fn func(sim.Tx) error) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		for _, name := range appendBuckets {
			if b := tx.Bucket(name); b != nil {
				b.FillPercent = appendFill
			}
		}
		return fn(&txn{tx: tx, s: s})
	}
}
