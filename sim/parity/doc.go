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
// scenario() lists the steps: the platform interface (a project created,
// waited on, re-translated and deleted), then the studio interface (a
// presigned upload of ToneWAV, an artifact, a project and a video), each
// with its error cases, whose 4xx statuses are recorded, not assumed.
// Everything the kit creates is named Name; the studio has no delete, so on
// the real service the studio project, artifact and video stay.
//
// # Time
//
// With Control auto, the kit asks GET /_sim/health and GET /_sim/clock at
// the platform URL; when both answer 200 the target is dubsim with its
// control API, and the kit advances its clock by the poll interval (POST
// /_sim/clock/advance) between reads instead of waiting. Otherwise it waits
// Config.Poll between reads on Config.Clock (RealClock in the CLI, a fake in
// tests), up to Config.Timeout per wait.
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
// Every answer is recorded as a Shape (status, media type, body kind, and a
// class per JSON pointer, array elements as "/*" and language-code keys as
// LangKey; strings are classified as uuid, objectid, date-time, uri or
// string, so ids and timestamps compare by kind). Every answer is checked
// against the document of its interface (openapi.Document "platform",
// "studio", "control") with validate.Check; an operation the document lacks
// is reported as undocumented. A presigned upload URL is checked against the
// studio document only when its path starts with /_uploads/ (dubsim); the
// real service's upload URLs point to object storage and are recorded only.
// Compare diffs a run against an earlier recording: steps, statuses, media
// types, and fields missing, extra or of another class.
package parity
