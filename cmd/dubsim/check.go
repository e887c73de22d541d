package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/dubsim/dubsim/sim/store"
)

// errCheckFailed is the result of a check that found (and printed) problems.
var errCheckFailed = errors.New("check: the data file has problems (above)")

// runCheck is `dubsim check --data FILE`: store.Check's report, "ok" or
// the problems.
func runCheck(_ context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dubsim check", "usage: dubsim check [--data FILE]\n\nChecks a data file without changing it: its header, bbolt's consistency\ncheck and every record. Exit status 0: sound; 1: problems (listed).\n\n", stderr)
	data := fs.String("data", "", "the data file to check (default: $DUBSIM_DATA)")
	if err := parseNoArgs(fs, args, stderr); err != nil {
		return err
	}
	path := cmp.Or(*data, getenv("DUBSIM_DATA"))
	if path == "" {
		return errors.New("check: which data file? Give --data FILE (or DUBSIM_DATA): without one, dubsim serves from a temporary store removed at exit")
	}
	r, err := store.Check(path)
	if err != nil {
		return err
	}
	for _, p := range r.Problems {
		fmt.Fprintln(stdout, "problem:", p)
	}
	fmt.Fprintf(stdout, "%s: %d bytes, %d-byte pages\n", path, r.Size, r.PageSize)
	for _, b := range r.Records {
		if b.N > 0 {
			fmt.Fprintf(stdout, "  %-28s %d\n", b.Bucket, b.N)
		}
	}
	if len(r.Problems) > 0 {
		fmt.Fprintf(stdout, "%d problem(s) found (at most 100 are listed). To recover, restore the file from a backup; to start fresh, move it away\n", len(r.Problems))
		return errCheckFailed
	}
	fmt.Fprintln(stdout, "ok")
	return nil
}
