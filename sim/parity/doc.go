// Package parity is the parity kit: a scenario suite of the platform and
// studio interfaces that runs against any target (dubsim, or the real
// service with a user's key), checks every answer against dubsim's OpenAPI
// documents and records its shape, so that a recording of the real service
// diffed against a run on dubsim (Compare) shows where the simulator drifts.
// It is what `dubsim parity` runs. It is an HTTP client of its target only:
// it imports dubsim's OpenAPI documents and their validator, nothing of the
// simulator itself.
//
// scenario() lists the steps, each interface with its error cases, whose
// 4xx statuses are recorded, not assumed. Everything the kit creates is
// named Name; the studio has no delete, so on the real service the studio
// project, artifact and video stay.
//
// On dubsim's shared address the two operations both interfaces have are
// routed by body and id shape; the kit sends HeaderInterface on them there,
// which keeps it independent of --shared-create (its studio create body is
// the bare {"name"} a studio client sends). The real service has two hosts,
// so the header never reaches it (an unknown header would be ignored there
// anyway, RFC 9110 section 5.1).
package parity
