package engine

import "sync"

// QuotaPool counts the files of the engines that share it against one total
// storage quota (sim.BlobQuota.Total): the bytes being received by any of
// them and the files each has stored. The instances of one process
// (sandboxes) share one, so that their number does not multiply the disk
// the process may fill. Each engine keeps its per-company count.
type QuotaPool struct {
	mu            sync.Mutex
	reservedTotal int64                // bytes being received, in all
	members       map[*quotas]struct{} // engines not closed
	// downloads are the slots of the artifact downloads running at once
	// in every engine of the pool: each engine runs at most maxDownloads
	// of them (its share), all together at most MaxProcessDownloads.
	downloads chan struct{}
}

// MaxProcessDownloads bounds the artifact downloads running at once in
// every engine of a QuotaPool (a process's simulators): four engines'
// whole shares.
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

// others is the members but c.
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
