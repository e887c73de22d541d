// Package journal records the requests clients send to the simulator, lets
// tests verify them (WireMock-style, with near misses) and turns one API
// key's requests into a conformance report: what the client did that the
// contract of the dubbing API forbids or advises against. It is middleware
// around every interface; its own routes belong to the control API (served
// under /_sim/). docs/control-api.md documents the routes, what an entry
// holds and the report's rules; each rule's reasoning is its Finding.Detail.
//
// Journal.Middleware wraps the whole server, outside any fault middleware,
// so that faults can annotate the request with SetFault and SetNote.
// Requests to the journal's own routes and reads of the control API are
// not recorded: reading or verifying does not change the journal.
//
// Every part of an entry is bounded (MaxBody bytes of each body, 4 KiB of
// path and query, 512 bytes of each header value) and every string kept is
// a copy, never a substring of the request, which would keep the whole
// request line alive. A journal keeps at most Config.MaxBytes of entries,
// the oldest going first; the journals of a process share a Memory, past
// which the oldest entries of the largest journals go first, so a tenant
// that records much loses its own history before a quiet one loses any.
// Memory therefore stays flat whatever clients send.
package journal
