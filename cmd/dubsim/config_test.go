package main

import (
	"io"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(t *testing.T, c config)
		wantErr string
	}{
		{name: "defaults", check: func(t *testing.T, c config) {
			assert.Equal(t, ":8080", c.Addr)
			assert.Equal(t, 1.0, c.TimeScale)
			assert.Equal(t, sim.DefaultTiming, c.Timing)
			assert.Empty(t, c.Data, "a temporary store")
			assert.Empty(t, c.BlobDir, "beside the temporary store")
			assert.Equal(t, "text", c.LogFormat)
			assert.Equal(t, 10*time.Second, c.ShutdownGrace)
			assert.Equal(t, 200, c.CreateStatus)
			assert.Equal(t, "ignore", c.UnknownFields)
			assert.Equal(t, 200*time.Millisecond, c.Tick)
			assert.Empty(t, c.FetchHosts)
			assert.Equal(t, "studio", c.SharedCreate)
			assert.Equal(t, int64(5_000_000_000), c.DrainMaxBytes)
			assert.Equal(t, sim.BlobQuota{Total: 20_000_000_000, PerCompany: 10_000_000_000, PresignsPerCompany: 1000, DownloadsPerCompany: 100}, c.Quota)
		}},
		{name: "quotas", args: []string{"--blob-quota", "0", "--presigns-per-company", "5"}, env: map[string]string{"DUBSIM_COMPANY_BLOB_QUOTA": "1000", "DUBSIM_BLOB_QUOTA": "7", "DUBSIM_DOWNLOADS_PER_COMPANY": "3"},
			check: func(t *testing.T, c config) {
				assert.Equal(t, sim.BlobQuota{Total: 0, PerCompany: 1000, PresignsPerCompany: 5, DownloadsPerCompany: 3}, c.Quota)
			}},
		{name: "blob-quota with a unit", args: []string{"--blob-quota", "20GB", "--company-blob-quota", "512MiB"},
			check: func(t *testing.T, c config) {
				assert.Equal(t, int64(20_000_000_000), c.Quota.Total)
				assert.Equal(t, int64(512<<20), c.Quota.PerCompany)
			}},
		{name: "bad blob-quota", args: []string{"--blob-quota", "20 apples"}, wantErr: `invalid value "20 apples" for flag -blob-quota: want a non-negative number of bytes, such as 1048576, 512MiB or 20GB (dubsim -help lists the flags)`},
		{name: "negative bytes", env: map[string]string{"DUBSIM_BLOB_QUOTA": "-1"}, wantErr: `invalid value "-1" for DUBSIM_BLOB_QUOTA: want a non-negative number of bytes, such as 1048576, 512MiB or 20GB`},
		{name: "bytes overflow", args: []string{"--body-memory", "9000000TiB"}, wantErr: `invalid value "9000000TiB" for flag -body-memory: want a non-negative number of bytes, such as 1048576, 512MiB or 20GB (dubsim -help lists the flags)`},
		{name: "bad boolean from the environment", env: map[string]string{"DUBSIM_NO_CONTROL": "yes"}, wantErr: `invalid value "yes" for DUBSIM_NO_CONTROL: want true or false`},
		{name: "boolean from the environment", env: map[string]string{"DUBSIM_FETCH_LOOPBACK": "false", "DUBSIM_NO_CONTROL": "1"}, check: func(t *testing.T, c config) {
			assert.False(t, c.FetchLoopback)
			assert.True(t, c.NoControl)
		}},
		{name: "shared-create platform", args: []string{"--shared-create", "platform"}, check: func(t *testing.T, c config) {
			assert.Equal(t, "platform", c.SharedCreate)
		}},
		{name: "shared-create from the environment", env: map[string]string{"DUBSIM_SHARED_CREATE": "platform"}, check: func(t *testing.T, c config) {
			assert.Equal(t, "platform", c.SharedCreate)
		}},
		{name: "bad shared-create", args: []string{"--shared-create", "both"}, wantErr: `shared-create must be platform or studio; got "both"`},
		{name: "flags", args: []string{"--addr", ":9", "--data", "/x.db", "--time-scale", "60", "--seed", "5", "--fetch-hosts", "cdn.test, *.example.com",
			"--processing-base", "2m", "--processing-per-minute", "1s", "--retranslation-base", "0s", "--retranslation-per-minute", "3s", "--unknown-fields", "reject", "--create-status", "201"},
			check: func(t *testing.T, c config) {
				assert.Equal(t, ":9", c.Addr)
				assert.Equal(t, "/x.db", c.Data)
				assert.Equal(t, 60.0, c.TimeScale)
				assert.Equal(t, uint64(5), c.Seed)
				assert.Equal(t, []string{"cdn.test", "*.example.com"}, c.FetchHosts)
				assert.Equal(t, sim.Timing{Base: 2 * time.Minute, PerMinute: time.Second, RetransBase: 0, RetransPerMinute: 3 * time.Second}, c.Timing)
				assert.Equal(t, "reject", c.UnknownFields)
				assert.Equal(t, 201, c.CreateStatus)
			}},
		{name: "seed given", args: []string{"--seed", "0"}, check: func(t *testing.T, c config) {
			assert.True(t, c.SeedSet)
			assert.Zero(t, c.Seed)
		}},
		{name: "seed from the environment", env: map[string]string{"DUBSIM_SEED": "3"}, check: func(t *testing.T, c config) {
			assert.True(t, c.SeedSet)
			assert.Equal(t, uint64(3), c.Seed)
		}},
		{name: "no seed", check: func(t *testing.T, c config) { assert.False(t, c.SeedSet) }},
		{name: "environment", env: map[string]string{"DUBSIM_ADDR": ":7", "DUBSIM_TIME_SCALE": "0", "DUBSIM_DATA": "/e.db", "DUBSIM_FETCH_HOSTS": "*"},
			check: func(t *testing.T, c config) {
				assert.Equal(t, ":7", c.Addr)
				assert.Equal(t, 0.0, c.TimeScale)
				assert.Equal(t, "/e.db", c.Data)
				assert.Equal(t, []string{"*"}, c.FetchHosts)
			}},
		{name: "flags win over environment", args: []string{"--addr", ":1", "--time-scale", "2"}, env: map[string]string{"DUBSIM_ADDR": ":7", "DUBSIM_TIME_SCALE": "9"},
			check: func(t *testing.T, c config) {
				assert.Equal(t, ":1", c.Addr)
				assert.Equal(t, 2.0, c.TimeScale)
			}},
		{name: "drain bound", args: []string{"--drain-max-bytes", "1048576"},
			check: func(t *testing.T, c config) { assert.Equal(t, int64(1<<20), c.DrainMaxBytes) }},
		{name: "slow clients", args: []string{"--body-idle-timeout", "5s", "--body-min-rate", "100"}, env: map[string]string{"DUBSIM_MAX_CONNECTIONS": "64", "DUBSIM_BODY_IDLE_TIMEOUT": "9s", "DUBSIM_BODY_MIN_RATE": "7"},
			check: func(t *testing.T, c config) {
				assert.Equal(t, 5*time.Second, c.BodyIdleTimeout)
				assert.Equal(t, int64(100), c.BodyMinRate)
				assert.Equal(t, 64, c.MaxConnections)
			}},
		{name: "body min rate from env", env: map[string]string{"DUBSIM_BODY_MIN_RATE": "7"}, check: func(t *testing.T, c config) {
			assert.Equal(t, int64(7), c.BodyMinRate)
		}},
		{name: "journal bounds by default", check: func(t *testing.T, c config) {
			assert.Equal(t, int64(4<<20), c.JournalBytes)
			assert.Equal(t, int64(32<<20), c.JournalMemory)
		}},
		{name: "journal bounds", args: []string{"--journal-bytes", "1MiB"}, env: map[string]string{"DUBSIM_JOURNAL_MEMORY": "256MiB"}, check: func(t *testing.T, c config) {
			assert.Equal(t, int64(1<<20), c.JournalBytes)
			assert.Equal(t, int64(256<<20), c.JournalMemory)
		}},
		{name: "slow clients by default", check: func(t *testing.T, c config) {
			assert.Equal(t, time.Minute, c.BodyIdleTimeout)
			assert.Equal(t, int64(1024), c.BodyMinRate)
			assert.Equal(t, 1024, c.MaxConnections)
		}},
		{name: "slow clients unlimited", args: []string{"--body-idle-timeout", "0", "--max-connections", "0", "--body-min-rate", "0"}, check: func(t *testing.T, c config) {
			assert.Zero(t, c.BodyIdleTimeout)
			assert.Zero(t, c.BodyMinRate)
			assert.Zero(t, c.MaxConnections)
		}},
		{name: "body memory by default", check: func(t *testing.T, c config) {
			assert.Equal(t, int64(64<<20), c.BodyMemory)
		}},
		{name: "body memory", args: []string{"--body-memory", "1048576"}, env: map[string]string{"DUBSIM_BODY_MEMORY": "7"}, check: func(t *testing.T, c config) {
			assert.Equal(t, int64(1<<20), c.BodyMemory)
		}},
		{name: "body memory from env, unlimited", env: map[string]string{"DUBSIM_BODY_MEMORY": "0"}, check: func(t *testing.T, c config) {
			assert.Zero(t, c.BodyMemory)
		}},
		{name: "body memory with a unit", args: []string{"--body-memory", "64MiB"}, check: func(t *testing.T, c config) {
			assert.Equal(t, int64(64<<20), c.BodyMemory)
		}},
		{name: "bad body-min-rate", args: []string{"--body-min-rate", "1k"}, wantErr: `invalid value "1k" for flag -body-min-rate: want a non-negative number of bytes, such as 1048576, 512MiB or 20GB (dubsim -help lists the flags)`},
		{name: "bad max-connections", args: []string{"--max-connections", "-1"}, wantErr: `max-connections must be a non-negative integer (0 = unlimited); got -1`},
		{name: "bad body-idle-timeout", env: map[string]string{"DUBSIM_BODY_IDLE_TIMEOUT": "1"}, wantErr: `invalid value "1" for DUBSIM_BODY_IDLE_TIMEOUT: want a duration such as 90s, 2m or 1h30m`},
		{name: "negative body-idle-timeout", args: []string{"--body-idle-timeout", "-1s"}, wantErr: `body-idle-timeout must be a non-negative duration such as 90s or 2m; got -1s`},
		{name: "drain never", env: map[string]string{"DUBSIM_DRAIN_MAX_BYTES": "0"}, check: func(t *testing.T, c config) {
			assert.Equal(t, int64(0), c.DrainMaxBytes)
		}},
		{name: "control protection from the environment", env: map[string]string{"DUBSIM_CONTROL_TOKEN": "s3cret", "DUBSIM_CONTROL_HOSTS": "dubsim, ci.internal ,", "DUBSIM_CONTROL_ADDR": "127.0.0.1:9090"},
			check: func(t *testing.T, c config) {
				assert.Equal(t, "s3cret", c.ControlToken)
				assert.Equal(t, []string{"dubsim", "ci.internal"}, c.ControlHosts)
				assert.Equal(t, "127.0.0.1:9090", c.ControlAddr)
			}},
		{name: "control protection off by default", check: func(t *testing.T, c config) {
			assert.Empty(t, c.ControlToken)
			assert.Empty(t, c.ControlHosts)
			assert.Empty(t, c.ControlAddr)
		}},
		{name: "control-hosts with a port", args: []string{"--control-hosts", "dubsim:8080"}, wantErr: `control-hosts must list host names without scheme or port, such as dubsim,ci-runner; got "dubsim:8080"`},
		{name: "control-addr without control", args: []string{"--no-control", "--control-addr", ":9090"}, wantErr: "control-addr serves the control API, which no-control turns off: give one of them"},
		{name: "bad body-memory", args: []string{"--body-memory", "1 gigabyte"}, wantErr: `invalid value "1 gigabyte" for flag -body-memory: want a non-negative number of bytes, such as 1048576, 512MiB or 20GB (dubsim -help lists the flags)`},
		{name: "drain-max-bytes with a unit", args: []string{"--drain-max-bytes", "5GB"}, check: func(t *testing.T, c config) {
			assert.Equal(t, int64(5e9), c.DrainMaxBytes)
		}},
		{name: "zero advance-wait", env: map[string]string{"DUBSIM_ADVANCE_WAIT": "0s"}, wantErr: `advance-wait must be a positive duration such as 30s; got 0s`},
		{name: "negative time scale", args: []string{"--time-scale", "-1"}, wantErr: `time-scale must be a number between 0 and 1000000; got -1`},
		{name: "bad env time scale", env: map[string]string{"DUBSIM_TIME_SCALE": "fast"}, wantErr: `invalid value "fast" for DUBSIM_TIME_SCALE: want a number such as 60 or 0.5`},
		{name: "bad seed", args: []string{"--seed", "x"}, wantErr: `invalid value "x" for flag -seed: want a non-negative integer (dubsim -help lists the flags)`},
		{name: "bad duration", args: []string{"--processing-base", "soon"}, wantErr: `invalid value "soon" for flag -processing-base: want a duration such as 90s, 2m or 1h30m (dubsim -help lists the flags)`},
		{name: "negative duration", env: map[string]string{"DUBSIM_VIDEO_START": "-2s"}, wantErr: `video-start must be a non-negative duration such as 90s or 2m; got -2s`},
		{name: "journal-bytes too small", args: []string{"--journal-bytes", "1KiB"}, wantErr: `journal-bytes must be at least 64KiB (65536 bytes): a request's entry takes up to about 27 KiB; got 1024`},
		{name: "journal-memory too small", env: map[string]string{"DUBSIM_JOURNAL_MEMORY": "0"}, wantErr: `journal-memory must be at least 64KiB (65536 bytes): a request's entry takes up to about 27 KiB; got 0`},
		{name: "bad sandbox-max", args: []string{"--sandbox-max", "-1"}, wantErr: `sandbox-max must be an integer between 0 (no sandboxes) and 100000; got -1`},
		{name: "bad sandbox-idle", args: []string{"--sandbox-idle", "-1s"}, wantErr: `sandbox-idle must be a non-negative duration such as 90s or 2m; got -1s`},
		{name: "two bad variables, both reported", env: map[string]string{"DUBSIM_TICK": "x", "DUBSIM_SEED": "-1"},
			wantErr: "invalid value \"-1\" for DUBSIM_SEED: want a non-negative integer\ninvalid value \"x\" for DUBSIM_TICK: want a duration such as 90s, 2m or 1h30m"},
		{name: "bad unknown-fields", args: []string{"--unknown-fields", "warn"}, wantErr: `unknown-fields must be ignore or reject; got "warn"`},
		{name: "bad create-status", args: []string{"--create-status", "202"}, wantErr: `create-status must be 200 or 201; got 202`},
		{name: "zero tick", args: []string{"--tick", "0s"}, wantErr: "tick must be a positive duration such as 30s; got 0s"},
		{name: "stray argument", args: []string{"serve"}, wantErr: `unexpected argument "serve" (dubsim -help lists the commands and flags)`},
		{name: "TLS off, CORS for any origin by default", check: func(t *testing.T, c config) {
			assert.False(t, c.tlsOn())
			assert.Equal(t, []string{"*"}, c.CORSOrigins)
		}},
		{name: "self-signed TLS", env: map[string]string{"DUBSIM_TLS_SELF_SIGNED": "true"}, check: func(t *testing.T, c config) {
			assert.True(t, c.tlsOn())
			assert.Equal(t, "https", c.scheme())
		}},
		{name: "TLS files", args: []string{"--tls-cert", "c.pem", "--tls-key", "k.pem"}, check: func(t *testing.T, c config) {
			assert.Equal(t, "https", c.scheme())
		}},
		{name: "TLS cert without key", env: map[string]string{"DUBSIM_TLS_CERT": "c.pem"}, wantErr: "tls-cert and tls-key go together: give both files or neither"},
		{name: "TLS files and self-signed", args: []string{"--tls-self-signed", "--tls-cert", "c.pem", "--tls-key", "k.pem"}, wantErr: "tls-self-signed makes its own certificate: give it or tls-cert and tls-key, not both"},
		{name: "CORS origins", env: map[string]string{"DUBSIM_CORS_ORIGINS": "https://app.example.com, http://localhost:3000/"}, check: func(t *testing.T, c config) {
			assert.Equal(t, []string{"https://app.example.com", "http://localhost:3000"}, c.CORSOrigins)
		}},
		{name: "CORS off", args: []string{"--cors-origins", "none"}, check: func(t *testing.T, c config) {
			assert.Nil(t, c.CORSOrigins)
		}},
		{name: "bad CORS origin", args: []string{"--cors-origins", "app.example.com"}, wantErr: `cors-origins must be *, none or origins such as https://app.example.com,http://localhost:3000; got "app.example.com"`},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: "flag provided but not defined: -nope (dubsim -help lists the flags)"},
		{name: "logs and shutdown", args: []string{"--log-format", "json"}, env: map[string]string{"DUBSIM_SHUTDOWN_GRACE": "1m", "DUBSIM_LOG_FORMAT": "text"},
			check: func(t *testing.T, c config) {
				assert.Equal(t, "json", c.LogFormat)
				assert.Equal(t, time.Minute, c.ShutdownGrace)
			}},
		{name: "data file keeps blobs beside it", env: map[string]string{"DUBSIM_DATA": "/d/x.db"}, check: func(t *testing.T, c config) {
			assert.Equal(t, "/d/x.db.blobs", c.BlobDir)
		}},
		{name: "bad log-format", args: []string{"--log-format", "logfmt"}, wantErr: `log-format must be text or json; got "logfmt"`},
		{name: "negative shutdown-grace", args: []string{"--shutdown-grace", "-1s"}, wantErr: "shutdown-grace must be a non-negative duration such as 90s or 2m; got -1s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"XDG_CACHE_HOME": "/cache"}
			for k, v := range tc.env {
				env[k] = v
			}
			c, err := parseConfig(tc.args, func(k string) string { return env[k] }, io.Discard)
			if tc.wantErr != "" {
				assert.EqualError(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			tc.check(t, c)
		})
	}
}
