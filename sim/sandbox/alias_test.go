package sandbox_test

import (
	"context"
	"strings"
	"testing"
	"unsafe"

	"github.com/dubsim/dubsim/sim/sandbox"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCreateKeepsACopyOfTheID: the id a creation names is cut from the
// request's path; the sandbox keeps a copy, so the request line it came
// from is not kept alive with the sandbox.
func TestCreateKeepsACopyOfTheID(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	line := "PUT /_sim/sandboxes/" + "abcdefghjkmnpqrs" + strings.Repeat("x", 4<<10) + " HTTP/1.1"
	id := line[len("PUT /_sim/sandboxes/"):][:16]
	sb, err := e.m.Create(context.Background(), id, sandbox.Options{})
	require.NoError(t, err)
	start := uintptr(unsafe.Pointer(unsafe.StringData(line)))
	got := uintptr(unsafe.Pointer(unsafe.StringData(sb.ID)))
	assert.Equal(t, id, sb.ID)
	assert.False(t, got >= start && got < start+uintptr(len(line)), "the sandbox's id points into the request line")
}
