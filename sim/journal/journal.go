package journal

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dubsim/dubsim/sim"
)

// Defaults of Config.
const (
	DefaultMaxBytes        = 4 << 20
	DefaultMaxBody         = 8 << 10
	DefaultMinPollInterval = 2 * time.Second
)

// Bounds of the parts of an entry that are not bodies, so that an entry's
// size never depends on what a client sends.
const (
	maxURLPart     = 4 << 10 // path and raw query
	maxMethod      = 32      // a method no route has is kept this far
	maxHeaderValue = 512     // each header of interest, and the API key
	maxNotes       = 16      // notes per request
	maxNoteKey     = 64
	maxNoteValue   = 256
)

// Config configures a Journal. Zero fields take their defaults.
type Config struct {
	// MaxBytes bounds the bytes the journal keeps (Entry sizes); the
	// newest entry is kept even when it alone is larger.
	MaxBytes int64
	// Memory is the bound shared with the process's other journals; nil:
	// one of DefaultMemory of its own.
	Memory          *Memory
	MaxBody         int              // bytes kept of a request body, and of a response body of status >= 400
	Now             func() time.Time // real time
	SimNow          func() time.Time // simulated time; nil: entries carry no sim_time
	MinPollInterval time.Duration    // rule polling-too-fast
	// Route tells which interface serves a request and why: the server's
	// routing decision, so the journal never makes its own. Without it
	// every request is InterfaceOther.
	Route func(r *http.Request) (iface, routedBy string)
	// Unrecorded names requests that are not client traffic (the web pages
	// a person opens), besides the control API's reads; nil: none.
	Unrecorded func(r *http.Request) bool
}

// Journal records the requests that pass through its Middleware. It is
// safe for concurrent use. Close it when it is no longer used, so that the
// Memory it shares forgets it.
type Journal struct {
	cfg Config // with its defaults

	// bytes is the size of the entries kept, read by Memory without mu.
	bytes atomic.Int64

	mu      sync.RWMutex
	kept    []*Entry // kept[head:] are the entries, oldest first
	head    int
	closed  bool   // Close: a request still in flight is not kept
	seq     uint64 // last sequence id handed out; never reset
	total   uint64 // entries recorded since the last Reset
	dropped uint64 // entries dropped to stay within the bounds since the last Reset
}

// New returns an empty journal.
func New(cfg Config) *Journal {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Memory == nil {
		cfg.Memory = NewMemory(0)
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MinPollInterval <= 0 {
		cfg.MinPollInterval = DefaultMinPollInterval
	}
	j := &Journal{cfg: cfg}
	cfg.Memory.join(j) // nothing is reserved: an idle sandbox's journal costs nothing
	return j
}

// Close empties the journal and takes it out of its Memory; it keeps no
// entry after (a request still in flight is counted, not kept).
func (j *Journal) Close() { j.cfg.Memory.leave(j) }

// Interface names of Entry.Interface.
const (
	InterfacePlatform = "platform"
	InterfaceStudio   = "studio"
	InterfaceControl  = "control"
	InterfaceOther    = "other"
)

// Headers of interest, as recorded in Entry.Headers: four of the request,
// two of the response.
const (
	HeaderContentType        = "Content-Type"
	HeaderIdempotencyKey     = "Idempotency-Key"
	HeaderUserAgent          = "User-Agent"
	HeaderContentLength      = "Content-Length"
	HeaderIdempotentReplayed = "Idempotent-Replayed"
	HeaderRetryAfter         = "Retry-After"
)

var (
	requestHeaders  = []string{HeaderContentType, HeaderIdempotencyKey, HeaderUserAgent, HeaderContentLength}
	responseHeaders = []string{HeaderIdempotentReplayed, HeaderRetryAfter}
	recordedHeaders = slices.Concat(requestHeaders, responseHeaders)
)

// Entry is one recorded request. MarshalJSON writes the first four fields.
type Entry struct {
	Seq      uint64        `json:"-"` // handed out at completion; never reused, also across Reset
	Time     time.Time     `json:"-"` // real time of arrival
	SimTime  time.Time     `json:"-"` // zero without Config.SimNow
	Duration time.Duration `json:"-"`

	Interface string `json:"interface"`           // Config.Route's decision
	RoutedBy  string `json:"routed_by,omitempty"` // and why; "" without Config.Route
	Method    string `json:"method"`
	Path      string `json:"path"`
	RawQuery  string `json:"query,omitempty"`
	APIKey    string `json:"api_key"` // the bearer token; "" when none

	Headers map[string]string `json:"headers"` // the headers of interest that were present

	RequestBody          string `json:"request_body,omitempty"` // the first MaxBody bytes
	RequestBodySize      int64  `json:"request_body_size"`      // read by the handler, then by the journal up to MaxBody
	RequestBodyTruncated bool   `json:"request_body_truncated,omitempty"`

	Status                int    `json:"status"`                  // 0 when the handler aborted
	ResponseBody          string `json:"response_body,omitempty"` // the first MaxBody bytes, kept when Status >= 400
	ResponseBodyTruncated bool   `json:"response_body_truncated,omitempty"`
	ResponseBytes         int64  `json:"response_bytes"`

	Aborted   bool `json:"aborted"`   // the handler panicked: the client saw a dropped connection
	Truncated bool `json:"truncated"` // fewer bytes were sent than the response's Content-Length

	Fault string            `json:"fault,omitempty"` // SetFault
	Notes map[string]string `json:"notes,omitempty"` // SetNote
}

// End returns the real time the request completed.
func (e Entry) End() time.Time { return e.Time.Add(e.Duration) }

const timeFormat = "2006-01-02T15:04:05.000Z"

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeFormat)
}

