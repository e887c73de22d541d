package ui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/control"
	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// The dashboard's event stream (fidelity ED1): instead of reading the whole
// state every second, the dashboard holds GET /_sim/events open and reads
// what it shows only when an event says something changed.

// Version is what a reader of the control API could see change: the data
// (the engine's Data.Changes: every write, sweep and clock change but the
// periodic clock saves), the journal (its newest sequence id and its count,
// which a clear resets) and the clock's settings.
type Version struct {
	Data         uint64  `json:"data"`
	Journal      uint64  `json:"journal"`
	JournalTotal uint64  `json:"journal_total"`
	Frozen       bool    `json:"frozen"`
	TimeScale    float64 `json:"time_scale"`
}

// changedEvent is the data of a "changed" event: the version, a counter
// that grows with every change the stream saw, and simulated now (from
// which, with time_scale, the page moves its clock between events).
type changedEvent struct {
	Seq uint64 `json:"seq"`
	Version
	Now string `json:"now"`
}

// Event stream timings and bounds.
const (
	// EventCheckInterval is how often a stream compares the version.
	EventCheckInterval = 250 * time.Millisecond
	// EventHeartbeat is the longest a stream stays silent: a heartbeat
	// event (simulated now) keeps proxies and the page's watchdog content.
	EventHeartbeat = 15 * time.Second
	// MaxEventStreams bounds the streams of one simulator (the default
	// or a sandbox: one tenant) open at once; one more is refused (429)
	// until one closes.
	MaxEventStreams = 16
	// MaxProcessEventStreams bounds the streams of every simulator of a
	// process together (Config.Streams); one more is refused (503) until
	// one closes. Far below the listener's connection cap, so streams
	// never take the connections API clients need.
	MaxProcessEventStreams = 64
	// eventRetryMS is the reconnection delay the stream suggests.
	eventRetryMS = 2000
)

// refuseStream answers a stream that has no place, in the control
// envelope, with the delay the stream itself suggests for a reconnection.
func refuseStream(w http.ResponseWriter, status int, name, msg string) {
	b, _ := json.Marshal(httpx.ControlEnvelope{Error: name, Message: msg})
	w.Header().Set("Retry-After", strconv.Itoa(eventRetryMS/1000))
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func (u *UI) version() Version {
	if u.changes == nil {
		return Version{}
	}
	return u.changes()
}

// handleEvents streams text/event-stream: a "changed" event at once and
// whenever the version changes (checked every EventCheckInterval), and a
// "heartbeat" after EventHeartbeat of silence. At most MaxEventStreams at
// once on this UI (429 past them), and as many as Config.Streams has places
// in the process (503 past them).
func (u *UI) handleEvents(w http.ResponseWriter, r *http.Request) error {
	for k := range r.URL.Query() {
		return sim.Errorf(sim.CodeValidation, msgEventsQuery, k)
	}
	if !u.streams.TryEnter() {
		refuseStream(w, http.StatusTooManyRequests, "TooManyRequestsError", fmt.Sprintf(msgTooManyStreams, MaxEventStreams))
		return nil
	}
	defer u.streams.Leave()
	if u.process != nil {
		if !u.process.TryEnter() {
			refuseStream(w, http.StatusServiceUnavailable, "ServiceUnavailableError", fmt.Sprintf(msgProcessStreams, u.process.Size()))
			return nil
		}
		defer u.process.Leave()
	}
	rc := http.NewResponseController(w)
	// A stream outlives the server's write timeout (made for downloads).
	_ = rc.SetWriteDeadline(time.Time{})
	setHeaders(w, "text/event-stream; charset=utf-8").Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	if _, err := fmt.Fprintf(w, "retry: %d\n\n", eventRetryMS); err != nil {
		return nil
	}
	var seq uint64
	send := func(event string, v any) bool {
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	var last Version
	changed := func(v Version) bool {
		last = v
		seq++
		return send("changed", changedEvent{Seq: seq, Version: v, Now: control.Time(u.src.Now())})
	}
	if !changed(u.version()) {
		return nil
	}
	check := time.NewTicker(EventCheckInterval)
	defer check.Stop()
	silent := time.Now()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-check.C:
		}
		v := u.version()
		switch {
		case v != last:
			if !changed(v) {
				return nil
			}
		case time.Since(silent) >= EventHeartbeat:
			if !send("heartbeat", struct {
				Seq uint64 `json:"seq"`
				Now string `json:"now"`
			}{seq, control.Time(u.src.Now())}) {
				return nil
			}
		default:
			continue
		}
		silent = time.Now()
	}
}
