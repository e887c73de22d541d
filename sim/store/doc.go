// Package store persists dubsim's state through View and Update closures over a small key-value
// backend with two implementations: a bbolt file (Open) and memory (OpenMemory). Values are
// versioned (a compact binary form for accounts and projects, JSON for the rest), and the _meta
// bucket holds the schema version, the id key and the store's random secret (Store.Secret).
//
// A multi-step operation is one Update transaction, never check-then-act
// across transactions.
package store