// MarshalJSON writes the entry with timestamps in UTC with milliseconds
// and the duration in milliseconds.
func (e Entry) MarshalJSON() ([]byte, error) {
	type fields Entry // without this method
	if e.Headers == nil {
		e.Headers = map[string]string{}
	}
	return json.Marshal(struct {
		Seq        uint64  `json:"seq"`
		Time       string  `json:"time"`
		SimTime    string  `json:"sim_time,omitempty"`
		DurationMS float64 `json:"duration_ms"`
		fields
	}{e.Seq, formatTime(e.Time), formatTime(e.SimTime), float64(e.Duration.Microseconds()) / 1000, fields(e)})
}

// add stores e with the next sequence id, within MaxBytes and then within
// the Memory, and returns the id.
func (j *Journal) add(e Entry) uint64 {
	seq := j.store(&e)
	if j.cfg.Memory.used.Load() > j.cfg.Memory.limit {
		j.cfg.Memory.reclaim()
	}
	return seq
}

func (j *Journal) store(e *Entry) uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.seq++
	e.Seq = j.seq
	j.total++
	if j.closed {
		// Memory has forgotten the journal: what it kept now would
		// count against the bound and never be reclaimed.
		return e.Seq
	}
	if j.head > 0 && j.head >= len(j.kept)/2 {
		// Compact, so the slice does not grow while entries come and go.
		n := copy(j.kept, j.kept[j.head:])
		clear(j.kept[n:])
		j.kept, j.head = j.kept[:n], 0
	}
	j.kept = append(j.kept, e)
	// The entries stay in the order the requests arrived: an answer sent
	// before its request's body was read (an early refusal) reaches the
	// client before the journal has read that body, so the client's next
	// request can be stored first. Its sequence id stays the later one, so
	// that ?since= still finds every entry stored after an earlier read.
	for i := len(j.kept) - 1; i > j.head && j.kept[i-1].Time.After(j.kept[i].Time); i-- {
		j.kept[i-1], j.kept[i] = j.kept[i], j.kept[i-1]
	}
	j.grow(e.size())
	for len(j.kept)-j.head > 1 && j.bytes.Load() > j.cfg.MaxBytes {
		j.dropLocked()
	}
	return e.Seq
}

func (j *Journal) grow(n int64) {
	j.bytes.Add(n)
	j.cfg.Memory.used.Add(n)
}

// dropLocked drops the oldest entry; j.mu is held and one is kept.
func (j *Journal) dropLocked() {
	e := j.kept[j.head]
	j.kept[j.head] = nil
	j.head++
	j.dropped++
	j.grow(-e.size())
	if j.head == len(j.kept) {
		j.kept, j.head = j.kept[:0], 0
	}
}

