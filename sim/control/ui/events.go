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

// The dashboard's event stream (fidelity ED1): the dashboard reads what it
// shows only when an event says something changed.

// Version is what a reader of the control API could see change: the data,
// the journal (its newest sequence id, and its count, which a clear resets)
// and the clock's settings.
type Version struct {
	Data         uint64  `json:"data"`
	Journal      uint64  `json:"journal"`
	JournalTotal uint64  `json:"journal_total"`
	Frozen       bool    `json:"frozen"`
	TimeScale    float64 `json:"time_scale"`
}

// changedEvent is the data of a "changed" event; the page moves its clock
// between events from Now and time_scale.
type changedEvent struct {
	Seq uint64 `json:"seq"`
	Version
	Now string `json:"now"`
}

// Event stream timings and bounds.
const (
	// EventCheckInterval is how often a stream compares the version.
	EventCheckInterval = 250 * time.Millisecond
	// EventHeartbeat is the longest a stream stays silent, for proxies and
	// the page's watchdog.
	EventHeartbeat = 15 * time.Second
	// MaxEventStreams bounds the open streams of one simulator (429 past it).
	MaxEventStreams = 16
	// MaxProcessEventStreams bounds those of a process (503 past it), far
	// below the connection cap, so streams never take API clients' places.
	MaxProcessEventStreams = 64
	// eventRetryMS is the reconnection delay the stream suggests.
	eventRetryMS = 2000
)

// refuseStream answers a stream that has no place, with the stream's own
// reconnection delay.
func refuseStream(w http.ResponseWriter, status int, name, msg string) {
	w.Header().Set("Retry-After", strconv.Itoa(eventRetryMS/1000))
	httpx.WriteJSON(w, status, httpx.ControlEnvelope{Error: name, Message: msg})
}

func (u *UI) version() Version {
	if u.changes == nil {
		return Version{}
	}
	return u.changes()
}

// handleEvents streams text/event-stream: a "changed" event at once and
// whenever the version changes, and a "heartbeat" after EventHeartbeat of
// silence.
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
	// A stream outlives the server's write timeout.
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
