package httpx

import (
	"net/http"
)

// ContentErrorWriter wraps the ResponseWriter given to http.ServeContent so
// that its plain-text errors (416 for an unsatisfiable Range, 412 for a
// failed precondition) are answered in an API's envelope: Body renders the
// status as a JSON body.
type ContentErrorWriter struct {
	http.ResponseWriter
	Body   func(status int) []byte
	failed bool
}

// WriteHeader passes success through and replaces an error.
func (c *ContentErrorWriter) WriteHeader(status int) {
	if status < 400 {
		c.ResponseWriter.WriteHeader(status)
		return
	}
	c.failed = true
	h := c.Header()
	h.Del("X-Content-Type-Options")
	h.Del("Content-Length")
	h.Set("Content-Type", "application/json; charset=utf-8")
	c.ResponseWriter.WriteHeader(status)
	_, _ = c.ResponseWriter.Write(c.Body(status))
}

// Write drops the plain-text error body ServeContent writes after an error.
func (c *ContentErrorWriter) Write(b []byte) (int, error) {
	if c.failed {
		return len(b), nil
	}
	return c.ResponseWriter.Write(b)
}
