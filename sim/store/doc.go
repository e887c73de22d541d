// Package store persists dubsim's state in a bbolt file through View and Update closures:
// versioned values (a compact binary form for accounts and projects) and a schema version in _meta.
//
// A multi-step operation is one Update transaction, never check-then-act
// across transactions.
package store
