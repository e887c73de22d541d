// Package httpx holds the HTTP helpers the interfaces share: the handler
// adapter with its one error path (each API supplies its own Renderer, as
// their envelopes differ), the control API's envelope, JSON writing and
// decoding with limits, body budgets and bearer keys.
package httpx
