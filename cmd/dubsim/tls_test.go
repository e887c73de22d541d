package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startBanner runs dubsim in-process on a data file of its own, logs off,
// and returns its banner (up to the API keys) and a stop function.
func startBanner(t *testing.T, args ...string) (string, func() error) {
	t.Helper()
	r := startRun(t, nil, append([]string{"--log-level", "off", "--data", filepath.Join(t.TempDir(), "d.db")}, args...)...)
	return r.banner, r.stop
}

func match(t *testing.T, re, s string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	require.NotNil(t, m, "%s not in\n%s", re, s)
	return m[1]
}

// pinnedClient trusts only the certificate whose SHA-256 fingerprint the
// banner printed.
func pinnedClient(fp string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true // nothing idle for the server's graceful stop to wait on
	tr.TLSClientConfig = &tls.Config{
		InsecureSkipVerify: true, //nolint:gosec // the fingerprint is checked
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 || fingerprint(raw[0]) != fp {
				return errors.New("not the printed certificate")
			}
			return nil
		},
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func status(t *testing.T, c *http.Client, method, u string) int {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	require.NoError(t, err)
	req.Header.Set("X-Dubsim-Control", "1")
	resp, err := c.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestSelfSignedTLS: every listener speaks HTTPS with the certificate whose
// fingerprint the banner prints, and healthcheck and ctl reach it through
// the server's own variables.
func TestSelfSignedTLS(t *testing.T) {
	t.Parallel()
	banner, stop := startBanner(t, "--tls-self-signed", "--studio-addr", "127.0.0.1:0", "--control-addr", "127.0.0.1:0", "--time-scale", "0")
	base := match(t, `listening on (https://\S+)`, banner)
	studio := match(t, `studio only: (https://[^/\s]+)\n`, banner)
	ctl := match(t, `control API: (https://\S+)/_sim`, banner)
	fp := match(t, `SHA-256 fingerprint: ([0-9A-F:]{95})\n`, banner)
	c := pinnedClient(fp)

	assert.Equal(t, http.StatusOK, status(t, c, "GET", base+"/_sim/health"))
	assert.Equal(t, http.StatusOK, status(t, c, "GET", ctl+"/_sim/clock"))
	assert.Equal(t, http.StatusOK, status(t, c, "GET", studio+"/_sim/health"))
	// A client that verifies the chain refuses the certificate; plain HTTP
	// is refused by the server.
	_, err := http.Get(base + "/_sim/health")
	var unknown x509.UnknownAuthorityError
	assert.ErrorAs(t, err, &unknown)
	for _, u := range []string{base, studio, ctl} {
		assert.Equal(t, http.StatusBadRequest, status(t, http.DefaultClient, "GET", "http://"+strings.TrimPrefix(u, "https://")+"/_sim/health"), u)
	}

	_, port, err := net.SplitHostPort(strings.TrimPrefix(base, "https://"))
	require.NoError(t, err)
	env := map[string]string{"DUBSIM_ADDR": ":" + port, "DUBSIM_TLS_SELF_SIGNED": "true", "DUBSIM_CONTROL_ADDR": strings.TrimPrefix(ctl, "https://")}
	getenv := func(k string) string { return env[k] }
	var out strings.Builder
	require.NoError(t, run(context.Background(), []string{"healthcheck"}, getenv, &out, io.Discard))
	assert.Contains(t, out.String(), `"status":"ok"`)
	out.Reset()
	require.NoError(t, run(context.Background(), []string{"ctl", "clock"}, getenv, &out, io.Discard))
	assert.Contains(t, out.String(), `"now"`)
	// An explicit URL is verified, unless --insecure.
	assert.ErrorAs(t, run(context.Background(), []string{"healthcheck", "--url", base}, noEnv, io.Discard, io.Discard), &unknown)
	require.NoError(t, run(context.Background(), []string{"ctl", "--url", ctl, "--insecure", "clock"}, noEnv, io.Discard, io.Discard))
	// An idle HTTP/2 connection holds a graceful stop for a second per
	// listener (net/http waits that long for the client to leave after
	// its GOAWAY): the pinned client leaves first.
	c.CloseIdleConnections()
	require.NoError(t, stop())
}

// writeCert writes a certificate made like --tls-self-signed's to PEM
// files.
func writeCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	cert, err := selfSigned(time.Now(), nil)
	require.NoError(t, err)
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600))
	return certFile, keyFile
}

// TestTLSCertificateFiles: --tls-cert/--tls-key serve that certificate;
// healthcheck with the server's variables expects that very certificate.
func TestTLSCertificateFiles(t *testing.T) {
	t.Parallel()
	certFile, keyFile := writeCert(t, t.TempDir())
	other, _ := writeCert(t, t.TempDir())
	banner, stop := startBanner(t, "--tls-cert", certFile, "--tls-key", keyFile)
	base := match(t, `listening on (https://\S+)`, banner)
	fp := match(t, `SHA-256 fingerprint ([0-9A-F:]{95})\)`, banner)
	assert.Equal(t, http.StatusOK, status(t, pinnedClient(fp), "GET", base+"/_sim/health"))

	_, port, err := net.SplitHostPort(strings.TrimPrefix(base, "https://"))
	require.NoError(t, err)
	for _, tc := range []struct {
		cert string
		ok   bool
	}{{certFile, true}, {other, false}} {
		env := map[string]string{"DUBSIM_ADDR": "127.0.0.1:" + port, "DUBSIM_TLS_CERT": tc.cert, "DUBSIM_TLS_KEY": keyFile}
		err := run(context.Background(), []string{"healthcheck", "--quiet"}, func(k string) string { return env[k] }, io.Discard, io.Discard)
		if tc.ok {
			assert.NoError(t, err)
		} else {
			assert.ErrorContains(t, err, fmt.Sprintf("the server's certificate is not the one of %s", other))
		}
	}
	require.NoError(t, stop())
}

// TestBannerNamesBothBases: the banner names the shared address and the
// base of each interface alone, and each answers as that interface.
func TestBannerNamesBothBases(t *testing.T) {
	t.Parallel()
	banner, stop := startBanner(t, "--time-scale", "0")
	defer func() { require.NoError(t, stop()) }()
	base := match(t, `listening on (http://\S+) \(platform and studio interfaces\)\n`, banner)
	platformBase := match(t, `platform only: (http://\S+)\n`, banner)
	studioBase := match(t, `studio only: (http://\S+)\n`, banner)
	assert.Equal(t, base+"/platform", platformBase)
	assert.Equal(t, base+"/studio", studioBase)
	for _, c := range []struct{ url, iface string }{
		{platformBase + "/api/v1/projects", "platform"}, // a create without a body: the platform's 400
		{studioBase + "/api/v1/projects", "studio"},     // the studio's 400
	} {
		req, err := http.NewRequest("POST", c.url, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer dubsim-free")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, c.url)
		assert.Equal(t, c.iface, resp.Header.Get("X-Dubsim-Interface"), c.url)
	}
}
