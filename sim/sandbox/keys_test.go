package sandbox

import (
	"strings"
	"testing"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAPIKeys: a sandbox's keys all start with its prefix; a key of
// another sandbox is refused with a validation error naming it (clipped).
func TestAPIKeys(t *testing.T) {
	t.Parallel()
	const id = "k7q2m9x4w3p8r5t6"
	keys := Keys(KeyPrefix(id))
	for _, tc := range []struct{ name, key, hold, given, err string }{
		{name: "bare", key: "mine", hold: "sbx_" + id + "_mine", given: "sbx_" + id + "_mine"},
		{name: "own prefix", key: "sbx_" + id + "_mine", hold: "sbx_" + id + "_mine", given: "sbx_" + id + "_mine"},
		{name: "generated", key: "dsk_00ff", hold: "sbx_" + id + "_dsk_00ff", given: "sbx_" + id + "_dsk_00ff"},
		{name: "another sandbox's", key: "sbx_aaaaaaaaaaaaaaaa_x", hold: "sbx_" + id + "_sbx_aaaaaaaaaaaaaaaa_x", err: `"sbx_aaaaaaaaaaaaaaaa_x"`},
		{name: "long, clipped", key: "sbx_" + strings.Repeat("a", 200), hold: "sbx_" + id + "_sbx_" + strings.Repeat("a", 200),
			err: `"sbx_` + strings.Repeat("a", 76) + `..."`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.hold, keys.Hold(tc.key))
			got, err := keys.Given(tc.key)
			if tc.err != "" {
				require.Error(t, err)
				assert.Equal(t, sim.CodeValidation, sim.ErrorCode(err))
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.given, got)
		})
	}
}
