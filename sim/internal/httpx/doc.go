// Package httpx holds the HTTP helpers both interfaces share: the handler adapter with its one
// error path, JSON writing and decoding with limits, bearer keys and Idempotency-Key.
//
// Each API supplies its own Renderer, because the interfaces use different
// error envelopes.
package httpx
