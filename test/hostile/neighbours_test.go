package hostile

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dubsim/dubsim/internal/proctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The noisy-neighbour test: one dubsim with its default settings (no
// GOMEMLIMIT) serves two victims, the default simulator and a sandbox,
// while abusers run beside them (docs/design/tenancy.md):
//
//   - clients without a key sending 1 MB request lines;
//   - 16 clients trickling 10 MiB JSON bodies under a bogus key;
//   - sandbox create/delete churn;
//   - 20 event streams open in each of 10 sandboxes;
//   - a sandbox holding 20,000 fault rules, whose requests go through them.
//
// Each victim runs a fixed scenario (create, read, advance, read ready,
// download the dubbed WAV, balance) in windows that alternate between alone
// and beside the abusers (alone, beside, beside, alone, alone, ...), so that
// load from outside the test that drifts during the run falls on both sides
// alike. It passes when every victim request succeeds, each victim's p99
// beside the abusers is at most neighbourSlowdown times its own p99 alone
// (both measured in this run), and the process's resident memory stays
// under neighbourRSS.
const (
	neighbourSlowdown = 3
	neighbourRSS      = 512 << 20
	neighbourRules    = 20_000
	// neighbourWindows windows a side of neighbourRounds scenarios per
	// victim: 360 requests per victim and side, so p99 is not one or two
	// slow requests.
	neighbourWindows = 12
	neighbourRounds  = 5
)

// It measures latency, which the other packages of a parallel `go test
// ./...` disturb, so it runs only when asked (.ci/run does, as a step of
// its own): DUBSIM_NOISY=1 go test -count=1 -v -run TestNoisyNeighbours ./test/hostile/
func TestNoisyNeighbours(t *testing.T) {
	if os.Getenv("DUBSIM_NOISY") != "1" {
		t.Skip("a latency comparison: DUBSIM_NOISY=1 runs it")
	}
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		t.Logf("load average at the start: %s", bytes.TrimSpace(load))
	}
	p := start(t)
	victim := neighbourSandbox(t, p.Base)
	victims := []*scenario{
		{name: "default", base: p.Base, key: "dubsim-pro", control: p.Base + "/_sim", client: victimClient()},
		{name: "sandbox", base: p.Base, key: "sbx_" + victim + "_dubsim-pro", control: p.Base + "/sbx/" + victim + "/_sim", client: victimClient()},
	}

	// The fault rules are set up before the abuse starts: adding them is
	// 20,000 control calls, not the abuse itself.
	rulesBox := neighbourSandbox(t, p.Base)
	added, refused := addFaultRules(t, p.Base+"/sbx/"+rulesBox+"/_sim", neighbourRules)
	t.Logf("fault rules: %d added, %d refused (the tenant's share)", added, refused)
	cfg := &abusers{Base: p.Base, RulesKey: "sbx_" + rulesBox + "_dubsim-pro"}
	for range 10 {
		cfg.StreamURLs = append(cfg.StreamURLs, p.Base+"/sbx/"+neighbourSandbox(t, p.Base)+"/_sim/events")
	}
	ab := startAbusers(t, cfg)

	ctx, stopWatch := context.WithCancel(context.Background())
	var peak atomic.Int64
	watch := make(chan struct{})
	go func() {
		defer close(watch)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if rss, _, err := p.Memory(); err == nil && rss > peak.Load() {
				peak.Store(rss)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()

	// One round first, not counted: the victims' first requests open
	// connections and warm the server's caches.
	runVictims(t, victims, 1)
	quietFiles, err := p.OpenFiles()
	require.NoError(t, err)
	var use [2]usage // alone, beside
	for w := range neighbourWindows * 2 {
		// alone, beside, beside, alone, alone, beside, ...
		beside := (w+1)/2%2 == 1
		side := 0
		if beside {
			side = 1
			ab.command(t, "start", "under way")
		} else {
			settle(t, p, quietFiles)
		}
		for _, v := range victims {
			v.side = &v.alone
			if beside {
				v.side = &v.beside
			}
		}
		began := use[side].begin(t, p, ab)
		runVictims(t, victims, neighbourRounds)
		if beside {
			ab.command(t, "stop", "stopped")
		}
		use[side].end(t, p, ab, began)
	}
	stopWatch()
	<-watch

	t.Logf("abusers: %s", ab.close(t))
	t.Logf("alone: %s; beside the abusers: %s", &use[0], &use[1])
	var requests [2]int
	for _, v := range victims {
		requests[0] += len(v.alone.all())
		requests[1] += len(v.beside.all())
	}
	t.Logf("dubsim's processor time per victim request: alone %.2f ms, beside the abusers %.2f ms",
		ms(use[0].server)/float64(requests[0]), ms(use[1].server)/float64(requests[1]))
	for _, v := range victims {
		q, l := p99(v.alone.all()), p99(v.beside.all())
		t.Logf("%s: p99 alone %s, beside the abusers %s (%.1fx; %d requests each)", v.name, q, l, float64(l)/float64(q), len(v.beside.all()))
		for _, step := range steps {
			t.Logf("  %-10s p99 alone %7.2f ms, beside %7.2f ms", step, ms(p99(v.alone[step])), ms(p99(v.beside[step])))
		}
		assert.LessOrEqual(t, l, neighbourSlowdown*q, "%s: p99 beside the abusers is at most %dx its p99 alone", v.name, neighbourSlowdown)
	}
	t.Logf("peak RSS: %s", mb(peak.Load()))
	assert.Less(t, peak.Load(), int64(neighbourRSS), "resident memory")
	assert.True(t, p.Alive())
}

// settle returns once dubsim holds no more descriptors than it did before
// the abuse (give or take the victims' idle connections): the abusers'
// connections that it ends after they stopped (an answer past net/http's
// header limit is written after a second and keeps its connection half a
// second more) are not to be served
// during a window alone. The count is read from /proc; nothing else tells
// when the server has closed them.
func settle(t *testing.T, p *proctest.Proc, quiet int) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := p.OpenFiles()
		require.NoError(t, err)
		if n <= quiet+2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("dubsim holds %d descriptors 10 s after the abusers stopped, %d before the abuse", n, quiet)
		}
		<-tick.C
	}
}

