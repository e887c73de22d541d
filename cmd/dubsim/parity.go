package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/dubsim/dubsim/sim/parity"
)

// errDrift is the error of a parity run that drifted: main exits 1.
var errDrift = errors.New("parity: drift")

// runParity is `dubsim parity`: the parity kit's scenario suite against any
// target; any drift, or difference from --compare's recording, is an error.
func runParity(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dubsim parity", `Usage: dubsim parity --platform-url URL [--studio-url URL] [--api-key KEY] [flags]

Runs the parity scenario suite (platform: balance, options, voices, a project
through ready, re-translation and delete; studio: a presigned upload, an
artifact, a project and a video; error cases of both) against a target,
checks every answer against dubsim's OpenAPI documents and records its shape.
Record the real service once (--record real.json), then run against dubsim
with --compare real.json to see where the simulator drifts.

Flags:
`, stderr)
	platformURL := fs.String("platform-url", "", "base URL of the platform interface (dubsim: http://localhost:8080; the real service: https://app.dubformer.ai)")
	studioURL := fs.String("studio-url", "", "base URL of the studio interface (default: the platform URL; the real service: https://studio.dubformer.ai)")
	apiKey := fs.String("api-key", "", "API key of both interfaces; it needs re-translation enabled (default: $DUBSIM_API_KEY)")
	studioKey := fs.String("studio-api-key", "", "API key of the studio interface, when it differs (default: the --api-key)")
	record := fs.String("record", "", "write the recording (JSON) to this file")
	compare := fs.String("compare", "", "diff this run's shapes against the recording in this file")
	timeout := fs.Duration("timeout", parity.DefaultTimeout, "how long one wait for a final status may take")
	poll := fs.Duration("poll", parity.DefaultPoll, "interval between reads while waiting (with --control: the clock advance between reads)")
	control := fs.String("control", parity.ControlAuto, "auto: advance the clock of a dubsim target through its control API instead of waiting; off: always wait in real time")
	sourceURL := fs.String("source-url", parity.DefaultSourceURL, "source_video_url of the platform project (the real service needs a real, short video)")
	if err := parseNoArgs(fs, args, stderr); err != nil {
		return err
	}
	if *platformURL == "" {
		return errors.New("parity: --platform-url is required")
	}
	*apiKey = cmp.Or(*apiKey, getenv("DUBSIM_API_KEY"))
	if *apiKey == "" {
		return errors.New("parity: --api-key (or $DUBSIM_API_KEY) is required")
	}
	var was *parity.Recording
	if *compare != "" {
		f, err := os.Open(*compare)
		if err != nil {
			return fmt.Errorf("parity: --compare: %w", err)
		}
		was, err = parity.ReadRecording(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("parity: --compare %s: %w", *compare, err)
		}
	}

	rec, err := parity.Run(ctx, parity.Config{
		PlatformURL: *platformURL, StudioURL: *studioURL, APIKey: *apiKey, StudioAPIKey: *studioKey, SourceURL: *sourceURL,
		Control: *control, Timeout: *timeout, Poll: *poll,
		Client: &http.Client{Timeout: 2 * time.Minute}, Clock: parity.RealClock{}, Report: stdout,
	})
	if rec == nil {
		return err
	}
	if *record != "" {
		if werr := writeRecording(*record, rec); werr != nil {
			return errors.Join(err, werr)
		}
		fmt.Fprintf(stdout, "parity: recorded to %s\n", *record)
	}
	if err != nil {
		return err
	}
	var diffs []parity.Difference
	if was != nil {
		diffs = parity.Compare(was, rec)
		if len(diffs) == 0 {
			fmt.Fprintf(stdout, "parity: compare with %s: no differences\n", *compare)
		} else {
			fmt.Fprintf(stdout, "parity: compare with %s: %d difference%s\n", *compare, len(diffs), map[bool]string{true: "", false: "s"}[len(diffs) == 1])
			for _, d := range diffs {
				fmt.Fprintf(stdout, "DIFF   %s\n", d)
			}
		}
	}
	_, drift, skip := rec.Counts()
	if drift+skip > 0 || len(diffs) > 0 {
		return fmt.Errorf("%w: %d step(s) drifted, %d skipped, %d difference(s) from the recording", errDrift, drift, skip, len(diffs))
	}
	return nil
}

func writeRecording(path string, rec *parity.Recording) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("parity: --record: %w", err)
	}
	if err := parity.WriteRecording(f, rec); err != nil {
		f.Close()
		return fmt.Errorf("parity: --record: %w", err)
	}
	return f.Close()
}
