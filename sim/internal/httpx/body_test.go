package httpx

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
)

// A full disk while spooling a body was answered 400 "Malformed JSON body:
// the body could not be read", blaming the client (issue 19); it is now a
// 500 saying the simulator's disk is full, with no path (fidelity HW4).
func TestSpoolErrorBlamesTheRightSide(t *testing.T) {
	disk := fmt.Errorf("copy: %w", &os.PathError{Op: "write", Path: "/tmp/dubsim-spool-123", Err: syscall.ENOSPC})
	err := spoolError(disk)
	assert.Equal(t, sim.CodeInternal, sim.ErrorCode(err))
	assert.Equal(t, MsgNoSpace, sim.ErrorMessage(err))
	assert.Contains(t, err.Error(), "/tmp/dubsim-spool-123", "the log keeps the cause")

	other := spoolError(&os.PathError{Op: "open", Path: "/tmp/x", Err: syscall.EACCES})
	assert.Equal(t, sim.CodeInternal, sim.ErrorCode(other))
	assert.Empty(t, sim.ErrorMessage(other), "masked by WriteError")

	client := spoolError(&BodyError{Err: io.ErrUnexpectedEOF, Read: 12, Length: 100})
	assert.Equal(t, sim.CodeValidation, sim.ErrorCode(client))
	assert.Equal(t, "The request body ended early: 12 of the 100 bytes declared by Content-Length arrived before the client closed the connection", sim.ErrorMessage(client))
	assert.NotContains(t, sim.ErrorMessage(client), "EOF")
}