// usage is the time one side's windows took, and the processor time
// dubsim, the test process (the victims' clients) and the abusers'
// process used meanwhile.
type usage struct{ wall, server, client, abusers time.Duration }

type mark struct {
	at                      time.Time
	server, client, abusers time.Duration
}

func (u *usage) begin(t *testing.T, p *proctest.Proc, ab *abuserProcess) mark {
	srv, err := p.CPU()
	require.NoError(t, err)
	return mark{time.Now(), srv, selfCPU(t), ab.cpu(t)}
}

func (u *usage) end(t *testing.T, p *proctest.Proc, ab *abuserProcess, m mark) {
	srv, err := p.CPU()
	require.NoError(t, err)
	u.wall += time.Since(m.at)
	u.server += srv - m.server
	u.client += selfCPU(t) - m.client
	u.abusers += ab.cpu(t) - m.abusers
}

func (u *usage) String() string {
	pc := func(d time.Duration) float64 { return 100 * d.Seconds() / u.wall.Seconds() }
	return fmt.Sprintf("%.1f s; processor time used, in %% of a core: dubsim %.0f, the victims' clients %.0f, the abusers' clients %.0f",
		u.wall.Seconds(), pc(u.server), pc(u.client), pc(u.abusers))
}

// selfCPU is the processor time the test process has used.
func selfCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// abusers are the five abusers of the test. They run in a process of
// their own (TestNoisyAbusers, this test binary run again), as other
// tenants' test suites would: their clients' goroutines and garbage then
// share nothing with the victims' clients but the machine's processors.
type abusers struct {
	Base, RulesKey string
	StreamURLs     []string
	counts         abuseCounts
}

// abusersVariable holds the abusers' configuration (JSON) in the
// environment of the abusers' process.
const abusersVariable = "HOSTILE_NOISY_ABUSERS"

