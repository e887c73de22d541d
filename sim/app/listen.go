package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dubsim/dubsim/sim/server"
	"golang.org/x/net/netutil"
)

// Listen says where the process serves (App.Listen).
type Listen struct {
	// Addr serves every interface; StudioAddr, when set, the studio
	// interface alone, and ControlAddr the control API alone.
	Addr, StudioAddr, ControlAddr string
	// MaxConnections is the open connections each listener holds at most
	// (zero: unlimited); past it new connections wait in the kernel's
	// accept queue (fidelity HW3).
	MaxConnections int
	TLS            *tls.Config // every listener serves HTTPS (fidelity EV5)
	Log            *slog.Logger
}

// MaxHeaderBytes bounds a request's line and headers together: past 8
// KiB (and net/http's 4 KiB of slack) net/http refuses them (431) before
// it reads the rest, so a client sending megabyte lines costs the process
// a 12 KiB read each, not a megabyte each (docs/design/tenancy.md). As
// much as common servers accept in one header line (nginx 8 KiB, Apache
// 8190 bytes); targets past 8 KiB that fit get the envelope's 414.
const MaxHeaderBytes = 8 << 10

// Listeners are the process's HTTP servers.
type Listeners struct {
	Addrs   [3]string // bound: main, studio and control ("": not served)
	servers []*http.Server
	errs    chan error
	open    atomic.Int64 // requests being served
}

// Listen binds the addresses of l and serves the App's handlers there.
func (a *App) Listen(l Listen) (_ *Listeners, err error) {
	ls := &Listeners{errs: make(chan error, 3)}
	defer func() {
		if err != nil {
			for _, s := range ls.servers {
				_ = s.Close()
			}
		}
	}()
	only := func(iface string) func(string, string) string { return func(string, string) string { return iface } }
	for i, in := range []struct {
		name, addr string
		h          http.Handler
		iface      func(method, path string) string
	}{{"addr", l.Addr, a.Handler, sharedInterface}, {"studio-addr", l.StudioAddr, a.StudioHandler, only(server.Studio)}, {"control-addr", l.ControlAddr, a.ControlHandler, only(server.Control)}} {
		if in.addr == "" && i > 0 {
			continue
		}
		ln, err := net.Listen("tcp", in.addr)
		if err != nil {
			if i == 0 {
				return nil, err
			}
			return nil, fmt.Errorf("%s: %w", in.name, err)
		}
		ls.Addrs[i] = ln.Addr().String()
		if l.MaxConnections > 0 {
			ln = netutil.LimitListener(ln, l.MaxConnections)
		}
		ln = slowRefusals{Listener: ln, sleep: time.Sleep, iface: in.iface}
		srv := ls.server(in.h, l)
		ls.servers = append(ls.servers, srv)
		go func() { ls.errs <- serve(srv, ln) }()
	}
	return ls, nil
}

func (ls *Listeners) server(h http.Handler, l Listen) *http.Server {
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ls.open.Add(1)
			defer ls.open.Add(-1)
			h.ServeHTTP(w, r)
		}),
		// No ReadTimeout: a whole-request deadline cut a 5 GB upload slower
		// than 17 MB/s. Request bodies have an idle deadline instead, moved
		// as bytes arrive (Config.BodyIdleTimeout, fidelity HW1).
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    MaxHeaderBytes,
		WriteTimeout:      30 * time.Minute, // output files can be long downloads
		IdleTimeout:       2 * time.Minute,
		// Each server its own copy: serving adds HTTP/2 to its NextProtos.
		TLSConfig: l.TLS.Clone(),
	}
	if l.TLS != nil && l.Log != nil {
		// A client that refuses the certificate (a browser, before its
		// user accepts a self-signed one) is no server problem.
		srv.ErrorLog = slog.NewLogLogger(l.Log.Handler(), slog.LevelDebug)
	}
	return srv
}

func serve(srv *http.Server, ln net.Listener) error {
	if srv.TLSConfig != nil {
		return srv.ServeTLS(ln, "", "")
	}
	return srv.Serve(ln)
}

// Err receives the error of a server that stopped serving.
func (ls *Listeners) Err() <-chan error { return ls.errs }

// Open is the requests being served.
func (ls *Listeners) Open() int { return int(ls.open.Load()) }

// Shutdown stops the servers together, so that none takes new requests
// while another's open requests get grace to finish; then their
// connections are closed. Running past the grace is not an error; failing
// to close is. It reports how many requests the grace cut off.
func (ls *Listeners) Shutdown(grace time.Duration) (cut int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	errs := make([]error, len(ls.servers))
	var wg sync.WaitGroup
	for i, s := range ls.servers {
		wg.Go(func() {
			if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
				errs[i] = err
			}
		})
	}
	wg.Wait()
	if cut = ls.Open(); cut > 0 {
		for _, s := range ls.servers {
			_ = s.Close()
		}
	}
	return cut, errors.Join(errs...)
}
