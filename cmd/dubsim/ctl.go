package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim/server"
)

// ctlCommands lists the control subcommands, each one call of the /_sim
// control API. The usage text is made from this table.
var ctlCommands = []ctlCommand{
	{"clock", "", "GET  /_sim/clock", 0, 0, func(a ctlArgs) (ctlCall, error) { return get("/_sim/clock"), nil }},
	{"advance", "SECONDS | next", "POST /_sim/clock/advance (by SECONDS, or to the next due transition)", 1, 1, func(a ctlArgs) (ctlCall, error) {
		if a.at(0) == "next" {
			return post("/_sim/clock/advance", map[string]bool{"next_due": true}), nil
		}
		s, err := a.number(0, "SECONDS")
		return post("/_sim/clock/advance", map[string]float64{"seconds": s}), err
	}},
	{"scale", "FACTOR", "POST /_sim/clock/scale", 1, 1, func(a ctlArgs) (ctlCall, error) {
		s, err := a.number(0, "FACTOR")
		return post("/_sim/clock/scale", map[string]float64{"time_scale": s}), err
	}},
	{"work", "", "GET  /_sim/work (downloads and probes in flight)", 0, 0, func(a ctlArgs) (ctlCall, error) { return get("/_sim/work"), nil }},
	{"freeze", "", "POST /_sim/clock/freeze", 0, 0, func(a ctlArgs) (ctlCall, error) { return ctlCall{"POST", "/_sim/clock/freeze", nil}, nil }},
	{"resume", "", "POST /_sim/clock/resume", 0, 0, func(a ctlArgs) (ctlCall, error) { return ctlCall{"POST", "/_sim/clock/resume", nil}, nil }},
	{"reset", "[API_KEY]", "POST /_sim/reset (everything, or one account)", 0, 1, func(a ctlArgs) (ctlCall, error) {
		if a.at(0) == "" {
			return ctlCall{"POST", "/_sim/reset", nil}, nil
		}
		return post("/_sim/reset", map[string]string{"api_key": a.at(0)}), nil
	}},
	{"state", "[API_KEY]", "GET  /_sim/state", 0, 1, func(a ctlArgs) (ctlCall, error) { return get("/_sim/state" + query("api_key", a.at(0))), nil }},
	{"account", "PLAN [BALANCE] [retranslation] [cloning]", "POST /_sim/accounts", 1, 4, func(a ctlArgs) (ctlCall, error) {
		body := map[string]any{"plan": a.at(0)}
		for i := 1; i < len(a.args); i++ {
			switch a.at(i) {
			case "retranslation":
				body["retranslation_enabled"] = true
			case "cloning":
				body["cloning_enabled"] = true
			default:
				n, err := strconv.ParseInt(a.at(i), 10, 64)
				if err != nil {
					return ctlCall{}, a.wrong("BALANCE must be a whole number of minutes, or one of retranslation, cloning; got %q", a.at(i))
				}
				body["balance_minutes"] = n
			}
		}
		return post("/_sim/accounts", body), nil
	}},
	{"fixtures", "FILE.json", "POST /_sim/fixtures", 1, 1, func(a ctlArgs) (ctlCall, error) {
		b, err := os.ReadFile(a.at(0))
		return ctlCall{"POST", "/_sim/fixtures", b}, err
	}},
	{"outcome", "PROJECT_ID error|ready [MESSAGE]", "POST /_sim/projects/{id}/outcome", 2, 3, func(a ctlArgs) (ctlCall, error) {
		return post("/_sim/projects/"+url.PathEscape(a.at(0))+"/outcome", map[string]string{"outcome": a.at(1), "error_message": a.at(2)}), nil
	}},
	{"artifact-outcome", "ARTIFACT_ID error|ready [MESSAGE]", "POST /_sim/artifacts/{id}/outcome (ends now)", 2, 3, func(a ctlArgs) (ctlCall, error) {
		return post("/_sim/artifacts/"+url.PathEscape(a.at(0))+"/outcome", map[string]any{"outcome": a.at(1), "error_message": a.at(2), "now": true}), nil
	}},
	{"video-status", "VIDEO_ID STATUS [auto]", "POST /_sim/videos/{id}/status", 2, 3, func(a ctlArgs) (ctlCall, error) {
		if a.at(2) != "" && a.at(2) != "auto" {
			return ctlCall{}, a.wrong("the third argument can only be auto; got %q", a.at(2))
		}
		return post("/_sim/videos/"+url.PathEscape(a.at(0))+"/status", map[string]any{"status": a.at(1), "auto": a.at(2) == "auto"}), nil
	}},
	{"account-set", "API_KEY JSON", "PATCH /_sim/accounts/{api_key} (storage, rate_limit)", 2, 2, func(a ctlArgs) (ctlCall, error) {
		return ctlCall{"PATCH", "/_sim/accounts/" + url.PathEscape(a.at(0)), []byte(a.at(1))}, nil
	}},
	{"project", "PROJECT_ID", "GET  /_sim/projects/{id} (scripts, speakers, history, audio_url)", 1, 1, func(a ctlArgs) (ctlCall, error) {
		return get("/_sim/projects/" + url.PathEscape(a.at(0))), nil
	}},
	{"studio", "[COMPANY_ID]", "GET  /_sim/studio", 0, 1, func(a ctlArgs) (ctlCall, error) { return get("/_sim/studio" + query("company_id", a.at(0))), nil }},
	{"outcomes", "", "GET  /_sim/outcomes", 0, 0, func(a ctlArgs) (ctlCall, error) { return get("/_sim/outcomes"), nil }},
	{"outcome-add", "JSON", "POST /_sim/outcomes", 1, 1, func(a ctlArgs) (ctlCall, error) { return ctlCall{"POST", "/_sim/outcomes", []byte(a.at(0))}, nil }},
	{"faults", "", "GET  /_sim/faults", 0, 0, func(a ctlArgs) (ctlCall, error) { return get("/_sim/faults"), nil }},
	{"fault-add", "JSON", "POST /_sim/faults", 1, 1, func(a ctlArgs) (ctlCall, error) { return ctlCall{"POST", "/_sim/faults", []byte(a.at(0))}, nil }},
	{"fault-rm", "ID", "DELETE /_sim/faults/{id}", 1, 1, func(a ctlArgs) (ctlCall, error) {
		return ctlCall{"DELETE", "/_sim/faults/" + url.PathEscape(a.at(0)), nil}, nil
	}},
	{"fault-clear", "", "DELETE /_sim/faults", 0, 0, func(a ctlArgs) (ctlCall, error) { return ctlCall{"DELETE", "/_sim/faults", nil}, nil }},
	{"requests", "[QUERY]", `GET  /_sim/requests?QUERY (e.g. "status=4xx&key=dubsim-pro")`, 0, 1, func(a ctlArgs) (ctlCall, error) {
		p := "/_sim/requests"
		if a.at(0) != "" {
			p += "?" + strings.TrimPrefix(a.at(0), "?")
		}
		return get(p), nil
	}},
	{"requests-clear", "", "DELETE /_sim/requests", 0, 0, func(a ctlArgs) (ctlCall, error) { return ctlCall{"DELETE", "/_sim/requests", nil}, nil }},
	{"verify", "JSON", "POST /_sim/requests/verify", 1, 1, func(a ctlArgs) (ctlCall, error) {
		return ctlCall{"POST", "/_sim/requests/verify", []byte(a.at(0))}, nil
	}},
	{"report", "API_KEY [text]", "GET  /_sim/report", 1, 2, func(a ctlArgs) (ctlCall, error) {
		q := "?api_key=" + url.QueryEscape(a.at(0))
		switch a.at(1) {
		case "":
		case "text":
			q += "&format=text"
		default:
			return ctlCall{}, a.wrong("the second argument can only be text; got %q", a.at(1))
		}
		return get("/_sim/report" + q), nil
	}},
	{"sandbox", "[JSON]", `POST /_sim/sandboxes (a sandbox: {"start","time_scale","seed"})`, 0, 1, func(a ctlArgs) (ctlCall, error) {
		var body []byte
		if a.at(0) != "" {
			body = []byte(a.at(0))
		}
		return ctlCall{"POST", "/_sim/sandboxes", body}, nil
	}},
	{"sandboxes", "", "GET  /_sim/sandboxes", 0, 0, func(a ctlArgs) (ctlCall, error) { return get("/_sim/sandboxes"), nil }},
	{"sandbox-rm", "ID", "DELETE /_sim/sandboxes/{id}", 1, 1, func(a ctlArgs) (ctlCall, error) {
		return ctlCall{"DELETE", "/_sim/sandboxes/" + url.PathEscape(a.at(0)), nil}, nil
	}},
	{"raw", "METHOD PATH [JSON]", "any control call", 2, 3, func(a ctlArgs) (ctlCall, error) {
		var body []byte
		if a.at(2) != "" {
			body = []byte(a.at(2))
		}
		return ctlCall{strings.ToUpper(a.at(0)), a.at(1), body}, nil
	}},
}

