// Package faults injects HTTP faults into the simulated API: added latency,
// error answers, rate limiting, dropped connections and truncated bodies,
// driven by rules that the control API manages under /_sim/faults. The
// rule's JSON schema is the FaultRule of the control API's OpenAPI document
// (sim/openapi/control.json); docs/control-api.md shows one call per action.
//
// Rules are evaluated in the order they were added: the first live rule
// whose method, path and api_key match is considered; when its probability
// draw fails, evaluation goes on with the next, so at most one rule fires
// per request. Firing takes one unit of count under a lock, so two
// concurrent requests never both take the last one. An ended rule (spent or
// expired) never fires again but stays listed with its hits until deleted
// or cleared, so a test can see that its fault fired (at most MaxEnded of
// them). Probability and latency draws come from one PCG source seeded by
// Config.Seed: a seed and a sequence of requests give the same faults.
//
// Drop and truncate abort the connection with panic(http.ErrAbortHandler):
// a recover middleware around Faults.Middleware must re-panic it
// (httpx.API.Recover does).
package faults
