// Package engine holds the use cases over a sim.Store, one small service per
// resource (accounts, projects, uploads, artifacts, studio projects, videos, clock).
//
// Engine groups the services; they share one transaction runner (core:
// store, clock, events) whose helpers they compose, the id generators
// (ids.go) and the fixture set in use, and apply the pure rules of
// sim/statemachine. Each service owns its state: its read cache, and for
// Artifacts the downloads, the registry of background work and the storage
// quotas, which Uploads and Projects use too. Each HTTP adapter declares
// the methods it needs and sim/server hands it the services that provide
// them. Files are named after the resource: accounts.go (with keys.go, the
// form of API keys), projects.go, retranslations.go, outcomes.go,
// uploads.go, artifacts.go, downloads.go (with work.go, the registry of
// background work, and quotas.go, the storage quotas), studioprojects.go,
// videos.go, clock.go (with sweep.go and damage.go), fixtures.go, state.go,
// idempotency.go; core.go holds the transaction runner.
package engine
