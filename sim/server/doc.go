// Package server assembles a dubsim instance: the engine over a store and a clock, each HTTP adapter
// given the services it declares, the one routing decision, the journal, faults and health.
//
// cmd/dubsim uses it with flags and a real listener; tests (and the Go client
// for tests) use it in-process.
package server
