package main

import (
	"net"

	"golang.org/x/net/netutil"
)

// defaultMaxConnections is --max-connections' default: far above what a
// test suite opens (Go's client keeps 2 idle connections per host, a
// browser 6), far below what exhausts memory or descriptors (fidelity HW3).
const defaultMaxConnections = 1024

// limitListener holds at most max connections of l open at once (max <= 0:
// l itself). Past the cap, Accept waits until one closes: new connections
// wait in the kernel's accept queue (then their SYNs are dropped and the
// client retries), which costs the process nothing. The cap is the
// process's, not a tenant's: a connection names no tenant before its first
// request; the long-held requests have bounds per tenant
// (docs/design/tenancy.md).
func limitListener(l net.Listener, max int) net.Listener {
	if max <= 0 {
		return l
	}
	return netutil.LimitListener(l, max)
}
