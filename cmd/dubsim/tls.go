package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

func checkTLS(c config) error {
	switch {
	case c.TLSSelfSigned && (c.TLSCert != "" || c.TLSKey != ""):
		return errors.New("tls-self-signed makes its own certificate: give it or tls-cert and tls-key, not both")
	case (c.TLSCert == "") != (c.TLSKey == ""):
		return errors.New("tls-cert and tls-key go together: give both files or neither")
	}
	return nil
}

func (c config) tlsOn() bool { return c.TLSSelfSigned || c.TLSCert != "" }

func (c config) scheme() string {
	if c.tlsOn() {
		return "https"
	}
	return "http"
}

// serverTLS is the TLS configuration of every listener (nil: plain HTTP)
// and, for a certificate made at start, its SHA-256 fingerprint.
func serverTLS(c config, now time.Time, hosts ...string) (*tls.Config, string, error) {
	var cert tls.Certificate
	var err error
	switch {
	case c.TLSCert != "":
		if cert, err = tls.LoadX509KeyPair(c.TLSCert, c.TLSKey); err != nil {
			return nil, "", fmt.Errorf("tls-cert, tls-key: %w", err)
		}
	case c.TLSSelfSigned:
		if cert, err = selfSigned(now, hosts); err != nil {
			return nil, "", fmt.Errorf("tls-self-signed: %w", err)
		}
	default:
		return nil, "", nil
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, fingerprint(cert.Certificate[0]), nil
}

// selfSigned makes an ECDSA P-256 certificate valid for a year from now,
// for localhost, 127.0.0.1, ::1 and the hosts of the listen addresses
// (but wildcards).
func selfSigned(now time.Time, listenAddrs []string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"dubsim"}, CommonName: "dubsim self-signed"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // so that a client may trust it as its own root
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	for _, a := range listenAddrs {
		h, _, err := net.SplitHostPort(a)
		if err != nil || h == "" {
			continue
		}
		if ip := net.ParseIP(h); ip != nil {
			if !ip.IsUnspecified() && !slices.ContainsFunc(tmpl.IPAddresses, ip.Equal) {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			}
		} else if !slices.Contains(tmpl.DNSNames, h) {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// fingerprint is the SHA-256 of a DER certificate as openssl prints it
// (AB:CD:...), to compare with `openssl x509 -fingerprint -sha256`.
func fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return strings.ReplaceAll(fmt.Sprintf("% X", sum[:]), " ", ":")
}

// parseOrigins reads --cors-origins: "*" (any), "none" (no CORS, nil) or
// comma-separated origins (scheme://host[:port]).
func parseOrigins(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "none", "":
		return nil, nil
	case "*":
		return []string{"*"}, nil
	}
	var out []string
	for _, o := range splitList(s) {
		u, err := url.Parse(o)
		if o != "*" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "") {
			return nil, fmt.Errorf("cors-origins must be *, none or origins such as https://app.example.com,http://localhost:3000; got %q", o)
		}
		out = append(out, strings.TrimSuffix(o, "/"))
	}
	return out, nil
}