type ctlCommand struct {
	name, args, calls string
	min, max          int
	build             func(ctlArgs) (ctlCall, error)
}

func (c ctlCommand) usage() string {
	return strings.TrimSpace("dubsim ctl [flags] " + c.name + " " + c.args)
}

type ctlArgs struct {
	cmd  ctlCommand
	args []string
}

func (a ctlArgs) at(i int) string {
	if i < len(a.args) {
		return a.args[i]
	}
	return ""
}

// wrong is a message about the command's arguments, then its usage.
func (a ctlArgs) wrong(format string, v ...any) error {
	return fmt.Errorf("ctl %s: %s\nusage: %s", a.cmd.name, fmt.Sprintf(format, v...), a.cmd.usage())
}

func (a ctlArgs) number(i int, name string) (float64, error) {
	f, err := strconv.ParseFloat(a.at(i), 64)
	if err != nil {
		return 0, a.wrong("%s must be a number; got %q", name, a.at(i))
	}
	return f, nil
}

const ctlHelp = `The URL defaults to $DUBSIM_URL, else the address the server reads from the same
environment ($DUBSIM_CONTROL_ADDR, else $DUBSIM_ADDR, on 127.0.0.1; https with
$DUBSIM_TLS_CERT or $DUBSIM_TLS_SELF_SIGNED), else http://127.0.0.1:8080; --insecure
(or $DUBSIM_INSECURE) skips the check of a TLS certificate. The control token
(--control-token) defaults to $DUBSIM_CONTROL_TOKEN; it is needed when the simulator
was started with one. The answer is printed; the exit status is 1 when the simulator
answers an error.`

