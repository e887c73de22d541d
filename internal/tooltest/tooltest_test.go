package tooltest

import (
	"flag"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// end runs f, which may end r (as Fatalf and Skipf do, by panicking).
func (r *recorder) end(f func(testing.TB, string), what string) {
	defer func() {
		if v := recover(); v != nil && v != (ended{}) {
			panic(v)
		}
	}()
	f(r, what)
}

func (r *recorder) missing(what string) { r.end(Missing, what) }

func (r *recorder) longOnly(what string) { r.end(LongOnly, what) }

// capture records the lines told during t, from a fresh record of what
// was told (which lasts for the process, so across -count runs too).
func capture(t *testing.T) *[]string {
	var told []string
	wasTell, wasReported := tell, reported
	tell = func(line string) { told = append(told, line) }
	reported = map[string]bool{}
	t.Cleanup(func() { tell, reported = wasTell, wasReported })
	return &told
}

func TestMissingSaysSoOncePerToolAndSkips(t *testing.T) {
	t.Setenv("DUBSIM_REQUIRE_TOOLS", "")
	told := capture(t)
	what := "tool-" + t.Name() + " (apt-get install it)"
	r := &recorder{}
	r.missing(what)
	r.missing(what)
	r.missing("other-" + what)
	assert.Equal(t, []string{
		"./internal/tooltest: skipping the tests that need " + what + "; DUBSIM_REQUIRE_TOOLS=1 makes this a failure\n",
		"./internal/tooltest: skipping the tests that need other-" + what + "; DUBSIM_REQUIRE_TOOLS=1 makes this a failure\n",
	}, *told)
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

func TestLongOnlySkipsAndSaysSoOnceUnlessLong(t *testing.T) {
	told := capture(t)
	what := "the build of " + t.Name()

	t.Setenv("DUBSIM_LONG", "")
	r := &recorder{}
	r.longOnly(what)
	r.longOnly(what)
	assert.Equal(t, []string{"./internal/tooltest: skipping " + what + "; DUBSIM_LONG=1 runs it, as CI does\n"}, *told)
	assert.Len(t, r.skipped, 2)

	t.Setenv("DUBSIM_LONG", "1")
	r = &recorder{}
	r.longOnly(what)
	assert.Empty(t, r.skipped)
	assert.Empty(t, r.failed)
	assert.True(t, Long())
}

func TestParallelUnlessGiven(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not given", nil, "4"},
		{"given", []string{"-test.parallel=1"}, "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.Int("test.parallel", 2, "")
			require.NoError(t, fs.Parse(tc.args))
			setParallel(fs, 4)
			assert.Equal(t, tc.want, fs.Lookup("test.parallel").Value.String())
		})
	}
}
