package openapi_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/simtest"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/openapi"
	"github.com/dubsim/dubsim/sim/openapi/validate"
	"github.com/dubsim/dubsim/sim/server"
	"github.com/stretchr/testify/require"
)

// The contract tests send real requests to an in-process dubsim and check
// every answer against the document of its interface and against the
// combined document. A full run (no -run filter) must also have seen every
// documented response of every operation: the documents describe nothing
// the simulator does not do, and the simulator answers nothing they do not
// describe.

var t0 = time.Date(2026, 2, 4, 12, 0, 0, 0, time.UTC)

var (
	validators = map[string]*validate.Validator{}
	combinedV  *validate.Validator
	coverage   = struct {
		sync.Mutex
		seen map[string]map[string]bool // interface -> "METHOD path response" -> seen
	}{seen: map[string]map[string]bool{}}
)

func TestMain(m *testing.M) {
	flag.Parse()
	for _, n := range openapi.Names {
		doc, err := openapi.Document(n)
		if err == nil {
			validators[n], err = validate.New(n, doc)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	doc, err := openapi.Combined()
	if err == nil {
		combinedV, err = validate.New("combined", doc)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" {
		if missing := uncovered(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: %d documented responses were never seen in the contract tests (test each, or remove it from the document):\n  %s\n",
				len(missing), strings.Join(missing, "\n  "))
			code = 1
		}
	}
	os.Exit(code)
}

// uncovered lists documented responses (except "default") no test saw.
func uncovered() []string {
	coverage.Lock()
	defer coverage.Unlock()
	var missing []string
	for _, n := range openapi.Names {
		for _, op := range validators[n].Operations() {
			for _, r := range op.Responses {
				if r == "default" {
					continue
				}
				if k := op.Method + " " + op.Path + " " + r; !coverage.seen[n][k] {
					missing = append(missing, n+": "+k+" ("+op.ID+")")
				}
			}
		}
	}
	sort.Strings(missing)
	return missing
}

// env is one in-process instance.
type env struct {
	t     *testing.T
	srv   *server.Server
	url   string
	clock *sim.SimClock
	store sim.Store // newEnv's; nil for the sandbox environments
}

func newEnv(t *testing.T, mod func(*app.Config)) *env {
	t.Helper()
	i := simtest.New(t, t0, func(c *app.Config) {
		c.Version = "test"
		if mod != nil {
			mod(c)
		}
	})
	hs := httptest.NewServer(i.Server.Handler)
	t.Cleanup(hs.Close)
	return &env{t: t, srv: i.Server, url: hs.URL, clock: i.Clock, store: i.Store}
}

// resp is a checked answer.
type resp struct {
	Status int
	Header http.Header
	Body   []byte
	JSON   map[string]any // a JSON object body, else nil
	Op     string         // the operationId it matched
}

// req describes a request; Interface names the document to check against.
type req struct {
	Interface string
	Method    string
	Path      string // with the query, if any
	Key       string // bearer token; "" sends no Authorization
	JSON      string // JSON body (Content-Type: application/json)
	Body      []byte // raw body, with Header's Content-Type
	Header    map[string]string
	Host      string // the Host header; "": the listener's address
	// Stream: the answer is an endless event stream; the body is read up
	// to the end of its first event, then the connection is closed.
	Stream bool
}

// do sends r, checks the answer against the documents and records it for
// the coverage check. An answer that matches no documented response fails
// the test.
func (e *env) do(r req) resp {
	e.t.Helper()
	var body io.Reader
	switch {
	case r.JSON != "":
		body = strings.NewReader(r.JSON)
	case r.Body != nil:
		body = bytes.NewReader(r.Body)
	}
	hr, err := http.NewRequest(r.Method, e.url+r.Path, body)
	require.NoError(e.t, err)
	if r.Key != "" {
		hr.Header.Set("Authorization", "Bearer "+r.Key)
	}
	if r.JSON != "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	if r.Host != "" {
		hr.Host = r.Host
	}
	if r.Interface == openapi.Control {
		// As the Go client and dubsim ctl do; a case sends "" to omit it.
		hr.Header.Set(server.HeaderControl, "1")
	}
	for k, v := range r.Header {
		hr.Header.Set(k, v)
	}
	if r.Interface == openapi.Studio || r.Interface == openapi.Platform {
		hr.Header.Set(server.HeaderInterface, r.Interface)
	}
	hres, err := http.DefaultClient.Do(hr)
	require.NoError(e.t, err)
	var raw []byte
	if r.Stream && r.Method != http.MethodHead && hres.StatusCode == http.StatusOK {
		raw, err = readFirstEvent(hres.Body)
	} else {
		raw, err = io.ReadAll(hres.Body)
	}
	hres.Body.Close()
	require.NoError(e.t, err)
	out := resp{Status: hres.StatusCode, Header: hres.Header, Body: raw}
	if strings.Contains(hres.Header.Get("Content-Type"), "json") && len(raw) > 0 && raw[0] == '{' {
		_ = json.Unmarshal(raw, &out.JSON)
	}
	path := hr.URL.EscapedPath()
	v := validators[r.Interface]
	require.NotNil(e.t, v, "unknown interface %q", r.Interface)
	res, err := v.Check(r.Method, path, hres.StatusCode, hres.Header, raw)
	require.NoError(e.t, err, "%s %s against the %s document", r.Method, r.Path, r.Interface)
	_, err = combinedV.Check(r.Method, path, hres.StatusCode, hres.Header, raw)
	require.NoError(e.t, err, "%s %s against the combined document", r.Method, r.Path)
	out.Op = res.Operation
	coverage.Lock()
	if coverage.seen[r.Interface] == nil {
		coverage.seen[r.Interface] = map[string]bool{}
	}
	coverage.seen[r.Interface][res.Method+" "+res.Path+" "+res.Response] = true
	coverage.Unlock()
	return out
}

// advance moves the simulated clock and runs due transitions.
func (e *env) advance(d time.Duration) {
	e.t.Helper()
	r := e.do(req{Interface: openapi.Control, Method: "POST", Path: "/_sim/clock/advance", JSON: fmt.Sprintf(`{"seconds":%g}`, d.Seconds())})
	require.Equal(e.t, http.StatusOK, r.Status, "%s", r.Body)
}

// readFirstEvent reads an event stream up to the blank line that ends its
// first event (a block with an "event:" line).
func readFirstEvent(r io.Reader) ([]byte, error) {
	var out []byte
	buf := make([]byte, 512)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if i := bytes.Index(out, []byte("event:")); i >= 0 && bytes.Contains(out[i:], []byte("\n\n")) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}
