//go:build !unix

package server

// processAlive cannot tell here: every process counts as alive, so no
// directory named with a process id is removed.
func processAlive(int) bool { return true }
