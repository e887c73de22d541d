package main

import (
	"bytes"
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// target is the dubsim that `ctl` and `healthcheck` call.
type target struct {
	Base     string // without a trailing slash
	Insecure bool   // do not verify the server's certificate
	// Pin is the server's certificate file ($DUBSIM_TLS_CERT) when the
	// address comes from the server's own variables: the server must
	// present that certificate, whatever names it lists (the URL is
	// 127.0.0.1, which a certificate seldom names).
	Pin string
}

// resolveTarget is the address of `ctl` and `healthcheck`: the --url flag,
// else $DUBSIM_URL, else the address the server reads from the same
// environment ($DUBSIM_CONTROL_ADDR for a control call, else $DUBSIM_ADDR;
// a wildcard host is 127.0.0.1), https with the server's TLS variables. A
// self-signed certificate is not verified (it is made at start and kept in
// memory), $DUBSIM_TLS_CERT's is pinned (fidelity EV6).
func resolveTarget(getenv func(string) string, urlFlag string, insecureFlag, control bool) target {
	insecure := insecureFlag || envBool(getenv("DUBSIM_INSECURE"))
	if u := cmp.Or(urlFlag, getenv("DUBSIM_URL")); u != "" {
		return target{Base: strings.TrimRight(u, "/"), Insecure: insecure}
	}
	selfSigned := envBool(getenv(envName(flagTLSSelfSigned)))
	scheme := "http"
	if selfSigned || getenv(envName(flagTLSCert)) != "" {
		scheme = "https"
	}
	addr := getenv("DUBSIM_ADDR")
	if c := getenv("DUBSIM_CONTROL_ADDR"); control && c != "" {
		addr = c
	}
	host, port := "127.0.0.1", "8080"
	if h, p, err := net.SplitHostPort(addr); err == nil {
		if p != "" && p != "0" {
			port = p
		}
		if ip := net.ParseIP(h); h != "" && (ip == nil || !ip.IsUnspecified()) {
			host = h
		}
	}
	return target{Base: scheme + "://" + net.JoinHostPort(host, port), Insecure: insecure || selfSigned, Pin: getenv(envName(flagTLSCert))}
}

// envBool reads a boolean variable as the flag package would.
func envBool(v string) bool {
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

func (t target) transport() http.RoundTripper {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// One request per command: no connection is left idle for the server's
	// graceful stop to wait on (when the command runs inside a test).
	tr.DisableKeepAlives = true
	switch {
	case t.Insecure:
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for: a self-signed dubsim, or --insecure
	case t.Pin != "":
		// The chain and names are not checked: the certificate itself is.
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true, VerifyPeerCertificate: t.pinned} //nolint:gosec // pinned below
	}
	return tr
}

// pinned accepts the server's certificate when it is the one of t.Pin.
func (t target) pinned(rawCerts [][]byte, _ [][]*x509.Certificate) error {
	b, err := os.ReadFile(t.Pin)
	if err != nil {
		return fmt.Errorf("reading the certificate to expect: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil || len(rawCerts) == 0 || !bytes.Equal(block.Bytes, rawCerts[0]) {
		return fmt.Errorf("the server's certificate is not the one of %s ($DUBSIM_TLS_CERT)", t.Pin)
	}
	return nil
}
