package httpx

import (
	"net/http"
)

// ContentErrorWriter answers the plain-text errors of http.ServeContent
// (416, 412) in an API's envelope, which Body renders.
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

// Write drops ServeContent's plain-text error body.
func (c *ContentErrorWriter) Write(b []byte) (int, error) {
	if c.failed {
		return len(b), nil
	}
	return c.ResponseWriter.Write(b)
}
