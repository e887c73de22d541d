// Package faults injects HTTP faults into the simulated API: added latency,
// error answers, rate limiting, dropped connections and truncated bodies,
// driven by rules that the control API manages under /_sim/faults.
//
// # Rules
//
// A rule is a JSON object (unknown fields, also inside action, are refused):
//
//	{
//	  "id":          "slow-create",  // optional; generated as "flt_<n>" (never reused); 1-64 of [A-Za-z0-9_-]; unique
//	  "method":      "POST",         // optional; exact, upper case; omitted = any method
//	  "path":        "/api/v1/*",    // optional; glob over the URL path, * = any run of characters (also /); omitted = any
//	  "api_key":     "dubsim-pro",   // optional; the key of "Authorization: Bearer <key>"; omitted = any request
//	  "count":       3,              // optional; fire at most N times (1..1e9); 0 or omitted = unlimited
//	  "probability": 0.5,            // optional; in (0, 1]; omitted = 1
//	  "ttl_seconds": 60,             // optional; the rule expires after this much real time; 0 or omitted = never
//	  "action":      {"type": "latency", "latency_ms": 1500}
//	}
//
// The action is exactly one of the following; only the fields of its type
// (and, for latency, of its distribution) are allowed, and a zero value
// counts as absent.
//
//	{"type": "latency", "latency_ms": N}                                    1..600000
//	{"type": "latency", "distribution": "uniform", "min_ms": a, "max_ms": b} 0 <= a < b <= 600000, whole ms
//	{"type": "latency", "distribution": "normal", "mean_ms": m, "stddev_ms": s}  m 0..600000, s 1..600000
//	{"type": "latency", "distribution": "lognormal", "median_ms": m, "sigma": s} m 1..600000, s in (0, 10]
//	{"type": "error", "status": 400..599, "error": "Name", "message": "text"}
//	{"type": "rate_limit", "retry_after_seconds": N, "error": "Name", "message": "text"}  N 0..86400
//	{"type": "drop"}
//	{"type": "truncate", "bytes": N}                                         0..2^40
//
// Latency waits, then the request proceeds normally. Every draw is clamped
// to [0, 600000] ms. The wait follows the request context: when the client
// gives up, the request ends there and the API is not called.
//
// Error answers the status with the body of the interface the request
// belongs to (Config.Envelope), without calling the API. "error" defaults
// to the platform's name for the status (DefaultErrorName: 400
// ValidationError, 404 NotFoundError, 503 ServiceUnavailableError, ...);
// "message" defaults to the status text followed by "(injected by dubsim
// fault rule <id>)".
//
// Rate_limit answers 429 with "Retry-After: N" and an envelope whose error
// defaults to "RateLimitError".
//
// Drop closes the connection without any answer, by
// panic(http.ErrAbortHandler): any recover middleware around
// Faults.Middleware must re-panic http.ErrAbortHandler (httpx.API.Recover
// does).
//
// Truncate lets the API answer, sends Content-Length of the whole body but
// only its first N bytes, then aborts the connection the same way: the
// client reads N bytes and then an unexpected EOF. A body the handler did
// not announce with Content-Length is buffered (up to 64 MiB) to learn its
// length; a longer one is sent chunked and cut after N bytes. A body of at
// most N bytes arrives whole before the connection closes.
//
// # Evaluation
//
// Rules are evaluated in the order they were added. The first live rule
// whose method, path and api_key match is considered; when its probability
// draw fails, evaluation continues with the next rules, so at most one rule
// fires per request. Firing consumes one unit of count under a lock (two
// concurrent requests never both take the last unit). A rule that fires its
// last time ends as "spent", one past its ttl as "expired": an ended rule
// never fires again but stays listed, with its hits, until it is deleted or
// cleared, so a test can see that its fault fired. At most MaxEnded ended
// rules are kept (the oldest ended goes first, also when the rules kept
// would pass MaxRuleBytes), and a new rule may take an ended rule's id.
// Probability and latency draws come from one PCG source seeded by
// Config.Seed, so a seed and a sequence of requests give the same faults.
// Requests under /_sim are never faulted, so the control API stays
// reachable.
//
// # Control API (under /_sim)
//
//	GET    /faults       {"rules": [rule + "remaining" (null = unlimited), "hits", "expires_at" (null = never),
//	                               "state" ("active", "spent" or "expired")]}
//	POST   /faults       201 with the rule as listed; 400 ValidationError naming the first problem
//	DELETE /faults/{id}  {"removed": "<id>"} (live or ended), or 404 NotFoundError
//	DELETE /faults       {"removed": N}, N the live rules among those deleted
//
// One curl example per action type:
//
//	J='Content-Type: application/json'
//	# every POST /api/v1/projects waits 2 s
//	curl -s localhost:8080/_sim/faults -H "$J" -d '{"method":"POST","path":"/api/v1/projects","action":{"type":"latency","latency_ms":2000}}'
//	# reads wait 100..900 ms, drawn uniformly
//	curl -s localhost:8080/_sim/faults -H "$J" -d '{"method":"GET","action":{"type":"latency","distribution":"uniform","min_ms":100,"max_ms":900}}'
//	# about one balance read in ten answers 503
//	curl -s localhost:8080/_sim/faults -H "$J" -d '{"path":"/api/v1/balance","probability":0.1,"action":{"type":"error","status":503,"error":"ServiceUnavailableError","message":"Try again later"}}'
//	# the next 3 requests of one key are rate limited
//	curl -s localhost:8080/_sim/faults -H "$J" -d '{"api_key":"dubsim-pro","count":3,"action":{"type":"rate_limit","retry_after_seconds":5}}'
//	# the next project read loses its connection
//	curl -s localhost:8080/_sim/faults -H "$J" -d '{"method":"GET","path":"/api/v1/projects/*","count":1,"action":{"type":"drop"}}'
//	# downloads stop after 1 KiB for the next minute
//	curl -s localhost:8080/_sim/faults -H "$J" -d '{"path":"/files/*","ttl_seconds":60,"action":{"type":"truncate","bytes":1024}}'
//	curl -s localhost:8080/_sim/faults                      # list
//	curl -s -X DELETE localhost:8080/_sim/faults/flt_1      # remove one
//	curl -s -X DELETE localhost:8080/_sim/faults            # remove all
package faults
