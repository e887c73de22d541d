package server

import (
	"fmt"
	"net/http"
)

// MaxRequestURI is the longest request target (path and query, as sent)
// an address serves; a longer one is answered 414 URITooLongError in the
// envelope of its interface (fidelity TJ2). Common servers refuse about as
// much: nginx past its large_client_header_buffers (8 KiB), Apache past
// LimitRequestLine (8190 bytes), both with 414. The API's own targets are
// far shorter (the longest are an id and a few query parameters).
const MaxRequestURI = 8 << 10

// msgURITooLong takes the target's length and the limit.
const msgURITooLong = "The request target (path and query) is %d bytes long; dubsim accepts at most %d bytes"

// msgURIOver takes how much of the target came before the listener
// stopped reading and the limit.
const msgURIOver = "The request target (path and query) is over %d bytes long; dubsim accepts at most %d bytes"

// URITooLongEnvelope is the 414 body, in the envelope of iface, of a
// request whose line the listener stopped reading after read bytes of its
// target (sim/app: a line past the whole head's limit never reaches
// limitURI).
func URITooLongEnvelope(iface string, read int) (contentType string, body []byte) {
	return EnvelopeOf(iface, "URITooLongError", fmt.Sprintf(msgURIOver, read, MaxRequestURI))
}

func uriTooLong(r *http.Request) bool { return len(r.RequestURI) > MaxRequestURI }

// limitURI answers 414 to a request whose target is too long, before any
// handler reads its path or its body. It sits inside the journal, which
// records the refusal with the path and query clipped.
func limitURI(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !uriTooLong(r) {
			next.ServeHTTP(w, r)
			return
		}
		writeError(w, r, http.StatusRequestURITooLong, "URITooLongError", fmt.Sprintf(msgURITooLong, len(r.RequestURI), MaxRequestURI))
	})
}
