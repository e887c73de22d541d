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

func TestMissingSaysSoOncePerToolAndSkips(t *testing.T) {
	t.Setenv("DUBSIM_REQUIRE_TOOLS", "")
	var told []string
	was := tell
	tell = func(line string) { told = append(told, line) }
	t.Cleanup(func() { tell = was })
	what := "tool-" + t.Name() + " (apt-get install it)"
	r := &recorder{}
	r.missing(what)
	r.missing(what)
	r.missing("other-" + what)
	assert.Equal(t, []string{
		"./internal/tooltest: skipping the tests that need " + what + "; DUBSIM_REQUIRE_TOOLS=1 makes this a failure\n",
		"./internal/tooltest: skipping the tests that need other-" + what + "; DUBSIM_REQUIRE_TOOLS=1 makes this a failure\n",
	}, told)
	assert.Empty(t, r.failed)
	assert.Len(t, r.skipped, 3)
}

func TestMissingFailsWhenRequired(t *testing.T) {
	t.Setenv("DUBSIM_REQUIRE_TOOLS", "1")
	r := &recorder{}
	r.missing("tool-" + t.Name())
	assert.Empty(t, r.skipped)
	assert.Equal(t, []string{"tool-" + t.Name() + " is missing (DUBSIM_REQUIRE_TOOLS=1)"}, r.failed)
}

func (r *recorder) longOnly(what string) {
	defer func() {
		if v := recover(); v != nil && v != (ended{}) {
			panic(v)
		}
	}()
	LongOnly(r, what)
}

func TestLongOnlySkipsAndSaysSoOnceUnlessLong(t *testing.T) {
	var told []string
	was := tell
	tell = func(line string) { told = append(told, line) }
	t.Cleanup(func() { tell = was })
	what := "the build of " + t.Name()

	t.Setenv("DUBSIM_LONG", "")
	r := &recorder{}
	r.longOnly(what)
	r.longOnly(what)
	assert.Equal(t, []string{"./internal/tooltest: skipping " + what + "; DUBSIM_LONG=1 runs it, as CI does\n"}, told)
	assert.Len(t, r.skipped, 2)

	t.Setenv("DUBSIM_LONG", "1")
	r = &recorder{}
	r.longOnly(what)
	assert.Empty(t, r.skipped)
	assert.Empty(t, r.failed)
	assert.True(t, Long())
}
