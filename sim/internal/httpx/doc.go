// Package httpx holds the HTTP helpers the interfaces share: the handler adapter with its one
// error path, the control API's envelope, JSON writing and decoding with limits, body budgets
// and bearer keys.
//
// Each API supplies its own Renderer, because the interfaces use different
// error envelopes.
package httpx
