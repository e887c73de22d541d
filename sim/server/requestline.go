package server

import (
	"fmt"
	"net/http"
)

// MaxRequestURI is the longest request target an address serves, about
// where nginx and Apache answer 414 too (fidelity TJ2).
const MaxRequestURI = 8 << 10

const msgURITooLong = "The request target (path and query) is %d bytes long; dubsim accepts at most %d bytes"

const msgURIOver = "The request target (path and query) is over %d bytes long; dubsim accepts at most %d bytes"

// URITooLongEnvelope is the 414 body of a request line the listener stopped
// reading after read bytes of its target (it never reaches limitURI).
func URITooLongEnvelope(iface string, read int) (contentType string, body []byte) {
	return EnvelopeOf(iface, "URITooLongError", fmt.Sprintf(msgURIOver, read, MaxRequestURI))
}

func uriTooLong(r *http.Request) bool { return len(r.RequestURI) > MaxRequestURI }

// limitURI answers 414 to a target that is too long, inside the journal,
// which records it clipped.
func limitURI(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !uriTooLong(r) {
			next.ServeHTTP(w, r)
			return
		}
		writeError(w, r, http.StatusRequestURITooLong, "URITooLongError", fmt.Sprintf(msgURITooLong, len(r.RequestURI), MaxRequestURI))
	})
}
