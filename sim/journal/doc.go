// Package journal is middleware that records the requests clients send to
// the simulator, lets tests verify them (WireMock-style, with near misses)
// and turns one API key's requests into a conformance report: what the
// client did that the contract of the dubbing API forbids or advises
// against (each rule's reasoning is its Finding.Detail). Its routes belong
// to the control API (docs/control-api.md).
//
// Journal.Middleware wraps the whole server, outside any fault middleware,
// so that faults can annotate the request with SetFault and SetNote.
//
// Every part of an entry is bounded, and every string kept is a copy, never
// a substring of the request, which would keep the whole request line
// alive. A journal keeps at most Config.MaxBytes of entries; the journals
// of a process share a Memory, past which the oldest entries of the largest
// journals go first, so that a tenant that records much loses its own
// history before a quiet one loses any.
package journal
