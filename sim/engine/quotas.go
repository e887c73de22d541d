package engine

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/dubsim/dubsim/sim"
)

// QuotaPool counts the files of the engines that share it against one total
// storage quota (sim.BlobQuota.Total), so that the number of sandboxes does
// not multiply the disk the process may fill.
type QuotaPool struct {
	mu            sync.Mutex
	reservedTotal int64                // bytes being received, in all
	members       map[*quotas]struct{} // engines not closed
	// downloads are the slots of the artifact downloads running at once
	// in every engine of the pool (MaxProcessDownloads).
	downloads chan struct{}
}

// MaxProcessDownloads bounds the artifact downloads running at once in
// every engine of a QuotaPool: four engines' whole shares.
const MaxProcessDownloads = 4 * maxDownloads

// NewQuotaPool returns an empty pool, for engine.Config.QuotaPool.
func NewQuotaPool() *QuotaPool { return newQuotaPool(MaxProcessDownloads) }

func newQuotaPool(downloads int) *QuotaPool {
	return &QuotaPool{members: map[*quotas]struct{}{}, downloads: make(chan struct{}, downloads)}
}

func (p *QuotaPool) join(c *quotas) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.members[c] = struct{}{}
}

func (p *QuotaPool) leave(c *quotas) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.members, c)
}

func (p *QuotaPool) others(c *quotas) []*quotas {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*quotas
	for m := range p.members {
		if m != c {
			out = append(out, m)
		}
	}
	return out
}

// quotaCount is an io.Writer that counts the bytes of a file being received
// (an upload, or an artifact's download) against the quotas, with the other
// files in flight, and fails with a *sim.QuotaError at the first byte past
// one. The stored usage is read when the file starts.
type quotaCount struct {
	q            *quotas
	company      string
	stored, mine int64 // bytes stored when the file started: in all, of the company
	read         int64
	released     bool
}

// quotas are the storage quotas of one engine.
type quotas struct {
	store    sim.Store
	limits   sim.BlobQuota
	pool     *QuotaPool
	reserved map[string]int64 // bytes being received by each company, under pool.mu
}

// start starts counting a file of company's; exceptUpload is the upload it
// replaces ("": none).
func (q *quotas) start(ctx context.Context, company, exceptUpload string) (*quotaCount, error) {
	qc := &quotaCount{q: q, company: company}
	if q.limits.Total <= 0 && q.limits.PerCompany <= 0 {
		qc.released = true // nothing to count
		return qc, nil
	}
	err := q.store.View(ctx, func(tx sim.Tx) error {
		var err error
		qc.stored, qc.mine, err = storedBytes(tx, company, exceptUpload)
		return err
	})
	if err != nil {
		return nil, err
	}
	// An engine of the pool whose store cannot be read is closing: its
	// files are about to go.
	for _, o := range q.pool.others(q) {
		_ = o.store.View(ctx, func(tx sim.Tx) error {
			all, _, err := storedBytes(tx, "", "")
			if err == nil {
				qc.stored += all
			}
			return err
		})
	}
	// A file of 0 bytes is refused too when the quota is used up.
	if err := qc.count(0); err != nil {
		qc.release()
		return nil, err
	}
	return qc, nil
}

// storedBytes is the bytes of the files stored, in all and of company's:
// the uploaded files but exceptUpload's, and the downloaded artifacts.
func storedBytes(tx sim.Tx, company, exceptUpload string) (all, mine int64, err error) {
	err = tx.Uploads().ForEach(func(o sim.Upload) error {
		if !o.Uploaded || o.ID == exceptUpload {
			return nil
		}
		all += o.Size
		if o.CompanyID == company {
			mine += o.Size
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	err = tx.Artifacts().ForEach(func(a sim.Artifact) error {
		all += a.Result.Stored
		if a.CompanyID == company {
			mine += a.Result.Stored
		}
		return nil
	})
	return all, mine, err
}

func (qc *quotaCount) Write(p []byte) (int, error) {
	if err := qc.count(int64(len(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// count adds n bytes read to the bytes in flight and checks the quotas.
func (qc *quotaCount) count(n int64) error {
	if qc.released {
		return nil
	}
	q, lim := qc.q, qc.q.limits
	q.pool.mu.Lock()
	defer q.pool.mu.Unlock()
	qc.read += n
	q.reserved[qc.company] += n
	q.pool.reservedTotal += n
	mine, total := qc.mine+q.reserved[qc.company], qc.stored+q.pool.reservedTotal
	switch {
	case lim.PerCompany > 0 && (mine > lim.PerCompany || n == 0 && mine >= lim.PerCompany):
		return &sim.QuotaError{Reason: fmt.Sprintf(sim.MsgCompanyQuota, gb(lim.PerCompany))}
	case lim.Total > 0 && (total > lim.Total || n == 0 && total >= lim.Total):
		return &sim.QuotaError{Reason: fmt.Sprintf(sim.MsgTotalQuota, gb(lim.Total))}
	}
	return nil
}

// release stops counting the file's bytes as in flight: it is stored (and
// its record counts it) or failed.
func (qc *quotaCount) release() {
	q := qc.q
	q.pool.mu.Lock()
	defer q.pool.mu.Unlock()
	if qc.released {
		return
	}
	qc.released = true
	q.reserved[qc.company] -= qc.read
	if q.reserved[qc.company] == 0 {
		delete(q.reserved, qc.company)
	}
	q.pool.reservedTotal -= qc.read
}

// gb words a byte count in decimal gigabytes, as storage quotas are.
func gb(n int64) string { return strconv.FormatFloat(float64(n)/1e9, 'f', -1, 64) + " GB" }
