// Package journal records the requests clients send to the simulator, lets
// tests verify them (WireMock-style, with near misses) and turns one API
// key's requests into a conformance report: what the client did that the
// contract of the dubbing API forbids or advises against. It is middleware
// around every interface; its own routes belong to the control API (served
// under /_sim/), not to the provider's interface.
//
// # Wiring
//
// Journal.Middleware wraps the whole server (every interface), outside any
// fault middleware, so that faults can annotate the request with SetFault
// and SetNote. Journal.Routes is mounted at /_sim (or Journal.Register adds
// the routes to the control API's router):
//
//	GET    /_sim/requests?method=&path=&status=&key=&since=&limit=
//	DELETE /_sim/requests
//	POST   /_sim/requests/verify
//	GET    /_sim/report?api_key=...[&format=json|text]
//
// Requests to these routes are not recorded: reading or verifying does not
// change the journal, and a reset journal is empty.
//
// # What is recorded
//
// For every other request, when it completes: a sequence id (handed out at
// completion, never reused, also across Reset), the real and simulated time
// of arrival, the duration, the method, path and raw query, the API key (the
// token of "Authorization: Bearer <key>", "" when there is none; the header
// itself is not kept), the interface and the reason it was chosen
// (Config.Route: the server's routing decision, e.g. studio by "prefix";
// without it the interface follows the path: platform for /api/..., files
// for /files/..., control for /_sim/..., other), the headers Content-Type,
// Idempotency-Key, User-Agent and Content-Length of the request and
// Idempotent-Replayed and Retry-After of the response (as sent with the
// status), the request body, the status, the response body when the status
// is 400 or more (successful bodies are never kept: outputs are large
// binary files), the number of response bytes, the fault rule id and notes,
// and whether the handler aborted (a panic, http.ErrAbortHandler or another:
// status 0, aborted true, the panic goes on) or sent fewer bytes than its
// Content-Length (truncated).
//
// The handler receives the whole request body: the journal copies the first
// MaxBody bytes as the handler reads them. A body the handler left unread
// (a request refused before its body was read) is read after the handler,
// up to MaxBody, so that the report can compare bodies; not when the client
// sent "Expect: 100-continue", as it may be waiting to send the body.
//
// # Bounds
//
// The journal keeps at most Config.MaxBytes (default 4 MiB) of entries,
// counted as the bytes of the strings an entry holds plus a fixed part for
// the entry and its maps; the oldest entries go first and are counted as
// dropped (the newest is kept even when it alone is larger). The journals
// of a process share a Memory (default 32 MiB): when an entry takes them
// past it together, the oldest entries of the largest journals go first,
// so a tenant that records much loses its own history before a quiet one
// loses any. Each entry is bounded: at most MaxBody bytes (default 8 KiB)
// of request body and of response body, path and query 4 KiB each, header
// values and the API key 512 bytes, an unknown method 32 bytes, 16 notes
// of 64-byte keys and 256-byte values. Every string kept is a copy, never
// a substring of the request (net/http's method, path and query are
// substrings of the request line, which would stay alive whole). Memory
// therefore stays flat once the bounds are reached, whatever clients send.
//
// # Entries and verification
//
// Entries returns the selected entries newest first (Limit keeps the newest
// ones; Since selects sequence ids greater than it, for tailing). Paths are
// exact or globs where * matches any run of characters, statuses exact
// ("404", "0" for aborted requests) or classes ("4xx"). Verify counts the
// entries a Matcher selects (method, path glob, api_key, status,
// body_contains on the kept request body, exact values of recorded headers
// where "" means absent) against count, at_least and/or at_most (default: at
// least one); when the expectation fails it lists up to three near misses,
// newest first: requests with the matcher's method and path, with every
// reason they do not match.
//
// # Conformance report
//
// Report analyses the entries of one API key, oldest first. Each finding has
// a stable rule id, a severity, a title, a detail (the rule and why it
// matters), what was observed, a count and up to three examples. Findings
// are listed errors first. The rules:
//
//   - json-without-content-type (error): a POST or PATCH under /api/ with a
//     body whose Content-Type is not application/json or a +json type.
//     POST /api/v1/cloning/synthesize is excluded: it is multipart.
//   - cloning-not-multipart (error): a POST /api/v1/cloning/synthesize whose
//     Content-Type is not multipart/form-data (a JSON body, form-urlencoded
//     or none).
//   - ignored-retry-after (error): a request of the same key sent before the
//     Retry-After (seconds, counted from the end of the 429 answer, or an
//     HTTP date) of a 429 answer had elapsed. Real time.
//   - voice-not-from-catalogue (error): a re-translation or validation
//     request whose target_speakers use a voice_key other than soundalike
//     and emotional_transfer before any successful GET /api/v1/voices by the
//     key, or one answered 400 with a message starting "Unknown voice". Voice
//     keys are read from the kept body as far as it goes.
//   - action-while-in-progress (error): DELETE /api/v1/projects/{id} or a
//     re-translation answered 400 "Cannot delete project while processing is
//     in progress" or "... cannot be re-translated while its status is X
//     ..." (any status that is not ready). Validation requests are not
//     counted: a dry run changes nothing.
//   - unverified-failure (error): a POST, PATCH, PUT or DELETE under /api/
//     answered 5xx, aborted or truncated, never followed by a GET (that got
//     an answer) of the affected resource: after POST /api/v1/projects any
//     GET /api/v1/projects/... or GET /api/v1/balance; after a request on
//     /api/v1/projects/{id}[/...] a GET /api/v1/projects/{id}; otherwise a
//     GET of the same path. A retry with the same Idempotency-Key also
//     counts as a check (it replays the outcome). Voice cloning and
//     validation requests are not counted: they leave no server state.
//   - post-without-idempotency-key (warning): a POST under /api/ without
//     Idempotency-Key. Validation requests (dry runs) are not counted.
//   - retry-without-change (warning): a request identical to an earlier one
//     of the key (method, path, query, Content-Type, kept body and body
//     size; not the Idempotency-Key) that got a 4xx, answered with the same
//     status and error message again. Not counted: retries after 408, 409,
//     425 and 429, which invite a retry, and retries whose answer differs,
//     since then something changed meanwhile (the project finished, the
//     account behind a 401 was created). So a blind retry after 401 with the
//     same key counts; a retry that succeeds does not.
//   - polling-too-fast (warning): a GET of the same /api/v1/projects/{id}
//     (or /api/v1/artifacts/{id}) sooner than Config.MinPollInterval
//     (default 2 s) of real time after the previous one. Two reads with a
//     successful POST /_sim/clock/advance between them are not counted: the
//     test moved simulated time on purpose. The observation gives the
//     shortest interval.
//   - request-after-delete (warning): any request on
//     /api/v1/projects/{id}[/...] after a 2xx DELETE of that id.
//
// The text form (format=text, or an Accept header that prefers text/plain)
// has a header with the key and the summary, then one block per finding,
// or "No findings.". When the journal has dropped requests the report says
// so: it covers only the requests still held.
package journal