func ctlUsage() string {
	var b strings.Builder
	b.WriteString("usage: dubsim ctl [--url URL] [--insecure] [--control-token TOKEN] COMMAND [ARGS]\n\n")
	for _, c := range ctlCommands {
		line := strings.TrimSpace(c.name + " " + c.args)
		if len(line) > 30 {
			fmt.Fprintf(&b, "  %s\n  %-30s %s\n", line, "", c.calls)
		} else {
			fmt.Fprintf(&b, "  %-30s %s\n", line, c.calls)
		}
	}
	b.WriteString("\nEvery command drives one sandbox with --url BASE/sbx/ID (its base_url).\n\n")
	b.WriteString(ctlHelp)
	return b.String()
}

type ctlCall struct {
	method, path string
	body         []byte
}

func get(path string) ctlCall { return ctlCall{"GET", path, nil} }

func post(path string, v any) ctlCall {
	b, _ := json.Marshal(v) // maps of strings, numbers and booleans always encode
	return ctlCall{"POST", path, b}
}

// ctlRequest turns the command line after the flags into one control call.
func ctlRequest(args []string) (ctlCall, error) {
	if len(args) == 0 {
		return ctlCall{}, errors.New("ctl: missing COMMAND\nusage: dubsim ctl [flags] COMMAND [ARGS] (dubsim ctl -h lists the commands)")
	}
	for _, c := range ctlCommands {
		if c.name != args[0] {
			continue
		}
		a := ctlArgs{cmd: c, args: args[1:]}
		if n := len(a.args); n < c.min || n > c.max {
			return ctlCall{}, a.wrong("%s", arity(c.min, c.max, n))
		}
		return c.build(a)
	}
	return ctlCall{}, fmt.Errorf("ctl: unknown command %q\nusage: dubsim ctl [flags] COMMAND [ARGS] (dubsim ctl -h lists the commands)", args[0])
}

func arity(lo, hi, got int) string {
	plural := func(n int) string {
		if n == 1 {
			return "1 argument"
		}
		return strconv.Itoa(n) + " arguments"
	}
	want := plural(lo)
	switch {
	case hi == lo && lo == 0:
		want = "no arguments"
	case hi == lo+1:
		want = plural(lo) + " or " + strconv.Itoa(hi)
	case hi > lo:
		want = strconv.Itoa(lo) + " to " + plural(hi)
	}
	return fmt.Sprintf("takes %s; got %d", want, got)
}

func query(key, value string) string {
	if value == "" {
		return ""
	}
	return "?" + key + "=" + url.QueryEscape(value)
}

func runCtl(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dubsim ctl", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprintln(stderr, ctlUsage()) }
	urlFlag := fs.String("url", "", "base URL of the simulator (default: $DUBSIM_URL, else the port of $DUBSIM_CONTROL_ADDR or $DUBSIM_ADDR on 127.0.0.1, else http://127.0.0.1:8080)")
	insecure := fs.Bool("insecure", false, "do not verify the server's TLS certificate (default: $DUBSIM_INSECURE; on for a self-signed dubsim found through the environment)")
	token := getenv(envName(flagControlToken))
	fs.StringVar(&token, flagControlToken, token, "control token of the simulator")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	to := resolveTarget(getenv, *urlFlag, *insecure, true)
	call, err := ctlRequest(fs.Args())
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, call.method, to.Base+call.path, bytes.NewReader(call.body))
	if err != nil {
		return err
	}
	if call.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set(server.HeaderControl, "1") // also on calls without a body (reset, freeze)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second, Transport: to.transport()}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(stdout, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode >= 400 {
		return fmt.Errorf("%s %s: HTTP %d", call.method, call.path, resp.StatusCode)
	}
	return nil
}
