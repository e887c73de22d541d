// Package engine holds the use cases over a sim.Store, one small service per
// resource. The services share one transaction runner (core.go), the id
// generators and the fixture set in use, and apply the pure rules of
// sim/statemachine. Each owns its state: its read cache, and for Artifacts
// the downloads, the registry of background work and the storage quotas.
package engine
