// Package control serves the simulator's control API under /_sim/ (clock, accounts, reset, state,
// fixtures, forced outcomes, background work); journal/, faults/ and ui/ beneath it import it.
package control