// TestNoisyAbusers is the abusers' process of TestNoisyNeighbours (skipped
// otherwise). It reads commands from its standard input, one a line:
// "start" starts every abuser and answers "under way" once each has been
// answered at least once; "stop" stops them and answers "stopped" once
// they have ended. At the end of its input it prints what they got.
func TestNoisyAbusers(t *testing.T) {
	cfg := os.Getenv(abusersVariable)
	if cfg == "" {
		t.Skip("the abusers' process of TestNoisyNeighbours, which runs it")
	}
	var a abusers
	require.NoError(t, json.Unmarshal([]byte(cfg), &a))
	in := bufio.NewScanner(os.Stdin)
	stop := func() {}
	for in.Scan() {
		switch in.Text() {
		case "start":
			stop = a.start()
			fmt.Println(abusersReply + "under way")
		case "stop":
			stop()
			fmt.Println(abusersReply + "stopped")
		}
	}
	fmt.Println(abusersReply + a.counts.String())
}

// abusersOnlyVariable, when set, names the abusers to run (a list of
// lines, bodies, churn, streams, rules): to find which abuser costs what.
const abusersOnlyVariable = "HOSTILE_NOISY_ONLY"

// abusersReply starts every line the abusers' process answers with (the
// rest of its output is go test's).
const abusersReply = "abusers: "

// abuserProcess is the running abusers' process, seen from the test.
type abuserProcess struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startAbusers(t *testing.T, cfg *abusers) *abuserProcess {
	t.Helper()
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoisyAbusers$", "-test.count=1")
	cmd.Env = append(os.Environ(), abusersVariable+"="+string(b))
	cmd.Stderr = os.Stderr
	// A session of its own: where the kernel shares the processors between
	// sessions (autogroup), the abusers get a share of their own, as another
	// tenant's test suite would, and do not take the victims'.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return &abuserProcess{cmd: cmd, in: in, out: bufio.NewScanner(out)}
}

// cpu is the processor time the abusers' process has used (user and
// system, from /proc/PID/stat).
func (p *abuserProcess) cpu(t *testing.T) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	require.NoError(t, err)
	// Fields after the command name, which ends the last ')': utime and
	// stime are the 12th and 13th, in ticks of 1/100 s.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	require.Greater(t, len(f), 12)
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	require.NoError(t, errors.Join(err1, err2))
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// command sends a command and waits for the process's answer.
func (p *abuserProcess) command(t *testing.T, cmd, want string) {
	t.Helper()
	_, err := fmt.Fprintln(p.in, cmd)
	require.NoError(t, err)
	require.Equal(t, want, p.reply(t), "the abusers' answer to %s", cmd)
}

// reply is the next answer of the process.
func (p *abuserProcess) reply(t *testing.T) string {
	t.Helper()
	for p.out.Scan() {
		if r, ok := strings.CutPrefix(p.out.Text(), abusersReply); ok {
			return r
		}
	}
	t.Fatalf("the abusers' process ended: %v", p.out.Err())
	return ""
}

// close ends the process's input and returns what the abusers got.
func (p *abuserProcess) close(t *testing.T) string {
	t.Helper()
	require.NoError(t, p.in.Close())
	got := p.reply(t)
	require.NoError(t, p.cmd.Wait())
	return got
}

// start starts every abuser and returns once each has been answered at
// least once; the returned function stops them and waits until they have
// ended.
func (a *abusers) start() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var running, underway sync.WaitGroup
	only := os.Getenv(abusersOnlyVariable)
	run := func(what string, n int, f func(ctx context.Context, i int, first func())) {
		if only != "" && !strings.Contains(only, what) {
			return
		}
		for i := range n {
			running.Add(1)
			underway.Add(1)
			first := sync.OnceFunc(underway.Done)
			go func() {
				defer running.Done()
				defer first()
				f(ctx, i, first)
			}()
		}
	}
	c := &a.counts
	run("lines", 4, func(ctx context.Context, _ int, first func()) { longRequestLines(ctx, a.Base, c, first) })
	run("bodies", 16, func(ctx context.Context, _ int, first func()) { trickleBodies(ctx, a.Base, c, first) })
	run("churn", 2, func(ctx context.Context, _ int, first func()) { sandboxChurn(ctx, a.Base, c, first) })
	run("streams", len(a.StreamURLs)*20, func(ctx context.Context, i int, first func()) {
		eventStream(ctx, a.StreamURLs[i%len(a.StreamURLs)], c, first)
	})
	run("rules", 2, func(ctx context.Context, _ int, first func()) { ruledRequests(ctx, a.Base, a.RulesKey, c, first) })
	underway.Wait()
	return func() {
		cancel()
		running.Wait()
	}
}

