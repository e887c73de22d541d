package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// runHealthcheck is `dubsim healthcheck`: one GET of /_sim/health, exit 0
// when it answers 200, for the container's HEALTHCHECK (a minimal image
// has no shell or curl).
func runHealthcheck(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dubsim healthcheck", "Usage of dubsim healthcheck:\n", stderr)
	base := fs.String("url", "", "base URL of the simulator (default: $DUBSIM_URL, else loopback at the port of $DUBSIM_ADDR, else http://127.0.0.1:8080)")
	insecure := fs.Bool("insecure", false, "do not verify the server's TLS certificate (default: $DUBSIM_INSECURE; on for a self-signed dubsim found through the environment)")
	timeout := fs.Duration("timeout", 2*time.Second, "give up after this long")
	quiet := fs.Bool("quiet", false, "print nothing on success")
	if err := parseNoArgs(fs, args, stderr); err != nil {
		return err
	}
	// The main address serves /_sim/health even with --control-addr.
	to := resolveTarget(getenv, *base, *insecure, false)
	u := to.Base + "/_sim/health"
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := (&http.Client{Transport: to.transport()}).Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %d: %s", u, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if !*quiet {
		fmt.Fprintf(stdout, "%s", body)
	}
	return nil
}
