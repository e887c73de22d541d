//go:build unix

package server

import (
	"errors"
	"os"
	"syscall"
)

// processAlive tells whether a process with id pid exists (signal 0: EPERM
// means it does, as another user's).
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}
