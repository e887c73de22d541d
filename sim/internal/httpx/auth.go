package httpx

import (
	"context"
	"net/http"

	"github.com/dubsim/dubsim/sim"
)

// HeaderAuthHint carries a precise reason for a refused key; the body keeps
// the documented message.
const HeaderAuthHint = "X-Dubsim-Auth-Error"

// Authenticate returns the middleware that resolves the bearer key with
// resolve, which gives the context the request goes on with; a request
// without a key is refused with the message missing.
func (a API) Authenticate(missing string, resolve func(ctx context.Context, key string) (context.Context, error)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key, hint := Bearer(r.Header.Get("Authorization"))
			if key == "" {
				w.Header().Set(HeaderAuthHint, hint)
				a.WriteError(w, r, &sim.Error{Code: sim.CodeUnauthorized, Message: missing})
				return
			}
			ctx, err := resolve(r.Context(), key)
			if err != nil {
				if sim.ErrorCode(err) == sim.CodeUnauthorized {
					w.Header().Set(HeaderAuthHint, "unknown API key")
				}
				a.WriteError(w, r, err)
				return
			}
			if ctx != r.Context() {
				r = r.WithContext(ctx)
			}
			next.ServeHTTP(w, r)
		})
	}
}
