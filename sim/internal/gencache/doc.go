// Package gencache caches values read from the store, each served only while the engine's write
// generation is what it was before the value was read (never older than the last write).
//
// Values are shared between readers: they must not be modified.
package gencache