// runVictims runs every victim's scenario n times, the victims at once,
// and adds each request's duration to the victim's current side.
func runVictims(t *testing.T, victims []*scenario, n int) {
	var wg sync.WaitGroup
	for _, v := range victims {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				v.once(t)
			}
		}()
	}
	wg.Wait()
}

// steps are the requests of the scenario, in order.
var steps = []string{"create", "read", "advance", "read ready", "download", "balance"}

// durations are a victim's request durations on one side, by step.
type durations map[string][]time.Duration

func (d durations) all() []time.Duration {
	var out []time.Duration
	for _, step := range steps {
		out = append(out, d[step]...)
	}
	return out
}

// scenario is one victim: its base URL, its key and its control API, and
// the durations of its requests alone and beside the abusers.
type scenario struct {
	name, base, key, control string
	// client is the victim's own: abusers' connections never share its pool.
	client        *http.Client
	alone, beside durations
	side          *durations // where once adds: alone or beside (nil: nowhere)
}

// once runs the scenario once; any request that fails fails the test.
func (s *scenario) once(t *testing.T) {
	timed := func(what, method, url, key, body string, want int) []byte {
		began := time.Now()
		st, b, err := sendWith(s.client, method, url, key, body)
		if s.side != nil {
			if *s.side == nil {
				*s.side = durations{}
			}
			(*s.side)[what] = append((*s.side)[what], time.Since(began))
		}

		if err != nil || st != want {
			t.Errorf("victim %s: %s %s: %d %v %.200s", s.key, method, what, st, err, b)
		}
		return b
	}
	b := timed("create", "POST", s.base+"/api/v1/projects", s.key,
		`{"source_lang":"en","target_lang":"fr-FR","source_video_url":"https://media.dubsim.test/short-victim.mp4"}`, 200)
	var created struct {
		ID string `json:"project_id"`
	}
	if json.Unmarshal(b, &created) != nil || created.ID == "" {
		t.Errorf("victim %s: create answered %.200s", s.key, b)
		return
	}
	timed("read", "GET", s.base+"/api/v1/projects/"+created.ID, s.key, "", 200)
	timed("advance", "POST", s.control+"/clock/advance", "", `{"seconds":600}`, 200)
	b = timed("read ready", "GET", s.base+"/api/v1/projects/"+created.ID, s.key, "", 200)
	var ready struct {
		Status string `json:"status"`
		Audio  string `json:"output_tts_audio_url"`
	}
	if json.Unmarshal(b, &ready) != nil || ready.Status != "ready" || ready.Audio == "" {
		t.Errorf("victim %s: not ready after the advance: %.200s", s.key, b)
		return
	}
	wav := timed("download", "GET", ready.Audio, "", "", 200)
	if !strings.HasPrefix(string(wav), "RIFF") {
		t.Errorf("victim %s: the output is not a WAV: %.40q", s.key, wav)
	}
	timed("balance", "GET", s.base+"/api/v1/balance", s.key, "", 200)
}

// send is one request that reports its failure instead of failing a test
// (abusers and victims run on goroutines of their own).
func send(method, url, key, body string) (int, []byte, error) {
	return sendWith(abuserClient, method, url, key, body)
}

func sendWith(client *http.Client, method, url, key, body string) (int, []byte, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Dubsim-Control", "1")
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

var abuserClient = &http.Client{Timeout: 60 * time.Second}

func victimClient() *http.Client {
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
}

func p99(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[(len(s)*99+99)/100-1]
}

// neighbourSandbox creates a sandbox with an id of its own and returns it.
func neighbourSandbox(t *testing.T, base string) string {
	t.Helper()
	id := sandboxID()
	st, body, err := send("PUT", base+"/_sim/sandboxes/"+id, "", "{}")
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, st, "%s", body)
	return id
}

// sandboxID is a fresh sandbox id: 16 characters of lower-case Crockford
// base32 from crypto/rand.
func sandboxID() string {
	const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[b[i]&31]
	}
	return string(b)
}

