// Package engine holds the use cases over a sim.Store, one small service per
// resource (accounts, projects, uploads, artifacts, studio projects, videos, clock).
//
// Engine groups the services; they share one core (store, clock, ids,
// fixtures, caches, background downloads) whose transaction helpers they
// compose, and apply the pure rules of sim/statemachine. Each HTTP adapter
// declares the methods it needs and sim/server hands it the services that
// provide them. Files are named after the resource: accounts.go,
// projects.go, retranslations.go, outcomes.go, uploads.go, artifacts.go,
// downloads.go (with work.go, the registry of background work),
// studioprojects.go, videos.go, clock.go (with sweep.go), fixtures.go,
// state.go, idempotency.go; core.go holds the shared state.
package engine
