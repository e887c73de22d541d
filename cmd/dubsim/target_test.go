package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestResolveTarget: ctl and healthcheck find the server through the same
// settings, the server's own variables included.
func TestResolveTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		url      string
		insecure bool
		control  bool
		env      map[string]string
		want     target
	}{
		{name: "nothing set", want: target{Base: "http://127.0.0.1:8080"}},
		{name: "nothing set, control", control: true, want: target{Base: "http://127.0.0.1:8080"}},
		{name: "--url wins", url: "http://x:1/", env: map[string]string{"DUBSIM_URL": "http://y:2", "DUBSIM_ADDR": ":3"}, want: target{Base: "http://x:1"}},
		{name: "DUBSIM_URL", env: map[string]string{"DUBSIM_URL": "https://y:2/", "DUBSIM_ADDR": ":3"}, control: true, want: target{Base: "https://y:2"}},
		{name: "port of DUBSIM_ADDR", env: map[string]string{"DUBSIM_ADDR": ":9000"}, want: target{Base: "http://127.0.0.1:9000"}},
		{name: "wildcard host of DUBSIM_ADDR", env: map[string]string{"DUBSIM_ADDR": "0.0.0.0:9000"}, want: target{Base: "http://127.0.0.1:9000"}},
		{name: "IPv6 wildcard", env: map[string]string{"DUBSIM_ADDR": "[::]:9000"}, want: target{Base: "http://127.0.0.1:9000"}},
		{name: "specific host of DUBSIM_ADDR", env: map[string]string{"DUBSIM_ADDR": "127.0.0.2:9000"}, want: target{Base: "http://127.0.0.2:9000"}},
		{name: "port 0 is no port", env: map[string]string{"DUBSIM_ADDR": "127.0.0.1:0"}, want: target{Base: "http://127.0.0.1:8080"}},
		{name: "ctl: the control address", control: true, env: map[string]string{"DUBSIM_ADDR": ":9000", "DUBSIM_CONTROL_ADDR": "127.0.0.1:9090"}, want: target{Base: "http://127.0.0.1:9090"}},
		{name: "healthcheck: the main address serves health", env: map[string]string{"DUBSIM_ADDR": ":9000", "DUBSIM_CONTROL_ADDR": "127.0.0.1:9090"}, want: target{Base: "http://127.0.0.1:9000"}},
		{name: "self-signed: https, not verified", env: map[string]string{"DUBSIM_ADDR": ":8443", "DUBSIM_TLS_SELF_SIGNED": "true"}, want: target{Base: "https://127.0.0.1:8443", Insecure: true}},
		{name: "self-signed false", env: map[string]string{"DUBSIM_TLS_SELF_SIGNED": "false"}, want: target{Base: "http://127.0.0.1:8080"}},
		{name: "certificate files: https, verified", env: map[string]string{"DUBSIM_TLS_CERT": "/c.pem", "DUBSIM_ADDR": "localhost:8443"}, want: target{Base: "https://localhost:8443", Pin: "/c.pem"}},
		{name: "explicit URL to a self-signed server is verified", env: map[string]string{"DUBSIM_URL": "https://dubsim:8443", "DUBSIM_TLS_SELF_SIGNED": "1"}, want: target{Base: "https://dubsim:8443"}},
		{name: "--insecure", url: "https://dubsim:8443", insecure: true, want: target{Base: "https://dubsim:8443", Insecure: true}},
		{name: "DUBSIM_INSECURE", env: map[string]string{"DUBSIM_URL": "https://dubsim:8443", "DUBSIM_INSECURE": "true"}, want: target{Base: "https://dubsim:8443", Insecure: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, resolveTarget(func(k string) string { return tc.env[k] }, tc.url, tc.insecure, tc.control))
		})
	}
}
