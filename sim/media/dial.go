package media

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// errRebound is a host name (not a loopback name) that resolved to a
// loopback address: DNS rebinding toward the machine dubsim runs on.
var errRebound = errors.New("the host name resolves to a loopback address")

// dial connects to the address it checked (fidelity HF1), so a second answer
// of the DNS cannot move the connection elsewhere.
func (r *Resolver) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if !r.mayFetch(host) {
		return nil, fmt.Errorf(reasonHost, host)
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	switch {
	case ip == nil && IsLoopback(host): // a loopback name
		ip = net.IPv4(127, 0, 0, 1)
	case ip == nil:
		lookup := r.lookup
		if lookup == nil {
			lookup = net.DefaultResolver.LookupIPAddr
		}
		addrs, err := lookup(ctx, host)
		if err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("no address for %s", host)
		}
		ip = addrs[0].IP
		if ip.IsLoopback() {
			return nil, errRebound
		}
	}
	d := net.Dialer{Timeout: 10 * time.Second}
	return d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
}
