package tooltest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// recorder is a testing.TB that records how Missing ended it.
type recorder struct {
	testing.TB
	failed, skipped []string
}

type ended struct{}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
	panic(ended{})
}

func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = append(r.skipped, fmt.Sprintf(format, args...))
	panic(ended{})
}

func (r *recorder) missing(what string) {
	defer func() {
		if v := recover(); v != nil && v != (ended{}) {
			panic(v)
		}
	}()
	Missing(r, what)
}

func TestMissingFailsOncePerTool(t *testing.T) {
	t.Setenv("DUBSIM_REQUIRE_TOOLS", "")
	what := "tool-" + t.Name() + " (apt-get install it)"
	r := &recorder{}
	r.missing(what)
	r.missing(what)
	r.missing("other-" + what)
	assert.Equal(t, []string{
		what + " is missing: install it, or set DUBSIM_REQUIRE_TOOLS=0 to skip the tests that need it",
		"other-" + what + " is missing: install it, or set DUBSIM_REQUIRE_TOOLS=0 to skip the tests that need it",
	}, r.failed)
	assert.Equal(t, []string{what + " is missing (the failure above says so)"}, r.skipped)
}

func TestMissingSkipsWhenNotRequired(t *testing.T) {
	t.Setenv("DUBSIM_REQUIRE_TOOLS", "0")
	r := &recorder{}
	r.missing("tool-" + t.Name())
	assert.Empty(t, r.failed)
	assert.Equal(t, []string{"tool-" + t.Name() + " is missing (DUBSIM_REQUIRE_TOOLS=0)"}, r.skipped)
}