// dropOldest drops the oldest entries until n bytes are freed or none is
// left; false when there was none.
func (j *Journal) dropOldest(n int64) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.head == len(j.kept) {
		return false
	}
	for start := j.bytes.Load(); j.head < len(j.kept) && start-j.bytes.Load() < n; {
		j.dropLocked()
	}
	return true
}

// Stats describes the journal's fill; Total and Dropped count since the
// last Reset.
type Stats struct {
	MaxBytes int64  `json:"max_bytes"`
	Bytes    int64  `json:"bytes"`
	MaxBody  int    `json:"max_body"`
	Stored   int    `json:"stored"`
	Total    uint64 `json:"total"`
	Dropped  uint64 `json:"dropped"`
	LastSeq  uint64 `json:"last_seq"`
}

// Stats returns the journal's fill.
func (j *Journal) Stats() Stats {
	j.mu.RLock()
	defer j.mu.RUnlock()
	return j.statsLocked()
}

func (j *Journal) statsLocked() Stats {
	return Stats{MaxBytes: j.cfg.MaxBytes, Bytes: j.bytes.Load(), MaxBody: j.cfg.MaxBody, Stored: len(j.kept) - j.head,
		Total: j.total, Dropped: j.dropped, LastSeq: j.seq}
}

// clear forgets every entry and their memory, and keeps no more.
func (j *Journal) clear() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.closed = true
	j.kept, j.head = nil, 0
	j.grow(-j.bytes.Load())
}

// Reset forgets every entry; sequence ids carry on.
func (j *Journal) Reset() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.kept, j.head = nil, 0
	j.grow(-j.bytes.Load())
	j.total, j.dropped = 0, 0
}

// Filter selects entries. Zero fields select everything.
type Filter struct {
	Method string // case-insensitive
	Path   string // exact, or a glob where * matches any run of characters
	Status Status
	APIKey string
	Since  uint64 // only entries with a greater sequence id
	Limit  int    // at most this many (the newest); 0: no limit
}

func (f Filter) match(e *Entry) bool {
	return e.Seq > f.Since && (f.Method == "" || strings.EqualFold(f.Method, e.Method)) &&
		(f.Path == "" || sim.GlobMatch(f.Path, e.Path)) &&
		f.Status.Match(e.Status) && (f.APIKey == "" || f.APIKey == e.APIKey)
}

// Entries returns copies of the entries f selects, newest first.
func (j *Journal) Entries(f Filter) []Entry {
	out, _ := j.entries(f)
	return out
}

// entries returns the selection and the stats of the same moment.
func (j *Journal) entries(f Filter) ([]Entry, Stats) {
	j.mu.RLock()
	defer j.mu.RUnlock()
	out := []Entry{}
	for _, e := range slices.Backward(j.kept[j.head:]) {
		if !f.match(e) {
			continue
		}
		c := *e
		c.Headers, c.Notes = maps.Clone(e.Headers), maps.Clone(e.Notes)
		out = append(out, c)
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
	}
	return out, j.statsLocked()
}

// isOwnEndpoint reports whether a request is to the journal's own routes
// or a read of the control API, which are not recorded: reading must not
// change the journal, a reset journal must be empty, and a dashboard
// polling the state must not push the client's requests out.
func isOwnEndpoint(method, path, iface string) bool {
	if (method == http.MethodGet || method == http.MethodHead) && iface == InterfaceControl {
		return true
	}
	switch path {
	case controlPrefix + pathRequests:
		return method == http.MethodGet || method == http.MethodDelete
	case controlPrefix + pathVerify:
		return method == http.MethodPost
	case controlPrefix + pathReport:
		return method == http.MethodGet
	}
	return false
}

// clip returns a copy of at most n bytes of s, cut at a rune boundary: an
// entry outlives its request, and a substring would keep the whole header
// or request line alive (test/hostile).
func clip(s string, n int) string {
	if len(s) <= n {
		return strings.Clone(s)
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return strings.Clone(s[:n])
}
