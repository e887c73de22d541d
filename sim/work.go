package sim

import (
	"fmt"
	"strings"
	"time"
)

// Work is a piece of background work the simulator does in real time (an
// artifact download, the probe of a source video).
type Work struct {
	Kind     string // "download" or "probe"
	Resource string // "artifact" for downloads; "" for probes
	ID       string
	URL      string
	// StartedAt and NeededAt are simulated: NeededAt is the time from which
	// answers depend on the result (zero: only the request that started it).
	StartedAt  time.Time
	NeededAt   time.Time
	WaitingFor string
	Bytes      int64 // received so far
}

func (w Work) String() string {
	s := w.Kind + " of " + w.URL
	if w.ID != "" {
		s += " for " + w.Resource + " " + w.ID
	}
	return s + fmt.Sprintf(" (waiting for %s; %d bytes so far)", w.WaitingFor, w.Bytes)
}

// PendingError says that background work an answer depends on was still
// running when the wait for it ended. At is the simulated time the answer
// is for (zero: the next due transition).
type PendingError struct {
	At      time.Time
	Waited  time.Duration
	Pending []Work
}

func (e *PendingError) Error() string {
	names := make([]string, len(e.Pending))
	for i, w := range e.Pending {
		names[i] = w.String()
	}
	what := "this background work the next due transition depends on"
	if !e.At.IsZero() {
		what = "the clock moved to " + StudioTime(e.At) + ", but this background work the new time depends on"
	}
	return fmt.Sprintf("after waiting %s, %s is still running: %s", e.Waited, what, strings.Join(names, "; "))
}
