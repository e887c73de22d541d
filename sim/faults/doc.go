// Package faults injects HTTP faults (latency, error answers, rate
// limiting, dropped connections, truncated bodies) by rules that the
// control API manages under /_sim/faults (docs/control-api.md; the schema
// is the FaultRule of the control API's OpenAPI document).
//
// The first live rule, in the order added, whose method, path and api_key
// match is drawn for by its probability; a failed draw goes on to the next,
// so at most one rule fires per request. Firing takes one unit of count
// under a lock, so two requests never both take the last one. The draws
// come from one PCG source seeded by Config.Seed: a seed and a sequence of
// requests give the same faults.
//
// Drop and truncate abort the connection with panic(http.ErrAbortHandler):
// a recover middleware around Faults.Middleware must re-panic it
// (httpx.API.Recover does).
package faults
