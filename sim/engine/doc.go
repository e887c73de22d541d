// Package engine holds the use cases over a sim.Store, one small service per
// resource (accounts, projects, uploads, artifacts, studio projects, videos, clock).
//
// The services share one transaction runner (core.go: store, clock,
// events), the id generators and the fixture set in use, and apply the pure
// rules of sim/statemachine. Each owns its state: its read cache, and for
// Artifacts the downloads, the registry of background work and the storage
// quotas, which Uploads and Projects use too. Files are named after the
// resource they serve.
package engine
