// Package parity is the parity kit: a scenario suite of the platform and
// studio interfaces that runs against any target (dubsim, or the real
// service with a user's key), checks every answer against dubsim's OpenAPI
// documents and records its shape, so that a recording of the real service
// diffed against a run on dubsim shows where the simulator drifts. It is
// what `dubsim parity` runs.
//
// It is an HTTP client of its target only: it imports dubsim's OpenAPI
// documents and their validator, nothing of the simulator itself.
//
// # The scenario
//
// scenario() lists the steps, each interface with its error cases, whose
// 4xx statuses are recorded, not assumed. Everything the kit creates is
// named Name; the studio has no delete, so on the real service the studio
// project, artifact and video stay.
//
// # The shared address
//
// dubsim serves both interfaces on one address and routes the two
// operations they share (POST /api/v1/projects, GET /api/v1/projects/{id})
// by body and id shape. The kit sends HeaderInterface on those two
// operations, and only when the platform and studio URLs are the same
// address: the real service has two hosts, so the header never reaches it
// (and an unknown header would be ignored there anyway, RFC 9110 section
// 5.1). The kit's studio create body is the bare {"name"} a studio client
// sends, which dubsim routes to the studio by default but to the platform
// with --shared-create platform; the header keeps the kit independent of
// that setting.
//
// # Shapes, checks and comparison
//
// Every answer is recorded as a Shape and checked with validate.Check
// against the document of its interface. A presigned upload URL is checked
// against the studio document only when its path starts with /_uploads/
// (dubsim); the real service's upload URLs point to object storage and are
// recorded only. Compare diffs a run against an earlier recording.
package parity
