// Package sim is the domain vocabulary: accounts, platform projects, artifacts, videos, errors with codes,
// the simulated clock and the deterministic IDs; it imports the standard library only.
//
// Every other package of the module points inward to it.
package sim
