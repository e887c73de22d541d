// Package control serves the simulator's control API under /_sim/ (clock, accounts, reset, state,
// fixtures, forced outcomes, background work); other packages add routes as Extensions.
package control
