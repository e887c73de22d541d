package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim/parity"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parityKey is the fixture account of the parity runs: re-translation
// needs dubsim-enterprise.
const parityKey = "dubsim-enterprise"

func readRecording(t *testing.T, path string) *parity.Recording {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rec, err := parity.ReadRecording(f)
	require.NoError(t, err)
	return rec
}

// assertParityPass checks a parity run against dubsim: every step OK, the
// checks against dubsim's OpenAPI documents included, and exit status 0.
func assertParityPass(t *testing.T, err error, report string, rec *parity.Recording) {
	t.Helper()
	assert.NotContains(t, report, "\nDIFF ", "no differences from the recording")
	assert.NotContains(t, report, "\nSKIP ")
	assert.NoError(t, err)
	assert.NotContains(t, report, "\nDRIFT ")
	assert.Contains(t, report, " 0 DRIFT, 0 SKIP")
	assert.False(t, rec.Drifted())
	if ops := parity.OpenAPIDrift(rec); len(ops) > 0 {
		t.Errorf("%d operation(s) drift against the OpenAPI documents:\n  %s", len(ops), strings.Join(ops, "\n  "))
	}
}

// TestParityAgainstDubsim runs `dubsim parity` against a real in-process
// dubsim (clock frozen: the kit advances it through the control API), then
// again with --compare against the first run's recording.
func TestParityAgainstDubsim(t *testing.T) {
	t.Parallel()
	in := start(t, "--data", filepath.Join(t.TempDir(), "d.db"), "--time-scale", "0")
	defer func() { assert.NoError(t, in.stop()) }()
	dir := t.TempDir()
	first := filepath.Join(dir, "first.json")
	noenv := func(string) string { return "" }

	var out bytes.Buffer
	err := run(context.Background(), []string{"parity", "--platform-url", in.base, "--api-key", parityKey, "--record", first}, noenv, &out, io.Discard)
	report := out.String()
	rec := readRecording(t, first)
	assertParityPass(t, err, report, rec)
	assert.True(t, rec.Control, "the clock was advanced through the control API")
	assert.Contains(t, report, "parity: control: dubsim with its control API")
	assert.Contains(t, report, "parity: recorded to "+first)
	for _, name := range []string{"platform/wait-project", "platform/wait-retranslation", "studio/wait-artifact"} {
		s, ok := rec.Step(name)
		require.True(t, ok, name)
		assert.Regexp(t, `^(ready|upload_completed) after \d+ reads?$`, s.Note, name)
	}
	lines := 0
	for _, l := range strings.Split(report, "\n") {
		if strings.HasPrefix(l, "OK ") || strings.HasPrefix(l, "DRIFT ") {
			lines++
		}
	}
	assert.Equal(t, len(rec.Steps), lines, "one report line per step")

	t.Run("record then compare", func(t *testing.T) {
		second := filepath.Join(dir, "second.json")
		env := func(k string) string {
			if k == "DUBSIM_API_KEY" {
				return parityKey // the key from the environment
			}
			return ""
		}
		var out bytes.Buffer
		err := run(context.Background(), []string{"parity", "--platform-url", in.base, "--studio-url", in.base + "/",
			"--record", second, "--compare", first}, env, &out, io.Discard)
		assert.Contains(t, out.String(), "parity: compare with "+first+": no differences")
		rec2 := readRecording(t, second)
		assertParityPass(t, err, out.String(), rec2)
		assert.Empty(t, parity.Compare(rec, rec2))
		assert.Empty(t, parity.Compare(rec2, rec))
	})
}

func TestParityFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notRecording := filepath.Join(dir, "not.json")
	require.NoError(t, os.WriteFile(notRecording, []byte(`{"format":"other"}`), 0o644))
	tests := []struct {
		name string
		args []string
		err  string
	}{
		{"no platform URL", []string{"--api-key", "k"}, "--platform-url is required"},
		{"no key", []string{"--platform-url", "http://127.0.0.1:1"}, "--api-key (or $DUBSIM_API_KEY) is required"},
		{"argument", []string{"--platform-url", "http://127.0.0.1:1", "--api-key", "k", "extra"}, `unexpected argument "extra"`},
		{"bad control", []string{"--platform-url", "http://127.0.0.1:1", "--api-key", "k", "--control", "always"}, `control must be auto or off; got "always"`},
		{"relative URL", []string{"--platform-url", "127.0.0.1:8080", "--api-key", "k"}, "must be an absolute http(s) URL"},
		{"compare file missing", []string{"--platform-url", "http://127.0.0.1:1", "--api-key", "k", "--compare", filepath.Join(dir, "missing.json")}, "--compare"},
		{"compare file of another format", []string{"--platform-url", "http://127.0.0.1:1", "--api-key", "k", "--compare", notRecording}, `format "other"`},
		{"unknown flag", []string{"--platform", "x"}, "flag provided but not defined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			err := run(context.Background(), append([]string{"parity"}, tc.args...), func(string) string { return "" }, io.Discard, &stderr)
			require.Error(t, err)
			assert.Contains(t, err.Error()+stderr.String(), tc.err)
			assert.False(t, errors.Is(err, errDrift))
		})
	}

	t.Run("help", func(t *testing.T) {
		t.Parallel()
		var stderr bytes.Buffer
		err := run(context.Background(), []string{"parity", "-h"}, func(string) string { return "" }, io.Discard, &stderr)
		assert.ErrorIs(t, err, flag.ErrHelp)
		for _, f := range []string{"-platform-url", "-studio-url", "-api-key", "-studio-api-key", "-record", "-compare", "-timeout", "-poll", "-control", "-source-url"} {
			assert.Contains(t, stderr.String(), f)
		}
	})
}
