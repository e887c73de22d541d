// Command startwait measures how long a server takes from exec to its
// first successful answer, and helps bench/run with ports and readiness.
//
//	startwait -url URL [-H 'Name: value']... [-runs 5] -- command [args...]
//	    runs the command -runs times; each time it execs it, polls URL until
//	    an answer of status 200, records the time since the exec, then stops
//	    the command's process group (SIGTERM, then SIGKILL after 5 s). The
//	    string {run} in an argument is replaced by the run number (a fresh
//	    data file per run). Prints the median in milliseconds on stdout and
//	    every run on stderr.
//	startwait -url URL [-H ...] -wait-only [-timeout 60s]
//	    polls until a 200 (for a server started elsewhere); prints the
//	    milliseconds waited.
//	startwait -free-ports N
//	    prints N distinct free loopback TCP ports, one a line.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// current is the process group being measured, stopped if startwait is
// interrupted (the group is its own, so a Ctrl-C does not reach it).
var current struct {
	sync.Mutex
	pgid int
}

func init() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		current.Lock()
		if current.pgid > 0 {
			_ = syscall.Kill(-current.pgid, syscall.SIGKILL)
		}
		os.Exit(130)
	}()
}

type headers []string

func (h *headers) String() string     { return strings.Join(*h, ", ") }
func (h *headers) Set(v string) error { *h = append(*h, v); return nil }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "startwait:", err)
		os.Exit(1)
	}
}

func run() error {
	var hdrs headers
	url := flag.String("url", "", "URL to poll")
	flag.Var(&hdrs, "H", "request header 'Name: value' (repeatable)")
	runs := flag.Int("runs", 5, "number of starts to measure")
	timeout := flag.Duration("timeout", 60*time.Second, "give up after this long")
	waitOnly := flag.Bool("wait-only", false, "only poll URL")
	freePorts := flag.Int("free-ports", 0, "print this many free loopback ports and exit")
	logFile := flag.String("log", "", "append the command's output to this file (default: discarded)")
	flag.Parse()

	if *freePorts > 0 {
		return printFreePorts(*freePorts)
	}
	if *url == "" {
		return errors.New("-url is required")
	}
	req, err := http.NewRequest(http.MethodGet, *url, nil)
	if err != nil {
		return err
	}
	for _, h := range hdrs {
		k, v, ok := strings.Cut(h, ":")
		if !ok {
			return fmt.Errorf("header %q: want 'Name: value'", h)
		}
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}

	if *waitOnly {
		t0 := time.Now()
		if err := poll(client, req, t0.Add(*timeout), nil); err != nil {
			return err
		}
		fmt.Printf("%.1f\n", ms(time.Since(t0)))
		return nil
	}
	args := flag.Args()
	if len(args) == 0 {
		return errors.New("no command given (after --)")
	}
	out := io.Writer(io.Discard)
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	var times []float64
	for i := 1; i <= *runs; i++ {
		argv := make([]string, len(args))
		for j, a := range args {
			argv[j] = strings.ReplaceAll(a, "{run}", strconv.Itoa(i))
		}
		d, err := measure(client, req, argv, *timeout, out)
		if err != nil {
			return fmt.Errorf("run %d: %w", i, err)
		}
		times = append(times, ms(d))
	}
	strs := make([]string, len(times))
	for i, t := range times {
		strs[i] = fmt.Sprintf("%.1f", t)
	}
	slices.Sort(times)
	median := times[len(times)/2]
	if len(times)%2 == 0 {
		median = (times[len(times)/2-1] + times[len(times)/2]) / 2
	}
	fmt.Fprintf(os.Stderr, "startwait: %s: runs %s ms, median %.1f ms\n", args[0], strings.Join(strs, " "), median)
	fmt.Printf("%.1f\n", median)
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// measure execs argv and returns the time to the first 200 from req; the
// process group is stopped before it returns.
func measure(client *http.Client, req *http.Request, argv []string, timeout time.Duration, out io.Writer) (time.Duration, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	exited := make(chan struct{})
	t0 := time.Now()
	current.Lock()
	if err := cmd.Start(); err != nil {
		current.Unlock()
		return 0, err
	}
	current.pgid = cmd.Process.Pid
	current.Unlock()
	go func() { _ = cmd.Wait(); close(exited) }()
	err := poll(client, req, t0.Add(timeout), exited)
	d := time.Since(t0)
	stop(cmd, exited)
	return d, err
}

// poll requests until a 200, the deadline, or the process exiting.
func poll(client *http.Client, req *http.Request, deadline time.Time, exited <-chan struct{}) error {
	for {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		resp, err := client.Do(req.WithContext(ctx))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				cancel()
				return nil
			}
		}
		cancel()
		select {
		case <-exited:
			return errors.New("the command exited before answering")
		default:
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("no 200 answer")
			}
			return fmt.Errorf("timed out: %w", err)
		}
		time.Sleep(500 * time.Microsecond)
	}
}

func stop(cmd *exec.Cmd, exited <-chan struct{}) {
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-exited
	}
	// Anything left in the group (children that ignored SIGTERM) goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	current.Lock()
	current.pgid = 0
	current.Unlock()
}

func printFreePorts(n int) error {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		lns = append(lns, ln)
		fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	}
	return nil
}
