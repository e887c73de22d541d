package dubsimtest_test

import (
	"testing"

	"github.com/dubsim/dubsim/internal/tooltest"
)

// TestMain lets eight tests run at once, where go test's default,
// GOMAXPROCS, would let two: most of them wait on a simulator, in the test
// process or in a dubsim process (TestConnectParallel's 20 sandboxes of
// one dubsim).
func TestMain(m *testing.M) {
	tooltest.Parallel(8)
	m.Run()
}
