// Package blob keeps file bytes outside the database, one file per blob in a directory
// (presigned uploads, downloaded artifacts), streamed and renamed into place atomically.
//
// Writes stream through a fixed-size buffer, so memory use does not depend on
// the size of a blob, and a crash never leaves a partial blob behind a name.
package blob
