package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func noEnv(string) string { return "" }

// TestHelpShowsTypesAndVariables: --help names each flag's type (numbers,
// durations, byte counts; booleans take no argument) and its variable.
func TestHelpShowsTypesAndVariables(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"-help"}, noEnv, &out, &errOut)
	require.ErrorIs(t, err, flag.ErrHelp)
	help := errOut.String()
	for _, want := range []string{
		"-time-scale float\n",
		"-seed uint\n",
		"-sandbox-max int\n",
		"-tick duration\n",
		"-body-memory bytes\n",
		"-no-control\n",
		"[$DUBSIM_NO_CONTROL]",
		"-addr address\n",
		"dubsim version",
		"(default 64MiB)",
		"(default 200ms)",
	} {
		assert.Contains(t, help, want)
	}
	// Every flag but -version names its variable.
	fs := regexp.MustCompile(`(?m)^  -(\S+)`).FindAllStringSubmatch(help, -1)
	require.Greater(t, len(fs), 40)
	for _, m := range fs {
		if m[1] == "version" {
			continue
		}
		assert.Contains(t, help, "[$"+envName(m[1])+"]", m[1])
	}
}

// TestMistakeReportedOnce: a bad flag or value is returned once (main
// prints it), with nothing printed by the flag package beside it.
func TestMistakeReportedOnce(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--nope"},
		{"--tick", "soon"},
		{"ctl", "--nope", "clock"},
		{"healthcheck", "--nope"},
		{"check", "--nope"},
		{"parity", "--nope"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			err := run(context.Background(), args, noEnv, &out, &errOut)
			require.Error(t, err)
			assert.Empty(t, errOut.String(), "printed besides the returned error")
			assert.Empty(t, out.String())
			assert.Contains(t, err.Error(), "-help lists the flags")
			assert.Equal(t, 1, strings.Count(err.Error(), "-help lists the flags"), err.Error())
		})
	}
}

func TestVersionCommand(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		var out bytes.Buffer
		require.NoError(t, run(context.Background(), args, noEnv, &out, io.Discard))
		assert.Equal(t, "dubsim "+version+"\n", out.String())
	}
	assert.EqualError(t, run(context.Background(), []string{"version", "x"}, noEnv, io.Discard, io.Discard), `version: unexpected argument "x"`)
}

func TestByteSize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int64
		str  string
	}{
		{"0", 0, "0"}, {"1048576", 1 << 20, "1MiB"}, {"512MiB", 512 << 20, "512MiB"}, {"1GiB", 1 << 30, "1GiB"},
		{"20GB", 20e9, "20GB"}, {"1 kb", 1000, "1kB"}, {"1023", 1023, "1023"}, {"3b", 3, "3"}, {"2tib", 2 << 40, "2TiB"},
	} {
		var b byteSize
		require.NoError(t, b.Set(tc.in), tc.in)
		assert.Equal(t, tc.want, int64(b), tc.in)
		assert.Equal(t, tc.str, b.String(), tc.in)
		var back byteSize
		require.NoError(t, back.Set(b.String()))
		assert.Equal(t, b, back, "String parses back")
	}
	for _, bad := range []string{"", "-1", "1.5GiB", "GiB", "1 GiBs", "1e3", "9223372036854775807KiB"} {
		var b byteSize
		assert.ErrorIs(t, b.Set(bad), errByteSize, bad)
	}
}

func TestUnknownVariables(t *testing.T) {
	t.Parallel()
	known := []string{"DUBSIM_TIME_SCALE", "DUBSIM_ADDR", "DUBSIM_URL", "DUBSIM_CONTROL_TOKEN"}
	got := unknownVariables([]string{
		"PATH=/bin", "DUBSIM_ADDR=:1", "DUBSIM_TIME_SCAEL=5", "DUBSIM_ADR=:2", "DUBSIM_FOO=1",
		"DUBSIM_CONTROL_TOKN=x", "DUBSIMX=1", "DUBSIM_URL=http://x",
	}, known)
	assert.Equal(t, [][2]string{
		{"DUBSIM_ADR", "DUBSIM_ADDR"},
		{"DUBSIM_CONTROL_TOKN", "DUBSIM_CONTROL_TOKEN"},
		{"DUBSIM_FOO", ""},
		{"DUBSIM_TIME_SCAEL", "DUBSIM_TIME_SCALE"},
	}, got)
}

// TestUnknownVariableWarnedAtStart runs dubsim with a misspelt variable in
// its environment: the start-up log names it and the right name. Not
// parallel: it sets the process's environment.
func TestUnknownVariableWarnedAtStart(t *testing.T) {
	t.Setenv("DUBSIM_TIME_SCAEL", "60")
	t.Setenv("DUBSIM_NOT_A_SETTING_AT_ALL", "1")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var logs proctest.Buffer
	errc := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"--addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "d.db")}, noEnv, pw, &logs)
		pw.Close()
		errc <- err
	}()
	buf := make([]byte, 64)
	_, err := io.ReadAtLeast(pr, buf, 1) // the banner: started
	require.NoError(t, err)
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	cancel()
	require.NoError(t, <-errc)
	assert.Contains(t, logs.String(), `level=WARN msg="unknown environment variable, ignored; did you mean DUBSIM_TIME_SCALE?" variable=DUBSIM_TIME_SCAEL closest=DUBSIM_TIME_SCALE`)
	assert.Contains(t, logs.String(), `level=WARN msg="unknown environment variable, ignored (dubsim -help lists the DUBSIM_* variables)" variable=DUBSIM_NOT_A_SETTING_AT_ALL`)
	assert.NotContains(t, logs.String(), "DUBSIM_URL", "a known variable is not reported")
}
