package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/dubsim/dubsim/sim"
)

// HandlerFunc is an API handler: it writes success itself (through
// WriteJSON) and returns an error for everything else.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Renderer maps an error to the status and body of an API's envelope.
type Renderer func(err error) (status int, body any)

// API bundles an error renderer and a logger; its Handle adapts handlers.
type API struct {
	Render Renderer
	Log    *slog.Logger
}

// Handle adapts h: a returned error is written once, by WriteError.
func (a API) Handle(h HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			a.WriteError(w, r, err)
		}
	}
}

// HeaderErrorDetail carries sim.Error.Detail (the offending item and
// values) beside a documented body message.
const HeaderErrorDetail = "X-Dubsim-Error-Detail"

// WriteError writes err in the API's envelope, with its detail header.
// Errors that are not domain errors are logged and masked.
func (a API) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	if d := sim.ErrorDetail(err); d != "" {
		w.Header().Set(HeaderErrorDetail, d)
	}
	if sim.ErrorCode(err) == sim.CodeInternal {
		if a.Log != nil {
			a.Log.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		}
		if _, ok := errors.AsType[*sim.Error](err); !ok {
			err = sim.Errorf(sim.CodeInternal, sim.MsgInternal)
		}
	}
	status, body := a.Render(err)
	WriteJSON(w, status, body)
}

// Recover turns a panic into a logged internal error in the API's envelope,
// so a bug never drops the connection without an answer.
func (a API) Recover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// bbolt reads pages through a memory map: a fault on a damaged
		// or truncated page panics here instead of ending the process.
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				if a.Log != nil {
					a.Log.Error("panic", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
				}
				a.WriteError(w, r, sim.Errorf(sim.CodeInternal, sim.MsgInternal))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// ContentTypeJSON is the Content-Type of every JSON answer.
const ContentTypeJSON = "application/json; charset=utf-8"

// Marshal encodes a response body without HTML escaping (an "&" in a URL
// stays "&", as a JavaScript server writes it) and without a newline.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// WriteJSON writes v as JSON with status; headers are set before the body.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":"InternalServerError","message":"` + sim.MsgInternal + `"}`)
	}
	w.Header().Set("Content-Type", ContentTypeJSON)
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// WriteRawJSON writes an already encoded JSON body (without its newline).
func WriteRawJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	_, _ = w.Write(body)
	_, _ = w.Write([]byte{'\n'})
}

// WithAccount records the caller's account, as WithRoute does.
func WithAccount(ctx context.Context, a sim.Account) context.Context {
	sh, ctx := withShares(ctx)
	sh.account = &a
	return ctx
}

// WithCaller records a studio caller and its account, as WithRoute does.
func WithCaller(ctx context.Context, c sim.Caller) context.Context {
	sh, ctx := withShares(ctx)
	sh.caller = &c
	sh.account = &sh.caller.Account
	return ctx
}

// CallerFrom returns the caller WithCaller recorded (zero without one).
func CallerFrom(ctx context.Context) sim.Caller {
	if sh := sharesOf(ctx); sh != nil && sh.caller != nil {
		return *sh.caller
	}
	return sim.Caller{}
}

// AccountFrom returns the caller's account set by the auth middleware.
func AccountFrom(ctx context.Context) (sim.Account, bool) {
	if sh := sharesOf(ctx); sh != nil && sh.account != nil {
		return *sh.account, true
	}
	return sim.Account{}, false
}

// Bearer extracts the key of an Authorization header, or a hint saying why
// there is none (for the X-Dubsim-Auth-Error header).
func Bearer(h string) (key, hint string) {
	if h == "" {
		return "", "missing Authorization header; send Authorization: Bearer <API_KEY>"
	}
	if strings.EqualFold(strings.TrimSpace(h), "Bearer") {
		return "", "empty bearer token" // servers trim "Bearer " to "Bearer"
	}
	scheme, rest, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", "Authorization header must use the Bearer scheme"
	}
	if key = strings.TrimSpace(rest); key == "" {
		return "", "empty bearer token"
	}
	return key, ""
}

// KeyScope is the idempotency scope of a request: its account's API key.
func KeyScope(r *http.Request) string {
	acct, _ := AccountFrom(r.Context())
	return acct.APIKey
}

// BaseURL is the base of the absolute URLs an answer holds: public when set
// (--public-url), else the scheme (X-Forwarded-Proto, for a client behind a
// TLS proxy) and Host of the request; then the path prefix it was served
// under (WithBasePath), so that links lead back to the same mount.
func BaseURL(r *http.Request, public string) string {
	prefix := BasePath(r.Context())
	if public != "" {
		return public + prefix
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if fp := r.Header.Get("X-Forwarded-Proto"); fp == "http" || fp == "https" {
		scheme = fp
	}
	return scheme + "://" + r.Host + prefix
}

type basePathKey struct{}

// WithBasePath records that a request is served under a path prefix (such
// as "/studio") that was removed from its path, after any recorded before
// ("/sbx/{id}/studio"); BaseURL puts it back in links.
func WithBasePath(ctx context.Context, prefix string) context.Context {
	return context.WithValue(ctx, basePathKey{}, BasePath(ctx)+prefix)
}

// BasePath is the path prefix a request is served under (WithBasePath), or "".
func BasePath(ctx context.Context) string {
	prefix, _ := ctx.Value(basePathKey{}).(string)
	return prefix
}
