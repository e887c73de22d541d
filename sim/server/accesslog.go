package server

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/engine"
	"github.com/dubsim/dubsim/sim/journal"
	"github.com/go-chi/chi/v5/middleware"
)

// The access log (fidelity EL1-EL3): one line a request, at DEBUG for
// control reads (the dashboard's polling), WARN for a 5xx or an aborted
// answer, INFO otherwise. What the journal recorded (status, reason, fault,
// key) comes from its entry, not worked out again. Never logged: the query
// (the dashboard's ?token=), more than the start of an API key.

// keyPrefix is how many characters of an API key the log shows at most
// (half of a shorter key).
const keyPrefix = 6

type accessLog struct {
	log      *slog.Logger
	accounts func(ctx context.Context, key string) (sim.Account, error)
}

// newAccessLog returns the access-log middleware, or nil when log drops
// every line, so that requests pay nothing for it.
func newAccessLog(log *slog.Logger, accounts func(ctx context.Context, key string) (sim.Account, error)) func(http.Handler) http.Handler {
	if !log.Enabled(context.Background(), slog.LevelWarn) {
		return nil
	}
	logger := middleware.RequestLogger(&accessLog{log: log, accounts: accounts})
	return func(next http.Handler) http.Handler { return logger(observeJournal(next)) }
}

func observeJournal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e, ok := middleware.GetLogEntry(r).(*accessEntry); ok {
			r = r.WithContext(journal.Observe(r.Context(), func(je journal.Entry) { e.recorded = &je }))
		}
		next.ServeHTTP(w, r)
	})
}

type accessEntry struct {
	a        *accessLog
	r        *http.Request
	recorded *journal.Entry // the journal's entry of the request, if it made one
	reason   string         // of a refusal the journal does not record (setRefusal)
}

const maxLoggedPath = 1 << 10

func (a *accessLog) NewLogEntry(r *http.Request) middleware.LogEntry {
	return &accessEntry{a: a, r: r}
}

// setRefusal gives r's line the reason of a refusal the journal does not record.
func setRefusal(r *http.Request, reason string) {
	if e, ok := middleware.GetLogEntry(r).(*accessEntry); ok {
		e.reason = reason
	}
}

func (e *accessEntry) Write(status, bytes int, _ http.Header, elapsed time.Duration, _ any) {
	rt := RouteOf(e.r)
	ctx := e.r.Context()
	attrs := make([]slog.Attr, 0, 14)
	path := e.r.URL.Path
	if len(path) > maxLoggedPath {
		path = strings.ToValidUTF8(path[:maxLoggedPath], "") + "…"
	}
	attrs = append(attrs, slog.String("method", e.r.Method), slog.String("path", path))
	reason, aborted := e.reason, false
	if j := e.recorded; j != nil {
		status, aborted = j.Status, j.Aborted
		if r := j.Reason(); r != "" {
			reason = r
		}
	}
	attrs = append(attrs, slog.Int("status", status), slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
		slog.Int("bytes", bytes), slog.String("interface", rt.Interface), slog.String("routed_by", rt.By))
	if j := e.recorded; j != nil {
		attrs = append(attrs, slog.Uint64("journal_seq", j.Seq))
		if j.APIKey != "" {
			attrs = append(attrs, e.account(ctx, j.APIKey)...)
		}
		if j.Fault != "" {
			attrs = append(attrs, slog.String("fault", j.Fault))
		}
	}
	if reason != "" {
		attrs = append(attrs, slog.String("reason", reason))
	}
	if aborted {
		attrs = append(attrs, slog.Bool("aborted", true))
	}
	level := slog.LevelInfo
	switch {
	case status >= http.StatusInternalServerError || aborted:
		level = slog.LevelWarn
	case rt.Interface == Control && (e.r.Method == http.MethodGet || e.r.Method == http.MethodHead):
		level = slog.LevelDebug
	}
	e.a.log.LogAttrs(ctx, level, "request", attrs...)
}

// account names an API key's account and plan, and the key's start.
func (e *accessEntry) account(ctx context.Context, key string) []slog.Attr {
	prefix := key[:min(keyPrefix, len(key)/2)] + "…"
	out := []slog.Attr{slog.String("key", prefix)}
	if e.a.accounts == nil {
		return out
	}
	a, err := e.a.accounts(context.WithoutCancel(ctx), key)
	if err != nil {
		return append(out, slog.String("account", "unknown"))
	}
	return append(out, slog.String("account", a.Name), slog.String("plan", string(a.Plan)))
}

// Panic does nothing: the journal records the aborted answer, net/http the stack.
func (e *accessEntry) Panic(any, []byte) {}

// EventLog writes the engine's lifecycle events (fidelity EL4): an end of
// processing at INFO, a start at DEBUG.
func EventLog(log *slog.Logger) func(engine.Event) {
	if !log.Enabled(context.Background(), slog.LevelInfo) {
		return nil
	}
	return func(ev engine.Event) {
		level := slog.LevelInfo
		switch ev.To {
		case string(sim.StatusInProgress), sim.ArtifactStarted: // and sim.VideoInProgress, the same word
			level = slog.LevelDebug
		}
		attrs := []slog.Attr{slog.String("id", ev.ID), slog.String("from", ev.From), slog.String("to", ev.To),
			slog.Time("sim_time", ev.At)}
		if ev.Company != "" {
			attrs = append(attrs, slog.String("company", ev.Company))
		}
		if ev.Reason != "" {
			attrs = append(attrs, slog.String("reason", ev.Reason))
		}
		log.LogAttrs(context.Background(), level, ev.Resource+" "+ev.To, attrs...)
	}
}
