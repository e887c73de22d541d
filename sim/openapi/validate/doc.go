// Package validate checks real HTTP responses against an OpenAPI 3.1 document: operation, status,
// media type, JSON Schema 2020-12 with formats, required headers; used by tests and the parity kit.
//
// The response is found by status (exact, then a "4XX"-style range, then
// "default"); XML bodies must be well formed with the documented root
// element.
package validate
