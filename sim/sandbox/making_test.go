package sandbox_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/dubsim/dubsim/fixtures"
	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/app"
	"github.com/dubsim/dubsim/sim/sandbox"
	"github.com/dubsim/dubsim/sim/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A creation waits while every creation's place is taken, and gives up
// with its request (its context), leaving no sandbox and no reserved id.
// Once made, it keeps its place for as long again as it took.
func TestCreationsTakeTurns(t *testing.T) {
	fx, err := fixtures.Load(fixtures.FS)
	require.NoError(t, err)
	sh, err := app.NewShared(app.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, sh.Close()) })
	m, err := app.NewSandboxes(app.Config{Fixtures: fx, FixtureFS: fixtures.FS, Timing: sim.DefaultTiming, Shared: sh},
		sandbox.Config{Dir: filepath.Join(t.TempDir(), "sandboxes"), StoreOptions: []store.Option{store.NoSync()}})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, m.Close(context.Background())) })
	places := sandbox.FreeMakingPlaces(m)
	require.Positive(t, places)
	pauses, giveBackKept := sandbox.KeepMakingPlaces(m)

	giveBack := sandbox.TakeMakingPlaces(m)
	const id = "0123456789abcdef"
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = m.Create(ctx, id, sandbox.Options{})
	require.ErrorIs(t, err, context.DeadlineExceeded, "a creation waits for a place while its request lasts")
	assert.Empty(t, m.List())
	assert.Empty(t, pauses(), "a creation that gave up keeps no place: it had none")

	giveBack()
	sb, err := m.Create(context.Background(), id, sandbox.Options{})
	require.NoError(t, err, "the id is free again once the waiting creation gave up")
	assert.Equal(t, id, sb.ID)
	assert.Len(t, m.List(), 1)
	require.Len(t, pauses(), 1)
	assert.Positive(t, pauses()[0], "a creation keeps its place for as long as it took")
	assert.Equal(t, places-1, sandbox.FreeMakingPlaces(m), "its place is kept after the answer")
	giveBackKept()
	assert.Equal(t, places, sandbox.FreeMakingPlaces(m))
}