// abuseCounts counts what the abusers got.
type abuseCounts struct {
	lines, bodies, churn, streams, ruled atomic.Int64
	streamsRefused                       atomic.Int64
}

func (c *abuseCounts) String() string {
	return fmt.Sprintf("%d long request lines answered, %d trickled bodies ended, %d sandboxes churned, %d event streams opened (%d refused), %d requests through the fault rules",
		c.lines.Load(), c.bodies.Load(), c.churn.Load(), c.streams.Load(), c.streamsRefused.Load(), c.ruled.Load())
}

// longRequestLines sends GETs whose request line is 1 MB, without a key.
func longRequestLines(ctx context.Context, base string, c *abuseCounts, first func()) {
	host := strings.TrimPrefix(base, "http://")
	req := []byte("GET /api/v1/projects/" + strings.Repeat("a", 1<<20) + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n")
	for ctx.Err() == nil {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", host)
		if err != nil {
			continue
		}
		stopOnDone(ctx, conn)
		_, _ = conn.Write(req)
		if _, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
			c.lines.Add(1)
			first()
		}
		conn.Close()
	}
}

// trickleBodies declares a 10 MiB JSON body under a bogus key and sends it
// 4 KiB at a time, 50 times a second, until the server ends it.
func trickleBodies(ctx context.Context, base string, c *abuseCounts, first func()) {
	host := strings.TrimPrefix(base, "http://")
	chunk := []byte("[" + strings.Repeat(" ", 4095))
	for ctx.Err() == nil {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", host)
		if err != nil {
			continue
		}
		stopOnDone(ctx, conn)
		_, err = fmt.Fprintf(conn, "POST /api/v1/projects HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer bogus-key\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", host, 10<<20)
		tick := time.NewTicker(20 * time.Millisecond)
		for sent := 0; err == nil && sent < 10<<20 && ctx.Err() == nil; sent += len(chunk) {
			_, err = conn.Write(chunk)
			chunk[0] = ' '
			first()
			<-tick.C
		}
		tick.Stop()
		chunk[0] = '['
		conn.Close()
		c.bodies.Add(1)
	}
}

// sandboxChurn creates and deletes sandboxes without pause.
func sandboxChurn(ctx context.Context, base string, c *abuseCounts, first func()) {
	for ctx.Err() == nil {
		id := sandboxID()
		if st, _, err := send("PUT", base+"/_sim/sandboxes/"+id, "", "{}"); err != nil || st != http.StatusCreated {
			continue
		}
		_, _, _ = send("DELETE", base+"/_sim/sandboxes/"+id, "", "")
		c.churn.Add(1)
		first()
	}
}

// eventStream holds one event stream open and reads it until the end.
func eventStream(ctx context.Context, url string, c *abuseCounts, first func()) {
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if err != nil {
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		first()
		if resp.StatusCode != http.StatusOK {
			c.streamsRefused.Add(1)
			resp.Body.Close()
			// A refused stream is retried after the Retry-After the
			// server gives, as a browser's EventSource would.
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		c.streams.Add(1)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// addFaultRules adds n latency rules that never match a victim (they name
// a path nobody calls) to a sandbox's fault list, until its share refuses.
func addFaultRules(t *testing.T, control string, n int) (added, refused int) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				st, _, err := send("POST", control+"/faults", "", fmt.Sprintf(`{"path":"/api/v1/never/%d","action":{"type":"latency","latency_ms":1}}`, i))
				mu.Lock()
				if err == nil && st == http.StatusCreated {
					added++
				} else {
					refused++
				}
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return added, refused
}

// ruledRequests sends requests that every fault rule of the sandbox is
// checked against.
func ruledRequests(ctx context.Context, base, key string, c *abuseCounts, first func()) {
	for ctx.Err() == nil {
		if _, _, err := send("GET", base+"/api/v1/balance", key, ""); err == nil {
			c.ruled.Add(1)
			first()
		}
	}
}

// stopOnDone closes conn when ctx ends, so an abuser blocked on it returns.
func stopOnDone(ctx context.Context, conn net.Conn) {
	context.AfterFunc(ctx, func() { conn.Close() })
}
