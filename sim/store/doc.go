// Package store persists dubsim's state in a bbolt file through View and Update closures:
// versioned values (a compact binary form for accounts and projects), and in _meta a schema version
// and the file's random secret (Store.Secret).
//
// A multi-step operation is one Update transaction, never check-then-act
// across transactions.
package store
