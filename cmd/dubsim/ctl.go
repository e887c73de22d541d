package main

import (
	"bytes"
	"encoding/json"
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

// ctlUsage lists the control subcommands: each is one call of the /_sim
// control API, for scripts that would rather not write curl lines.
const ctlUsage = `usage: dubsim ctl [--url URL] [--insecure] [--control-token TOKEN] COMMAND [ARGS]

  clock                          GET  /_sim/clock
  advance SECONDS | next         POST /_sim/clock/advance (by SECONDS, or to the next due transition)
  scale FACTOR                   POST /_sim/clock/scale
  work                           GET  /_sim/work (downloads and probes in flight)
  freeze | resume                POST /_sim/clock/freeze | resume
  reset [API_KEY]                POST /_sim/reset (everything, or one account)
  state [API_KEY]                GET  /_sim/state
  account PLAN [BALANCE] [retranslation] [cloning]
                                 POST /_sim/accounts
  fixtures FILE.json             POST /_sim/fixtures
  outcome PROJECT_ID error|ready [MESSAGE]
                                 POST /_sim/projects/{id}/outcome
  artifact-outcome ARTIFACT_ID error|ready [MESSAGE]
                                 POST /_sim/artifacts/{id}/outcome (ends now)
  video-status VIDEO_ID STATUS [auto]
                                 POST /_sim/videos/{id}/status
  account-set API_KEY JSON       PATCH /_sim/accounts/{api_key} (storage, rate_limit)
  project PROJECT_ID             GET  /_sim/projects/{id} (scripts, speakers, history, audio_url)
  studio [COMPANY_ID]            GET  /_sim/studio
  outcomes                       GET  /_sim/outcomes
  outcome-add JSON               POST /_sim/outcomes
  faults                         GET  /_sim/faults
  fault-add JSON                 POST /_sim/faults
  fault-rm ID | fault-clear      DELETE /_sim/faults/{id} | /_sim/faults
  requests [QUERY]               GET  /_sim/requests?QUERY (e.g. "status=4xx&key=dubsim-pro")
  requests-clear                 DELETE /_sim/requests
  verify JSON                    POST /_sim/requests/verify
  report API_KEY [text]          GET  /_sim/report
  sandbox [JSON]                 POST /_sim/sandboxes (a sandbox: {"start","time_scale","seed"})
  sandboxes                      GET  /_sim/sandboxes
  sandbox-rm ID                  DELETE /_sim/sandboxes/{id}
  raw METHOD PATH [JSON]         any control call

Every command drives one sandbox with --url BASE/sbx/ID (its base_url).

The URL defaults to $DUBSIM_URL, else the address the server reads from the same
environment ($DUBSIM_CONTROL_ADDR, else $DUBSIM_ADDR, on 127.0.0.1; https with
$DUBSIM_TLS_CERT or $DUBSIM_TLS_SELF_SIGNED), else http://127.0.0.1:8080; --insecure
(or $DUBSIM_INSECURE) skips the check of a TLS certificate. The control token
(--control-token) defaults to $DUBSIM_CONTROL_TOKEN; it is needed when the simulator
was started with one. The answer is printed; the exit status is 1 when the simulator
answers an error.`

type ctlCall struct {
	method, path string
	body         []byte
}

func ctlRequest(args []string) (ctlCall, error) {
	bad := func() (ctlCall, error) {
		return ctlCall{}, fmt.Errorf("bad arguments for %q\n\n%s", strings.Join(args, " "), ctlUsage)
	}
	if len(args) == 0 {
		return bad()
	}
	cmd, rest := args[0], args[1:]
	arg := func(i int) string {
		if i < len(rest) {
			return rest[i]
		}
		return ""
	}
	jsonBody := func(v any) []byte { b, _ := json.Marshal(v); return b }
	switch {
	case cmd == "clock" && len(rest) == 0:
		return ctlCall{"GET", "/_sim/clock", nil}, nil
	case cmd == "work" && len(rest) == 0:
		return ctlCall{"GET", "/_sim/work", nil}, nil
	case cmd == "advance" && len(rest) == 1 && arg(0) == "next":
		return ctlCall{"POST", "/_sim/clock/advance", jsonBody(map[string]bool{"next_due": true})}, nil
	case cmd == "project" && len(rest) == 1:
		return ctlCall{"GET", "/_sim/projects/" + url.PathEscape(arg(0)), nil}, nil
	case cmd == "studio" && len(rest) <= 1:
		if arg(0) == "" {
			return ctlCall{"GET", "/_sim/studio", nil}, nil
		}
		return ctlCall{"GET", "/_sim/studio?company_id=" + url.QueryEscape(arg(0)), nil}, nil
	case cmd == "advance" && len(rest) == 1:
		s, err := strconv.ParseFloat(arg(0), 64)
		if err != nil {
			return bad()
		}
		return ctlCall{"POST", "/_sim/clock/advance", jsonBody(map[string]float64{"seconds": s})}, nil
	case cmd == "scale" && len(rest) == 1:
		s, err := strconv.ParseFloat(arg(0), 64)
		if err != nil {
			return bad()
		}
		return ctlCall{"POST", "/_sim/clock/scale", jsonBody(map[string]float64{"time_scale": s})}, nil
	case (cmd == "freeze" || cmd == "resume") && len(rest) == 0:
		return ctlCall{"POST", "/_sim/clock/" + cmd, nil}, nil
	case cmd == "reset" && len(rest) <= 1:
		if arg(0) == "" {
			return ctlCall{"POST", "/_sim/reset", nil}, nil
		}
		return ctlCall{"POST", "/_sim/reset", jsonBody(map[string]string{"api_key": arg(0)})}, nil
	case cmd == "state" && len(rest) <= 1:
		return ctlCall{"GET", "/_sim/state" + query("api_key", arg(0)), nil}, nil
	case cmd == "account" && len(rest) >= 1:
		body := map[string]any{"plan": arg(0)}
		for _, a := range rest[1:] {
			switch a {
			case "retranslation":
				body["retranslation_enabled"] = true
			case "cloning":
				body["cloning_enabled"] = true
			default:
				n, err := strconv.ParseInt(a, 10, 64)
				if err != nil {
					return bad()
				}
				body["balance_minutes"] = n
			}
		}
		return ctlCall{"POST", "/_sim/accounts", jsonBody(body)}, nil
	case cmd == "fixtures" && len(rest) == 1:
		b, err := os.ReadFile(arg(0))
		if err != nil {
			return ctlCall{}, err
		}
		return ctlCall{"POST", "/_sim/fixtures", b}, nil
	case cmd == "outcome" && (len(rest) == 2 || len(rest) == 3):
		return ctlCall{"POST", "/_sim/projects/" + url.PathEscape(arg(0)) + "/outcome", jsonBody(map[string]string{"outcome": arg(1), "error_message": arg(2)})}, nil
	case cmd == "artifact-outcome" && (len(rest) == 2 || len(rest) == 3):
		return ctlCall{"POST", "/_sim/artifacts/" + url.PathEscape(arg(0)) + "/outcome", jsonBody(map[string]any{"outcome": arg(1), "error_message": arg(2), "now": true})}, nil
	case cmd == "video-status" && (len(rest) == 2 || (len(rest) == 3 && arg(2) == "auto")):
		return ctlCall{"POST", "/_sim/videos/" + url.PathEscape(arg(0)) + "/status", jsonBody(map[string]any{"status": arg(1), "auto": arg(2) == "auto"})}, nil
	case cmd == "account-set" && len(rest) == 2:
		return ctlCall{"PATCH", "/_sim/accounts/" + url.PathEscape(arg(0)), []byte(arg(1))}, nil
	case cmd == "outcomes" && len(rest) == 0:
		return ctlCall{"GET", "/_sim/outcomes", nil}, nil
	case cmd == "outcome-add" && len(rest) == 1:
		return ctlCall{"POST", "/_sim/outcomes", []byte(arg(0))}, nil
	case cmd == "faults" && len(rest) == 0:
		return ctlCall{"GET", "/_sim/faults", nil}, nil
	case cmd == "fault-add" && len(rest) == 1:
		return ctlCall{"POST", "/_sim/faults", []byte(arg(0))}, nil
	case cmd == "fault-rm" && len(rest) == 1:
		return ctlCall{"DELETE", "/_sim/faults/" + url.PathEscape(arg(0)), nil}, nil
	case cmd == "fault-clear" && len(rest) == 0:
		return ctlCall{"DELETE", "/_sim/faults", nil}, nil
	case cmd == "requests" && len(rest) <= 1:
		p := "/_sim/requests"
		if arg(0) != "" {
			p += "?" + strings.TrimPrefix(arg(0), "?")
		}
		return ctlCall{"GET", p, nil}, nil
	case cmd == "requests-clear" && len(rest) == 0:
		return ctlCall{"DELETE", "/_sim/requests", nil}, nil
	case cmd == "verify" && len(rest) == 1:
		return ctlCall{"POST", "/_sim/requests/verify", []byte(arg(0))}, nil
	case cmd == "report" && (len(rest) == 1 || (len(rest) == 2 && arg(1) == "text")):
		q := "?api_key=" + url.QueryEscape(arg(0))
		if arg(1) == "text" {
			q += "&format=text"
		}
		return ctlCall{"GET", "/_sim/report" + q, nil}, nil
	case cmd == "sandbox" && len(rest) <= 1:
		var body []byte
		if arg(0) != "" {
			body = []byte(arg(0))
		}
		return ctlCall{"POST", "/_sim/sandboxes", body}, nil
	case cmd == "sandboxes" && len(rest) == 0:
		return ctlCall{"GET", "/_sim/sandboxes", nil}, nil
	case cmd == "sandbox-rm" && len(rest) == 1:
		return ctlCall{"DELETE", "/_sim/sandboxes/" + url.PathEscape(arg(0)), nil}, nil
	case cmd == "raw" && (len(rest) == 2 || len(rest) == 3):
		var body []byte
		if arg(2) != "" {
			body = []byte(arg(2))
		}
		return ctlCall{strings.ToUpper(arg(0)), arg(1), body}, nil
	}
	return bad()
}

func query(key, value string) string {
	if value == "" {
		return ""
	}
	return "?" + key + "=" + url.QueryEscape(value)
}

// runCtl runs one control subcommand against a running dubsim.
func runCtl(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dubsim ctl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, ctlUsage) }
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
	req, err := http.NewRequest(call.method, to.Base+call.path, bytes.NewReader(call.body))
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
